/*
 * wquant.c - quantized checkpoints as a served engine loads them (wquant.h).
 *
 * Bytes per quantized weight, scales included, from the engines' loaders (vLLM main as
 * stored, commit 002f10e, after v0.21; model_executor/layers/quantization/):
 *   fp8         fp8.py Fp8LinearMethod.create_weights: 1 B e4m3 per weight, and with
 *               weight_block_size [bo, bi] one fp32 weight_scale_inv per bo x bi block
 *               (Fp8MoEMethod the same per expert); per tensor without blocks.
 *   mxfp4       mxfp4.py Mxfp4MoEMethod.create_weights: routed experts only (Mxfp4Config
 *               hands LinearBase the unquantized method), two fp4 values per uint8 and one
 *               uint8 e8m0 scale per 32 (mxfp4_block); the experts' hidden width padded
 *               up to 256 on the FlashInfer / Marlin / ROCm backends
 *               (fused_moe/layer.py maybe_roundup_hidden_size: 128 or 256 by backend; 256
 *               is counted, the larger).
 *   gptq, awq   gptq.py / awq.py create_weights: packed int `bits` per weight, fp16 scales
 *               and packed zero points per group_size inputs of each output column.
 *   compressed-tensors  compressed_tensors.py: the first config group's weights
 *               (num_bits; strategy group: a bf16 scale per group_size; nvfp4: an fp8 scale
 *               per 16); the "ignore" list stays unquantized.
 *   bitsandbytes  bitsandbytes.py: 4-bit nf4/fp4 with an fp32 absmax per 64 (double
 *               quantization: 8-bit absmax, an fp32 per 256 blocks); 8-bit with an fp32
 *               scale per row.
 *   modelopt    modelopt.py ModelOptFp8Config (1 B, per-tensor scales) and
 *               ModelOptNvFp4Config (fp4 with an fp8 scale per group_size 16).
 */
#include "source/wquant.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "util/fmt.h"

static const struct {
    const char *name;      /* vLLM's --quantization / config.json quant_method */
    enum fg_wq_method m;
} methods[] = {
    {"none", FG_WQ_NONE},          {"auto", FG_WQ_NONE},
    {"fp8", FG_WQ_FP8},            {"mxfp4", FG_WQ_MXFP4},
    {"gptq", FG_WQ_GPTQ},          {"gptq_marlin", FG_WQ_GPTQ},
    {"awq", FG_WQ_AWQ},            {"awq_marlin", FG_WQ_AWQ},
    {"compressed-tensors", FG_WQ_CT}, {"bitsandbytes", FG_WQ_BNB},
    {"modelopt", FG_WQ_MODELOPT},  {"modelopt_fp4", FG_WQ_NVFP4},
};
#define N_METHODS (sizeof methods / sizeof methods[0])

const char *fg_wq_method_name(enum fg_wq_method m)
{
    for (size_t i = 1; i < N_METHODS; i++) /* row 0 "none", then the first of each */
        if (methods[i].m == m && m != FG_WQ_NONE)
            return methods[i].name;
    return m == FG_WQ_NONE ? "none" : NULL;
}

int fg_wq_method_parse(const char *s, enum fg_wq_method *out, struct fg_err *err)
{
    for (size_t i = 0; s && i < N_METHODS; i++)
        if (!strcasecmp(s, methods[i].name)) {
            *out = methods[i].m;
            return 0;
        }
    char names[256];
    fg_wq_method_names(names, sizeof names);
    return fg_err_set(err, FG_E_INVAL, "unknown --quantization '%s'; expected %s",
                      s ? s : "", names);
}

void fg_wq_method_names(char *buf, size_t cap)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 1; i < N_METHODS && off < cap; i++) { /* "auto" first, not "none" */
        int w = snprintf(buf + off, cap - off, "%s%s", i > 1 ? "|" : "", methods[i].name);
        if (w < 0)
            break;
        off += (size_t)w;
    }
}

/* A module list entry (modules_to_not_convert, ignore, exclude_modules) as role classes:
 * by the submodule names the HF checkpoints use.  An entry naming one layer
 * ("model.layers.0.mlp") keeps that class in every layer: more bytes, never fewer. */
static unsigned keep_of(const char *s)
{
    if (strstr(s, "shared_expert"))
        return FG_WQK_SHARED;
    if (strstr(s, "experts"))
        return FG_WQK_EXPERTS;
    if (strstr(s, "attn") || strstr(s, "attention"))
        return FG_WQK_ATTN;
    if (strstr(s, "router") || strstr(s, "gate") || strstr(s, "lm_head") || strstr(s, "embed"))
        return 0; /* routers, the head and the embeddings stay bf16 in every scheme */
    if (strstr(s, "mlp") || strstr(s, "ffn") || strstr(s, "feed_forward"))
        return FG_WQK_DENSE;
    if (strstr(s, "mamba") || strstr(s, "mixer") || strstr(s, "conv") || strstr(s, "linear_attn"))
        return FG_WQK_OTHER;
    return 0;
}

