/*
 * accuracy.c - see accuracy.h.  Compiled once and linked into tools/accuracy.c
 * and tests/test_accuracy.c so that both compute the same thing.
 */
#include "arch/graph.h"
#include "model/model_load.h"
#include "accuracy.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "source/config.h"
#include "hw/gpu.h"
#include "model/model.h"

#define ACC_MAX_COLS 64
#define ACC_LINE_MAX 16384

static const char *const acc_metric_names[] = {"allocated", "active", "reserved", "nvml",
                                               "fits-limit"};

const char *acc_metric_name(enum acc_metric m)
{
    return (unsigned)m < 5 ? acc_metric_names[m] : "?";
}

static int acc_fail(char *errbuf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int acc_fail(char *errbuf, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errbuf, cap, fmt, ap);
    va_end(ap);
    return -1;
}

/* Split line in place on tabs; returns the number of fields. */
static size_t acc_split(char *line, char **f, size_t max)
{
    size_t n = 0;
    char *p = line;
    while (n < max) {
        f[n++] = p;
        char *t = strchr(p, '\t');
        if (!t)
            break;
        *t = '\0';
        p = t + 1;
    }
    return n;
}

static bool acc_u64(const char *s, uint64_t max, uint64_t *out)
{
    char *end;
    if (!s || !*s || *s == '-' || *s == '+')
        return false;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v > max)
        return false;
    *out = v;
    return true;
}

enum acc_col {
    C_ROW, C_MODEL, C_CONFIG, C_MODE, C_PRECISION, C_OPTIMIZER, C_BATCH, C_SEQ, C_GRAD_CKPT,
    C_LORA_TARGETS, C_LORA_RANK, C_QUANT, C_CHUNKED_CE, C_CARD, C_GPUS, C_ZERO,
    C_UNSHARDED_COPY, C_MEASURED, C_METRIC, C_OOM, C_WHY, C_STACK, C_COUNT
};

static const char *const acc_col_names[C_COUNT] = {
    "row", "model", "config", "mode", "precision", "optimizer", "batch", "seq", "grad_ckpt",
    "lora_targets", "lora_rank", "quant", "chunked_ce", "card", "gpus", "zero", "unsharded_copy",
    "measured_bytes", "metric", "oom", "why", "stack"};

/*
 * What each software stack of the published rows ran, as the job fields that say what a
 * framework keeps (memory.h; the code behind each value: docs/frameworks-memory.md).  A
 * row's `stack` column names its row here; the values come from the stack's code at the
 * version the row's source names, never from the row's figure.
 */
static const struct acc_stack {
    const char *name;
    bool kbit_prepared;        /* peft prepare_model_for_kbit_training */
    bool bnb_keeps_input;      /* bitsandbytes < 0.43.2 */
    enum fg_bnb_compute bnb_compute;
    float lora_dropout;
    bool lora_base_dtype, lora_fused_qkv;
    float attn_dropout, hidden_dropout; /* -1: config.json's (transformers' own modules) */
    bool autocast;             /* a bf16 LoRA base under autocast (HF Trainer bf16=True) */
    bool chunked_ce;           /* the loss is chunked whatever the row's recipe says */
    enum fg_ce_kept ce_kept;
    bool kv_expanded;          /* its attention expands K/V (lit-gpt model.py) */
    /* lit-gpt's build (job.h): its own lm_head whatever config.json ties, quantized with
     * the blocks (a 4-bit head), from an fp16 copy (bnb_fp16_quant) */
    bool head_untied, head_4bit, bnb_fp16_quant;
} acc_stacks[] = {
    /* torchtune: its own modules (no dropout: attn_dropout 0.0), LoRA dropout 0.0 by
     * default (models/llama3_1/_model_builders.py), QLoRA through torchao's NF4Tensor,
     * whose linear_nf4 keeps only the weight (modules/low_precision/nf4_linear.py):
     * no bitsandbytes at all; LoRALinear's adapters in the model's dtype.  Every row with
     * CEWithChunkedOutputLoss ran compile on (their `why`): training.compile_loss hands
     * compute_cross_entropy to inductor, which fuses the fp32 cast and the log-softmax and
     * saves the bf16 logits and a log-sum-exp per token, as unsloth's kernel does */
    {"torchtune", false, false, FG_BNB_INPUT, 0, true, false, 0, 0, false, false, FG_CE_LSE,
     false, false, false, false},
    /* lit-gpt 8641822 with bitsandbytes 0.41.1: BitsandbytesPrecision(mode, dtype) computes
     * in the bf16-true dtype, the activations' (finetune/lora.py); MatMul4Bit keeps its
     * input, the same tensor.  LoRA: lora_dropout = 0.05 (finetune/lora.py), one
     * nn.Dropout on the fused qkv input (lit_gpt/lora.py LoRAQKVLinear.forward), adapters
     * in the model's dtype.  lit_gpt/model.py has no other dropout.  Later lit-gpt
     * (litgpt/finetune/lora.py) keeps the same LoRA.  The loss: model(input_ids,
     * lm_head_chunk_size=128) and chunked_cross_entropy (lit_gpt/utils.py), cross_entropy
     * on each bf16 chunk of logits, kept in a list through backward. */
    {"litgpt-8641822", false, true, FG_BNB_INPUT, 0.05f, true, true, 0, 0, false, true,
     FG_CE_COMPUTE, true, true, true, true},
    /* later lit-gpt (litgpt finetune/lora.py) warns unless bitsandbytes is 0.42.0, whose
     * MatMul4Bit still keeps its input: the same as the framework row (no QLoRA row here) */
    {"litgpt", false, true, FG_BNB_INPUT, 0.05f, true, true, 0, 0, false, true, FG_CE_COMPUTE,
     true, true, true, true},
    /* LLaMA-Factory (early 2024): transformers + peft, BitsAndBytesConfig with
     * bnb_4bit_compute_dtype = the training dtype (model/utils/quantization.py
     * configure_quantization), its own prepare (no fp32 cast of the base), lora_dropout
     * 0.0 (hparams/finetuning_args.py); config.json's dropout (llama: 0) */
    {"llama-factory", false, true, FG_BNB_INPUT, 0, false, false, -1, -1, true, false,
     FG_CE_FP32, false, false, false, false},
    /* unsloth's "Hugging Face + FA2" column: transformers + peft + bitsandbytes, settings
     * unpublished; defaults */
    {"hf-peft", false, false, FG_BNB_INPUT, 0, false, false, -1, -1, true, false, FG_CE_FP32,
     false, false, false, false},
    {"triton", false, false, FG_BNB_INPUT, 0, false, false, -1, -1, false, false, FG_CE_FP32,
     false, false, false, false},
};

