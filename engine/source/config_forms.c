/*
 * config_forms.c - reads built on the typed accessors of config.h: the JSON form a key
 * holds, an integer or a list of one per layer, and the sub-config a class builds when the
 * file leaves it out.
 */
#include "source/config.h"
#include "source/config_classes.h"
#include "util/fmt.h"

#include <cjson/cJSON.h>
#include <string.h>

int fg_cfg_class_fill(const struct fg_cfg *c, const char *key, struct fg_config **out,
                      const char **cls, struct fg_err *err)
{
    const struct fg__cfg_rule *fill = fg__cfg_rule_find(c->rules, c->nrules, FG__CFG_FILL, key,
                                                        strlen(key));
    char origin[320];
    *out = NULL;
    *cls = fill ? fill->cls : NULL;
    if (!fill || fg_cfg_has(c, key))
        return 0;
    fg__fmt(origin, sizeof origin, "%s (%s's default %s)", c->origin, fill->cls, key);
    /* the row is the generator's JSON of literals: only memory can fail it */
    return fg_config_parse(fill->value, strlen(fill->value), origin, out, err);
}

enum fg_cfg_form fg_cfg_form(const struct fg_cfg *c, const char *keys, size_t *len)
{
    const cJSON *it = NULL;
    if (len)
        *len = 0;
    for (const char *p = keys; !it && *p;) {
        char key[128];
        size_t n = strcspn(p, "|");
        fg__fmt(key, sizeof key, "%.*s", (int)n, p);
        it = fg__cfg_raw(c, key);
        p += n + (p[n] == '|');
    }
    if (!it)
        return FG_CFG_ABSENT;
    if ((cJSON_IsArray(it) || cJSON_IsObject(it)) && len)
        *len = (size_t)cJSON_GetArraySize(it);
    return cJSON_IsNull(it)     ? FG_CFG_NULL
           : cJSON_IsNumber(it) ? FG_CFG_NUMBER
           : cJSON_IsBool(it)   ? FG_CFG_BOOL
           : cJSON_IsString(it) ? FG_CFG_STRING
           : cJSON_IsArray(it)  ? FG_CFG_LIST
                                : FG_CFG_OBJECT;
}

int fg_cfg_u64_per_layer(const struct fg_cfg *c, const char *keys, uint64_t def, uint64_t min,
                         uint64_t max, uint64_t layers, uint64_t *out, size_t cap,
                         struct fg_err *err)
{
    char name[128];
    size_t n = 0;
    if (layers > cap)
        return fg_err_set(err, FG_E_RANGE, "%s: %llu layers; at most %zu are read", c->origin,
                          (unsigned long long)layers, cap);
    if (fg_cfg_form(c, keys, NULL) != FG_CFG_LIST) {
        uint64_t one = 0;
        int rc = fg_cfg_u64(c, keys, def, min, max, &one, err);
        for (uint64_t l = 0; rc == 0 && l < layers; l++)
            out[l] = one;
        return rc;
    }
    int rc = fg_cfg_u64_array(c, keys, min, max, out, cap, &n, err);
    if (rc == 0 && n != layers) {
        if (!fg_cfg_key(c, keys, name, sizeof name))
            fg__fmt(name, sizeof name, "%s", keys);
        rc = fg_err_set(err, FG_E_RANGE, "%s: key '%s' has %zu entries for %llu layers",
                        c->origin, name, n, (unsigned long long)layers);
    }
    return rc;
}
