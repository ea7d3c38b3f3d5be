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
#include "framework.h"
#include "memory.h"

enum fg_jobopt_id {
#define FG_JOBOPT(id, name, arg, has_arg, help) FG_JOBOPT_##id,
#include "jobopts.def"
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

/* The row id of a name ("seq-len", also "ft-seq-len" and "ft_seq_len"); -1 when none. */
int fg_jobopt_find(const char *name);

#define FG_JOBSPEC_NOTES 4

struct fg_jobspec {
    struct fg_job job;                 /* complete after fg_jobspec_finish */
    const struct fg_framework *fw;     /* never NULL after finish */
    uint32_t tp, pp, ep, cp, dp;       /* the declared layout; 0 = not declared */
    char model[1024];                  /* --ft-model (the CLI takes it as MODEL) */
    char gpu[64];                      /* --ft-gpu */
    uint32_t gpus;                     /* --ft-gpus (0 = not given) */
    char override_reason[200];         /* --ft-override */
    double gpu_util;                   /* serving share of the card; 0 = the framework's */
    uint64_t given;                    /* bit id: option id was given */
    char spelling[8];                  /* "--" or "--ft-": option names in messages */
    size_t n_notes;
    char notes[FG_JOBSPEC_NOTES][200]; /* what the framework decided for the job */
    enum fg_mode adapter;              /* --ft-adapter under a preference / RL --mode */
};

/* spelling: how the front end writes an option in messages ("--" for the CLI, "--ft-" for
 * the plugin; NULL: "--"). */
void fg_jobspec_init(struct fg_jobspec *s, const char *spelling);

/* Option id = value (a flag takes "", "1", "yes" or "true"; "0", "no", "false" clear it). */
int fg_jobspec_set(struct fg_jobspec *s, unsigned id, const char *value, struct fg_err *err);

/* See the top of this file. */
int fg_jobspec_finish(struct fg_jobspec *s, struct fg_err *err);

/* Whether the job declares any layout dimension (--tp, --pp, --ep, --cp, --dp). */
bool fg_jobspec_declares_layout(const struct fg_jobspec *s);

static inline bool fg_jobspec_given(const struct fg_jobspec *s, unsigned id)
{
    return (s->given >> id) & 1u;
}

#endif
