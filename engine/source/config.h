/*
 * config.h - strict, typed reads of a Hugging Face config.json.
 *
 * A missing key (or a JSON null) means the class default the caller passes,
 * never zero by accident.  A present key of the wrong type, a fractional
 * number where an integer belongs, or a value outside [min, max] is an
 * error naming the origin file, the scope and the key.
 *
 * Keys may be given as an alias list, "hidden_size|n_embd|d_model": the
 * first present alias wins.
 *
 * The document is read as the transformers config class of its model_type
 * reads it (source/config_classes.h, generated from configuration_*.py):
 * a string the class splits into a list is that list (DebertaV2Config's
 * "pos_att_type": "p2c|c2p"), a key the class's attribute_map names is read
 * under its attribute's name too, and an absent key (not a null one: the
 * class gets None for that, and the caller's default stands) takes the
 * class's literal default before the caller's.
 *
 * Ownership: fg_config_load/parse return a document the caller frees with
 * fg_config_free().  Views (struct fg_cfg) are borrowed from their document
 * and valid until it is freed.
 */
#ifndef FG_CONFIG_H
#define FG_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

struct cJSON;
struct fg_config;
struct fg_cfg_index;
struct fg__cfg_rule;

/*
 * What a view changes in the keys it reads (struct fg_cfg's over), for a reader that reads
 * one class's keys as another class reads them: GLM-4.1V's text model through the GLM-4
 * reader, whose class ignores head_dim and always biases q/k/v.  A HIDE key reads as absent,
 * a SET key reads as value whatever the file holds, a DEFAULT key reads as value where the
 * object (and what it inherits) lacks it.  Hidden and set keys of the object count as read:
 * the class took them into account.  Rows end with a NULL key.
 */
enum fg_cfg_over_kind { FG_CFG_HIDE, FG_CFG_SET, FG_CFG_DEFAULT };
struct fg_cfg_over {
    enum fg_cfg_over_kind kind;
    const char *key;           /* as config.json spells it */
    const struct cJSON *value; /* SET / DEFAULT: static storage, never freed */
};
/* Values for the rows of a file-scope table (the file includes <cjson/cJSON.h>). */
#define FG_CFG_NUMBER(v) (&(const struct cJSON){.type = cJSON_Number, .valueint = (v), \
                                                  .valuedouble = (v)})
#define FG_CFG_TRUE (&(const struct cJSON){.type = cJSON_True, .valueint = 1})
#define FG_CFG_FALSE (&(const struct cJSON){.type = cJSON_False})

/* A view on one JSON object of a document (the root, or text_config ...). */
struct fg_cfg {
    const struct cJSON *obj;
    const char *origin;   /* file name for messages; borrowed */
    char scope[64];       /* "" for the root, "text_config" ... */
    const struct fg_cfg_index *index; /* obj's keys by name, or NULL: lookups then walk the
                                         object (used only while it indexes obj); it records
                                         which keys were looked up */
    /* Keys named in inherit ("a|b") that obj lacks are read from outer (borrowed, may be
     * NULL): a text_config taking the root's tie_word_embeddings (Qwen3VLConfig) */
    const struct fg_cfg *outer;
    const char *inherit;
    /* The rules of obj's config class (source/config_classes.h), nrules of them from rules,
     * or none: the root's by its model_type, a sub-config's by its own model_type or its
     * parent class's sub_configs.  Absent keys take the class's literal defaults, keys the
     * class's attribute_map names are read under the attribute's name too. */
    const struct fg__cfg_rule *rules;
    size_t nrules;
    /* The reader's changes to obj's keys (struct fg_cfg_over), or NULL; a child view has
     * none of its own. */
    const struct fg_cfg_over *over;
};

/* Internal: every member name and string value of the JSON tree j (and its siblings after
 * it) that holds an unsafe unit (util/fmt.h fg__esc: control characters, malformed UTF-8,
 * C1 and bidirectional controls) replaced by its escaped text (\xNN), so no text of a
 * config.json or an audit line reaches a terminal or a log raw, whichever path prints it.
 * No legitimate key or value holds one.  0, or -1 when memory runs out. */
struct cJSON;
int fg__json_escape_tree(struct cJSON *j);

