/*
 * calib.h - a site's calibration: per framework x mode, the factor by which
 * its jobs' measured GPU memory exceeded fitgate's estimate.
 *
 * `fitgate learn --write-calibration FILE` writes it from the jobs that ran
 * (docs/learn.md); fitgate.conf Calibration=FILE turns it on (off by
 * default).  The file is a table like gpus.conf: one row per line, Slurm-
 * style Key=Value pairs separated by blanks, '#' starts a comment, keys
 * case-insensitive:
 *
 *   Framework*  a framework name (framework.h: hf, lightning, ...)
 *   Mode*       full, lora, qlora or serve
 *   Factor*     measured / estimated, 0.25 .. 4
 *   Jobs*       how many jobs it was learnt from, >= 1
 *   Low, High   its confidence interval (both or neither; Low <= Factor <= High)
 *
 * An unknown key, a repeated key, a bad number, a missing required key or a
 * second row for one framework x mode is an error naming file:line.
 *
 * Applied (fg_calib_apply): the estimate is scaled by Factor and one line
 * is added to its breakdown ("site calibration: x1.07 from 143 jobs"); it
 * never goes below the physical floor, weights + gradients + optimizer
 * states + adapters, which the job holds whatever the framework does.
 *
 * Error contract: error.h.  struct fg_calib is plain data (no pointers):
 * nothing to free.
 */
#ifndef FG_CALIB_H
#define FG_CALIB_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "memory/memory.h"

#define FG_CALIB_MAX_ROWS 48
#define FG_CALIB_FACTOR_MIN 0.25
#define FG_CALIB_FACTOR_MAX 4.0

struct fg_calib_row {
    char framework[24];
    enum fg_mode mode;
    double factor;
    uint32_t jobs;
    double low, high;    /* 0, 0: not given */
    unsigned line;       /* in the file */
};

struct fg_calib {
    char path[256];      /* for messages ("" none: the table is empty) */
    size_t n;
    struct fg_calib_row rows[FG_CALIB_MAX_ROWS];
};

/* Parse calibration text (origin names it in messages: the path).  *c is reset first. */
int fg_calib_parse(struct fg_calib *c, const char *text, size_t len, const char *origin,
                   struct fg_err *err);

/* Read (at most 1 MiB) and parse a file.  FG_E_NOTFOUND / FG_E_IO name it. */
int fg_calib_load(struct fg_calib *c, const char *path, struct fg_err *err);

/* fg_calib_load of the site's file (the policy's Calibration=): also refused, FG_E_DENIED,
 * when another user owns it or its group or all may write it (fileio.h fg__site_file_check). */
int fg_calib_load_site(struct fg_calib *c, const char *path, struct fg_err *err);

/* The row for framework x mode (framework case-insensitive), or NULL; borrowed from c. */
const struct fg_calib_row *fg_calib_find(const struct fg_calib *c, const char *framework,
                                         enum fg_mode mode);

/*
 * Scale e (at its batch) by r->factor, never below weights + gradients + optimizer +
 * adapters: static and per-sample bytes, the optimizer step's peak and the total, so that
 * fg_estimate_at stays consistent; adds the line key "calibration" (when a line is free)
 * whose bytes are the change in total (what says its sign).
 */
void fg_calib_apply(const struct fg_calib_row *r, struct fg_estimate *e);

/* One row as the file writes it: "Framework=hf Mode=lora Factor=1.07 Jobs=143 Low=1.03 High=1.11". */
int fg_calib_format_row(const struct fg_calib_row *r, char *buf, size_t cap);

/* "site calibration: x1.07 from 143 jobs, 95% CI 1.03-1.11" */
void fg_calib_describe(const struct fg_calib_row *r, char *buf, size_t cap);

#endif