/* One data line of rows.tsv (v[c]: the line's value of column c) -> row. */
static int acc_parse_row(const char *const *v_, struct acc_row *r, const char *card, char *msg,
                         size_t cap)
{
    struct fg_err err = {0};
    uint64_t v;
    (void)card;
#define FIELD(c) (v_[c])
    if (!acc_u64(FIELD(C_ROW), 100000, &v) || v == 0)
        return acc_fail(msg, cap, "row '%s' is not a data row number", FIELD(C_ROW));
    r->row = (unsigned)v;
    snprintf(r->model, sizeof r->model, "%s", FIELD(C_MODEL));
    snprintf(r->config, sizeof r->config, "%s", FIELD(C_CONFIG));
    snprintf(r->card, sizeof r->card, "%s", FIELD(C_CARD));
    enum fg_mode mode;
    if (fg_mode_parse(FIELD(C_MODE), &mode, &err))
        return acc_fail(msg, cap, "%s", err.detail);
    fg_job_defaults(&r->job, mode);
    if (fg_precision_parse(FIELD(C_PRECISION), &r->job.precision, &err))
        return acc_fail(msg, cap, "%s", err.detail);
    if (strcmp(FIELD(C_OPTIMIZER), "-") != 0 &&
        fg_optimizer_parse(FIELD(C_OPTIMIZER), &r->job.optimizer, &err))
        return acc_fail(msg, cap, "%s", err.detail);
    if (!acc_u64(FIELD(C_BATCH), 1u << 20, &r->job.batch) || r->job.batch == 0)
        return acc_fail(msg, cap, "batch '%s' is not a whole number >= 1", FIELD(C_BATCH));
    if (!acc_u64(FIELD(C_SEQ), FG_MAX_SEQ, &r->job.seq_len) || r->job.seq_len == 0)
        return acc_fail(msg, cap, "seq '%s' is not a token count", FIELD(C_SEQ));
    if (!acc_u64(FIELD(C_GRAD_CKPT), 1, &v))
        return acc_fail(msg, cap, "grad_ckpt '%s' is not 0 or 1", FIELD(C_GRAD_CKPT));
    r->job.grad_ckpt = v != 0;
    if (mode == FG_MODE_LORA || mode == FG_MODE_QLORA) {
        if (fg_lora_targets_parse(FIELD(C_LORA_TARGETS), &r->job, &err))
            return acc_fail(msg, cap, "%s", err.detail);
        if (!acc_u64(FIELD(C_LORA_RANK), 65536, &v) || v == 0)
            return acc_fail(msg, cap, "lora_rank '%s' is not 1..65536", FIELD(C_LORA_RANK));
        r->job.lora_rank = (uint32_t)v;
    }
    if (fg_quant_parse(FIELD(C_QUANT), &r->job.quant, &err))
        return acc_fail(msg, cap, "%s", err.detail);
    if (mode == FG_MODE_QLORA && r->job.quant == FG_QUANT_NONE)
        return acc_fail(msg, cap, "qlora row with quant 'none'");
    if (!acc_u64(FIELD(C_CHUNKED_CE), 1, &v))
        return acc_fail(msg, cap, "chunked_ce '%s' is not 0 or 1", FIELD(C_CHUNKED_CE));
    r->job.chunked_ce = v != 0;
    if (!acc_u64(FIELD(C_GPUS), 4096, &v) || v == 0)
        return acc_fail(msg, cap, "gpus '%s' is not 1..4096", FIELD(C_GPUS));
    r->gpus = (unsigned)v;
    if (!acc_u64(FIELD(C_ZERO), 3, &v) || (v != 0 && v != 3))
        return acc_fail(msg, cap, "zero '%s' is not 0 or 3", FIELD(C_ZERO));
    r->zero = (unsigned)v;
    if (r->gpus > 1 && r->zero == 3) {
        /* FSDP full shard: weights, gradients and optimizer states over dp = gpus. */
        r->job.zero = 3;
        r->job.dp = r->gpus;
    }
    if (!acc_u64(FIELD(C_UNSHARDED_COPY), 1, &v))
        return acc_fail(msg, cap, "unsharded_copy '%s' is not 0 or 1", FIELD(C_UNSHARDED_COPY));
    r->job.unsharded_copy = v != 0;
    if (!acc_u64(FIELD(C_OOM), 1, &v))
        return acc_fail(msg, cap, "oom '%s' is not 0 or 1", FIELD(C_OOM));
    r->oom = v != 0;
    if (!acc_u64(FIELD(C_MEASURED), UINT64_MAX, &r->measured))
        return acc_fail(msg, cap, "measured_bytes '%s' is not a byte count", FIELD(C_MEASURED));
    if (r->oom != (r->measured == 0))
        return acc_fail(msg, cap, "oom rows carry measured_bytes 0, the others a figure");
    int m = -1;
    for (int i = 0; i < 5; i++)
        if (!strcmp(FIELD(C_METRIC), acc_metric_names[i]))
            m = i;
    if (m < 0)
        return acc_fail(msg, cap, "metric '%s' is not allocated|active|reserved|nvml|fits-limit",
                        FIELD(C_METRIC));
    r->metric = (enum acc_metric)m;
    if (r->oom && strcmp(r->card, "-") == 0)
        return acc_fail(msg, cap, "an oom row needs its card");
    const struct acc_stack *st = NULL;
    for (size_t i = 0; i < sizeof acc_stacks / sizeof acc_stacks[0]; i++)
        if (!strcmp(FIELD(C_STACK), acc_stacks[i].name))
            st = &acc_stacks[i];
    if (!st)
        return acc_fail(msg, cap, "stack '%s' is not one accuracy.c knows", FIELD(C_STACK));
    r->job.kbit_prepared = st->kbit_prepared;
    r->job.bnb_keeps_input = st->bnb_keeps_input;
    r->job.bnb_compute = st->bnb_compute;
    r->job.lora_dropout = st->lora_dropout;
    r->job.lora_base_dtype = st->lora_base_dtype;
    r->job.lora_fused_qkv = st->lora_fused_qkv;
    r->job.attn_dropout = st->attn_dropout;
    r->job.hidden_dropout = st->hidden_dropout;
    r->job.autocast = st->autocast && r->job.precision == FG_PREC_BF16;
    r->job.chunked_ce |= st->chunked_ce;
    r->job.ce_kept = st->ce_kept;
    r->job.kv_expanded = st->kv_expanded;
    bool bnb4 = r->job.mode == FG_MODE_QLORA ||
                (r->job.mode == FG_MODE_SERVE &&
                 (r->job.quant == FG_QUANT_NF4 || r->job.quant == FG_QUANT_NF4_DQ));
    r->job.head_untied = st->head_untied;
    r->job.head_4bit = bnb4 && st->head_4bit;
    r->job.bnb_fp16_quant = bnb4 && st->bnb_fp16_quant;
#undef FIELD
    return 0;
}