static int read_keep(const struct fg_cfg *q, const char *keys, unsigned *keep,
                     struct fg_err *err)
{
    const char *v[64];
    size_t n = 0;
    int rc = fg_cfg_str_array(q, keys, v, 64, &n, err);
    for (size_t i = 0; !rc && i < n && i < 64; i++)
        *keep |= keep_of(v[i]);
    return rc;
}

/* Packed integer weights with fp16 scales and packed zero points per group (GPTQ, AWQ). */
static int read_int_groups(const struct fg_cfg *q, const char *what, struct fg_wquant *out,
                           struct fg_err *err)
{
    uint64_t bits;
    double group;
    int rc = fg_cfg_u64(q, "bits|w_bit", 4, 2, 8, &bits, err);
    if (!rc)
        rc = fg_cfg_f64(q, "group_size|q_group_size", 128, -1, 1 << 20, &group, err);
    if (rc)
        return rc;
    double b = (double)bits / 8;
    out->bytes = b + (group > 0 ? (2 + b) / group : 0);
    fg__fmt(out->label, sizeof out->label, "%s int%llu, group %g", what,
            (unsigned long long)bits, group);
    return 0;
}

static int read_fp8(const struct fg_cfg *q, struct fg_wquant *out, struct fg_err *err)
{
    uint64_t blk[2];
    size_t nb = 0;
    int rc = fg_cfg_u64_array(q, "weight_block_size", 1, 1u << 16, blk, 2, &nb, err);
    if (rc)
        return rc;
    if (nb != 0 && nb != 2)
        return fg_err_set(err, FG_E_RANGE, "%s: quantization_config.weight_block_size has %zu "
                          "entries, expected 2", q->origin, nb);
    out->bytes = 1.0 + (nb ? 4.0 / ((double)blk[0] * (double)blk[1]) : 0);
    if (nb)
        fg__fmt(out->label, sizeof out->label, "fp8, %llux%llu block scales",
                (unsigned long long)blk[0], (unsigned long long)blk[1]);
    else
        fg__copy(out->label, sizeof out->label, "fp8, per-tensor scales");
    return read_keep(q, "modules_to_not_convert", &out->keep, err);
}

/* compressed-tensors: the first config group's weights (llm-compressor writes one). */
static int read_ct(const struct fg_cfg *q, struct fg_wquant *out, struct fg_err *err)
{
    struct fg_cfg groups, g, w;
    struct fg_err e = {0};
    if (!fg_cfg_child(q, "config_groups", &groups, &e) || !groups.obj->child ||
        !cJSON_IsObject(groups.obj->child))
        return fg_err_set(err, e.code ? e.code : FG_E_MISSING, "%s: compressed-tensors "
                          "quantization_config has no config_groups object", q->origin);
    g = groups;
    g.obj = groups.obj->child;
    if (!fg_cfg_child(&g, "weights", &w, &e))
        return fg_err_set(err, e.code ? e.code : FG_E_MISSING, "%s: compressed-tensors config "
                          "group '%s' has no weights object", q->origin, g.obj->string);
    uint64_t bits, group;
    const char *type = NULL, *strategy = NULL;
    int rc = fg_cfg_u64(&w, "num_bits", 8, 2, 16, &bits, err);
    if (!rc)
        rc = fg_cfg_u64(&w, "group_size", 0, 0, 1u << 20, &group, err);
    if (!rc)
        rc = fg_cfg_str(&w, "type", "int", &type, err);
    if (!rc)
        rc = fg_cfg_str(&w, "strategy", "tensor", &strategy, err);
    if (rc)
        return rc;
    double b = (double)bits / 8;
    bool fp4 = bits == 4 && !strcmp(type, "float");
    out->bytes = b + (!strcmp(strategy, "group") && group ? (fp4 ? 1.0 : 2.0) / group : 0);
    fg__fmt(out->label, sizeof out->label, "compressed-tensors %s%llu, %s scales", type,
            (unsigned long long)bits, strategy);
    return read_keep(q, "ignore", &out->keep, err);
}

static int read_bnb(const struct fg_cfg *q, struct fg_wquant *out, struct fg_err *err)
{
    bool four, dq;
    int rc = fg_cfg_bool(q, "load_in_4bit", false, &four, err);
    if (!rc)
        rc = fg_cfg_bool(q, "bnb_4bit_use_double_quant", false, &dq, err);
    if (rc)
        return rc;
    out->bytes = !four ? 1.0 + 4.0 / 4096 : dq ? 0.5 + 1.0 / 64 + 4.0 / (64 * 256) : 0.5 + 4.0 / 64;
    fg__copy(out->label, sizeof out->label, four ? (dq ? "bitsandbytes 4-bit, double-quantized"
                                                       : "bitsandbytes 4-bit")
                                                 : "bitsandbytes 8-bit");
    return read_keep(q, "llm_int8_skip_modules", &out->keep, err);
}