/* Internal: does text parse as one JSON object?  (What the source and cache steps check
 * before a text is taken or kept.) */
bool fg__config_is_object(const char *text, size_t len);

/* Internal: the raw member key of c's object (the last of duplicates), or NULL; a lookup
 * like any other, so the key counts as read.  Borrowed from the document. */
const struct cJSON *fg__cfg_raw(const struct fg_cfg *c, const char *key);

/* Internal: did a lookup through a view of the document ask for key (any fg_cfg_* read,
 * under any alias list naming it, fg__cfg_raw)?  True for an absent key and for objects
 * built aside from the document, whose reads are not tracked.  Every object of the document
 * is tracked to four levels (the root, text_config, text_config.rope_scaling ...). */
bool fg__cfg_was_read(const struct fg_cfg *c, const char *key);

/* Internal: a code for key that fg__cfg_unread takes, computed once for a key asked of many
 * documents (the same for equal keys; nothing else is promised). */
uint64_t fg__cfg_key_code(const char *key);

/* Internal: key's member of c when present and never looked up, else NULL (also for an
 * untracked view); code is fg__cfg_key_code(key).  Does not count as a read.  Borrowed from
 * the document. */
const struct cJSON *fg__cfg_unread(const struct fg_cfg *c, const char *key, uint64_t code);

/* Internal: the next member of c holding an object that a lookup asked for and in which a
 * lookup asked for a key but model_type, present or not (an object read only through a copy
 * of it is not known), as a view in *child (scope "text_config", "text_config.vision_config" ...), from
 * *pos on (start at 0); false when there is none more.  What a family reader did not read and could change a shape
 * makes its count unsure (keys.c): these are the sub-configs it entered. */
bool fg__cfg_next_read_child(const struct fg_cfg *c, size_t *pos, struct fg_cfg *child);

/* Largest config.json accepted (bytes); real ones are under 100 KB, one with a label for each
 * of 21,843 ImageNet classes under 1 MB.  Past it FG_E_LIMIT (error.h: the job's to fix); a
 * 4 MiB one of 360,000 keys is parsed in 0.19 s. */
#define FG_CONFIG_MAX_BYTES (4u << 20)

/*
 * Read path (a config.json, or a directory holding one) and parse it.
 * Fails with FG_E_NOTFOUND (no such file / no config.json in the directory),
 * FG_E_IO, FG_E_LIMIT (file too large), FG_E_PARSE (malformed JSON, or the
 * top level is not an object).
 */
int fg_config_load(const char *path, struct fg_config **out, struct fg_err *err);

/* Parse text of len bytes; origin names it in messages (copied). */
int fg_config_parse(const char *text, size_t len, const char *origin,
                    struct fg_config **out, struct fg_err *err);

/* NULL-safe. */
void fg_config_free(struct fg_config *doc);

/* The root view of a document. */
struct fg_cfg fg_config_root(const struct fg_config *doc);

/* The transformers config class a config of model_type is read as ("LlavaConfig"; static),
 * or NULL when the class table holds none (remote code, a name only a tokenizer uses). */
const char *fg_config_class(const char *model_type);

/* The origin (path) the document was read from; borrowed. */
const char *fg_config_origin(const struct fg_config *doc);

/*
 * Child object view: returns true and fills *child when key holds an object.
 * A missing key or null gives false; a present non-object key gives false
 * and, when err is non-NULL, FG_E_TYPE in err.
 */
bool fg_cfg_child(const struct fg_cfg *c, const char *key, struct fg_cfg *child, struct fg_err *err);

/* True when one of the aliases is present and not null. */
bool fg_cfg_has(const struct fg_cfg *c, const char *keys);

/* True when no alias of keys is present (nor a name c's class maps one to) and c's config
 * class supplies a literal default for it: *value its JSON text (borrowed, static). */
bool fg_cfg_class_filled(const struct fg_cfg *c, const char *keys, const char **value);

/* The form of a value, for the keys whose class accepts several (an int or a list of ints,
 * a number or "auto") or tells a null from an absent key. */