/* A row parser (v[c]: the value of column c on the line): 0 read, 1 a line with no row
 * (skipped), -1 with msg. */
typedef int (*acc_parse_fn)(const char *const *v, struct acc_row *r, const char *card,
                            char *msg, size_t cap);

/*
 * The TSV reader both loaders share: the first non-comment line is the header, whose
 * columns are found by name (names[0 .. ncols-1]); a column the header lacks is an error
 * unless defaults (NULL: none) gives it a value, which every line then takes.  Every later
 * line is split and handed to parse as one value per column.  Rows own what parse
 * allocates.
 */
static int acc_read(const char *path, const char *const *names, const char *const *defaults,
                    int ncols, acc_parse_fn parse, const char *card, struct acc_row **rows,
                    size_t *n, char *errbuf, size_t cap)
{
    *rows = NULL;
    *n = 0;
    FILE *fp = fopen(path, "r");
    if (!fp)
        return acc_fail(errbuf, cap, "%s: %s", path, strerror(errno));
    char *line = malloc(ACC_LINE_MAX);
    char *f[ACC_MAX_COLS];
    const char *val[ACC_MAX_COLS];
    int col[ACC_MAX_COLS];
    size_t cap_rows = 0, lineno = 0;
    struct acc_row *out = NULL;
    bool header = false;
    int rc = line ? 0 : acc_fail(errbuf, cap, "%s: out of memory", path);
    for (int c = 0; c < ncols; c++)
        col[c] = -1;
    while (!rc && fgets(line, ACC_LINE_MAX, fp)) {
        lineno++;
        size_t len = strlen(line);
        if (len && line[len - 1] != '\n' && !feof(fp)) {
            rc = acc_fail(errbuf, cap, "%s:%zu: line longer than %d bytes", path, lineno,
                          ACC_LINE_MAX - 1);
            break;
        }
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (!len || line[0] == '#')
            continue;
        size_t nf = acc_split(line, f, ACC_MAX_COLS);
        if (!header) {
            header = true;
            for (size_t i = 0; i < nf; i++)
                for (int c = 0; c < ncols; c++)
                    if (!strcmp(f[i], names[c]))
                        col[c] = (int)i;
            for (int c = 0; c < ncols && !rc; c++)
                if (col[c] < 0 && !(defaults && defaults[c]))
                    rc = acc_fail(errbuf, cap, "%s:%zu: header lacks column '%s'", path,
                                  lineno, names[c]);
            continue;
        }
        for (int c = 0; c < ncols && !rc; c++) {
            if (col[c] < 0)
                val[c] = defaults[c];
            else if ((size_t)col[c] < nf)
                val[c] = f[col[c]];
            else
                rc = acc_fail(errbuf, cap, "%s:%zu: %zu fields, the header has more", path,
                              lineno, nf);
        }
        if (rc)
            break;
        if (*n == cap_rows) {
            size_t nc = cap_rows ? 2 * cap_rows : 64;
            struct acc_row *nr = realloc(out, nc * sizeof *nr);
            if (!nr) {
                rc = acc_fail(errbuf, cap, "%s: out of memory", path);
                break;
            }
            out = nr;
            cap_rows = nc;
        }
        struct acc_row *r = &out[*n];
        memset(r, 0, sizeof *r);
        r->row = (unsigned)lineno;
        char msg[200];
        int got = parse(val, r, card, msg, sizeof msg);
        if (got < 0) {
            free(r->config_json);
            rc = acc_fail(errbuf, cap, "%s:%zu: %s", path, lineno, msg);
        } else if (got == 0) {
            (*n)++;
        }
    }
    if (!rc && ferror(fp))
        rc = acc_fail(errbuf, cap, "%s: read error", path);
    if (!rc && !header)
        rc = acc_fail(errbuf, cap, "%s: no header line", path);
    fclose(fp);
    free(line);
    if (rc) {
        acc_free(out, *n);
        *n = 0;
        return rc;
    }
    *rows = out;
    return 0;
}

