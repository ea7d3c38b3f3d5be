/*
 * accuracy.h - the estimator against measured peaks (tests/accuracy/rows.tsv).
 *
 * One core, two front ends: tools/accuracy.c (make accuracy: the table and
 * build/accuracy.tsv) and tests/test_accuracy.c (the cmocka gate) both
 * link accuracy.o, compiled once, so they compute the same numbers.
 *
 * What is compared with what (metric column of rows.tsv):
 *   allocated, active, reserved  the measured torch counter against
 *                                est.total_bytes (the estimator's figure is
 *                                "what the framework allocates", memory.h;
 *                                its 5% fragmentation line stays in, so
 *                                allocated/active rows are expected a few %
 *                                under it)
 *   nvml                         a whole-process figure (nvidia-smi, DCGM)
 *                                against total_bytes + the CUDA context
 *                                (FG_CUDA_PROCESS_BYTES, 777 MiB)
 *   fits-limit                   the VRAM of the card at the largest sequence
 *                                that fits, against total_bytes + context;
 *                                shown but not counted in the statistics
 * OOM rows (oom = 1) have no figure: the verdict of fg_fit_card on that card
 * must not be "fits".
 *
 * Errors: acc_load returns 0 or -1 with a message "PATH:LINE: what" in
 * errbuf; a row the engine cannot estimate keeps its error text in
 * row->error and counts as failed, the run goes on.
 * Ownership: acc_load allocates *rows; the caller frees it with acc_free.
 */
#ifndef FG_ACCURACY_H
#define FG_ACCURACY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "plan/fit.h"
#include "memory/memory.h"

enum acc_metric { ACC_ALLOCATED, ACC_ACTIVE, ACC_RESERVED, ACC_NVML, ACC_FITS_LIMIT };

struct acc_row {
    /* from rows.tsv, or from a calibration run (acc_load_calib) */
    unsigned row;               /* 1-based data row of measured-dev.tsv; calibration: the line
                                   of the run's file */
    char model[96];             /* model_id as measured-dev.tsv spells it; calibration: the
                                   grid row's name */
    char config[96];            /* fixture dir under the models dir; calibration: the grid's
                                   config_dir */
    char *config_json;          /* calibration: the exact config.json the run built (owned) */
    bool unscored;              /* shown, not in the statistics: why says why */
    uint64_t n_params, n_trainable; /* calibration: what torch counted (0 when absent) */
    uint64_t engine_params;     /* the graph's parameters once loaded: stored, less buffers
                                   and tied copies (acc_run) */
    char why[240];
    char card[32];              /* gres alias, "-" when the card is unknown */
    unsigned gpus, zero;
    uint64_t measured;          /* bytes; 0 for OOM rows */
    enum acc_metric metric;
    bool oom;
    struct fg_job job;
    /* results (acc_run) */
    bool ok;                    /* estimated */
    char error[200];            /* why not */
    struct fg_estimate est;
    uint64_t compared;          /* estimate side of the comparison, bytes */
    double err_pct;             /* (compared - measured) / measured x 100; 0 for OOM rows */
    bool has_fit;               /* card known: verdict computed */
    struct fg_fit fit;
};

struct acc_summary {
    size_t rows, failed;        /* rows read; rows the engine could not estimate */
    size_t peaks;               /* rows with a measured peak in the statistics */
    double median_abs_pct;      /* median |error| over those */
    double mean_signed_pct;     /* mean signed error (bias) */
    size_t within10, within25;  /* |error| <= 10% / 25% */
    size_t limits;              /* fits-limit rows (reported, not counted) */
    size_t unscored;            /* rows shown with their reason, not counted */
    size_t ooms, oom_fits, oom_borderline;  /* OOM rows; said "fits"; said "borderline" */
    size_t ran_split;           /* measured rows on a known card we said need more cards */
};

/* Read rows.tsv (header line, tab-separated, columns by name). */
int acc_load(const char *path, struct acc_row **rows, size_t *n, char *errbuf, size_t cap);

/*
 * Read a calibration run (tests/calibration/measured-*.tsv, columns by name): one row per
 * grid row that ran ("ok"), compared as `allocated` (peak_alloc over steps 2-3) on card,
 * with the model built from the row's own config_json.  The grid's words become job
 * options as tests/accuracy/README.md ("Calibration runs") says.  Rows named in unscored
 * (a TSV of name <tab> reason; NULL for none) are shown with that reason and not scored;
 * a name there that the run lacks is an error.
 */
int acc_load_calib(const char *path, const char *unscored, const char *card,
                   struct acc_row **rows, size_t *n, char *errbuf, size_t cap);

void acc_free(struct acc_row *rows, size_t n);

/* Estimate every row (models read from models_dir/<config>) and summarise. */
void acc_run(struct acc_row *rows, size_t n, const char *models_dir, struct acc_summary *s);

const char *acc_metric_name(enum acc_metric m);

/* The per-row table and the summary, for people. */
void acc_print(FILE *f, const struct acc_row *rows, size_t n, const struct acc_summary *s);

/* The per-row table with the estimate's breakdown, tab-separated; 0 or -1 (errno). */
int acc_write_tsv(const char *path, const struct acc_row *rows, size_t n);

#endif
