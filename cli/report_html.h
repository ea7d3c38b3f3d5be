/*
 * report_html.h - `fitgate plan MODEL --html FILE`: the whole answer as one
 * self-contained HTML page.
 *
 * The page holds its CSS inline and draws with inline SVG; it has no script,
 * no font, no image and no link that would load anything, so it opens the
 * same offline, from a mail attachment or from a job's output directory.
 * Sections (each a <section> with a fixed id, which tests and users can
 * rely on):
 *
 *   summary    model, job, estimate at the job's micro-batch, verdict
 *   breakdown  stacked bar of the estimate, one segment per breakdown key
 *              (memory.h fg_breakdown), each segment's <title> listing the
 *              estimate's lines with their sources; a full fine-tune gets
 *              two bars (backward peak, optimizer step: memory.c's phases)
 *   batch      memory needed (estimate x headroom) against micro-batch on
 *              a log2 axis, one line per job mode, each card's usable memory
 *              a horizontal line; where they cross is the largest batch
 *   cards      the card table of `fitgate plan` (full, LoRA, serve)
 *   layouts    the planner's layouts on the request's card (the gate's), else
 *              on --gpu NAME, else on H200, with the
 *              memory of every pipeline stage and the job environment the
 *              plugin would export (FITGATE_*, NeMo overrides)
 *   structure  the model graph: node, type, detail, output shape, parameters
 *
 * Every string taken from a config or the command line is HTML-escaped.
 *
 * Error contract: error.h.  The estimator's and planner's errors pass
 * through; FG_E_IO names the file.  FG_E_NOTFOUND when --gpu names no card.
 */
#ifndef FG_CLI_REPORT_HTML_H
#define FG_CLI_REPORT_HTML_H

#include <stdint.h>
#include <stdio.h>

#include "util/error.h"
#include "jobopts.h"
#include "model/model.h"

struct fg_assessment;
struct fg_gpu;
struct fg_gpu_table;
struct fg_rules;

/*
 * What the gate decided (plan and check), for the page to show rather than decide again:
 * its assessment, the card the request named (NULL: none; the page then judges the job on
 * --gpu or H200 under the same rules), the rules and the GPU table it used.  Borrowed.
 */
struct fg_report_gate {
    const struct fg_assessment *a;
    const struct fg_gpu *card;
    uint32_t gpus;                      /* the request's GPUs (0: none) */
    const struct fg_rules *rules;
    const struct fg_gpu_table *table;
};

/*
 * Write the report for model m and the parsed options o to f (borrowed; not
 * closed); gate NULL: the page assesses the job itself under the default policy and
 * the built-in GPU table.  Fails with the engine's errors, or FG_E_IO when a write fails.
 */
int fg_report_html_write(FILE *f, const struct fg_model *m, const struct fg_cli_opts *o,
                         const struct fg_report_gate *gate, struct fg_err *err);

/*
 * Same, into the file at path: written to a temporary file beside it and
 * renamed over it, so a reader never sees half a page and a failed run
 * leaves an earlier report in place.  A path that exists and is not a
 * regular file (/dev/stdout, a pipe) is written directly.
 */
int fg_report_html_file(const char *path, const struct fg_model *m, const struct fg_cli_opts *o,
                        const struct fg_report_gate *gate, struct fg_err *err);

#endif