int acc_load(const char *path, struct acc_row **rows, size_t *n, char *errbuf, size_t cap)
{
    return acc_read(path, acc_col_names, NULL, C_COUNT, acc_parse_row, NULL, rows, n, errbuf,
                    cap);
}

/* ---- calibration runs (tests/calibration/measured-*.tsv) ---- */

enum cal_col {
    K_NAME, K_CONFIG_DIR, K_MODE, K_PRECISION, K_BATCH, K_SEQ, K_GRAD_CKPT, K_LORA_RANK,
    K_LORA_TARGETS, K_OPTIMIZER, K_ATTN, K_STATUS, K_PEAK_ALLOC, K_N_PARAMS, K_N_TRAINABLE,
    K_CONFIG_JSON,
    /* the sixth run's columns (measure.py): absent from the files of the runs before */
    K_QUANT, K_BNB_COMPUTE, K_KBIT_PREPARE, K_GEN_TOKENS, K_GPU_UTIL, K_BITSANDBYTES,
    K_KV_TOKENS, K_COUNT
};

static const char *const cal_col_names[K_COUNT] = {
    "name", "config_dir", "mode", "precision", "batch", "seq", "grad_ckpt", "lora_rank",
    "lora_targets", "optimizer", "attn", "status", "peak_alloc", "n_params", "n_trainable",
    "config_json", "quant", "bnb_compute", "kbit_prepare", "gen_tokens", "gpu_util",
    "bitsandbytes", "kv_cache_tokens"};

/* What a file without the column says: the harness's "-" (not given / not recorded). */
static const char *const cal_col_defaults[K_COUNT] = {
    [K_QUANT] = "-", [K_BNB_COMPUTE] = "-", [K_KBIT_PREPARE] = "-", [K_GEN_TOKENS] = "-",
    [K_GPU_UTIL] = "-", [K_BITSANDBYTES] = "-", [K_KV_TOKENS] = "-"};

/*
 * The harness's modes and precision words (tests/calibration/README.md, "The grid") as the
 * engine's job.  LoRA and QLoRA load their base in the dtype the word names (bf16 for both
 * bf16 words: peft), which is the engine's LoRA "bf16" (its LoRA "bf16-mixed" is Lightning's
 * fp32 base); bf16-mixed says they computed under autocast (measure.py use_autocast).  A
 * QLoRA fp16 base weighs and keeps what a bf16 one does (2 B), so it is the engine's bf16
 * too; only bitsandbytes' compute dtype tells them apart (cal_qlora).  Serving ran bf16
 * whatever the word; vLLM in the dtype given (bf16 or fp16: 2 B either way).
 */
static const struct cal_word {
    const char *mode, *precision;
    enum fg_mode fg_mode;
    enum fg_precision fg_precision;
    bool autocast, fp16;
} cal_words[] = {
    {"full", "bf16-mixed", FG_MODE_FULL, FG_PREC_BF16_MIXED, false, false},
    {"full", "bf16", FG_MODE_FULL, FG_PREC_BF16, false, false},
    {"full", "fp32", FG_MODE_FULL, FG_PREC_FP32, false, false},
    {"lora", "bf16-mixed", FG_MODE_LORA, FG_PREC_BF16, true, false},
    {"lora", "bf16", FG_MODE_LORA, FG_PREC_BF16, false, false},
    {"lora", "fp32", FG_MODE_LORA, FG_PREC_FP32, false, false},
    {"qlora", "bf16-mixed", FG_MODE_QLORA, FG_PREC_BF16, true, false},
    {"qlora", "bf16", FG_MODE_QLORA, FG_PREC_BF16, false, false},
    {"qlora", "fp16", FG_MODE_QLORA, FG_PREC_BF16, false, true},
    {"serve", "bf16", FG_MODE_SERVE, FG_PREC_BF16, false, false},
    {"serve", "bf16-mixed", FG_MODE_SERVE, FG_PREC_BF16, false, false},
    {"vllm", "bf16", FG_MODE_SERVE, FG_PREC_BF16, false, false},
    {"vllm", "fp16", FG_MODE_SERVE, FG_PREC_BF16, false, true},
};

/* Why vllm rows are shown and not scored (tests/accuracy/README.md, "Sixth run"): vLLM
 * sizes its KV pool to fill gpu_memory_utilization of the card, so its torch peak is that
 * budget whatever the job; the engine's serving semantics (weights and working set, KV per
 * sequence, how many fit) are policies/assess.c's engine_fit, which this core does not run. */
