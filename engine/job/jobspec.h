/*
 * jobspec.h - a job as the user describes it: the options of jobopts.def,
 * parsed by one function for every front end (CLI, SPANK plugin, Lua filters
 * through the CLI), then completed by the framework's row (framework.h).
 *
 *   fg_jobspec_init()    empty spec (nothing given)
 *   fg_jobspec_set()     one option by number or by name, strictly parsed
 *   fg_jobspec_finish()  mode defaults, then the framework's defaults for every
 *                        option not given, and the framework's meanings (what
 *                        "bf16-mixed" means for a LoRA base); checks what the
 *                        framework cannot run at all (serving under torchtune)
 *
 * Error contract: error.h; a bad value is FG_E_INVAL / FG_E_RANGE naming the
 * option ("--NAME"; front ends prefix their own spelling).  Plain data, no
 * allocation; strings are copies.
 */
#ifndef FG_JOBSPEC_H
#define FG_JOBSPEC_H

#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"
#include "stack/framework.h"
#include "memory/memory.h"

enum fg_jobopt_id {
#define FG_JOBOPT(id, name, arg, has_arg, help) FG_JOBOPT_##id,
#include "job/jobopts.def"
#undef FG_JOBOPT
    FG_JOBOPT_COUNT
};

struct fg_jobopt {
    const char *name;   /* "seq-len": CLI --seq-len, plugin --ft-seq-len, Lua ft_seq_len */
    const char *arg;    /* "N"; NULL for a flag */
    const char *help;
};

/* Row id of the option table; NULL past the end. */
const struct fg_jobopt *fg_jobopt_at(unsigned id);

/*
 * The words option id takes, for the lists generated from the table (tools/gen_lists.c:
 * completion, usage, man pages): its parser's keywords (job.h fg_job_words), the framework
 * table's names, or the numbers of a range of at most 8.  Up to cap into out (borrowed,
 * static); returns how many there are (0: any value of the row's ARG).
 */
size_t fg_jobopt_values(unsigned id, const char **out, size_t cap);

/* The row id of a name ("seq-len", also "ft-seq-len" and "ft_seq_len"); -1 when none. */
int fg_jobopt_find(const char *name);

#define FG_JOBSPEC_NOTES 4
#define FG_JOBSPEC_CONFIGS 4   /* --config files given (a file may name more: jobfile.h) */
#define FG_JOBSPEC_FROM 40     /* keys read from them */
#define FG_JOBSPEC_UNKNOWN 16  /* memory keys not understood */

/* One key of a config file the job was filled from (jobfile.h). */
struct fg_jobspec_from {
    char where[200];  /* "train.yaml:12 gradient_checkpointing=true" */
    char set[120];    /* what it set: "--grad-ckpt=yes"; "" when nothing (the command line won) */
};

struct fg_jobspec {
    struct fg_job job;                 /* complete after fg_jobspec_finish */
    const struct fg_framework *fw;     /* never NULL after finish */
    uint32_t tp, pp, ep, cp, dp;       /* the declared layout; 0 = not declared */
    char model[1024];                  /* --ft-model (the CLI takes it as MODEL) */
    char gpu[64];                      /* --ft-gpu */
    uint32_t gpus;                     /* --ft-gpus (0 = not given) */
    char override_reason[200];         /* --ft-override */
    double gpu_util;                   /* serving share of the card; 0 = the framework's */
    bool ac_selective;                 /* --grad-ckpt=selective */
    bool ac_selective_given;           /* --grad-ckpt=selective or =full said which */
    uint64_t global_batch;             /* samples per optimizer step (the CLI's --global-batch;
                                          0: none): sets job.grad_accum where the job's data
                                          parallel is known (policies/assess.c) */
    unsigned grad_reduce_bytes;        /* --grad-reduce-dtype: 4 fp32, 2 bf16; 0 not given */
    unsigned state_dtype_bytes;        /* --optimizer-state-dtype: the same */
    unsigned master_dtype_bytes;       /* --master-dtype: the same */
    uint64_t given;                    /* bit id: option id was given */
    char spelling[8];                  /* "--" or "--ft-": option names in messages */
    size_t n_notes;
    char notes[FG_JOBSPEC_NOTES][200]; /* what the framework decided for the job */
    enum fg_mode adapter;              /* --ft-adapter under a preference / RL --mode */
    char said[FG_JOBOPT_COUNT][48];    /* each option's value as given (conflicts name it) */
    uint64_t from_file;                /* bit id: the option came from a config file */
    size_t n_configs;
    char configs[FG_JOBSPEC_CONFIGS][512];  /* --config [FORMAT:]FILE, in order */
    size_t n_from, n_unknown;
    struct fg_jobspec_from from[FG_JOBSPEC_FROM];
    char unknown[FG_JOBSPEC_UNKNOWN][256]; /* "train.yaml:30 sample_packing=true: why" */
    uint64_t config_digest;            /* FNV-1a of the files read; 0: none */
    bool layout_fixed;                 /* the job's files declare its layout (a trainer's
                                          file that names no sharding is DDP): the check
                                          judges that one and plans no other */
    /* The spec as the options left it before fg_jobspec_finish completed it (the job, the
     * framework, the serving share, what was given, the notes): fg_jobspec_unfinish puts
     * it back, so that a finished job can take more options and be finished again as if
     * they had been given with the others (the remedies, policies/remedy.c). */
    struct {
        bool saved;
        struct fg_job job;
        const struct fg_framework *fw;
        double gpu_util;
        uint64_t given;
        size_t n_notes;
    } raw;
};

/* spelling: how the front end writes an option in messages ("--" for the CLI, "--ft-" for
 * the plugin; NULL: "--"). */
void fg_jobspec_init(struct fg_jobspec *s, const char *spelling);

/* Option id = value (a flag takes "" or "set" bare, or a yes/no word of util/yesno.h: yes,
 * true, on, 1 set it; no, false, off, 0 clear it).
 * CONFIG adds a file to read (fg_jobfile_apply, jobfile.h); every other option replaces. */
int fg_jobspec_set(struct fg_jobspec *s, unsigned id, const char *value, struct fg_err *err);

/* See the top of this file. */
int fg_jobspec_finish(struct fg_jobspec *s, struct fg_err *err);

/* A finished spec back to what its options said before fg_jobspec_finish (nothing when it
 * was not finished): more options may then be set, and fg_jobspec_finish run again, with
 * the same result as giving them all at once (an option set again replaces its value). */
void fg_jobspec_unfinish(struct fg_jobspec *s);

/* Whether the job declares any layout dimension (--tp, --pp, --ep, --cp, --dp), or its
 * files declare the whole layout (layout_fixed). */
bool fg_jobspec_declares_layout(const struct fg_jobspec *s);

static inline bool fg_jobspec_given(const struct fg_jobspec *s, unsigned id)
{
    return (s->given >> id) & 1u;
}

#endif
