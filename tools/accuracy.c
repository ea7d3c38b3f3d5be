/*
 * accuracy - the estimator against the measured peaks of
 * tests/fixtures/measured-dev.tsv, as interpreted in tests/accuracy/rows.tsv.
 *
 *   accuracy [ROWS.tsv [MODELS_DIR [OUT.tsv]]]
 *
 * Prints one line per row and the summary; writes the table with each
 * estimate's breakdown to OUT.tsv (default build/accuracy.tsv).  Exit status
 * 0, or 1 when a row could not be estimated, 2 on bad input.  It measures and
 * reports; the gate (thresholds, OOM rows) is tests/test_accuracy.c.  Run
 * from the repository root (make accuracy).
 */
#include <stdio.h>

#include "../tests/accuracy/accuracy.c"

int main(int argc, char **argv)
{
    const char *rows_path = argc > 1 ? argv[1] : "tests/accuracy/rows.tsv";
    const char *models = argc > 2 ? argv[2] : "tests/fixtures/models";
    const char *out = argc > 3 ? argv[3] : "build/accuracy.tsv";
    struct acc_row *rows;
    size_t n;
    char msg[512];
    if (acc_load(rows_path, &rows, &n, msg, sizeof msg)) {
        fprintf(stderr, "accuracy: %s\n", msg);
        return 2;
    }
    struct acc_summary s;
    acc_run(rows, n, models, &s);
    acc_print(stdout, rows, n, &s);
    if (acc_write_tsv(out, rows, n)) {
        perror(out);
        acc_free(rows);
        return 2;
    }
    printf("table: %s\n", out);
    acc_free(rows);
    return s.failed ? 1 : 0;
}
