/* jobopts.h - the job options shared by plan and check (docs/cli.md "Job options"). */
#ifndef FG_CLI_JOBOPTS_H
#define FG_CLI_JOBOPTS_H

#include <stdbool.h>
#include <stdint.h>

#include "memory.h"

struct fg_cli_opts {
    const char *model;
    struct fg_job job;
    bool mode_set, seq_set, precision_set;
    const char *gpu;          /* --gpu NAME */
    uint32_t gpus, nodes;     /* --gpus N, --nodes N */
    bool json, structure;
    const char *html;         /* --html FILE: also write the HTML report (report_html.h) */
    double headroom, conservative;
    uint64_t samples, epochs, global_batch;
    double utilisation;
};

/*
 * Parse argv[1..] (argv[0] is the subcommand).  Returns 0, or 2 after
 * printing a clear message naming the bad option to stderr.
 */
int fg_cli_parse_opts(int argc, char **argv, struct fg_cli_opts *o);

/*
 * The job for one mode column of the card table (plan's text table and the
 * HTML report): the user's job for its own mode; for the other modes the
 * seeds' defaults, keeping the user's --seq except in serve.
 */
struct fg_job fg_cli_job_for_mode(const struct fg_cli_opts *o, enum fg_mode mode);

#endif
