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
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "accuracy/accuracy.h"

#define ROWS_TSV "tests/accuracy/rows.tsv"
#define EXCLUDED_TSV "tests/accuracy/excluded.tsv"
#define MEASURED_TSV "tests/fixtures/measured-dev.tsv"
#define MODELS_DIR "tests/fixtures/models"

/* Median |error| over the scored peaks: 14.1% when first written, 7.3% after the
 * optimizer-step phase model, 7.1% with the unsharded weight copy of lit-gpt's FSDP
 * rows (44, 45, 47), 2.8% with lit-gpt's own 4-bit head, its fp16 dequantized copies
 * (rows 48-68) and one dequantized copy at a time (QLoRA); the gate is issue 34's 7%. */
#define MEDIAN_ABS_PCT_MAX 7.0
/* Share of scored peaks within 25%: 33 of 56 at first, 48 of 56 (86%) after the
 * step phase, 53 of 56 (95%) now. */
#define WITHIN25_SHARE_MIN 0.90

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

/* The H200 calibration runs (below), loaded and estimated once. */
#define CALIB_UNSCORED_TSV "tests/accuracy/h200-unscored.tsv"
enum { FIRST_RUN, HELD_OUT, RUNS };
static struct calib {
    const char *path, *unscored;
    struct acc_row *rows;
    size_t n;
    struct acc_summary sum;
} calib[RUNS] = {
    {"tests/calibration/measured-h200.tsv", CALIB_UNSCORED_TSV, NULL, 0, {0}},
    {"tests/calibration/measured-h200-heldout.tsv", NULL, NULL, 0, {0}},
};

static int setup(void **state)
{
    (void)state;
    char msg[512];
    if (acc_load(ROWS_TSV, &rows, &n_rows, msg, sizeof msg)) {
        fprintf(stderr, "test_accuracy: %s\n", msg);
        return -1;
    }
    acc_run(rows, n_rows, MODELS_DIR, &sum);
    for (size_t f = 0; f < RUNS; f++) {
        struct calib *c = &calib[f];
        if (acc_load_calib(c->path, c->unscored, "h200", &c->rows, &c->n, msg, sizeof msg)) {
            fprintf(stderr, "test_accuracy: %s\n", msg);
            return -1;
        }
        acc_run(c->rows, c->n, MODELS_DIR, &c->sum);
    }
    printf("accuracy: %zu rows, %zu scored peaks: median |error| %.1f%% (gate %.1f%%), "
           "within 10%% %zu, within 25%% %zu; OOM rows %zu, said fits %zu\n",
           sum.rows, sum.peaks, sum.median_abs_pct, MEDIAN_ABS_PCT_MAX, sum.within10,
           sum.within25, sum.ooms, sum.oom_fits);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    acc_free(rows, n_rows);
    rows = NULL;
    for (size_t f = 0; f < RUNS; f++) {
        acc_free(calib[f].rows, calib[f].n);
        calib[f].rows = NULL;
    }
    return 0;
}

/* lit-gpt's generate (8641822's resource tables, d16f924d's tutorials/quantize.md) as its
 * code runs it: bf16 and 4-bit bitsandbytes weights with lit-gpt's own head, the
 * prefill's fp16 and bf16 dequantized copies of it, the KV cache of prompt + new tokens:
 * every such row within 2% (before: -17.6% .. +3.8%).  bnb.int8 (row 69) is not among
 * them: its MatMul8bitLt layout copies are not modelled. */
