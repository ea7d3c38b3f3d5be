/*
 * config_classes.h - what transformers' config classes do with config.json beyond storing
 * it, per model_type: attribute_map aliases, literal defaults, strings accepted for lists,
 * sub-config classes.  One generated table (config_classes.c, tools/gen_config_classes.py
 * over transformers' configuration_*.py), sorted by model_type then key; source/config.c
 * applies it, so a reader asking for a key gets the value the class would hold.
 *
 * Internal to source/: the table is static data, nothing to free.
 */
#ifndef FG_CONFIG_CLASSES_H
#define FG_CONFIG_CLASSES_H

#include <stddef.h>

enum fg__cfg_rule_kind {
    FG__CFG_ALIAS,   /* key names the attribute value (attribute_map) */
    FG__CFG_DEFAULT, /* an absent key means value: JSON text of a number or boolean, or
                        (flag FG__CFG_TEXT) a string */
    FG__CFG_SPLIT,   /* a string for key is the list of its pieces split on value */
    FG__CFG_SUB,     /* key holds a sub-config of model_type value */
};

/* SPLIT: lowered first, pieces stripped; DEFAULT: value is a string */
enum { FG__CFG_LOWER = 1, FG__CFG_STRIP = 2, FG__CFG_TEXT = 4 };

struct fg__cfg_rule {
    const char *model_type, *cls; /* the config class, for messages */
    enum fg__cfg_rule_kind kind;
    const char *key, *value;
    unsigned flags;
};

extern const struct fg__cfg_rule fg__cfg_rules[];
extern const size_t fg__cfg_nrules;

#endif
