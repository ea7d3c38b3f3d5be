/*
 * test_accuracy.c - the estimator against the measured peaks of
 * tests/fixtures/measured-dev.tsv (interpreted in tests/accuracy/rows.tsv,
 * the rest listed with reasons in tests/accuracy/excluded.tsv).  Same core as
 * `make accuracy` (tests/accuracy/accuracy.c); the per-row table and the
 * analysis of the misses are in tests/accuracy/README.md.
 *
 * The thresholds are what the estimator achieves today, not targets: they
 * stop it getting worse.  Tighten them when the estimator improves.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "accuracy/accuracy.c"

#define ROWS_TSV "tests/accuracy/rows.tsv"
#define EXCLUDED_TSV "tests/accuracy/excluded.tsv"
#define MEASURED_TSV "tests/fixtures/measured-dev.tsv"
#define MODELS_DIR "tests/fixtures/models"

/* Median |error| over the scored peaks: 14.1% when first written, 7.3% after the
 * optimizer-step phase model, 7.1% with the unsharded weight copy of lit-gpt's FSDP
 * rows (44, 45, 47); the gate is the target, 10%. */
#define MEDIAN_ABS_PCT_MAX 10.0
/* Share of scored peaks within 25%: 33 of 56 at first, 48 of 56 (86%) after the
 * step phase, 51 of 56 (91%) now. */
#define WITHIN25_SHARE_MIN 0.85

/*
 * No OOM row may get "fits".  The last two that did: 64 (lit-gpt's bf16-mixed LoRA
 * with an fp32 base) until bf16-mixed came to mean fp32 parameters for LoRA too, and
 * 46 (Llama-2-13b LoRA on 2x A100 40GB under lit-gpt FSDP: each rank held a whole
 * bf16 copy of the weights beside its shard) until rows.tsv could say so
 * (unsharded_copy; 15.73 -> 41.76 GB).
 */

static struct acc_row *rows;
static size_t n_rows;
static struct acc_summary sum;

static int setup(void **state)
{
    (void)state;
    char msg[512];
    if (acc_load(ROWS_TSV, &rows, &n_rows, msg, sizeof msg)) {
        fprintf(stderr, "test_accuracy: %s\n", msg);
        return -1;
    }
    acc_run(rows, n_rows, MODELS_DIR, &sum);
    printf("accuracy: %zu rows, %zu scored peaks: median |error| %.1f%% (gate %.1f%%), "
           "within 10%% %zu, within 25%% %zu; OOM rows %zu, said fits %zu\n",
           sum.rows, sum.peaks, sum.median_abs_pct, MEDIAN_ABS_PCT_MAX, sum.within10,
           sum.within25, sum.ooms, sum.oom_fits);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    acc_free(rows);
    rows = NULL;
    return 0;
}

/* First-column numbers of a TSV with a header line; returns the count. */
static size_t read_first_column(const char *path, unsigned *out, size_t cap)
{
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    char line[8192];
    size_t n = 0;
    bool header = true;
    while (fgets(line, sizeof line, fp)) {
        if (header) {
            header = false;
            continue;
        }
        if (line[0] == '\n' || line[0] == '#')
            continue;
        assert_true(n < cap);
        out[n++] = (unsigned)strtoul(line, NULL, 10);
    }
    fclose(fp);
    return n;
}

static void acc_load_should_read_every_interpreted_row(void **state)
{
    (void)state;
    assert_true(n_rows > 50);
    for (size_t i = 1; i < n_rows; i++)
        assert_true(rows[i].row > rows[i - 1].row); /* sorted, no duplicates */
}

static void rows_and_exclusions_should_cover_every_measured_row_once(void **state)
{
    (void)state;
    /* measured-dev.tsv: one header line, then one line per run (no blank lines). */
    FILE *fp = fopen(MEASURED_TSV, "r");
    assert_non_null(fp);
    size_t measured = 0;
    int c, prev = '\n';
    while ((c = fgetc(fp)) != EOF) {
        if (c == '\n')
            measured++;
        prev = c;
    }
    if (prev != '\n')
        measured++;
    fclose(fp);
    measured--; /* header */
    unsigned excluded[128];
    size_t n_ex = read_first_column(EXCLUDED_TSV, excluded, 128);
    assert_int_equal(n_rows + n_ex, measured);
    unsigned char seen[256] = {0};
    for (size_t i = 0; i < n_rows; i++) {
        assert_true(rows[i].row >= 1 && rows[i].row <= measured);
        assert_int_equal(seen[rows[i].row]++, 0);
    }
    for (size_t i = 0; i < n_ex; i++) {
        assert_true(excluded[i] >= 1 && excluded[i] <= measured);
        assert_int_equal(seen[excluded[i]]++, 0);
    }
}

static void acc_run_should_estimate_every_row(void **state)
{
    (void)state;
    for (size_t i = 0; i < n_rows; i++)
        if (!rows[i].ok)
            fail_msg("row %u (%s): %s", rows[i].row, rows[i].config, rows[i].error);
    assert_int_equal(sum.failed, 0);
}

static void acc_run_should_not_say_fits_for_an_oom_row(void **state)
{
    (void)state;
    size_t ooms = 0;
    for (size_t i = 0; i < n_rows; i++) {
        const struct acc_row *r = &rows[i];
        if (!r->oom)
            continue;
        ooms++;
        assert_true(r->has_fit);
        if (r->fit.verdict == FG_FIT_FITS)
            fail_msg("row %u (%s, %s on %s) ran out of memory but the estimate says fits "
                     "(%.2f GB)", r->row, r->model, fg_mode_name(r->job.mode), r->card,
                     (double)r->est.total_bytes / 1e9);
    }
    assert_int_equal(sum.oom_fits, 0);
    assert_true(ooms > 0);
}

static void acc_run_should_keep_the_median_error_at_or_under_todays(void **state)
{
    (void)state;
    assert_true(sum.peaks > 40);
    if (sum.median_abs_pct > MEDIAN_ABS_PCT_MAX)
        fail_msg("median |error| %.1f%% > %.1f%%", sum.median_abs_pct, MEDIAN_ABS_PCT_MAX);
    double share = (double)sum.within25 / (double)sum.peaks;
    if (share < WITHIN25_SHARE_MIN)
        fail_msg("within 25%%: %.0f%% < %.0f%%", share * 100, WITHIN25_SHARE_MIN * 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(acc_load_should_read_every_interpreted_row),
        cmocka_unit_test(rows_and_exclusions_should_cover_every_measured_row_once),
        cmocka_unit_test(acc_run_should_estimate_every_row),
        cmocka_unit_test(acc_run_should_not_say_fits_for_an_oom_row),
        cmocka_unit_test(acc_run_should_keep_the_median_error_at_or_under_todays),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