#define CAL_VLLM_WHY                                                                          \
    "vLLM fills gpu_util of the card with KV pool: the peak is that budget, not the job"

/* peft target_modules names -> the engine's linear roles (the readers of engine/arch/). */
static const char *const cal_roles[][2] = {
    {"q_proj", "q"},       {"k_proj", "k"},       {"v_proj", "v"},   {"o_proj", "o"},
    {"gate_proj", "gate"}, {"up_proj", "up"},     {"down_proj", "down"},
    {"query_key_value", "qkv"}, {"in_proj", "in_proj"}, {"out_proj", "out_proj"}};

/* "q_proj,v_proj" -> "q,v" in out; -1 with msg on a name without a role. */
static int cal_targets(const char *list, char *out, size_t cap, char *msg, size_t mcap)
{
    size_t o = 0;
    out[0] = '\0';
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        const char *role = NULL;
        for (size_t i = 0; i < sizeof cal_roles / sizeof cal_roles[0]; i++)
            if (strlen(cal_roles[i][0]) == len && !strncmp(p, cal_roles[i][0], len))
                role = cal_roles[i][1];
        if (!role)
            return acc_fail(msg, mcap, "LoRA target '%.*s' has no engine role", (int)len, p);
        int w = snprintf(out + o, cap - o, "%s%s", o ? "," : "", role);
        if (w < 0 || (size_t)w >= cap - o)
            return acc_fail(msg, mcap, "LoRA target list '%.60s' too long", list);
        o += (size_t)w;
        p += len + (e ? 1 : 0);
    }
    return 0;
}

/* Whether version ver ("0.43.2", "0.45", "0.43.2.dev0", "0.44.1+cu124") comes before the
 * release want (major, minor, patch): 0 with *out, or -1 when ver does not start with a
 * number.  Only the release numbers count: a pre-release is taken as its release. */
static int cal_version_before(const char *ver, const unsigned want[3], bool *out)
{
    unsigned got[3] = {0, 0, 0};
    const char *p = ver;
    if (*p < '0' || *p > '9')
        return -1;
    for (int i = 0; i < 3; i++) {
        char *end;
        unsigned long x = strtoul(p, &end, 10);
        got[i] = x > 99999 ? 99999 : (unsigned)x;
        if (end[0] != '.' || end[1] < '0' || end[1] > '9')
            break;
        p = end + 1;
    }
    *out = false;
    for (int i = 0; i < 3; i++)
        if (got[i] != want[i]) {
            *out = got[i] < want[i];
            break;
        }
    return 0;
}

/*
 * A QLoRA row's bitsandbytes and peft settings (measure.py load_qlora, setup_adapters).
 * Linear4bit computes in the input's dtype for bf16 and fp32 inputs and casts only an fp16
 * one to bnb_4bit_compute_dtype (bitsandbytes nn/modules.py set_compute_type): so an fp32
 * compute is a copy only over fp16 activations, and prepare_model_for_kbit_training's fp32
 * hidden states make the input fp32 already.  (An fp16 input under a bf16 compute is cast
 * too, a 2 B copy the engine has no value for: counted as none.)  MatMul4Bit keeps that
 * input before bitsandbytes 0.43.2 (#1270).
 */
static int cal_qlora(const char *const *v_, struct fg_job *job, bool fp16, char *msg, size_t cap)
{
    static const unsigned fixed[3] = {0, 43, 2};
    struct fg_err err = {0};
#define FIELD(c) (v_[c])
    const char *q = FIELD(K_QUANT), *c = FIELD(K_BNB_COMPUTE), *k = FIELD(K_KBIT_PREPARE);
    if ((strcmp(q, "nf4") && strcmp(q, "nf4-dq")) || fg_quant_parse(q, &job->quant, &err))
        return acc_fail(msg, cap, "qlora row: quant '%s' is not nf4|nf4-dq", q);
    if (strcmp(c, "bf16") && strcmp(c, "fp32") && strcmp(c, "fp16"))
        return acc_fail(msg, cap, "qlora row: bnb_compute '%s' is not bf16|fp32|fp16", c);
    if (strcmp(k, "0") && strcmp(k, "1"))
        return acc_fail(msg, cap, "qlora row: kbit_prepare '%s' is not 0 or 1", k);
    job->kbit_prepared = k[0] == '1';
    job->bnb_compute = fp16 && !job->kbit_prepared && !strcmp(c, "fp32") ? FG_BNB_FP32
                                                                          : FG_BNB_INPUT;
    if (cal_version_before(FIELD(K_BITSANDBYTES), fixed, &job->bnb_keeps_input))
        return acc_fail(msg, cap, "qlora row: bitsandbytes '%s' is not a version",
                        FIELD(K_BITSANDBYTES));
#undef FIELD
    return 0;
}

/* A vllm row: the job served (batch sequences of prompt + new tokens), shown with why and
 * the KV pool vLLM made, not scored. */
static int cal_vllm(const char *const *v_, struct acc_row *r, char *msg, size_t cap)
{
    uint64_t gen, kv = 0;
#define FIELD(c) (v_[c])
    if (!acc_u64(FIELD(K_GEN_TOKENS), FG_MAX_SEQ, &gen) || gen == 0)
        return acc_fail(msg, cap, "vllm row: gen_tokens '%s' is not a token count",
                        FIELD(K_GEN_TOKENS));
    if (r->job.seq_len + gen > FG_MAX_SEQ)
        return acc_fail(msg, cap, "vllm row: seq + gen_tokens over %u", FG_MAX_SEQ);
    r->job.seq_len += gen;
    r->unscored = true;
    if (acc_u64(FIELD(K_KV_TOKENS), UINT64_MAX, &kv))
        snprintf(r->why, sizeof r->why, "%s (%llu tokens of KV at gpu_util %.8s)", CAL_VLLM_WHY,
                 (unsigned long long)kv, FIELD(K_GPU_UTIL));
    else
        snprintf(r->why, sizeof r->why, "%s", CAL_VLLM_WHY);
#undef FIELD
    return 0;
}

