/*
 * classtype.h - the model_type a config.json that names none stands for.  First its
 * architectures class (google/umt5-*, saved before UMT5Config wrote one): the class's
 * lowercased prefix before "For", or before a closing "EncoderModel" / "Model"
 * ("UMT5ForConditionalGeneration" -> umt5, "T5EncoderModel" -> t5).  Whether a reader has
 * that type is the caller's to ask.  Else, for a config that names no class either (the 2019
 * files of ctrl), the name it was loaded by (fg__name_type).  And the type a config.json
 * names under another spelling transformers maps to the same config class ("EvollaModel" ->
 * evolla).
 *
 * Inline, with nothing of fitgate included, so that the build-time list of real configs
 * (tools/gen_real_configs.c) names a fixture's type as the engine reads it
 * (engine/arch/graph.c).
 */
#ifndef FG_UTIL_CLASSTYPE_H
#define FG_UTIL_CLASSTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* The type cls stands for into buf (n bytes, NUL-ended); false, buf "", when cls has no such
 * prefix or it does not fit. */
static inline bool fg__class_type(const char *cls, char *buf, size_t n)
{
    static const char *const tails[] = {"EncoderModel", "Model"};
    const char *end = cls ? strstr(cls, "For") : NULL;
    size_t len = cls ? strlen(cls) : 0;
    for (size_t i = 0; cls && i < 2 && !end; i++)
        if (len > strlen(tails[i]) && !strcmp(cls + len - strlen(tails[i]), tails[i]))
            end = cls + len - strlen(tails[i]);
    if (n)
        buf[0] = '\0';
    if (!end || end == cls || (size_t)(end - cls) >= n)
        return false;
    for (size_t i = 0; cls + i < end; i++)
        buf[i] = (char)((cls[i] >= 'A' && cls[i] <= 'Z') ? cls[i] - 'A' + 'a' : cls[i]);
    buf[end - cls] = '\0';
    return true;
}

/*
 * The model_type of the config class transformers' AutoConfig builds for a model_type name
 * it maps outside the classes' own (models/auto/configuration_auto.py,
 * CONFIG_MAPPING_NAMES.update of "non-standard models that can't be inferred from parsing
 * the code", transformers 5.16.0.dev0), or NULL for any other name.  Only the names whose
 * class has a reader here: westlake-repl/Evolla-10B-hf's config.json writes "EvollaModel",
 * which AutoConfig reads as EvollaConfig (model_type "evolla").
 */
static inline const char *fg__type_alias(const char *model_type)
{
    static const char *const aliases[][2] = {{"EvollaModel", "evolla"}};
    for (size_t i = 0; model_type && i < sizeof aliases / sizeof aliases[0]; i++)
        if (!strcmp(model_type, aliases[i][0]))
            return aliases[i][1];
    return NULL;
}

/*
 * The type the name id was loaded by stands for, among the known types type_at(0, ctx),
 * type_at(1, ctx) ... (NULL past the last): the longest of them the name contains, as
 * transformers 4.x AutoConfig.from_pretrained falls back to for a config.json without
 * model_type ("use pattern matching on the string", longer keys first "to catch roberta
 * before bert", over str(pretrained_model_name_or_path); models/auto/configuration_auto.py at
 * v4.39).  Transformers 5 dropped that fallback (AutoConfig raises "Should have a model_type
 * key" at decba1d2; the model's own class still loads the file).  The name is id's last path
 * component (the folder's when id ends in config.json), so that a folder above cannot name the
 * type; two different types of the longest length name none.  Into buf (n bytes, NUL-ended);
 * false, buf "", when none.
 */
static inline bool fg__name_type(const char *id, const char *(*type_at)(size_t i, const void *ctx),
                                 const void *ctx, char *buf, size_t n)
{
    size_t end = id ? strlen(id) : 0, start = 0;
    const char *best = NULL, *t;
    size_t best_len = 0;
    bool tie = false;
    for (int part = 0; part < 2; part++) {
        while (end && id[end - 1] == '/')
            end--;
        for (start = end; start && id[start - 1] != '/'; start--)
            ;
        if (part || end - start != 11 || strncmp(id + start, "config.json", 11))
            break;
        end = start;
    }
    if (n)
        buf[0] = '\0';
    for (size_t i = 0; id && type_at && (t = type_at(i, ctx)); i++) {
        size_t len = strlen(t);
        bool in = false;
        for (size_t at = start; len && !in && at + len <= end; at++)
            in = !strncmp(id + at, t, len);
        if (!in || len < best_len)
            continue;
        if (len == best_len && strcmp(t, best)) {
            tie = true;
            continue;
        }
        tie = tie && len == best_len;
        best = t;
        best_len = len;
    }
    if (!best || tie || best_len >= n)
        return false;
    memcpy(buf, best, best_len + 1);
    return true;
}

#endif
