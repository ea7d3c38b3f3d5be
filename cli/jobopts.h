/*
 * jobopts.h - the options of plan and check: the job (engine/job/jobopts.def, parsed by the
 * engine's one parser, so `--seq-len 512`, `--seq-len=512` and the plugin's spelling
 * `--ft-seq-len=512` all work), the GPUs it asks for in Slurm's own spellings (--gres,
 * --gpus, --gpus-per-node, --nodes, --partition), the site's policy (--policy,
 * --gpus-conf) and the CLI's own (--json, --html ...); and the number parsers every
 * subcommand's options share.
 */
#ifndef FG_CLI_JOBOPTS_H
#define FG_CLI_JOBOPTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "job/jobspec.h"
#include "memory/memory.h"

struct fg_cli_opts {
    const char *model;
    struct fg_jobspec spec;   /* the job, finished with its framework */
    struct fg_job job;        /* spec.job */
    bool seq_set;             /* --seq-len given (the card table's other modes keep it) */
    const char *gpu;          /* --gpu / --ft-gpu NAME (NULL: none) */
    /* the GPU request as Slurm spells it (at most one of the three) */
    const char *gres, *gpus_opt, *gpus_per_node;
    uint32_t nodes;           /* --nodes N (0: not given) */
    const char *partition;    /* --partition NAME */
    const char *policy;       /* --policy FILE (fitgate.conf) */
    const char *gpus_conf;    /* --gpus-conf FILE (site GPU rows) */
    bool offline;             /* --offline: site directories and caches only, no hub */
    const char *base_dir;     /* --base-dir DIR: a relative MODEL path is read from there */
    const char *write_fit;    /* --write-fit OUT: the job's config edited to pass (remedy_edits.h) */
    const char *log_as;       /* --log-as WHERE: write the decision to the policy's LogFile= */
    bool json, structure;
    const char *html;         /* --html FILE: also write the HTML report (report_html.h) */
    bool headroom_set, conservative_set;
    double headroom, conservative;
    uint64_t samples, epochs, global_batch;
    double utilisation;
    char job_error[512];      /* the first bad job option (parse returned 4) */
};

/*
 * Parse argv[1..] (argv[0] is the subcommand).  Returns 0; 2 after printing a clear message
 * naming a bad CLI option to stderr; or 4 when the job's own options are wrong (a value, or a
 * combination its framework refuses): o->job_error says which, and everything else is read
 * (check answers that as the plugin does: a rejection).
 */
int fg_cli_parse_opts(int argc, char **argv, struct fg_cli_opts *o);

/*
 * The value s of option opt (named in the message as given, "--min-jobs") as a whole
 * string: an unsigned decimal in [min, max] (no sign), or a number in [min, max] (strtod's
 * forms; NaN is in no range).  0 with *out set, or 2 (the CLI's exit status for a bad
 * argument) after a message on stderr naming the option and the value.
 */
/* The CLI's own option at row i of its table ("json") and whether it takes a value; NULL
 * past the end.  For the lists generated from the tables (tools/gen_lists.c). */
const char *fg_cli_opt_at(size_t i, bool *has_arg);

/* How plan and check spell job option id: "--seq-len", or "--ft-gpus" where an option of the
 * CLI's own (Slurm's --gpus) has the name; NULL for MODEL, the positional argument.  In buf. */
const char *fg_cli_jobopt_flag(unsigned id, char *buf, size_t cap);

/* What the usage text shows for its value: its words ("full|lora|qlora|serve") or the row's
 * ARG; NULL for a flag.  Borrowed (the row's) or in buf. */
const char *fg_cli_jobopt_arg(unsigned id, char *buf, size_t cap);

/* Every job option as plan and check spell it, "  --mode full|lora|qlora|serve --seq-len N
 * ...", in lines of at most width characters: the usage text's, from the table. */
void fg_cli_jobopts_usage(FILE *f, size_t width);

int fg_cli_parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out);
int fg_cli_parse_f(const char *opt, const char *s, double min, double max, double *out);

/*
 * The job for one mode column of the card table (plan's text table and the
 * HTML report): the user's job for its own mode; for the other modes the
 * seeds' defaults as the user's framework completes them (jobspec.h), keeping
 * the user's --seq except in serve; the plain defaults for a mode the
 * framework does not run.
 */
struct fg_job fg_cli_job_for_mode(const struct fg_cli_opts *o, enum fg_mode mode);

#endif