/* peft target names and rank of a LoRA or QLoRA row. */
static int cal_lora(const char *targets, const char *rank, struct fg_job *job, char *msg,
                    size_t cap)
{
    struct fg_err err = {0};
    uint64_t v;
    char roles[sizeof job->lora_list];
    if (strcmp(targets, "all-linear") != 0) {
        if (cal_targets(targets, roles, sizeof roles, msg, cap))
            return -1;
        targets = roles;
    }
    if (fg_lora_targets_parse(targets, job, &err))
        return acc_fail(msg, cap, "%s", err.detail);
    if (!acc_u64(rank, 65536, &v) || v == 0)
        return acc_fail(msg, cap, "lora_rank '%s' is not 1..65536", rank);
    job->lora_rank = (uint32_t)v;
    return 0;
}

/* "N" as a count into *out; "" or "-" (not recorded) as 0 when optional. */
static bool cal_count(const char *s, bool optional, uint64_t *out)
{
    *out = 0;
    return acc_u64(s, UINT64_MAX, out) || (optional && (!*s || !strcmp(s, "-")));
}

/* One grid row that ran -> a job (the words: cal_words). */
static int cal_parse_row(const char *const *v_, struct acc_row *r, const char *card, char *msg,
                         size_t cap)
{
    struct fg_err err = {0};
    uint64_t v;
#define FIELD(c) (v_[c])
    if (strcmp(FIELD(K_STATUS), "ok") != 0)
        return 1; /* a row that did not run has no figure */
    snprintf(r->card, sizeof r->card, "%s", card);
    snprintf(r->model, sizeof r->model, "%s", FIELD(K_NAME));
    snprintf(r->config, sizeof r->config, "%s", FIELD(K_CONFIG_DIR));
    const struct cal_word *w = NULL;
    bool known_mode = false;
    for (size_t i = 0; i < sizeof cal_words / sizeof cal_words[0]; i++) {
        known_mode |= !strcmp(FIELD(K_MODE), cal_words[i].mode);
        if (!strcmp(FIELD(K_MODE), cal_words[i].mode) &&
            !strcmp(FIELD(K_PRECISION), cal_words[i].precision))
            w = &cal_words[i];
    }
    if (!known_mode)
        return acc_fail(msg, cap, "mode '%s' is not full|lora|qlora|serve|vllm", FIELD(K_MODE));
    if (!w)
        return acc_fail(msg, cap, "precision '%s' is not one a %s row runs", FIELD(K_PRECISION),
                        FIELD(K_MODE));
    bool vllm = !strcmp(w->mode, "vllm");
    fg_job_defaults(&r->job, w->fg_mode);
    r->job.precision = w->fg_precision;
    r->job.autocast = w->autocast;
    if (w->fg_mode != FG_MODE_SERVE &&
        fg_optimizer_parse(FIELD(K_OPTIMIZER), &r->job.optimizer, &err))
        return acc_fail(msg, cap, "%s", err.detail);
    if (!acc_u64(FIELD(K_BATCH), 1u << 20, &r->job.batch) || r->job.batch == 0)
        return acc_fail(msg, cap, "batch '%s' is not a whole number >= 1", FIELD(K_BATCH));
    if (!acc_u64(FIELD(K_SEQ), FG_MAX_SEQ, &r->job.seq_len) || r->job.seq_len == 0)
        return acc_fail(msg, cap, "seq '%s' is not a token count", FIELD(K_SEQ));
    if (!acc_u64(FIELD(K_GRAD_CKPT), 1, &v))
        return acc_fail(msg, cap, "grad_ckpt '%s' is not 0 or 1", FIELD(K_GRAD_CKPT));
    r->job.grad_ckpt = v != 0;
    if ((w->fg_mode == FG_MODE_LORA || w->fg_mode == FG_MODE_QLORA) &&
        cal_lora(FIELD(K_LORA_TARGETS), FIELD(K_LORA_RANK), &r->job, msg, cap))
        return -1;
    if (w->fg_mode == FG_MODE_QLORA && cal_qlora(v_, &r->job, w->fp16, msg, cap))
        return -1;
    if (!acc_u64(FIELD(K_PEAK_ALLOC), UINT64_MAX, &r->measured) || r->measured == 0)
        return acc_fail(msg, cap, "peak_alloc '%s' is not a byte count", FIELD(K_PEAK_ALLOC));
    /* vLLM's model is in its worker: the counts are there only where the harness reached it */
    if (!cal_count(FIELD(K_N_PARAMS), vllm, &r->n_params) ||
        !cal_count(FIELD(K_N_TRAINABLE), vllm, &r->n_trainable))
        return acc_fail(msg, cap, "n_params '%s' / n_trainable '%s' are not counts",
                        FIELD(K_N_PARAMS), FIELD(K_N_TRAINABLE));
    r->metric = ACC_ALLOCATED;
    r->gpus = 1;
    if (vllm) { /* vLLM picks its own attention kernels: the row's attn is "-" */
        if (cal_vllm(v_, r, msg, cap))
            return -1;
    } else if (fg_attention_parse(FIELD(K_ATTN), &r->job.attention, &err)) {
        return acc_fail(msg, cap, "%s", err.detail);
    }
    r->config_json = strdup(FIELD(K_CONFIG_JSON));
    if (!r->config_json)
        return acc_fail(msg, cap, "out of memory");
#undef FIELD
    return 0;
}

