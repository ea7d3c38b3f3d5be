/*
 * config_class.c - the config classes of source/config_classes.h applied to a document:
 * the rules of a model_type, the value forms a class accepts put in the form it holds them
 * (at parse time), a class default for an absent key, and whether an alias list names a
 * class attribute.  Called by source/config.c only.
 */
#include "source/config.h"
#include "source/config_classes.h"
#include "util/classtype.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The rules of model_type (a run of the sorted table) in *rules / *n; none for NULL. */
void fg__cfg_class_rules(const char *model_type, const struct fg__cfg_rule **rules, size_t *n)
{
    size_t lo = 0, hi = fg__cfg_nrules;
    *rules = NULL;
    *n = 0;
    if (!model_type)
        return;
    while (lo < hi) { /* the first row not below model_type */
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(fg__cfg_rules[mid].model_type, model_type) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t end = lo;
    while (end < fg__cfg_nrules && !strcmp(fg__cfg_rules[end].model_type, model_type))
        end++;
    if (end > lo) {
        *rules = &fg__cfg_rules[lo];
        *n = end - lo;
    }
}

const struct fg__cfg_rule *fg__cfg_rule_find(const struct fg__cfg_rule *rules, size_t n,
                                             enum fg__cfg_rule_kind kind, const char *key,
                                             size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (rules[i].kind == kind && !strncmp(rules[i].key, key, len) && !rules[i].key[len])
            return &rules[i];
    return NULL;
}

/* obj's own model_type, when it names one, as its config class names it (fg__type_alias). */
const char *fg__cfg_own_type(const cJSON *obj)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(obj, "model_type");
    const char *alias = cJSON_IsString(t) ? fg__type_alias(t->valuestring) : NULL;
    return alias ? alias : cJSON_IsString(t) ? t->valuestring : NULL;
}

/* The string s split as the class splits it (rule's separator, lowered and stripped as its
 * flags say) into a new array, or NULL when out of memory. */
static cJSON *split_value(const char *s, const struct fg__cfg_rule *rule)
{
    cJSON *arr = cJSON_CreateArray();
    size_t sep = strlen(rule->value);
    char piece[256];
    for (const char *p = s; arr && p;) {
        const char *q = sep ? strstr(p, rule->value) : NULL;
        size_t n = q ? (size_t)(q - p) : strlen(p);
        const char *b = p, *e = p + n;
        if (rule->flags & FG__CFG_STRIP) {
            while (b < e && (*b == ' ' || *b == '\t' || *b == '\n' || *b == '\r'))
                b++;
            while (e > b && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
                e--;
        }
        size_t k = (size_t)(e - b) < sizeof piece - 1 ? (size_t)(e - b) : sizeof piece - 1;
        for (size_t i = 0; i < k; i++)
            piece[i] = (rule->flags & FG__CFG_LOWER) && b[i] >= 'A' && b[i] <= 'Z'
                           ? (char)(b[i] - 'A' + 'a') : b[i];
        piece[k] = '\0';
        cJSON *item = cJSON_CreateString(piece);
        if (!item || !cJSON_AddItemToArray(arr, item)) {
            cJSON_Delete(item);
            cJSON_Delete(arr);
            return NULL;
        }
        p = q ? q + sep : NULL;
    }
    return arr;
}

/*
 * Put obj's values in the forms its class holds them (a SPLIT string becomes its list),
 * then do the same for each sub-config, by its own model_type or the class's sub_configs,
 * to depth levels.  Fails only when out of memory.
 */
int fg__cfg_normalise(cJSON *obj, const char *model_type, unsigned depth)
{
    const struct fg__cfg_rule *rules;
    size_t n;
    fg__cfg_class_rules(fg__cfg_own_type(obj) ? fg__cfg_own_type(obj) : model_type, &rules, &n);
    for (size_t i = 0; i < n; i++) {
        if (rules[i].kind != FG__CFG_SPLIT)
            continue;
        cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, rules[i].key);
        if (!cJSON_IsString(v))
            continue;
        cJSON *list = split_value(v->valuestring, &rules[i]);
        if (!list || !cJSON_ReplaceItemInObjectCaseSensitive(obj, rules[i].key, list)) {
            cJSON_Delete(list);
            return -1;
        }
    }
    cJSON *e;
    cJSON_ArrayForEach(e, obj) {
        if (depth <= 1 || !cJSON_IsObject(e) || !e->string)
            continue;
        const struct fg__cfg_rule *sub = fg__cfg_rule_find(rules, n, FG__CFG_SUB, e->string,
                                                   strlen(e->string));
        if (fg__cfg_normalise(e, sub ? sub->value : NULL, depth - 1))
            return -1;
    }
    return 0;
}