enum fg_cfg_form {
    FG_CFG_ABSENT, /* no alias present */
    FG_CFG_NULL,   /* present as null: the class holds None */
    FG_CFG_NUMBER,
    FG_CFG_BOOL,
    FG_CFG_STRING,
    FG_CFG_LIST,
    FG_CFG_OBJECT,
};

/* The form of the first alias of keys present (null included), and in *len (may be NULL)
 * the entries of a list or object, else 0.  Counts as a read of that alias. */
enum fg_cfg_form fg_cfg_form(const struct fg_cfg *c, const char *keys, size_t *len);

/*
 * The message the config class of c refuses a value of keys with when a value of by does not
 * divide it (a validate_architecture or __init__ ValueError: LlamaConfig's hidden_size by
 * num_attention_heads), the class named first and each {name} replaced by the value c holds
 * ("LlamaConfig: The hidden size (770) is not a multiple of ..."), into buf (len bytes); false
 * when the class states no such check, for the caller to word its own.  keys and by are
 * alias lists, matched through the class's attribute_map too.
 */
bool fg_cfg_class_refusal(const struct fg_cfg *c, const char *keys, const char *by, char *buf,
                          size_t len);

/*
 * The sub-config c's class builds when key is absent or null (LlavaConfig's vision_config:
 * CONFIG_MAPPING["clip_vision_model"](hidden_size=1024, ...)), as a new document in *out
 * (caller frees with fg_config_free(); its root view reads with that type's class
 * defaults) and the class's name in *cls (static); *out NULL when key is present or the
 * class builds none from literals.  The defaults are the class's, not the checkpoint's: a
 * count read from them is the caller's to call unsure.  FG_E_NOMEM.
 */
int fg_cfg_class_fill(const struct fg_cfg *c, const char *key, struct fg_config **out,
                      const char **cls, struct fg_err *err);

/* The key as config.json spells it that answers keys (an alias present, or the name the
 * class's attribute_map reads it under) into name (cap bytes); false when none is present. */
bool fg_cfg_key(const struct fg_cfg *c, const char *keys, char *name, size_t cap);

/* Integer in [min, max]; def when absent (def is not range-checked). */
int fg_cfg_u64(const struct fg_cfg *c, const char *keys, uint64_t def, uint64_t min, uint64_t max,
               uint64_t *out, struct fg_err *err);

/* Same, but the key must be present. */
int fg_cfg_u64_req(const struct fg_cfg *c, const char *keys, uint64_t min, uint64_t max,
                   uint64_t *out, struct fg_err *err);

/* Finite real number in [min, max]; def when absent. */
int fg_cfg_f64(const struct fg_cfg *c, const char *keys, double def, double min, double max,
               double *out, struct fg_err *err);

/* Boolean; def when absent. */
int fg_cfg_bool(const struct fg_cfg *c, const char *keys, bool def, bool *out, struct fg_err *err);

/* String (borrowed from the document); def (may be NULL) when absent. */
int fg_cfg_str(const struct fg_cfg *c, const char *keys, const char *def, const char **out,
               struct fg_err *err);

/*
 * Array of integers: at most cap values are stored in out; *n gets the
 * array length.  Absent: *n = 0.  Each value must be in [min, max].
 */
int fg_cfg_u64_array(const struct fg_cfg *c, const char *keys, uint64_t min, uint64_t max,
                     uint64_t *out, size_t cap, size_t *n, struct fg_err *err);

/*
 * Per-layer integers: one integer for every layer, or a list of exactly layers of them (the
 * forms LongformerConfig.attention_window, HunYuanMoEV1Config.num_experts and
 * Gemma3nTextConfig.intermediate_size accept), each in [min, max], into out[0..layers-1]
 * (layers <= cap); def for every layer when absent.  A list of another length is FG_E_RANGE.
 */
int fg_cfg_u64_per_layer(const struct fg_cfg *c, const char *keys, uint64_t def, uint64_t min,
                         uint64_t max, uint64_t layers, uint64_t *out, size_t cap,
                         struct fg_err *err);

/*
 * Array of strings: borrowed pointers, at most cap stored; *n gets the length.
 * Absent: *n = 0.
 */
int fg_cfg_str_array(const struct fg_cfg *c, const char *keys, const char **out, size_t cap,
                     size_t *n, struct fg_err *err);

#endif