/* The unscored list: mark each named row with the reason; -1 with errbuf on a bad line or
 * a name the run lacks. */
static int cal_unscored(const char *path, struct acc_row *rows, size_t n, char *errbuf,
                        size_t cap)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        return acc_fail(errbuf, cap, "%s: %s", path, strerror(errno));
    char line[1024];
    size_t lineno = 0;
    int rc = 0;
    while (!rc && fgets(line, sizeof line, fp)) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0] || line[0] == '#')
            continue;
        char *tab = strchr(line, '\t');
        if (!tab || !tab[1]) {
            rc = acc_fail(errbuf, cap, "%s:%zu: want name<TAB>reason", path, lineno);
            break;
        }
        *tab = '\0';
        size_t i = 0;
        while (i < n && strcmp(rows[i].model, line) != 0)
            i++;
        if (i == n) {
            rc = acc_fail(errbuf, cap, "%s:%zu: no row '%s' in the run", path, lineno, line);
            break;
        }
        rows[i].unscored = true;
        snprintf(rows[i].why, sizeof rows[i].why, "%s", tab + 1);
    }
    fclose(fp);
    return rc;
}

int acc_load_calib(const char *path, const char *unscored, const char *card,
                   struct acc_row **rows, size_t *n, char *errbuf, size_t cap)
{
    int rc = acc_read(path, cal_col_names, cal_col_defaults, K_COUNT, cal_parse_row, card, rows,
                      n, errbuf, cap);
    if (!rc && unscored && cal_unscored(unscored, *rows, *n, errbuf, cap)) {
        acc_free(*rows, *n);
        *rows = NULL;
        *n = 0;
        rc = -1;
    }
    return rc;
}

void acc_free(struct acc_row *rows, size_t n)
{
    for (size_t i = 0; rows && i < n; i++)
        free(rows[i].config_json);
    free(rows);
}

static int acc_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void acc_estimate_row(struct acc_row *r, const char *models_dir,
                             const struct fg_fit_opts *fo)
{
    char path[512];
    struct fg_err err = {0};
    struct fg_model *m = NULL;
    int rc;
    if (r->config_json) {
        struct fg_config *doc = NULL;
        rc = fg_config_parse(r->config_json, strlen(r->config_json), r->model, &doc, &err);
        if (!rc)
            rc = fg_model_from_config(doc, r->model, &m, &err);
        fg_config_free(doc);
    } else {
        snprintf(path, sizeof path, "%s/%s", models_dir, r->config);
        rc = fg_model_load(path, &m, &err);
    }
    if (rc) {
        snprintf(r->error, sizeof r->error, "%.190s", err.detail);
        return;
    }
    r->engine_params = m->params_total - m->params_buffers;
    for (size_t i = 0; i < m->n_nodes; i++)
        r->engine_params -= m->nodes[i].alias;
    if (fg_memory_estimate(m, &r->job, &r->est, &err)) {
        snprintf(r->error, sizeof r->error, "%.190s", err.detail);
        fg_model_free(m);
        return;
    }
    fg_model_free(m);
    r->ok = true;
    r->compared = r->est.total_bytes;
    if (r->metric == ACC_NVML) /* a process's figure: its context, not the driver's reserve */
        r->compared += FG_CUDA_PROCESS_BYTES;
    else if (r->metric == ACC_FITS_LIMIT) /* the card's whole VRAM */
        r->compared += fo->context_bytes;
    if (!r->oom)
        r->err_pct = ((double)r->compared - (double)r->measured) / (double)r->measured * 100.0;
    if (strcmp(r->card, "-") != 0) {
        const struct fg_gpu *g = fg_gpu_find(NULL, r->card, NULL);
        if (!g) {
            snprintf(r->error, sizeof r->error, "card '%s' is not in the GPU table", r->card);
            r->ok = false;
            return;
        }
        uint64_t usable = fg_fit_usable(g->memory_gb, g->memory_bytes, fo);
        fg_fit_card(&r->est, usable, fo, &r->fit);
        r->has_fit = true;
    }
}

void acc_run(struct acc_row *rows, size_t n, const char *models_dir, struct acc_summary *s)
{
    struct fg_fit_opts fo;
    fg_fit_opts_default(&fo);
    memset(s, 0, sizeof *s);
    s->rows = n;
    double *abs_err = n ? calloc(n, sizeof *abs_err) : NULL;
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        struct acc_row *r = &rows[i];
        acc_estimate_row(r, models_dir, &fo);
        if (!r->ok) {
            s->failed++;
            continue;
        }
        if (r->oom) {
            s->ooms++;
            if (r->has_fit && r->fit.verdict == FG_FIT_FITS)
                s->oom_fits++;
            if (r->has_fit && r->fit.verdict == FG_FIT_BORDERLINE)
                s->oom_borderline++;
            continue;
        }
        if (r->metric == ACC_FITS_LIMIT) {
            s->limits++;
            continue;
        }
        if (r->unscored) {
            s->unscored++;
            continue;
        }
        if (r->has_fit && r->fit.verdict == FG_FIT_SPLIT)
            s->ran_split++;
        double a = fabs(r->err_pct);
        if (abs_err)
            abs_err[s->peaks] = a;
        s->peaks++;
        sum += r->err_pct;
        if (a <= 10.0)
            s->within10++;
        if (a <= 25.0)
            s->within25++;
    }
    if (s->peaks && abs_err) {
        qsort(abs_err, s->peaks, sizeof *abs_err, acc_cmp_double);
        size_t h = s->peaks / 2;
        s->median_abs_pct = s->peaks % 2 ? abs_err[h] : (abs_err[h - 1] + abs_err[h]) / 2.0;
        s->mean_signed_pct = sum / (double)s->peaks;
    }
    free(abs_err);
}