static void acc_run_should_hold_lit_gpts_generate_rows_within_2pct(void **state)
{
    (void)state;
    size_t n = 0;
    for (size_t i = 0; i < n_rows; i++) {
        const struct acc_row *r = &rows[i];
        if (r->job.mode != FG_MODE_SERVE || !r->measured || !r->job.head_untied ||
            r->job.quant == FG_QUANT_INT8)
            continue;
        n++;
        if (r->err_pct < -2.0 || r->err_pct > 2.0)
            fail_msg("row %u (%s): %+.1f%%", r->row, r->model, r->err_pct);
    }
    assert_int_equal(n, 16); /* 48, 50-55, 57-60, 62, 65-68 */
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

/*
 * The H200 calibration run (tests/calibration/measured-h200.tsv: random-weight models built
 * from their config.json, 3 real steps, torch.cuda.max_memory_allocated), and the rows run
 * after the estimator changed on it (held out).  Every row that ran is estimated; the rows
 * in h200-unscored.tsv are shown, not scored.  Gates as above: what the estimator achieves,
 * so it cannot get worse.  Both runs are loaded and estimated once, in setup.
 */
/* Hold one calibration run to its gates. */
static void calib_gate(const struct calib *c, size_t min_scored, double median_max,
                       double within25_min)
{
    const struct acc_row *cal = c->rows;
    size_t n = c->n;
    const struct acc_summary cs = c->sum;
    const char *path = c->path;
    print_message("%s: %zu rows, %zu scored: median |error| %.1f%% (gate %.1f%%), within 25%% "
                  "%zu; not scored %zu\n", path, cs.rows, cs.peaks, cs.median_abs_pct,
                  median_max, cs.within25, cs.unscored);
    for (size_t i = 0; i < n; i++)
        if (!cal[i].ok)
            fail_msg("%s: %s", cal[i].model, cal[i].error);
    assert_true(cs.peaks >= min_scored);
    /* every job ran on one H200: none may be told it needs more cards */
    assert_int_equal(cs.ran_split, 0);
    if (cs.median_abs_pct > median_max)
        fail_msg("median |error| %.1f%% > %.1f%%", cs.median_abs_pct, median_max);
    double share = (double)cs.within25 / (double)cs.peaks;
    if (share < within25_min)
        fail_msg("within 25%%: %.0f%% < %.0f%%", share * 100, within25_min * 100);
}

/* Median |error| 7.2% and 47 of 55 within 25% when the run was first scored; 5.3% and 53
 * after the changes it showed were needed (tied heads, the prefill's working set, peft's
 * rebuilt experts, falcon's kept scores); 5.0% and 56 of 58 with the eager-attention rows
 * scored under --attention eager. */
static void calibration_run_should_stay_as_accurate_as_today(void **state)
{
    (void)state;
    calib_gate(&calib[FIRST_RUN], 58, 5.5, 0.95);
}

/* Rows chosen after those changes, to check them on jobs they were not fitted to (13, then
 * 5 for --attention, then 4 more): median |error| 2.3%, all 22 within 25% (the worst, +18%,
 * are recomputed LoRA: tests/accuracy/README.md). */
static void held_out_run_should_stay_as_accurate_as_today(void **state)
{
    (void)state;
    calib_gate(&calib[HELD_OUT], 22, 3.0, 1.0);
}

/*
 * peft's adapters, counted exactly: on every LoRA row of both runs whose model transformers
 * built as the engine reads the checkpoint (the same parameter count), the estimate's
 * adapter parameters are torch's trainable ones.  DeepSeek-V2-Lite is not such a row: its
 * config.json omits q_lora_rank, which the checkpoint's remote code reads as a plain q_proj
 * and transformers 5's DeepseekV2Config fills with 1536 (9,446,400 parameters more).
 */
static void calibration_lora_rows_should_count_peft_adapters_exactly(void **state)
{
    (void)state;
    size_t compared = 0, other_model = 0;
    for (size_t f = 0; f < RUNS; f++) {
        for (size_t i = 0; i < calib[f].n; i++) {
            const struct acc_row *r = &calib[f].rows[i];
            if (r->job.mode != FG_MODE_LORA && r->job.mode != FG_MODE_QLORA)
                continue;
            if (r->engine_params != r->n_params) {
                other_model++;
                continue;
            }
            if (r->est.adapter_params != r->n_trainable)
                fail_msg("%s: %llu adapter parameters, peft trained %llu", r->model,
                         (unsigned long long)r->est.adapter_params,
                         (unsigned long long)r->n_trainable);
            compared++;
        }
    }
    print_message("adapter counts: %zu LoRA rows exact, %zu built otherwise\n", compared,
                  other_model);
    assert_true(compared >= 35);
    assert_true(other_model <= 2);
}

/* head, then body, into a new file made from tmpl ("...XXXXXX", rewritten to its name). */
static void write_temp(char *tmpl, const char *head, const char *body)
{
    int fd = mkstemp(tmpl);
    assert_true(fd >= 0);
    FILE *fp = fdopen(fd, "w");
    assert_non_null(fp);
    fputs(head, fp);
    fputs(body, fp);
    assert_int_equal(fclose(fp), 0);
}

/* A bad calibration file or unscored list is refused with the line and what is wrong. */
static void acc_load_calib_should_refuse_bad_input_clearly(void **state)
{
    (void)state;
    struct acc_row *cal = NULL;
    size_t n = 7;
    char msg[512];
    assert_int_equal(acc_load_calib("tests/accuracy/no-such.tsv", NULL, "h200", &cal, &n, msg,
                                    sizeof msg), -1);
    assert_non_null(strstr(msg, "no-such.tsv"));
    assert_null(cal);
    assert_int_equal(n, 0);
    static const char *const header =
        "name\tconfig_dir\tmode\tprecision\tbatch\tseq\tgrad_ckpt\tlora_rank\t"
        "lora_targets\toptimizer\tattn\tstatus\tpeak_alloc\tn_params\tn_trainable\t"
        "config_json\n";
    static const struct {
        const char *row, *unscored, *want;
    } bad[] = {
        {"a\td\tlora\tbf16\t1\t64\t0\t8\tw_proj\tadamw\tsdpa\tok\t100\t1\t1\t{}\n", NULL,
         ":2: LoRA target 'w_proj' has no engine role"},
        {"a\td\tfull\tbf16\t1\t64\t0\t-\t-\tadamw\tflash\tok\t100\t1\t1\t{}\n", NULL,
         ":2: attention 'flash' is not one of sdpa|eager"},
        {"a\td\tfull\tbf16\t1\t64\t0\t-\t-\tadamw\tsdpa\tok\t-\t1\t1\t{}\n", NULL,
         ":2: peak_alloc '-' is not a byte count"},
        {"a\td\tfull\tbf16\t1\t64\t0\t-\t-\tadamw\tsdpa\tok\t100\t1\t1\t{}\n",
         CALIB_UNSCORED_TSV, "no row 'nem_L16_full_bf16_1x1024' in the run"},
        /* a file of the runs before the sixth lacks its columns: a qlora row there is wrong */
        {"a\td\tqlora\tbf16\t1\t64\t0\t8\tall-linear\tadamw\tsdpa\tok\t100\t1\t1\t{}\n", NULL,
         ":2: qlora row: quant '-' is not nf4|nf4-dq"},
        {"a\td\tvllm\tbf16\t1\t64\t0\t-\t-\t-\t-\tok\t100\t\t0\t{}\n", NULL,
         ":2: vllm row: gen_tokens '-' is not a token count"},
        {"a\td\tfull\tfp16\t1\t64\t0\t-\t-\tadamw\tsdpa\tok\t100\t1\t1\t{}\n", NULL,
         ":2: precision 'fp16' is not one a full row runs"},
        {"a\td\tdpo\tbf16\t1\t64\t0\t-\t-\tadamw\tsdpa\tok\t100\t1\t1\t{}\n", NULL,
         ":2: mode 'dpo' is not full|lora|qlora|serve|vllm"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char path[] = "/tmp/fitgate-calib-XXXXXX";
        write_temp(path, header, bad[i].row);
        int rc = acc_load_calib(path, bad[i].unscored, "h200", &cal, &n, msg, sizeof msg);
        unlink(path);
        assert_int_equal(rc, -1);
        if (!strstr(msg, bad[i].want))
            fail_msg("case %zu: '%s' lacks '%s'", i, msg, bad[i].want);
        assert_null(cal);
        assert_int_equal(n, 0);
    }
}

/*
 * The sixth run's kinds of row (tests/calibration/grid.tsv, "Sixth run"), as measure.py writes
 * them, become the jobs that ran: QLoRA with its bitsandbytes and peft settings, fp32 eager
 * encoders, vLLM serving (shown, not scored); a row that was skipped is no row.  Synthetic
 * figures on tiny configs: what is checked is the parse, then that each one can be estimated.
 */
#define CAL_LLAMA                                                                              \
    "{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"llama\",\"hidden_size\":256,"  \
    "\"intermediate_size\":512,\"num_hidden_layers\":2,\"num_attention_heads\":4,"             \
    "\"num_key_value_heads\":2,\"vocab_size\":1000,\"max_position_embeddings\":8192,"          \
    "\"tie_word_embeddings\":false}"
#define CAL_BERT                                                                               \
    "{\"architectures\":[\"BertModel\"],\"model_type\":\"bert\",\"hidden_size\":128,"         \
    "\"intermediate_size\":512,\"num_hidden_layers\":2,\"num_attention_heads\":2,"             \
    "\"vocab_size\":1000,\"max_position_embeddings\":512,\"type_vocab_size\":2,"               \
    "\"hidden_dropout_prob\":0.1,\"attention_probs_dropout_prob\":0.1}"

static void acc_load_calib_should_read_the_sixth_runs_kinds_of_row(void **state)
{
    (void)state;
    /* columns in measure.py's order, less those the loader does not read */
    static const char *const text =
        "name\tconfig_dir\tmode\tprecision\tbatch\tseq\tgrad_ckpt\tlora_rank\tlayers_override\t"
        "lora_targets\toptimizer\tattn\tquant\tbnb_compute\tkbit_prepare\tgpu_util\tgen_tokens\t"
        "status\tn_params\tn_trainable\tpeak_alloc\tkv_cache_tokens\tpeft\tbitsandbytes\t"
        "vllm\tconfig_json\n"
        "s6_qlora_prep\td\tqlora\tbf16-mixed\t4\t2048\t1\t16\t-\tall-linear\tadamw\tsdpa\t"
        "nf4-dq\tbf16\t1\t-\t-\tok\t1\t1\t3000000000\t\t0.21.0\t0.45.0\t-\t" CAL_LLAMA "\n"
        "s6_qlora_fp16_c32\td\tqlora\tfp16\t2\t1024\t0\t8\t-\tq_proj,v_proj\tadamw\tsdpa\t"
        "nf4\tfp32\t0\t-\t-\tok\t1\t1\t2000000000\t\t0.21.0\t0.43.1\t-\t" CAL_LLAMA "\n"
        "s6_bert_fp32_eager\td\tfull\tfp32\t32\t512\t0\t-\t-\t-\tadamw\teager\t-\t-\t-\t-\t"
        "-\tok\t1\t1\t5000000000\t\t0.21.0\t-\t-\t" CAL_BERT "\n"
        "s6_vllm\td\tvllm\tbf16\t8\t1024\t0\t-\t-\t-\t-\t-\t-\t-\t-\t0.9\t64\tok\t\t0\t"
        "120000000000\t1234560\t-\t-\t0.11.0\t" CAL_LLAMA "\n"
        "s6_no_bnb\td\tqlora\tbf16\t1\t64\t0\t16\t-\tall-linear\tadamw\tsdpa\tnf4\tbf16\t0\t"
        "-\t-\tskipped:no-bitsandbytes\t\t\t\t\t0.21.0\t-\t-\t" CAL_LLAMA "\n";
    char path[] = "/tmp/fitgate-calib6-XXXXXX";
    write_temp(path, text, "");
    struct acc_row *cal = NULL;
    size_t n = 0;
    char msg[512];
    int rc = acc_load_calib(path, NULL, "h200", &cal, &n, msg, sizeof msg);
    unlink(path);
    if (rc)
        fail_msg("%s", msg);
    assert_int_equal(n, 4); /* the skipped row is no row */

    const struct fg_job *q = &cal[0].job; /* the QLoRA recipe: prepare, autocast, new bnb */
    assert_int_equal(q->mode, FG_MODE_QLORA);
    assert_int_equal(q->quant, FG_QUANT_NF4_DQ);
    assert_int_equal(q->precision, FG_PREC_BF16);
    assert_true(q->kbit_prepared && q->autocast && q->grad_ckpt);
    assert_false(q->bnb_keeps_input);
    assert_int_equal(q->bnb_compute, FG_BNB_INPUT);
    assert_int_equal(q->lora_rank, 16);
    assert_int_equal(q->lora_targets, FG_LORA_ALL_LINEAR);

    q = &cal[1].job; /* fp16 base, the default fp32 compute, bitsandbytes before 0.43.2 */
    assert_int_equal(q->mode, FG_MODE_QLORA);
    assert_int_equal(q->quant, FG_QUANT_NF4);
    assert_int_equal(q->precision, FG_PREC_BF16);
    assert_false(q->kbit_prepared || q->autocast);
    assert_true(q->bnb_keeps_input);
    assert_int_equal(q->bnb_compute, FG_BNB_FP32);
    assert_int_equal(q->lora_targets, FG_LORA_LIST);
    assert_string_equal(q->lora_list, "q,v");

    const struct fg_job *e = &cal[2].job; /* an fp32 eager encoder with config.json's dropout */
    assert_int_equal(e->mode, FG_MODE_FULL);
    assert_int_equal(e->precision, FG_PREC_FP32);
    assert_int_equal(e->attention, FG_ATTN_EAGER);
    assert_true(e->attn_dropout < 0 && e->hidden_dropout < 0);
    assert_false(e->autocast);

    const struct acc_row *v = &cal[3]; /* vLLM: prompt + new tokens, shown with why */
    assert_int_equal(v->job.mode, FG_MODE_SERVE);
    assert_int_equal(v->job.batch, 8);
    assert_int_equal(v->job.seq_len, 1024 + 64);
    assert_true(v->unscored);
    assert_non_null(strstr(v->why, "vLLM"));
    assert_non_null(strstr(v->why, "1234560 tokens"));
    assert_int_equal(v->n_params, 0);

    struct acc_summary s;
    acc_run(cal, n, MODELS_DIR, &s);
    for (size_t i = 0; i < n; i++)
        if (!cal[i].ok)
            fail_msg("%s: %s", cal[i].model, cal[i].error);
    assert_int_equal(s.peaks, 3);
    assert_int_equal(s.unscored, 1);
    acc_free(cal, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(calibration_run_should_stay_as_accurate_as_today),
        cmocka_unit_test(held_out_run_should_stay_as_accurate_as_today),
        cmocka_unit_test(calibration_lora_rows_should_count_peft_adapters_exactly),
        cmocka_unit_test(acc_load_calib_should_refuse_bad_input_clearly),
        cmocka_unit_test(acc_load_calib_should_read_the_sixth_runs_kinds_of_row),
        cmocka_unit_test(acc_load_should_read_every_interpreted_row),
        cmocka_unit_test(rows_and_exclusions_should_cover_every_measured_row_once),
        cmocka_unit_test(acc_run_should_estimate_every_row),
        cmocka_unit_test(acc_run_should_not_say_fits_for_an_oom_row),
        cmocka_unit_test(acc_run_should_keep_the_median_error_at_or_under_todays),
        cmocka_unit_test(acc_run_should_hold_lit_gpts_generate_rows_within_2pct),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