/*
 * The class default for keys, none found: the DEFAULT row of the first alias that has one,
 * under its own name or the attribute its class's attribute_map names.  NULL when c has no
 * class, no alias has a default, or an alias is present as null (the class then holds None,
 * which the caller's default stands for).
 */
const struct fg__cfg_rule *fg__cfg_class_default(const struct fg_cfg *c, const char *keys)
{
    if (!c->nrules || !c->obj)
        return NULL;
    for (const char *p = keys; *p;) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        char key[128];
        snprintf(key, sizeof key, "%.*s", (int)(n < sizeof key ? n : sizeof key - 1), p);
        if (cJSON_GetObjectItemCaseSensitive(c->obj, key))
            return NULL; /* present, so null: None */
        p += n + (bar ? 1 : 0);
    }
    for (const char *p = keys; *p;) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        const struct fg__cfg_rule *rules = c->rules, *d, *a = NULL;
        d = fg__cfg_rule_find(rules, c->nrules, FG__CFG_DEFAULT, p, n);
        if (!d)
            a = fg__cfg_rule_find(rules, c->nrules, FG__CFG_ALIAS, p, n);
        if (a)
            d = fg__cfg_rule_find(rules, c->nrules, FG__CFG_DEFAULT, a->value, strlen(a->value));
        /* the attribute's name, whose default the class declares under the mapped key
         * (FalconConfig: num_hidden_layers=32 is held as n_layer) */
        for (size_t r = 0; !d && r < c->nrules; r++)
            if (c->rules[r].kind == FG__CFG_ALIAS && !strncmp(c->rules[r].value, p, n) &&
                !c->rules[r].value[n])
                d = fg__cfg_rule_find(rules, c->nrules, FG__CFG_DEFAULT, c->rules[r].key,
                                      strlen(c->rules[r].key));
        if (d)
            return d;
        p += n + (bar ? 1 : 0);
    }
    return NULL;
}

/* The class default of keys as a number in [min, max] (whole when whole), or false. */
bool fg__cfg_class_number(const struct fg_cfg *c, const char *keys, double min, double max,
                          bool whole, double *out)
{
    const struct fg__cfg_rule *d = fg__cfg_class_default(c, keys);
    if (!d || (d->flags & FG__CFG_TEXT) || !strcmp(d->value, "true") ||
        !strcmp(d->value, "false"))
        return false;
    char *end;
    double v = strtod(d->value, &end);
    /* a sentinel outside the caller's range (-1 for "same as another key") is the caller's
     * to spell: its own default stands */
    if (*end || !isfinite(v) || v < min || v > max || (whole && v != floor(v)))
        return false;
    *out = v;
    return true;
}

/* Does one alias of list name the class attribute name (itself, or through the class's
 * attribute_map either way)? */
bool fg__cfg_names_attribute(const struct fg_cfg *c, const char *list, const char *name)
{
    size_t nn = strlen(name);
    for (const char *p = list; *p;) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n == nn && !strncmp(p, name, n))
            return true;
        for (size_t r = 0; r < c->nrules; r++) {
            const struct fg__cfg_rule *ru = &c->rules[r];
            if (ru->kind != FG__CFG_ALIAS)
                continue;
            if ((!strncmp(ru->key, p, n) && !ru->key[n] && !strcmp(ru->value, name)) ||
                (!strncmp(ru->value, p, n) && !ru->value[n] && !strcmp(ru->key, name)))
                return true;
        }
        p += n + (bar ? 1 : 0);
    }
    return false;
}


const char *fg_config_class(const char *model_type)
{
    const struct fg__cfg_rule *rules;
    size_t n;
    fg__cfg_class_rules(model_type, &rules, &n);
    return n ? rules[0].cls : NULL;
}
