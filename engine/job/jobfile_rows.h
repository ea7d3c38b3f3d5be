/*
 * jobfile_rows.h - internal to jobfile_rows.c (the tables) and jobfile_apply.c (the
 * mapping): a format's rows, defaults and framework.  All static data.
 */
#ifndef FG_JOBFILE_ROWS_H
#define FG_JOBFILE_ROWS_H

#include <stdbool.h>
#include <stddef.h>

#include "job/jobfile.h"

enum fg__jf_hook {
    H_NONE, H_FILE, H_FSDP, H_TT_MODEL, H_TT_TARGETS, H_EP, H_LF_QUANT,
    H_ACC_PROCS /* accelerate num_processes: DP = processes / (TP x CP) */
};

struct fg__jf_vmap {
    const char *match;  /* '|'-separated values, case-insensitive; "*" any */
    const char *assign; /* "opt=value;..."; "" nothing */
};

struct fg__jf_row {
    unsigned fmts;
    const char *key;
    const char *assign;      /* "opt=$" */
    const struct fg__jf_vmap *map;  /* NULL-terminated */
    enum fg__jf_hook hook;
    bool soft;               /* an option this build lacks: ignore, do not list */
    const char *note;        /* why it matters, when fitgate cannot model it */
};

struct fg__jf_default {
    unsigned fmts;
    const char *key, *assign, *source; /* key NULL: always */
    bool adapters;                      /* only for a LoRA / QLoRA job */
};

/* The launchers' rows (DeepSpeed, accelerate, vLLM, SGLang: jobfile_rows_launch.c). */
extern const struct fg__jf_row fg__jf_launch_rows[];
extern const size_t fg__jf_launch_n;

/* A key (with a value) that tells the trainer a file is written for. */
struct fg__jf_trainer {
    unsigned fmts;
    const char *key, *match, *trainer; /* trainer: the --mode spelling */
    bool weak;                         /* below the name of the file's folder */
};

/* The first trainer row f's keys meet (weak rows only when weak), or NULL. */
const struct fg__jf_trainer *fg__jf_trainer_of(const struct fg_jobfile *f, bool weak);

/* What f, read as fmt (FG_JF_AUTO: not told), is when its keys say it describes no training
 * job (an inference, export, evaluation or cloud launcher config), or NULL. */
const char *fg__jf_not_a_job(const struct fg_jobfile *f, enum fg_jobfile_format fmt);

/* The row for a key of a format, or NULL (a key that does not change memory). */
const struct fg__jf_row *fg__jf_row_for(enum fg_jobfile_format fmt, const char *path);

/* The formats of every row that names path (a format may name a key in several rows). */
unsigned fg__jf_rows_fmts(const char *path);

/* Row i of the table, NULL past the end (for the check that docs/frameworks.md names them). */
const struct fg__jf_row *fg__jf_row_at(size_t i);

/* The defaults table (*n rows). */
const struct fg__jf_default *fg__jf_defaults(size_t *n);

/* The framework row a format names ("trl") and its rank (a trainer's file 2, accelerate's 1,
 * DeepSpeed's 0: the highest names the job's framework). */
const char *fg__jf_framework(enum fg_jobfile_format fmt);
int fg__jf_rank(enum fg_jobfile_format fmt);

/* The formats that read a key (a row's or an identity key's), as 1 << format bits; *ident
 * whether an identity key (one that changes no memory, jobfile_detect.c) names it. */
unsigned fg__jf_readers(const char *path, bool *ident);

/* v is one of pattern's '|'-separated values (case-insensitive); "*" matches any. */
bool fg__jf_match(const char *pattern, const char *v);

#endif
