/*
 * jobfile.h - the job read from the file its framework reads (--ft-config,
 * CLI --config): TRL / transformers TrainingArguments, axolotl, LLaMA-Factory,
 * torchtune recipes, DeepSpeed JSON, accelerate configs, vLLM / SGLang serve
 * configs (docs/frameworks.md, "Reading the job's own config").
 *
 *   fg_jobfile_parse()  text -> the document's keys, flattened to dotted paths
 *                       ("zero_optimization.stage"), each with its line.  YAML
 *                       through libyaml (dlopen'ed on the first YAML file, as
 *                       hub.c loads libcurl), JSON through cJSON.  Bounded:
 *                       FG_JOBFILE_MAX_BYTES of text, FG_JOBFILE_MAX_DEPTH levels,
 *                       FG_JOBFILE_MAX_SCALAR bytes a value, FG_JOBFILE_MAX_VISITS
 *                       nodes walked (aliases expanded), FG_JOBFILE_MAX_KEYS keys;
 *                       past any of them FG_E_RANGE naming the file and the bound.
 *   fg_jobfile_read()   the same from a file (relative paths against base_dir).
 *   fg_jobfile_apply()  every file the spec names (fg_jobspec_set CONFIG), in order:
 *                       the format (named "axolotl:FILE" or told by its keys), its
 *                       keys mapped to job options by the format's rows
 *                       (jobfile_rows.c), a file that names another (deepspeed:
 *                       ds.json) read too.  A key and a command-line option, or
 *                       two files, that say different things: FG_E_INVAL naming
 *                       both.  The spec records every key used (spec->from), the
 *                       memory keys it did not understand (spec->unknown) and the
 *                       digest of the files (spec->config_digest).  Call before
 *                       fg_jobspec_finish.
 *
 * Ownership: *out of parse/read is the caller's, freed with fg_jobfile_free.
 * Error contract: error.h; every detail names the file (and line where known).
 */
#ifndef FG_JOBFILE_H
#define FG_JOBFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

struct fg_jobspec;

#define FG_JOBFILE_MAX_BYTES (1u << 20)   /* real configs are under 20 KB */
#define FG_JOBFILE_MAX_DEPTH 64
#define FG_JOBFILE_MAX_SCALAR (64u << 10)
#define FG_JOBFILE_MAX_VISITS 100000u
#define FG_JOBFILE_MAX_KEYS 4096u
#define FG_JOBFILE_FILES 6               /* files one job reads, named ones included */

enum fg_jobfile_format {
    FG_JF_AUTO, FG_JF_TRL, FG_JF_TRANSFORMERS, FG_JF_AXOLOTL, FG_JF_LLAMA_FACTORY,
    FG_JF_TORCHTUNE, FG_JF_DEEPSPEED, FG_JF_ACCELERATE, FG_JF_VLLM, FG_JF_SGLANG,
    FG_JF_COUNT
};

/* One scalar (or a list of scalars, joined with ','), in document order. */
struct fg_jobfile_key {
    char path[128];   /* "model._component_" */
    char *value;      /* NUL-terminated; "" for null */
    unsigned line;    /* 1-based */
    bool null;        /* YAML null / ~ / empty, JSON null */
    bool list;        /* a sequence of scalars */
    bool merged;      /* from a YAML merge key (<<): the mapping's own keys win */
};

struct fg_jobfile {
    char name[512];                 /* as named, for messages */
    enum fg_jobfile_format format;  /* FG_JF_AUTO until recognised */
    uint64_t digest;                /* FNV-1a 64 of the bytes */
    size_t n;
    struct fg_jobfile_key *keys;
};

/* "trl", "axolotl" ...; NULL past the end. */
const char *fg_jobfile_format_name(enum fg_jobfile_format f);

/* The format a name spells (also "llamafactory", "hf-trainer"...); FG_JF_AUTO when none. */
enum fg_jobfile_format fg_jobfile_format_find(const char *name, size_t n);

int fg_jobfile_parse(const char *text, size_t len, const char *name, struct fg_jobfile **out,
                     struct fg_err *err);
int fg_jobfile_read(const char *path, const char *base_dir, struct fg_jobfile **out,
                    struct fg_err *err);
void fg_jobfile_free(struct fg_jobfile *f);

/* Dotted paths equal with '-' and '_' alike (vLLM and SGLang take both spellings). */
bool fg_jobfile_key_is(const char *a, const char *b);

/* The last key at path ('-' and '_' alike; a merged key only when no own one), or NULL. */
const struct fg_jobfile_key *fg_jobfile_get(const struct fg_jobfile *f, const char *path);

/* The format its own keys tell (jobfile_detect.c): a key only one format reads is a vote
 * for it, and the most votes decide.  FG_E_INVAL naming the FORMAT: prefixes to use when
 * formats tie or only shared keys are there, or saying the file is not a job config. */
int fg_jobfile_detect_format(const struct fg_jobfile *f, enum fg_jobfile_format *out,
                             struct fg_err *err);

/* The same, FG_JF_AUTO where that fails. */
enum fg_jobfile_format fg_jobfile_detect(const struct fg_jobfile *f);

int fg_jobfile_apply(struct fg_jobspec *s, const char *base_dir, struct fg_err *err);

#endif
