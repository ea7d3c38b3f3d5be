/*
 * classtype.h - the model_type an architectures class stands for when a config.json names
 * none (google/umt5-*, saved before UMT5Config wrote one): the class's lowercased prefix
 * before "For", or before a closing "EncoderModel" / "Model" ("UMT5ForConditionalGeneration"
 * -> umt5, "T5EncoderModel" -> t5).  Whether a reader has that type is the caller's to ask.
 * And the type a config.json names under another spelling transformers maps to the same
 * config class ("EvollaModel" -> evolla).
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

#endif