static int read_modelopt(const struct fg_cfg *q, struct fg_wquant *out, struct fg_err *err)
{
    const char *algo = NULL;
    int rc = fg_cfg_str(q, "quant_algo", "FP8", &algo, err);
    if (rc)
        return rc;
    if (!strcasecmp(algo, "NVFP4")) {
        uint64_t group;
        if ((rc = fg_cfg_u64(q, "group_size", 16, 1, 1u << 16, &group, err)))
            return rc;
        out->method = FG_WQ_NVFP4;
        out->bytes = 0.5 + 1.0 / (double)group;
        fg__fmt(out->label, sizeof out->label, "modelopt nvfp4, fp8 scale per %llu",
                (unsigned long long)group);
    } else if (!strcasecmp(algo, "FP8")) {
        out->bytes = 1.0;
        fg__copy(out->label, sizeof out->label, "modelopt fp8, per-tensor scales");
    } else {
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: quantization_config.quant_algo '%s' is "
                          "not one fitgate sizes (FP8, NVFP4)", q->origin, algo);
    }
    return read_keep(q, "exclude_modules|ignore", &out->keep, err);
}

int fg_wquant_read(const struct fg_cfg *root, struct fg_wquant *out, struct fg_err *err)
{
    memset(out, 0, sizeof *out);
    fg__copy(out->label, sizeof out->label, "checkpoint dtype");
    struct fg_cfg q, text;
    struct fg_err e = {0};
    if (!fg_cfg_child(root, "quantization_config", &q, &e)) {
        if (e.code || !fg_cfg_child(root, "text_config", &text, &e) ||
            !fg_cfg_child(&text, "quantization_config", &q, &e)) {
            if (err && e.code)
                *err = e;
            return e.code;
        }
    }
    const char *method = NULL;
    int rc = fg_cfg_str(&q, "quant_method", "", &method, err);
    if (rc)
        return rc;
    enum fg_wq_method m;
    if (fg_wq_method_parse(method, &m, NULL) || m == FG_WQ_NONE)
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: quantization_config.quant_method '%s' is "
                          "not a scheme fitgate sizes (fp8, mxfp4, gptq, awq, "
                          "compressed-tensors, bitsandbytes, modelopt)", q.origin, method);
    out->method = m;
    switch (m) {
    case FG_WQ_FP8:
        return read_fp8(&q, out, err);
    case FG_WQ_MXFP4:
        out->bytes = 0.5 + 1.0 / 32;
        out->keep = FG_WQK_ATTN | FG_WQK_DENSE | FG_WQK_SHARED | FG_WQK_OTHER;
        out->pad_hidden = 256;
        fg__copy(out->label, sizeof out->label, "mxfp4 experts, e8m0 scale per 32");
        return 0;
    case FG_WQ_GPTQ:
        if ((rc = read_int_groups(&q, "gptq", out, err)))
            return rc;
        return read_keep(&q, "modules_to_not_convert", &out->keep, err);
    case FG_WQ_AWQ:
        if ((rc = read_int_groups(&q, "awq", out, err)))
            return rc;
        return read_keep(&q, "modules_to_not_convert", &out->keep, err);
    case FG_WQ_CT:
        return read_ct(&q, out, err);
    case FG_WQ_BNB:
        return read_bnb(&q, out, err);
    default:
        return read_modelopt(&q, out, err);
    }
}

int fg_wquant_for_serving(const struct fg_wquant *ckpt, enum fg_wq_method asked,
                          struct fg_wquant *out, struct fg_err *err)
{
    *out = *ckpt;
    if (asked == FG_WQ_NONE || asked == ckpt->method ||
        (asked == FG_WQ_NVFP4 && ckpt->method == FG_WQ_NVFP4) ||
        (asked == FG_WQ_MODELOPT && ckpt->method == FG_WQ_NVFP4))
        return 0;
    if (ckpt->method != FG_WQ_NONE)
        return fg_err_set(err, FG_E_INVAL, "--quantization %s does not match the checkpoint's "
                          "quant_method %s (vLLM ModelConfig._verify_quantization refuses it): "
                          "drop --quantization", fg_wq_method_name(asked),
                          fg_wq_method_name(ckpt->method));
    if (asked != FG_WQ_FP8 && asked != FG_WQ_BNB)
        return fg_err_set(err, FG_E_INVAL, "--quantization %s needs a checkpoint quantized "
                          "with it (its quantization_config); on an unquantized checkpoint "
                          "vLLM quantizes at load only to fp8 or bitsandbytes",
                          fg_wq_method_name(asked));
    memset(out, 0, sizeof *out);
    out->method = asked;
    out->runtime = true;
    /* fp8: Fp8LinearMethod / Fp8MoEMethod process_weights_after_loading quantize every
     * linear and expert to e4m3 with a per-tensor scale; bitsandbytes in-flight: 4-bit nf4
     * with an fp32 absmax per 64 (BitsAndBytesModelLoader, no double quantization) */
    out->bytes = asked == FG_WQ_FP8 ? 1.0 : 0.5 + 4.0 / 64;
    fg__copy(out->label, sizeof out->label, asked == FG_WQ_FP8 ? "fp8 at load, per-tensor scales"
                                                                : "bitsandbytes 4-bit at load");
    return 0;
}
