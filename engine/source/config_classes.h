/*
 * config_classes.h - what transformers' config classes do with config.json beyond storing
 * it, per model_type: attribute_map aliases, literal defaults, strings accepted for lists,
 * sub-config classes, the sub-config built when one is absent.  One generated table
 * (tools/gen_config_classes.py over transformers' configuration_*.py, vendored as data in
 * engine/source/config_classes.tsv and made C at build time by tools/gen_config_table.c),
 * sorted by model_type then key; source/config.c applies it, so a reader asking for a key
 * gets the value the class would hold.
 *
 * Internal to source/: the table is static data, nothing to free.
 */
#ifndef FG_CONFIG_CLASSES_H
#define FG_CONFIG_CLASSES_H

#include <stdbool.h>
#include <stddef.h>

enum fg__cfg_rule_kind {
    FG__CFG_ALIAS,   /* key names the attribute value (attribute_map) */
    FG__CFG_DEFAULT, /* an absent key means value: JSON text of a number or boolean, or
                        (flag FG__CFG_TEXT) a string */
    FG__CFG_SPLIT,   /* a string for key is the list of its pieces split on value */
    FG__CFG_SUB,     /* key holds a sub-config of model_type value */
    FG__CFG_DIVIDES, /* the class refuses a key that value does not divide, with message */
    FG__CFG_FILL,    /* an absent (or null) key holds the sub-config the class builds then:
                        value is its JSON object, model_type and the arguments given */
};

/* SPLIT: lowered first, pieces stripped; DEFAULT: value is a string */
enum { FG__CFG_LOWER = 1, FG__CFG_STRIP = 2, FG__CFG_TEXT = 4 };

struct fg__cfg_rule {
    const char *model_type, *cls; /* the config class, for messages */
    enum fg__cfg_rule_kind kind;
    const char *key, *value;
    unsigned flags;
    const char *message; /* DIVIDES: the class's ValueError text, {name} for a key's value;
                            NULL otherwise */
};

extern const struct fg__cfg_rule fg__cfg_rules[];
extern const size_t fg__cfg_nrules;

/* ---- applied to a document (config_class.c; source/config.c calls them) ---------- */

struct cJSON;
struct fg_cfg;

/* The rules of model_type (a run of the sorted table) in *rules / *n; none for NULL. */
void fg__cfg_class_rules(const char *model_type, const struct fg__cfg_rule **rules, size_t *n);

/* The rule of kind for the len bytes at key among rules, or NULL. */
const struct fg__cfg_rule *fg__cfg_rule_find(const struct fg__cfg_rule *rules, size_t n,
                                             enum fg__cfg_rule_kind kind, const char *key,
                                             size_t len);

/* obj's own model_type, when it names one, under its config class's spelling (borrowed
 * from obj or static: util/classtype.h fg__type_alias). */
const char *fg__cfg_own_type(const struct cJSON *obj);

/* Put obj's values in the forms its class holds them, sub-configs to depth levels; -1 when
 * out of memory. */
int fg__cfg_normalise(struct cJSON *obj, const char *model_type, unsigned depth);

/* The class default for keys (an alias list) absent from c, or NULL (also when an alias is
 * present as null: the class holds None, the caller's default stands). */
const struct fg__cfg_rule *fg__cfg_class_default(const struct fg_cfg *c, const char *keys);

/* The class default of keys as a number in [min, max] (whole when whole), or false. */
bool fg__cfg_class_number(const struct fg_cfg *c, const char *keys, double min, double max,
                          bool whole, double *out);

/* Does one alias of list name the class attribute name (itself, or through attribute_map)? */
bool fg__cfg_names_attribute(const struct fg_cfg *c, const char *list, const char *name);

#endif
