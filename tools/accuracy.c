/*
 * accuracy - the estimator against measured peaks.
 *
 *   accuracy [ROWS.tsv [MODELS_DIR [OUT.tsv]]]
 *       the published figures of tests/fixtures/measured-dev.tsv, as interpreted in
 *       tests/accuracy/rows.tsv (default build/accuracy.tsv)
 *   accuracy --calib RUN.tsv UNSCORED.tsv CARD [OUT.tsv]
 *       a calibration run of tests/calibration/measure.py on CARD (default
 *       build/accuracy-calib.tsv)
 *
 * Prints one line per row and the summary; writes the table with each estimate's breakdown
 * to OUT.tsv.  Exit status 0, or 1 when a row could not be estimated, 2 on bad input.  It
 * measures and reports; the gate (thresholds, OOM rows) is tests/test_accuracy.c.  Run
 * from the repository root (make accuracy).
 */
#include <stdio.h>
#include <string.h>

#include "../tests/accuracy/accuracy.h"

int main(int argc, char **argv)
{
    bool calib = argc > 1 && !strcmp(argv[1], "--calib");
    if (calib && argc < 5) {
        fprintf(stderr, "usage: accuracy --calib RUN.tsv UNSCORED.tsv CARD [OUT.tsv]\n");
        return 2;
    }
    const char *models = !calib && argc > 2 ? argv[2] : "tests/fixtures/models";
    const char *out = calib ? (argc > 5 ? argv[5] : "build/accuracy-calib.tsv")
                            : (argc > 3 ? argv[3] : "build/accuracy.tsv");
    struct acc_row *rows;
    size_t n;
    char msg[512];
    int rc = calib ? acc_load_calib(argv[2], argv[3], argv[4], &rows, &n, msg, sizeof msg)
                   : acc_load(argc > 1 ? argv[1] : "tests/accuracy/rows.tsv", &rows, &n, msg,
                              sizeof msg);
    if (rc) {
        fprintf(stderr, "accuracy: %s\n", msg);
        return 2;
    }
    struct acc_summary s;
    acc_run(rows, n, models, &s);
    acc_print(stdout, rows, n, &s);
    if (acc_write_tsv(out, rows, n)) {
        perror(out);
        acc_free(rows, n);
        return 2;
    }
    printf("table: %s\n", out);
    acc_free(rows, n);
    return s.failed ? 1 : 0;
}