static double acc_gb(uint64_t b)
{
    return (double)b / 1e9;
}

void acc_print(FILE *fp, const struct acc_row *rows, size_t n, const struct acc_summary *s)
{
    fprintf(fp, "%4s  %-36s %-5s %-10s %9s %9s %8s  %s\n", "row", "model", "mode", "metric",
            "measured", "estimate", "error", "card verdict");
    for (size_t i = 0; i < n; i++) {
        const struct acc_row *r = &rows[i];
        char meas[16], est[16], e[16], v[64] = "";
        if (r->oom)
            snprintf(meas, sizeof meas, "OOM");
        else
            snprintf(meas, sizeof meas, "%.2f GB", acc_gb(r->measured));
        if (!r->ok) {
            fprintf(fp, "%4u  %-36.36s %-5s %-10s %9s %9s %8s  FAILED: %s\n", r->row, r->model,
                    fg_mode_name(r->job.mode), acc_metric_name(r->metric), meas, "-", "-",
                    r->error);
            continue;
        }
        snprintf(est, sizeof est, "%.2f GB", acc_gb(r->compared));
        if (r->oom)
            snprintf(e, sizeof e, "-");
        else
            snprintf(e, sizeof e, "%+.1f%%", r->err_pct);
        if (r->has_fit)
            snprintf(v, sizeof v, "%s %s%s", r->card, fg_verdict_name(r->fit.verdict),
                     r->oom && r->fit.verdict == FG_FIT_FITS ? "  <-- WRONG (ran out of memory)"
                                                             : "");
        fprintf(fp, "%4u  %-36.36s %-5s %-10s %9s %9s %8s  %s%s%s\n", r->row, r->model,
                fg_mode_name(r->job.mode), acc_metric_name(r->metric), meas, est, e, v,
                r->unscored ? "  not scored: " : "", r->unscored ? r->why : "");
    }
    fprintf(fp, "\nrows %zu (failed %zu); measured peaks scored %zu\n", s->rows, s->failed,
            s->peaks);
    fprintf(fp, "median |error| %.1f%%; mean signed error %+.1f%%; within 10%%: %zu/%zu (%.0f%%); "
                "within 25%%: %zu/%zu (%.0f%%)\n",
            s->median_abs_pct, s->mean_signed_pct, s->within10, s->peaks,
            s->peaks ? 100.0 * (double)s->within10 / (double)s->peaks : 0.0, s->within25,
            s->peaks, s->peaks ? 100.0 * (double)s->within25 / (double)s->peaks : 0.0);
    fprintf(fp, "OOM rows %zu: said 'fits' on %zu, 'borderline' on %zu\n", s->ooms, s->oom_fits,
            s->oom_borderline);
    fprintf(fp, "measured rows on a known card that we said need more cards: %zu\n",
            s->ran_split);
    fprintf(fp, "largest-sequence-that-fits rows (shown, not scored): %zu\n", s->limits);
    fprintf(fp, "rows shown with a reason, not scored: %zu\n", s->unscored);
}

int acc_write_tsv(const char *path, const struct acc_row *rows, size_t n)
{
    FILE *fp = fopen(path, "w");
    if (!fp)
        return -1;
    fprintf(fp, "row\tmodel\tconfig\tmode\tmetric\tmeasured_bytes\testimate_bytes\terror_pct\t"
                "total_bytes\tstatic_bytes\tper_sample_bytes\tweights\tgradients\toptimizer\t"
                "adapters\tactivations\tlogits\tkv_cache\toverhead\tcard\tverdict\tstatus\n");
    for (size_t i = 0; i < n; i++) {
        const struct acc_row *r = &rows[i];
        const struct fg_breakdown *b = &r->est.b;
        char e[32] = "";
        if (r->ok && !r->oom)
            snprintf(e, sizeof e, "%.2f", r->err_pct);
        fprintf(fp, "%u\t%s\t%s\t%s\t%s\t%llu\t%llu\t%s\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t"
                    "%llu\t%llu\t%llu\t%llu\t%s\t%s\t%s\n",
                r->row, r->model, r->config, fg_mode_name(r->job.mode), acc_metric_name(r->metric),
                (unsigned long long)r->measured, (unsigned long long)r->compared, e,
                (unsigned long long)r->est.total_bytes, (unsigned long long)r->est.static_bytes,
                (unsigned long long)r->est.per_sample_bytes, (unsigned long long)b->weights,
                (unsigned long long)b->gradients, (unsigned long long)b->optimizer,
                (unsigned long long)b->adapters, (unsigned long long)b->activations,
                (unsigned long long)b->logits, (unsigned long long)b->kv_cache,
                (unsigned long long)b->overhead, r->card,
                r->has_fit ? fg_verdict_name(r->fit.verdict) : "-",
                r->ok ? (r->oom ? "oom" : r->unscored ? r->why : "ok") : r->error);
    }
    int rc = ferror(fp) ? -1 : 0;
    if (fclose(fp))
        rc = -1;
    return rc;
}
