/*
 * memory.c - the memory model.  Sources of each formula are named where it
 * is used; the short names are:
 *   [AMP]   PyTorch automatic mixed precision: fp32 parameters, autocast
 *           keeps bf16 copies of the weights it casts for the forward pass
 *           and saves them for backward (torch/csrc/autograd autocast cache).
 *   [MEG]   Megatron-LM megatron/training/theoretical_memory_usage.py:
 *           18 bytes per parameter for bf16 training with fp32 master
 *           weights, grads and Adam states; ZeRO / distributed optimizer
 *           divides the 12 optimizer bytes by DP.
 *   [KOR]   Korthikanti et al. 2022 (arXiv 2205.05198): activations per
 *           layer, 34sbh without the score matrix (SDPA / flash attention),
 *           TP divides the attention and MLP internals, full recompute keeps
 *           2sbh per layer, pipeline stage 0 holds p micro-batches.
 *   [HF]    transformers modeling code: LlamaRMSNorm upcasts to fp32,
 *           ForCausalLMLoss upcasts the logits to fp32 for cross-entropy.
 *   [PEFT]  peft get_peft_model(autocast_adapter_dtype=True) keeps LoRA
 *           adapters in fp32 even on a bf16 base.
 *   [BNB]   bitsandbytes 4-bit: NF4 = 0.5 byte per weight + one fp32 absmax
 *           per 64 weights; double quantization stores absmax in 8 bit with
 *           one fp32 per 256 blocks (QLoRA paper, Dettmers et al. 2023).
 *   [T101]  EleutherAI "Transformer Math 101": 8-bit Adam 2 bytes, SGD with
 *           momentum one state per parameter.
 */
#include "memory.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "sat.h"

/* ---- option spellings ---------------------------------------------------- */

static const char *const mode_names[] = {"full", "lora", "qlora", "serve"};
static const char *const prec_names[] = {"bf16-mixed", "bf16", "fp16-mixed", "fp32"};
static const char *const opt_names[] = {"adamw", "adamw-8bit", "sgd", "adamw-fused"};
static const char *const quant_names[] = {"none", "nf4", "nf4-dq", "int8"};
static const char *const attn_names[] = {"sdpa", "eager"};
static const char *const offload_names[] = {"none", "optimizer", "params"};

static int parse_enum(const char *s, const char *const *names, int n, const char *what, int *out,
                      struct fg_err *err)
{
    for (int i = 0; s && i < n; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = i;
            return 0;
        }
    char list[128] = "";
    for (int i = 0; i < n; i++) {
        strncat(list, names[i], sizeof list - strlen(list) - 1);
        if (i + 1 < n)
            strncat(list, "|", sizeof list - strlen(list) - 1);
    }
    return fg_err_set(err, FG_E_INVAL, "%s '%.60s' is not one of %s", what, s ? s : "(none)",
                      list);
}

int fg_mode_parse(const char *s, enum fg_mode *out, struct fg_err *err)
{
    int v, rc = parse_enum(s, mode_names, 4, "mode", &v, err);
    if (!rc)
        *out = (enum fg_mode)v;
    return rc;
}

int fg_precision_parse(const char *s, enum fg_precision *out, struct fg_err *err)
{
    int v, rc = parse_enum(s, prec_names, 4, "precision", &v, err);
    if (!rc)
        *out = (enum fg_precision)v;
    return rc;
}

int fg_optimizer_parse(const char *s, enum fg_optimizer *out, struct fg_err *err)
{
    int v, rc = parse_enum(s, opt_names, 4, "optimizer", &v, err);
    if (!rc)
        *out = (enum fg_optimizer)v;
    return rc;
}

int fg_quant_parse(const char *s, enum fg_quant *out, struct fg_err *err)
{
    int v, rc = parse_enum(s, quant_names, 4, "quantization", &v, err);
    if (!rc)
        *out = (enum fg_quant)v;
    return rc;
}

int fg_attention_parse(const char *s, enum fg_attention *out, struct fg_err *err)
{
    int v, rc = parse_enum(s, attn_names, 2, "attention", &v, err);
    if (!rc)
        *out = (enum fg_attention)v;
    return rc;
}

int fg_offload_parse(const char *s, enum fg_offload *out, struct fg_err *err)
{
    int v, rc = parse_enum(s, offload_names, 3, "offload", &v, err);
    if (!rc)
        *out = (enum fg_offload)v;
    return rc;
}

/*
 * peft's target_modules names -> the graph's roles (model.h fg_node.role).  peft matches a
 * name against the last component of each module's path (tuners/tuners_utils.py
 * check_target_module_exists), so one name can reach several roles: GPT-2's c_proj is the
 * attention output and the MLP's down projection.  The module names are transformers'
 * (modeling_llama.py, modeling_gpt2.py, modeling_bert.py, modeling_falcon.py,
 * modeling_mixtral.py, modeling_deepseek_v3.py, modeling_phi3.py, modeling_mamba2.py).
 */
static const struct {
    const char *module, *roles;
} peft_names[] = {
    {"q_proj", "q"}, {"k_proj", "k"}, {"v_proj", "v"}, {"o_proj", "o"},
    {"out_proj", "o,out_proj"}, {"dense", "o"}, {"query", "q"}, {"key", "k"},
    {"value", "v"}, {"query_key_value", "qkv"}, {"c_attn", "qkv"}, {"wqkv", "qkv"},
    {"qkv_proj", "qkv"}, {"c_proj", "o,down"}, {"gate_proj", "gate"}, {"up_proj", "up"},
    {"down_proj", "down"}, {"gate_up_proj", "gate_up"}, {"w1", "gate"}, {"w3", "up"},
    {"w2", "down"}, {"fc1", "up"}, {"fc2", "down"}, {"c_fc", "up"},
    {"dense_h_to_4h", "up,gate_up"}, {"dense_4h_to_h", "down"}, {"q_a_proj", "q_a"},
    {"q_b_proj", "q_b"}, {"kv_a_proj_with_mqa", "kv_a"}, {"kv_b_proj", "kv_b"},
};

/* One name of a target list (a role, or a peft module name) appended as roles to out. */
static int add_target(const char *name, size_t n, char *out, size_t cap, struct fg_err *err)
{
    char low[48];
    if (n == 0)
        return 0;
    if (n >= sizeof low)
        return fg_err_set(err, FG_E_INVAL, "LoRA target '%.*s' is too long", (int)n, name);
    for (size_t i = 0; i < n; i++) {
        char ch = name[i];
        if (ch >= 'A' && ch <= 'Z')
            ch = (char)(ch - 'A' + 'a');
        if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_'))
            return fg_err_set(err, FG_E_INVAL,
                              "LoRA target list: '%.*s' is no module name; use all-linear, attn, "
                              "qv, roles like q,k,v,o,gate,up,down, or peft names like "
                              "q_proj,v_proj", (int)n, name);
        low[i] = ch;
    }
    low[n] = '\0';
    const char *roles = low;
    for (size_t i = 0; i < sizeof peft_names / sizeof peft_names[0]; i++)
        if (!strcmp(low, peft_names[i].module))
            roles = peft_names[i].roles;
    size_t have = strlen(out), add = strlen(roles);
    if (have + add + 2 > cap)
        return fg_err_set(err, FG_E_RANGE, "LoRA target list longer than %zu characters",
                          cap - 1);
    if (have)
        out[have++] = ',';
    memcpy(out + have, roles, add + 1);
    return 0;
}

int fg_lora_targets_parse(const char *s, struct fg_job *job, struct fg_err *err)
{
    if (!s || !*s)
        return fg_err_set(err, FG_E_INVAL, "empty LoRA target list");
    if (!strcmp(s, "all-linear"))
        job->lora_targets = FG_LORA_ALL_LINEAR;
    else if (!strcmp(s, "attn"))
        job->lora_targets = FG_LORA_ATTN;
    else if (!strcmp(s, "qv"))
        job->lora_targets = FG_LORA_QV;
    else {
        /* "q_proj,v_proj", "[\"q_proj\", \"v_proj\"]" or "q, v": names between separators */
        char roles[sizeof job->lora_list] = "";
        const char *sep = " ,[]\"'";
        if (strlen(s) > 1000)
            return fg_err_set(err, FG_E_RANGE, "LoRA target list longer than 1000 characters");
        for (const char *p = s; *p;) {
            p += strspn(p, sep);
            size_t n = strcspn(p, sep);
            int rc = add_target(p, n, roles, sizeof roles, err);
            if (rc)
                return rc;
            p += n;
        }
        if (!roles[0])
            return fg_err_set(err, FG_E_INVAL, "empty LoRA target list");
        job->lora_targets = FG_LORA_LIST;
        fg__copy(job->lora_list, sizeof job->lora_list, roles);
    }
    return 0;
}

const char *fg_mode_name(enum fg_mode m) { return (unsigned)m < 4 ? mode_names[m] : "?"; }
const char *fg_precision_name(enum fg_precision p) { return (unsigned)p < 4 ? prec_names[p] : "?"; }
const char *fg_optimizer_name(enum fg_optimizer o) { return (unsigned)o < 4 ? opt_names[o] : "?"; }
const char *fg_attention_name(enum fg_attention a) { return (unsigned)a < 2 ? attn_names[a] : "?"; }
const char *fg_offload_name(enum fg_offload o) { return (unsigned)o < 3 ? offload_names[o] : "?"; }

void fg_job_defaults(struct fg_job *job, enum fg_mode mode)
{
    memset(job, 0, sizeof *job);
    job->mode = mode;
    /* Full: bf16 autocast over fp32 parameters; LoRA / QLoRA: a bf16 base
     * (the seeds' defaults). */
    job->precision = mode == FG_MODE_FULL ? FG_PREC_BF16_MIXED : FG_PREC_BF16;
    job->optimizer = FG_OPT_ADAMW;
    job->quant = mode == FG_MODE_QLORA ? FG_QUANT_NF4 : FG_QUANT_NONE;
    job->lora_targets = FG_LORA_ALL_LINEAR;
    job->lora_rank = 16;
    job->batch = 1;
    job->dp = job->tp = job->pp = job->ep = 1;
    job->inflight = 1;
    job->attn_dropout = job->hidden_dropout = -1; /* config.json's */
}

void fg_job_on_gpus(struct fg_job *job, uint32_t gpus)
{
    if (job->zero && gpus > 1)
        job->dp = gpus;
}

/* ---- helpers -------------------------------------------------------------- */

/* Is node on the pipeline stage the job sizes? */
static bool on_stage(const struct fg_node *n, const struct fg_job *job)
{
    if (job->layer_last == 0)
        return true;
    if (n->layer >= 0 && n->stack == FG_STACK_MAIN)
        return (uint32_t)n->layer >= job->layer_first && (uint32_t)n->layer < job->layer_last;
    if (fg__node_head_side(n))
        return job->stage_head;
    return job->stage_embed; /* embeddings, encoder and towers live on the first stage */
}

/* Does LoRA target this linear?  PEFT "all-linear" is every nn.Linear but
 * the output layer (peft/tuners/tuners_utils.py _maybe_include_all_linear_layers). */
static bool lora_targets(const struct fg_job *job, const char *role)
{
    static const char *const attn[] = {"q", "k", "v", "o", "qkv", "q_a", "q_b", "kv_a", "kv_b",
                                       NULL};
    switch (job->lora_targets) {
    case FG_LORA_ALL_LINEAR:
        return true;
    case FG_LORA_ATTN:
        for (int i = 0; attn[i]; i++)
            if (!strcmp(role, attn[i]))
                return true;
        return false;
    case FG_LORA_QV:
        return !strcmp(role, "q") || !strcmp(role, "v") || !strcmp(role, "qkv");
    case FG_LORA_LIST: {
        size_t rl = strlen(role);
        for (const char *p = job->lora_list; *p;) {
            const char *e = strchr(p, ',');
            size_t n = e ? (size_t)(e - p) : strlen(p);
            if (n == rl && !strncmp(p, role, n))
                return true;
            p += n + (e ? 1 : 0);
        }
        return false;
    }
    }
    return false;
}

/* Parameters of a node that live on this GPU under TP / EP (Megatron's
 * buckets [MEG]: dense matrices split by TP, routed experts by EP, norms
 * replicated; the embedding and head are vocab-parallel over TP).  A tied head
 * holds no tensor of its own, even where the checkpoint writes one (transformers
 * ties lm_head to the embedding at load; measured: Qwen3-0.6B trains 596,049,920
 * parameters of its 751,632,384 stored, tests/calibration/measured-h200.tsv). */
static uint64_t node_params_here(const struct fg_node *n, const struct fg_job *job)
{
    uint64_t p = n->params - n->buffers - n->alias;
    uint32_t tp = job->tp ? job->tp : 1, ep = job->ep ? job->ep : 1;
    switch (n->kind) {
    case FG_NODE_MOE: {
        uint64_t routed = n->lin_routed < p ? n->lin_routed : p;
        return routed / ep / (ep > 1 ? 1 : tp) + (p - routed) / tp;
    }
    case FG_NODE_ATTN: case FG_NODE_MLA: case FG_NODE_MLP: case FG_NODE_MAMBA2:
    case FG_NODE_SHORTCONV: case FG_NODE_EMBED: case FG_NODE_HEAD:
        return p / tp;
    default:
        return p;
    }
}

/* The tied matrix on a pipeline stage that holds the head but not the embedding: that stage
 * keeps its own copy (Megatron's share_embeddings_and_output_weights: the last stage
 * allocates the word embeddings and all-reduces their gradient with the first [MEG]). */
static uint64_t tied_copy_here(const struct fg_model *m, const struct fg_job *job,
                               bool has_head)
{
    if (!m->tied || !has_head || job->layer_last == 0 || job->stage_embed)
        return 0;
    return m->vocab * m->hidden / (job->tp ? job->tp : 1);
}

/* Bytes per quantized weight [BNB]: int8 (LLM.int8) adds one fp32 scale per
 * row of ~4096; NF4 one fp32 absmax per 64; double quantization 8-bit
 * absmax with one fp32 per 256 blocks. */
static double quant_bytes(enum fg_quant q)
{
    return q == FG_QUANT_INT8 ? 1.0 + 4.0 / 4096
         : q == FG_QUANT_NF4_DQ ? 0.5 + 1.0 / 64 + 4.0 / (64 * 256)
                                : 0.5 + 4.0 / 64;
}

/* Linear parameters of a node on this GPU: the same buckets as
 * node_params_here (routed experts over EP, with TP = 1 then; the rest over
 * TP), never more than the node's own share. */
static uint64_t node_linear_here(const struct fg_node *n, const struct fg_job *job)
{
    uint32_t tp = job->tp ? job->tp : 1, ep = job->ep ? job->ep : 1;
    uint64_t here = n->lin_routed / ep / (ep > 1 ? 1 : tp) + n->lin_other / tp;
    uint64_t cap = node_params_here(n, job);
    return here < cap ? here : cap;
}

/* Routed-expert parameters of a node on this GPU (0 outside MoE blocks). */
static uint64_t node_experts_here(const struct fg_node *n, const struct fg_job *job)
{
    if (n->kind != FG_NODE_MOE)
        return 0;
    uint32_t tp = job->tp ? job->tp : 1, ep = job->ep ? job->ep : 1;
    uint64_t here = n->lin_routed / ep / (ep > 1 ? 1 : tp);
    uint64_t cap = node_params_here(n, job);
    return here < cap ? here : cap;
}

/*
 * Bytes of `all` parameters (of which `experts` are routed experts) at
 * `bytes` each, sharded over DP by a ZeRO stage: dense parameters over the
 * DP ranks, routed experts over the expert-data-parallel group (DP / EP):
 * EP has already split the experts, so the distributed optimizer shards
 * each expert over the ranks that hold it (Megatron expert_data_parallel).
 */
static uint64_t sharded_bytes(uint64_t all, uint64_t experts, double bytes, uint64_t shard,
                              uint32_t ep)
{
    uint64_t shard_e = shard > 1 && ep > 1 ? (shard / ep ? shard / ep : 1) : shard;
    double dense = (double)(all - experts) * bytes / (double)shard;
    double exp = (double)experts * bytes / (double)shard_e;
    double t = dense + exp;
    return t >= 1.8e19 ? UINT64_MAX : (uint64_t)t;
}

/*
 * Bytes one token keeps for backward in one node, no recompute [KOR],
 * counted from what autograd saves in the transformers implementation:
 *   c = compute dtype bytes (bf16 2, fp32 4), r = residual stream bytes
 *   (fp32 parameters under autocast keep a 4-byte residual).
 */
static uint64_t node_act_per_token(const struct fg_node *n, unsigned c, unsigned r, uint32_t tp)
{
    uint64_t q = (uint64_t)n->heads * n->head_dim, kv = (uint64_t)n->kv_heads * n->head_dim;
    switch (n->kind) {
    case FG_NODE_NORM:
        /* RMSNorm [HF]: fp32 copy of the input (4w), normalised output in the
         * input dtype (r w), cast for the next matmul (c w).  LayerNorm
         * (native op) saves its input and output. */
        return n->params == n->width ? (uint64_t)(4 + r + c) * n->width
                                     : (uint64_t)(r + c) * n->width;
    case FG_NODE_ATTN:
        /* SDPA saves q, k, v (after RoPE) and its output plus the fp32
         * log-sum-exp per head; o_proj saves the re-laid-out output again.
         * No s x s score matrix (flash / memory-efficient kernels). */
        return (c * (3 * q + 2 * kv)) / tp + 4ull * n->heads / tp;
    case FG_NODE_MLA: {
        /* MLA (DeepSeek-V2 paper, sec. 2.1): q_a / kv_a latents with their
         * norms, decompressed per-head q, k, v for SDPA, output twice. */
        uint64_t hq = (uint64_t)n->heads * n->head_dim, hv = (uint64_t)n->heads * n->v_head_dim;
        uint64_t lat = (uint64_t)(c * 2 + 4) * (n->q_lora + n->kv_lora + n->rope_dim);
        return lat + (c * (3 * hq + hv + 2 * hv)) / tp + 4ull * n->heads / tp;
    }
    case FG_NODE_MLP:
        /* gated: gate out, act(gate), up out, product -> 4 I; plain: 2 I. */
        return (uint64_t)c * (n->gated ? 4 : 2) * n->inter / tp;
    case FG_NODE_MOE: {
        /* Router logits + fp32 softmax; each of the top-k slots gathers the
         * token (c h), runs one expert MLP (4 I or 2 I) and is weighted (c h);
         * shared experts run on every token (transformers MixtralSparseMoeBlock,
         * Qwen2MoeSparseMoeBlock). */
        uint64_t per_slot = (uint64_t)c * (2ull * n->hidden + (n->gated ? 4 : 2) * n->inter);
        uint64_t shared = n->shared_inter ? (uint64_t)c * ((n->gated ? 4 : 2) * n->shared_inter)
                                          : 0;
        return (uint64_t)(c + 4) * n->experts + n->top_k * per_slot + shared / tp;
    }
    case FG_NODE_MAMBA2: {
        /* Training goes through mamba_ssm's fused mamba_split_conv1d_scan_combined
         * (NemotronH / Mamba2 cuda_kernels_forward when training): its autograd
         * Function saves the in_proj output zxbcdt and the scan output out_x,
         * plus fp32 rstd per group; conv output, chunk states, the gated norm
         * and out_proj input are recomputed in backward.  (Without the
         * kernels, transformers' torch_forward keeps chunk x chunk decay
         * matrices per head: far more; not modelled.) */
        uint64_t d_inner = (uint64_t)n->ssm_heads * n->ssm_head_dim;
        uint64_t d_in_proj = 2 * d_inner + 2ull * n->groups * n->state + n->ssm_heads;
        return c * (d_in_proj + d_inner) / tp + 4ull * (n->groups ? n->groups : 1);
    }
    case FG_NODE_SHORTCONV:
        /* LFM2 gated short conv: in_proj to B, C, x (3h), B*x, conv out, C*conv. */
        return (uint64_t)c * 7 * n->hidden / tp;
    default:
        return 0;
    }
}

static void put_line(struct fg_estimate *e, const char *key, uint64_t bytes, bool per_sample,
                      const char *source, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static void put_line(struct fg_estimate *e, const char *key, uint64_t bytes, bool per_sample,
                      const char *source, const char *fmt, ...)
{
    if (bytes == 0 || e->n_lines >= FG_ESTIMATE_MAX_LINES)
        return;
    struct fg_line *l = &e->lines[e->n_lines++];
    fg__copy(l->key, sizeof l->key, key);
    fg__copy(l->source, sizeof l->source, source);
    va_list ap;
    va_start(ap, fmt);
    fg__vfmt(l->what, sizeof l->what, fmt, ap);
    va_end(ap);
    l->bytes = bytes;
    l->per_sample = per_sample;
}

/* A totals-only estimate starts with its lines full (estimate()): not even the call. */
#define add_line(e, ...) \
    ((e)->n_lines < FG_ESTIMATE_MAX_LINES ? put_line((e), __VA_ARGS__) : (void)0)

uint64_t fg_estimate_at(const struct fg_estimate *e, uint64_t batch)
{
    uint64_t t = fg__add_sat(e->static_bytes, fg__mul_sat(e->per_sample_bytes, batch));
    return t > e->step_bytes ? t : e->step_bytes;
}

/* KV cache bytes per token per attention node when serving in bf16:
 * K and V for kv_heads x head_dim (GQA aware); MLA caches the compressed
 * latent plus the rope key (kv_lora + rope_dim), as vLLM / SGLang do. */
static uint64_t kv_per_token(const struct fg_node *n)
{
    if (n->kind == FG_NODE_MLA)
        return 2ull * (n->kv_lora + n->rope_dim);
    if (n->kind == FG_NODE_ATTN && !n->bidirectional)
        return 2ull * 2 * n->kv_heads * n->head_dim;
    return 0;
}

/* Fixed recurrent state per sequence: Mamba-2 SSM state (fp32, heads x
 * head_dim x state) + conv state (bf16, (kernel-1) x conv channels);
 * LFM2 short conv keeps (kernel-1) x hidden (transformers cache classes). */
static uint64_t state_per_seq(const struct fg_node *n)
{
    if (n->kind == FG_NODE_MAMBA2) {
        uint64_t d_inner = (uint64_t)n->ssm_heads * n->ssm_head_dim;
        uint64_t conv_dim = d_inner + 2ull * n->groups * n->state;
        return 4 * d_inner * n->state + 2 * conv_dim * (n->conv_kernel ? n->conv_kernel - 1 : 0);
    }
    if (n->kind == FG_NODE_SHORTCONV)
        return 2ull * n->hidden * (n->conv_kernel ? n->conv_kernel - 1 : 0);
    return 0;
}

/*
 * What the job's activations are made of, set once per estimate (act_of): the compute and
 * residual bytes, and which of the framework's kept tensors the job has.  Part of the
 * planner's part key (struct part_key): every block part reads it.
 */
struct act {
    unsigned c, r;          /* compute dtype bytes (bf16 2, fp32 4); residual stream bytes */
    unsigned qin_bytes;     /* bnb_keeps_input: bytes of each 4-bit linear's kept input copy */
    bool lora_drop;         /* LoRA dropout masks and dropped inputs */
    unsigned lora_drop_bytes; /* bytes a dropped input element adds (mask, wider copy) */
    bool attn_drop;         /* dropout on the attention probabilities (eager) */
    bool hidden_drop;       /* dropout on the hidden states */
};

static void act_of(const struct fg_model *m, const struct fg_job *job, struct act *a)
{
    bool qlora = job->mode == FG_MODE_QLORA, train = job->mode != FG_MODE_SERVE;
    bool kbit = qlora && job->kbit_prepared;
    memset(a, 0, sizeof *a);
    a->c = job->precision == FG_PREC_FP32 || kbit ? 4 : 2;
    /* "mixed" means fp32 parameters under autocast (PyTorch AMP; Lightning's bf16-mixed),
     * so the residual stream is fp32; "bf16" loads the parameters in bf16 */
    a->r = job->precision == FG_PREC_BF16 && !kbit ? 2 : 4;
    /* MatMul4Bit's kept input (bnb < 0.43.2) is a tensor of its own only where Linear4bit
     * cast it: bnb_compute fp32 over 2-byte activations */
    unsigned ce = job->bnb_compute == FG_BNB_FP32 ? 4 : a->c;
    if (qlora && job->bnb_keeps_input && ce > a->c)
        a->qin_bytes = ce;
    a->lora_drop = train && job->mode != FG_MODE_FULL && job->lora_dropout > 0;
    /* lora_A keeps the dropped input in its own dtype; under autocast it keeps the bf16
     * cast autocast makes of it (peft casts x to lora_A's fp32 first, layer.py; bnb.py
     * skips that cast under autocast) */
    bool autocast = job->precision == FG_PREC_BF16_MIXED || job->precision == FG_PREC_FP16_MIXED;
    unsigned dropped = autocast ? 2 : job->lora_base_dtype ? a->c : 4;
    a->lora_drop_bytes = 1 + (dropped > a->c ? dropped - a->c : 0); /* mask + the widening */
    double pa = job->attn_dropout < 0 ? m->attn_dropout : job->attn_dropout;
    double ph = job->hidden_dropout < 0 ? m->hidden_dropout : job->hidden_dropout;
    a->attn_drop = train && pa > 0;
    a->hidden_drop = train && ph > 0;
}

/* What a part and a stage add up node by node: one array, so that folding, runs, the two
 * sides and the planner's prefix table treat every field alike. */
enum {
    S_PARAMS, S_EXPERTS, S_LINEAR, S_QUANTIZABLE, S_ADAPTERS,
    S_MERGED, /* LoRA: expert parameters peft rebuilds as W + BA each forward */
    S_SCORE,  /* bytes kept per token per token of context (attention scores) */
    S_QIN,    /* bytes kept per token: 4-bit linears' input copies (bnb_keeps_input) */
    S_LDROP,  /* bytes kept per token: LoRA dropout masks and dropped inputs */
    S_HDROP,  /* bytes kept per token: hidden-state dropout masks */
    S_ACT,    /* bytes kept per token; a stage's: its blocks' (the sides' go to act_other) */
    SUMS
};

/* What one node (or one block, summed over its nodes) adds to a training estimate. */
struct part {
    uint64_t sum[SUMS];
    uint64_t largest;
};

/*
 * Node n's LoRA adapters, and the expert weights peft rebuilds for them (struct part
 * S_ADAPTERS, S_MERGED), as peft >= 0.17 on transformers 5 makes them (tuners/lora/layer.py,
 * utils/transformers_weight_conversion.py):
 *   - each nn.Linear a target names gets rank r: A r x in, B out x r;
 *   - a MoE family peft maps (FG_LORA_EXPERTS_MERGED) has its fused experts wrapped: per
 *     expert one adapter at rank 2 r over the fused gate_up (h -> 2 I) and one at rank r over
 *     down, and the router's weight at rank r; the expert names leave target_modules, so
 *     the shared experts and the dense MLPs (gate_proj / up_proj / down_proj) get none;
 *   - elsewhere fused experts and a parameter router match no target (FG_LORA_EXPERTS_NONE).
 * Routed adapters live with their expert (over EP).  On H200 the count equals peft's
 * n_trainable on every LoRA row whose model transformers built as the checkpoint reads
 * (tests/test_accuracy.c).
 */
static void add_lora(const struct fg_node *n, const struct fg_job *job, uint32_t tp,
                     struct part *p)
{
    uint64_t r = job->lora_rank, gu_in = 0, gu_out = 0, gu_copies = 0;
    bool mapped = n->lora_experts == FG_LORA_EXPERTS_MERGED, gu_hit = false;
    if (n->kind == FG_NODE_HEAD || (n->kind == FG_NODE_MLP && mapped))
        return;
    for (unsigned k = 0; k < n->nlin; k++) {
        const struct fg_linear *l = &n->lin[k];
        bool routed = n->kind == FG_NODE_MOE && l->count > 1;
        uint64_t copies = routed && job->ep > 1 ? (l->count + job->ep - 1) / job->ep : l->count;
        bool hit = lora_targets(job, l->role);
        if (routed && mapped && strcmp(l->role, "down") != 0) { /* gate, up or gate_up */
            gu_in = l->in;
            gu_out += l->out;
            gu_copies = copies;
            gu_hit |= hit;
            continue;
        }
        if (!hit)
            continue;
        if (n->kind == FG_NODE_MOE && n->lora_experts == FG_LORA_EXPERTS_NONE &&
            (routed || !strcmp(l->role, "router")))
            continue; /* granite-3.1-1b-a400m on H200 trained q/k/v/o alone: 2,752,512 */
        if (mapped && !strncmp(l->role, "shared_", 7))
            continue;
        p->sum[S_ADAPTERS] += r * (l->in + l->out) * copies;
        if (routed && mapped)
            p->sum[S_MERGED] += (uint64_t)l->in * l->out / tp * copies;
    }
    if (gu_hit) {
        p->sum[S_ADAPTERS] += 2 * r * (gu_in + gu_out) * gu_copies;
        p->sum[S_MERGED] += gu_in * gu_out / tp * gu_copies;
    }
}

/* Bytes per attention score node n keeps for backward under the job's attention
 * implementation (model.h score_bytes, eager_bytes); 0 where a fused kernel runs. */
static unsigned scores_kept(const struct fg_node *n, const struct fg_job *job)
{
    return job->attention == FG_ATTN_EAGER ? n->eager_bytes : n->score_bytes;
}

/*
 * Bytes per score an eager attention keeps for backward in training, from n->eager_bytes
 * (written for bf16 compute and no dropout) and the job's compute bytes and attention
 * dropout.  transformers' eager_attention_forward (and BertSelfAttention.forward, whose
 * softmax autocast runs in fp32): softmax's backward keeps its fp32 output (4 B), the PV
 * matmul keeps what it multiplies:
 *   - bf16, no dropout: the bf16 cast of the probabilities, 4 + 2 = 6;
 *   - fp32, no dropout: the cast is a no-op, the matmul keeps the softmax output: 4;
 *     tensors of 2 B elsewhere (Gemma-2's tanh, falcon's own path) double;
 *   - dropout p > 0: nn.functional.dropout keeps a bool mask (torch native_dropout: 1 B)
 *     and the matmul keeps its output in the compute dtype instead of the cast: +1 in
 *     bf16 (the cast is dropout's input, kept by no one), +1 + 4 in fp32.
 */
static unsigned eager_kept(const struct fg_node *n, const struct act *a)
{
    unsigned b = n->eager_bytes;
    if (a->c == 4)
        b = b >= 6 ? 4 + 2 * (b - 6) : 2 * b;
    if (a->attn_drop)
        b += 1 + (a->c == 4 ? 4 : 0);
    return b;
}

/* The 4-bit linears' input copies a node keeps per token (bnb_keeps_input, struct act
 * qin_bytes): one per linear input (a routed expert's for each of the top-k slots). */
static uint64_t node_qin_per_token(const struct fg_node *n, unsigned bytes, uint32_t tp)
{
    if (!bytes || n->kind == FG_NODE_HEAD || n->kind == FG_NODE_EMBED)
        return 0;
    uint64_t in = 0;
    for (unsigned k = 0; k < n->nlin; k++) {
        const struct fg_linear *l = &n->lin[k];
        bool routed = n->kind == FG_NODE_MOE && l->count > 1;
        in += (uint64_t)l->in * (routed ? n->top_k : l->count);
    }
    return in * bytes / tp;
}

/*
 * The LoRA dropout a node keeps per token (struct act lora_drop, lora_drop_bytes): for each
 * adapted linear (lora_targets) a bool mask and the dropped input the adapter's A matrix
 * multiplies (peft tuners/lora/layer.py Linear.forward: lora_B(lora_A(dropout(x))), one
 * nn.Dropout per adapted module; lit-gpt lora.py LoRAQKVLinear.forward: one for the fused
 * q, k, v, job.lora_fused_qkv).  The dropped copy takes the place of the input lora_A would
 * keep without dropout, which node_act_per_token counts at the compute dtype: `bytes` is
 * what a dropped element adds over it (act_of).  The head takes no adapter (add_lora);
 * routed experts are left out (peft's ParamWrapper adapts the fused tensors, not per-token
 * linears).
 */
static uint64_t node_lora_drop_per_token(const struct fg_node *n, const struct fg_job *job,
                                         unsigned bytes, uint32_t tp)
{
    if (n->kind == FG_NODE_HEAD || n->kind == FG_NODE_EMBED)
        return 0;
    uint64_t in = 0;
    bool qkv_seen = false;
    for (unsigned k = 0; k < n->nlin; k++) {
        const struct fg_linear *l = &n->lin[k];
        if ((n->kind == FG_NODE_MOE && l->count > 1) || !lora_targets(job, l->role))
            continue;
        bool qkv = !strcmp(l->role, "q") || !strcmp(l->role, "k") || !strcmp(l->role, "v");
        if (qkv && job->lora_fused_qkv && qkv_seen)
            continue; /* the fused projection's one input */
        qkv_seen |= qkv;
        in += (uint64_t)l->in * l->count;
    }
    return in * bytes / tp;
}

/* Hidden-state dropout (struct act hidden_drop): a bool mask of the residual width after
 * each residual branch, attention and MLP / MoE (BertSelfOutput, BertOutput; GPT2
 * resid_dropout); the dropped tensor itself goes into the residual add, which keeps
 * nothing.  The embeddings' one (BertEmbeddings.dropout) is counted once by estimate(). */
static uint64_t node_hidden_drop_per_token(const struct fg_node *n)
{
    switch (n->kind) {
    case FG_NODE_ATTN: case FG_NODE_MLA: case FG_NODE_MLP: case FG_NODE_MOE:
        return n->hidden;
    default:
        return 0;
    }
}

static void add_node(const struct fg_node *n, const struct fg_job *job, const struct act *a,
                     struct part *p)
{
    bool lora = job->mode == FG_MODE_LORA || job->mode == FG_MODE_QLORA;
    uint32_t tp = job->tp ? job->tp : 1;
    p->sum[S_PARAMS] += node_params_here(n, job);
    p->sum[S_EXPERTS] += node_experts_here(n, job);
    uint64_t lp = node_linear_here(n, job);
    if (n->kind != FG_NODE_EMBED)
        p->sum[S_LINEAR] += lp;
    if (n->kind != FG_NODE_HEAD && n->kind != FG_NODE_EMBED)
        p->sum[S_QUANTIZABLE] += lp;
    for (unsigned k = 0; k < n->nlin; k++) {
        uint64_t one = (uint64_t)n->lin[k].in * n->lin[k].out;
        if (one / tp > p->largest)
            p->largest = one / tp;
    }
    if (lora)
        add_lora(n, job, tp, p);
    /* Towers (vision / audio) stay frozen and unused in text fine-tunes. */
    if (n->stack != FG_STACK_TOWER) {
        p->sum[S_ACT] += node_act_per_token(n, a->c, a->r, tp);
        if ((n->kind == FG_NODE_ATTN || n->kind == FG_NODE_MLA) && scores_kept(n, job)) {
            /* Attention that materialises its scores (eager_attention_forward, the SDPA
             * math path) is softmax and two matmuls: the PV product is kept by no one (the
             * o projection keeps its re-laid-out copy) and there is no log-sum-exp, which
             * node_act_per_token counts for the fused kernels. */
            uint64_t out = n->kind == FG_NODE_MLA ? (uint64_t)n->heads * n->v_head_dim
                                                  : (uint64_t)n->heads * n->head_dim;
            p->sum[S_ACT] -= (a->c * out) / tp + 4ull * n->heads / tp;
        }
        p->sum[S_QIN] += node_qin_per_token(n, a->qin_bytes, tp);
        if (a->lora_drop)
            p->sum[S_LDROP] += node_lora_drop_per_token(n, job, a->lora_drop_bytes, tp);
        if (a->hidden_drop)
            p->sum[S_HDROP] += node_hidden_drop_per_token(n);
        unsigned kept = job->attention == FG_ATTN_EAGER && n->eager_bytes ? eager_kept(n, a)
                                                                         : scores_kept(n, job);
        p->sum[S_SCORE] += (uint64_t)kept * n->heads / tp;
    }
}

/* The training estimate's sums over the nodes on the job's stage. */
struct stage_sums {
    uint64_t sum[SUMS], largest;
    uint64_t act_block_max, act_other, layers; /* per token */
    bool has_head;
};

/* Fold part p (nodes of block `layer`, or of no block when layer < 0) into t; blocks are
 * told apart by the layer number changing, as the nodes come. */
static void fold(struct stage_sums *t, const struct part *p, int32_t layer, int32_t *cur_layer,
                 uint64_t *cur_act)
{
    for (int f = 0; f < S_ACT; f++)
        t->sum[f] += p->sum[f];
    if (p->largest > t->largest)
        t->largest = p->largest;
    if (layer < 0) {
        t->act_other += p->sum[S_ACT];
        return;
    }
    if (layer != *cur_layer) {
        if (*cur_act > t->act_block_max)
            t->act_block_max = *cur_act;
        *cur_layer = layer;
        *cur_act = 0;
        t->layers++;
    }
    *cur_act += p->sum[S_ACT];
    t->sum[S_ACT] += p->sum[S_ACT];
}

/* k blocks of part p one after the other from block `layer` on: what k folds give (each
 * block closes the one before it; all but the first hold p's activations alone). */
static void fold_run(struct stage_sums *t, const struct part *p, int32_t layer, uint32_t k,
                     int32_t *cur_layer, uint64_t *cur_act)
{
    fold(t, p, layer, cur_layer, cur_act);
    if (k < 2)
        return;
    uint64_t more = k - 1, act = p->sum[S_ACT];
    for (int f = 0; f < SUMS; f++)
        t->sum[f] += p->sum[f] * more;
    if (*cur_act > t->act_block_max)
        t->act_block_max = *cur_act;
    if (k > 2 && act > t->act_block_max)
        t->act_block_max = act;
    *cur_layer = layer + (int32_t)more;
    *cur_act = act;
    t->layers += more;
}

/* on_stage for a whole segment (model.h says where each side goes). */
static bool seg_on_stage(const struct fg_model *m, const struct fg_seg *g, const struct fg_job *job)
{
    if (job->layer_last == 0)
        return true;
    if (g->side == FG_SEG_LAYER) {
        uint32_t l = (uint32_t)m->nodes[g->first].layer;
        return l >= job->layer_first && l < job->layer_last;
    }
    return g->side == FG_SEG_HEAD ? job->stage_head : job->stage_embed;
}

/*
 * The block segment at segs[*s] starts a run (model.h); its blocks on the job's stage are
 * k blocks from *g on.  *s moves to the run's last segment, so the caller's s++ goes past
 * it; false when no block of the run is on the stage.
 */
static bool run_on_stage(const struct fg_model *m, const struct fg_job *job, size_t *s,
                         const struct fg_seg **g, uint32_t *k)
{
    const struct fg_seg *first = &m->segs[*s];
    uint32_t l = (uint32_t)first->layer, n = first->run, skip = 0;
    *s += n - 1;
    if (job->layer_last) {
        if (l >= job->layer_last || l + n <= job->layer_first)
            return false;
        if (l < job->layer_first)
            skip = job->layer_first - l;
        if (l + n > job->layer_last)
            n = job->layer_last - l;
    }
    *g = first + skip;
    *k = n - skip;
    return true;
}

/* Block parts met in one estimate (or kept across estimates by a planner, fg__parts):
 * the first CACHED distinct blocks; more are recomputed where met. */
enum { CACHED = 16 };
struct block_table;
struct part_set {
    unsigned n;
    struct { uint32_t rep; struct part p; } seen[CACHED];
    struct block_table *table; /* a planner's (fg__parts), built on first use; or NULL */
    bool table_tried;
};

/* The part of block segment g under job: from the set, or computed and kept there. */
static struct part block_part(const struct fg_model *m, const struct fg_job *job,
                              const struct act *a, const struct fg_seg *g, struct part_set *set)
{
    for (unsigned i = 0; i < set->n; i++)
        if (set->seen[i].rep == g->rep)
            return set->seen[i].p;
    struct part own = {0};
    for (uint32_t i = 0; i < g->n; i++)
        add_node(&m->nodes[g->first + i], job, a, &own);
    if (set->n < CACHED) {
        set->seen[set->n].rep = g->rep;
        set->seen[set->n++].p = own;
    }
    return own;
}

/*
 * The sums over the stage, segment by segment (model.h): a run of equal blocks is counted
 * once and folded in k times, clipped to the stage (a 94-block Qwen3-235B is one run), a
 * block equal to one already counted (in this estimate, or in set's) adds that block's
 * part, so the cost grows with the distinct blocks and runs, not the nodes.  Integer sums
 * (wrapping as repeated additions wrap) and maxima: the same bytes as the node-by-node
 * walk, which is what runs when the model has no segments.
 */
static void sum_stage(const struct fg_model *m, const struct fg_job *job, const struct act *a,
                      struct part_set *set, struct stage_sums *t)
{
    int32_t cur_layer = -2;
    uint64_t cur_act = 0;
    memset(t, 0, sizeof *t);
    size_t n_segs = m->segs ? m->n_segs : m->n_nodes;
    for (size_t s = 0; s < n_segs; s++) {
        const struct fg_seg *g = m->segs ? &m->segs[s] : NULL;
        if (g && g->layer >= 0) {
            uint32_t k;
            if (!run_on_stage(m, job, &s, &g, &k))
                continue;
            struct part p = block_part(m, job, a, g, set);
            fold_run(t, &p, g->layer, k, &cur_layer, &cur_act);
            continue;
        }
        const struct fg_node *n = &m->nodes[g ? g->first : s];
        if (g ? !seg_on_stage(m, g, job) : !on_stage(n, job))
            continue;
        struct part own = {0};
        add_node(n, job, a, &own);
        fold(t, &own, n->stack == FG_STACK_TOWER ? -1 : n->layer, &cur_layer, &cur_act);
        if (n->kind == FG_NODE_HEAD)
            t->has_head = true;
    }
    if (cur_act > t->act_block_max)
        t->act_block_max = cur_act;
}

/*
 * A planner asks for many stages of one model under one part key (fg__parts).  For a model
 * whose only layered nodes are its main-stack blocks, one segment each (decoders), the walk's
 * sums over a stage are prefix differences over the blocks plus the two sides: every block
 * is its own layer, so the largest block and the largest linear are maxima over the stage's
 * blocks.  The table holds those per block, built once per key; the planner's stage estimates
 * then cost the stage's length in comparisons, not a walk over the model.  Other models
 * (encoder stacks, layered towers) keep the walk: their layer numbers can meet across a
 * stage's edge, which the walk counts as one block.
 */
struct block_table {
    uint32_t layers;
    uint64_t *sum;      /* SUMS x (layers + 1) prefix sums of struct part's sum, field-major */
    uint64_t *largest;  /* per block */
    uint64_t *act;      /* per block */
    uint32_t *present;  /* prefix count of the blocks the model has */
    uint32_t *change;   /* per block: the next block whose largest or act differs (or layers):
                           a stage's maxima take a step per change, not per block */
    struct stage_sums embed, head; /* the two sides alone */
};

static void table_free(struct block_table *t)
{
    if (t)
        free(t->sum);
    free(t);
}

/* The table of m under job's part key, or NULL when the model is not one it serves (or no
 * memory: the walk then answers, the same bytes). */
static struct block_table *table_build(const struct fg_model *m, const struct fg_job *job,
                                       const struct act *a, struct part_set *set)
{
    uint32_t layers = fg_model_main_layers(m);
    if (!m->segs || !layers)
        return NULL;
    for (size_t s = 0; s < m->n_segs; s++) {
        const struct fg_seg *g = &m->segs[s];
        const struct fg_node *n = &m->nodes[g->first];
        if (g->layer < 0 && n->layer >= 0 && n->stack != FG_STACK_TOWER)
            return NULL; /* a layered node outside the blocks */
    }
    /* not zeroed: every entry is written below (a plan builds several tables, and clearing
     * them was a tenth of the planner's instructions, callgrind) */
    struct block_table *t = calloc(1, sizeof *t);
    size_t row = (size_t)layers + 1;
    uint64_t *mem = t ? malloc((SUMS + 3) * row * sizeof *mem) : NULL;
    if (!mem) {
        free(t);
        return NULL;
    }
    t->layers = layers;
    t->sum = mem;
    t->largest = mem + SUMS * row;
    t->act = t->largest + row;
    t->present = (uint32_t *)(t->act + row);
    t->change = t->present + row;
    memset(t->present, 0, row * sizeof *t->present);
    /* each block's own values first (sum[f][l + 1]), prefix-summed below */
    int32_t cur_layer = -2, head_layer = -2;
    uint64_t cur_act = 0, head_act = 0;
    for (size_t s = 0; s < m->n_segs; s++) {
        const struct fg_seg *g = &m->segs[s];
        const struct fg_node *n = &m->nodes[g->first];
        if (g->layer >= 0) {
            if (t->present[g->layer]) { /* a block in two segments */
                table_free(t);
                return NULL;
            }
            t->present[g->layer] = 1;
            struct part p = block_part(m, job, a, g, set);
            for (int f = 0; f < SUMS; f++)
                t->sum[f * row + (size_t)g->layer + 1] = p.sum[f];
            t->largest[g->layer] = p.largest;
            t->act[g->layer] = p.sum[S_ACT];
            continue;
        }
        struct part own = {0};
        add_node(n, job, a, &own);
        if (g->side == FG_SEG_HEAD) {
            fold(&t->head, &own, -1, &head_layer, &head_act);
            t->head.has_head |= n->kind == FG_NODE_HEAD;
        } else {
            fold(&t->embed, &own, -1, &cur_layer, &cur_act);
            t->embed.has_head |= n->kind == FG_NODE_HEAD;
        }
    }
    uint32_t count = 0;
    for (int f = 0; f < SUMS; f++)
        t->sum[f * row] = 0;
    for (uint32_t l = 0; l < layers; l++) {
        if (!t->present[l]) { /* a layer no block has: zeros */
            for (int f = 0; f < SUMS; f++)
                t->sum[f * row + l + 1] = 0;
            t->largest[l] = t->act[l] = 0;
        }
        for (int f = 0; f < SUMS; f++)
            t->sum[f * row + l + 1] += t->sum[f * row + l];
        count += t->present[l];
        t->present[l] = count - t->present[l]; /* blocks before l */
    }
    t->present[layers] = count;
    for (uint32_t l = layers; l-- > 0;)
        t->change[l] = l + 1 < layers && t->largest[l + 1] == t->largest[l] &&
                               t->act[l + 1] == t->act[l]
                           ? t->change[l + 1]
                           : l + 1;
    return t;
}

/* A side's sums into the stage's (sides hold no block: their activations are "other"). */
static void add_side(struct stage_sums *t, const struct stage_sums *side)
{
    for (int f = 0; f < SUMS; f++)
        t->sum[f] += side->sum[f];
    t->largest = side->largest > t->largest ? side->largest : t->largest;
    t->act_other += side->act_other;
    t->has_head |= side->has_head;
}

/* What sum_stage gives for job's stage, from the table. */
static void table_sums(const struct block_table *b, const struct fg_job *job,
                       struct stage_sums *t)
{
    memset(t, 0, sizeof *t);
    bool whole = job->layer_last == 0;
    uint32_t lo = whole ? 0 : job->layer_first, hi = whole ? b->layers : job->layer_last;
    hi = hi < b->layers ? hi : b->layers;
    lo = lo < hi ? lo : hi;
    if (whole || job->stage_embed)
        add_side(t, &b->embed);
    for (int f = 0; f < SUMS; f++)
        t->sum[f] += b->sum[f * (b->layers + 1) + hi] - b->sum[f * (b->layers + 1) + lo];
    for (uint32_t l = lo; l < hi; l = b->change[l]) {
        t->largest = b->largest[l] > t->largest ? b->largest[l] : t->largest;
        t->act_block_max = b->act[l] > t->act_block_max ? b->act[l] : t->act_block_max;
    }
    t->layers = b->present[hi] - b->present[lo];
    if (whole || job->stage_head)
        add_side(t, &b->head);
}

/* What a served node (or block) adds: weights on this GPU, KV bytes per sequence, fixed
 * state per sequence, linear weights (for a quantized base only), and the largest forward
 * working set per token (one node's temporaries: the nodes run one after another). */
struct serve_part {
    uint64_t weights, kv, state, lin, work;
    bool has_head;
};

/*
 * Bytes per token a node's bf16 prefill holds at once beside the residual stream (2 h):
 * a gated MLP its gate and up outputs, the activation and the product (4 I; plain 2 I);
 * a MoE block each top-k slot's gathered token, expert output and weighted output (3 h)
 * besides the expert MLP's widths, plus the shared experts.  Measured on H200
 * (tests/calibration/measured-h200.tsv, serve rows: peak over weights + KV cache): Qwen3-0.6B
 * 26.5 KB/token (this gives 26.6), Llama-3.2-1B 68 (69.6), Llama-3.1-8B 119 (123),
 * Qwen3-30B-A3B 148 (152).  Attention under a fused SDPA kernel holds less than the MLP.
 */
static uint64_t node_prefill_per_token(const struct fg_node *n, const struct fg_job *job,
                                       uint64_t seq)
{
    uint32_t tp = job->tp ? job->tp : 1;
    uint64_t widths = n->gated ? 4 : 2;
    switch (n->kind) {
    case FG_NODE_ATTN: case FG_NODE_MLA: {
        /* Attention that materialises its scores (eager, or SDPA's math path: model.h)
         * holds about 10 B per score at once for one layer: the compute-dtype scores, their
         * fp32 copy and the fp32 softmax (measured on H200, held-out rows: Llama-3.2-1B
         * eager 9.8 B, falcon-7b's math path 9.4 B, tests/calibration/). */
        return scores_kept(n, job) ? fg__mul_sat(10ull * n->heads / tp, seq) : 0;
    }
    case FG_NODE_MLP:
        return 2 * ((uint64_t)n->hidden + widths * n->inter / tp);
    case FG_NODE_MOE:
        return 2 * ((uint64_t)n->hidden +
                    n->top_k * (widths * n->inter / tp + 3ull * n->hidden) +
                    widths * n->shared_inter / tp);
    default:
        return 0;
    }
}

static void add_served(const struct fg_node *n, const struct fg_job *job, uint64_t seq,
                       struct serve_part *p)
{
    bool quantized = job->quant != FG_QUANT_NONE;
    p->weights = fg__add_sat(p->weights, node_params_here(n, job));
    uint64_t ctx = n->window && n->window < seq ? n->window : seq;
    p->kv = fg__add_sat(p->kv, fg__mul_sat(kv_per_token(n) / (job->tp ? job->tp : 1), ctx));
    p->state = fg__add_sat(p->state, state_per_seq(n));
    if (quantized && n->kind != FG_NODE_HEAD && n->kind != FG_NODE_EMBED)
        p->lin += node_linear_here(n, job);
    p->has_head |= n->kind == FG_NODE_HEAD;
    uint64_t work = node_prefill_per_token(n, job, seq);
    p->work = work > p->work ? work : p->work;
}

/* k copies of p into t: the saturating sums saturate as k additions would (the terms are
 * not negative), the linear count wraps as they would. */
static void fold_served(struct serve_part *t, const struct serve_part *p, uint64_t k)
{
    t->weights = fg__add_sat(t->weights, fg__mul_sat(p->weights, k));
    t->kv = fg__add_sat(t->kv, fg__mul_sat(p->kv, k));
    t->state = fg__add_sat(t->state, fg__mul_sat(p->state, k));
    t->lin += p->lin * k;
    t->has_head |= p->has_head;
    t->work = p->work > t->work ? p->work : t->work;
}

/* The serving sums over the stage, run by run as sum_stage. */
static void sum_served(const struct fg_model *m, const struct fg_job *job, uint64_t seq,
                       struct serve_part *t)
{
    memset(t, 0, sizeof *t);
    size_t n_segs = m->segs ? m->n_segs : m->n_nodes;
    for (size_t s = 0; s < n_segs; s++) {
        const struct fg_seg *g = m->segs ? &m->segs[s] : NULL;
        struct serve_part p = {0};
        uint32_t k = 1;
        if (g && g->layer >= 0) {
            if (!run_on_stage(m, job, &s, &g, &k))
                continue;
            for (uint32_t i = 0; i < g->n; i++)
                add_served(&m->nodes[g->first + i], job, seq, &p);
        } else {
            const struct fg_node *n = &m->nodes[g ? g->first : s];
            if (g ? !seg_on_stage(m, g, job) : !on_stage(n, job))
                continue;
            add_served(n, job, seq, &p);
        }
        fold_served(t, &p, k);
    }
}

static int estimate_serve(const struct fg_model *m, const struct fg_job *job,
                          struct fg_estimate *e, struct fg_err *err)
{
    uint64_t seq = e->seq_len, work = 0;
    struct serve_part t;
    sum_served(m, job, seq, &t);
    t.weights += tied_copy_here(m, job, t.has_head);
    uint64_t weights = t.weights, kv = t.kv, state = t.state;
    if (m->encoder_only) {
        /* An encoder keeps no cache: the peak is one block's forward working
         * set (residual, q/k/v, MLP intermediate and its activation) in bf16. */
        uint64_t widest = m->widest_inter;
        for (size_t i = 0; !m->segs && i < m->n_nodes; i++) { /* not derived */
            const struct fg_node *n = &m->nodes[i];
            uint64_t w = n->kind == FG_NODE_MOE ? (uint64_t)n->top_k * n->inter : n->inter;
            if (w > widest)
                widest = w;
        }
        work = fg__mul_sat(2 * (4 * m->hidden + 2 * widest), seq);
    } else {
        /* A decoder's prefill: the cache fills beside one node's working set. */
        work = fg__mul_sat(t.work * (job->precision == FG_PREC_FP32 ? 2 : 1), seq);
    }
    /* Serving dtype: bf16 unless fp32 is asked; a quantized base stores
     * the block linears at the bitsandbytes rates of the QLoRA path. */
    uint64_t wbytes;
    if (job->quant != FG_QUANT_NONE) {
        uint64_t lin = t.lin;
        if (lin > weights)
            lin = weights;
        wbytes = (uint64_t)((double)lin * quant_bytes(job->quant)) + (weights - lin) * 2;
    } else {
        wbytes = fg__mul_sat(weights, job->precision == FG_PREC_FP32 ? 4 : 2);
    }
    e->b.weights = wbytes;
    e->b.kv_cache = fg__mul_sat(kv, job->batch);
    e->b.ssm_state = fg__mul_sat(state, job->batch);
    e->b.activations = fg__mul_sat(work, job->batch);
    e->static_bytes = wbytes;
    e->per_sample_bytes = fg__add_sat(fg__add_sat(kv, state), work);
    e->total_bytes = fg_estimate_at(e, job->batch);
    add_line(e, "weights", wbytes, false, "serving dtype; bitsandbytes",
             "%s weights: %llu params", job->quant != FG_QUANT_NONE ? "quantized"
                                        : job->precision == FG_PREC_FP32 ? "fp32" : "bf16",
             (unsigned long long)weights);
    add_line(e, "kv_cache", kv, true, "GQA/MLA/window-aware KV",
             "KV cache for %llu tokens per sequence", (unsigned long long)seq);
    add_line(e, "ssm_state", state, true, "transformers Mamba2/LFM2 cache",
             "fixed SSM / conv state per sequence");
    add_line(e, "activations", work, true,
             m->encoder_only ? "encoder forward, no cache" : "prefill, measured on H200",
             "one block's forward working set for %llu tokens", (unsigned long long)seq);
    (void)err;
    return 0;
}

/*
 * lines false: the planner's estimates, of which it reads only the byte totals.  The
 * lines then count as full from the start, so add_line returns before formatting (its
 * vsnprintf was two thirds of a plan's instructions, callgrind), and the 4.8 KB line
 * array is not cleared.  Every number is computed by the same code either way, so the
 * totals are the same; n_lines is 0 on return.
 */
static int estimate(const struct fg_model *m, const struct fg_job *job, struct fg_estimate *e,
                    bool lines, struct part_set *set, struct fg_err *err)
{
    memset(e, 0, lines ? sizeof *e : offsetof(struct fg_estimate, lines));
    if (!lines)
        e->n_lines = FG_ESTIMATE_MAX_LINES;
    if (job->batch == 0)
        return fg_err_set(err, FG_E_INVAL, "micro-batch must be at least 1");
    if (job->batch > (1u << 20))
        return fg_err_set(err, FG_E_RANGE, "micro-batch %llu is absurd (limit 1048576)",
                          (unsigned long long)job->batch);
    if (job->seq_len > FG_MAX_SEQ)
        return fg_err_set(err, FG_E_RANGE, "sequence length %llu is beyond %u tokens",
                          (unsigned long long)job->seq_len, FG_MAX_SEQ);
    if ((job->mode == FG_MODE_LORA || job->mode == FG_MODE_QLORA) &&
        (job->lora_rank == 0 || job->lora_rank > 65536))
        return fg_err_set(err, FG_E_INVAL, "LoRA rank %u is out of range 1..65536",
                          job->lora_rank);
    if (job->zero > 3)
        return fg_err_set(err, FG_E_INVAL, "ZeRO stage %u is not 0..3", job->zero);
    if (!(job->lora_dropout >= 0 && job->lora_dropout < 1) || !(job->attn_dropout <= 1) ||
        !(job->hidden_dropout <= 1))
        return fg_err_set(err, FG_E_INVAL, "dropout probabilities must be below 1 (LoRA: 0 or "
                                           "more; attention, hidden: negative for config.json's)");

    /* Sequence: the job's, else 2048 for training / 4096 for serving, capped
     * by the model's context (seed defaults). */
    uint64_t seq = job->seq_len;
    if (!seq) {
        seq = job->mode == FG_MODE_SERVE ? 4096 : 2048;
        if (m->max_pos && m->max_pos < seq)
            seq = m->max_pos;
    }
    e->seq_len = seq;
    e->batch = job->batch;
    if (job->mode == FG_MODE_SERVE)
        return estimate_serve(m, job, e, err);

    bool lora = job->mode == FG_MODE_LORA || job->mode == FG_MODE_QLORA;
    bool full = job->mode == FG_MODE_FULL;
    /* "mixed" means fp32 parameters under autocast (PyTorch AMP; Lightning's
     * bf16-mixed), for a full fine-tune and a LoRA base alike, so the residual
     * stream is fp32; "bf16" loads the parameters in bf16 (the LoRA default). */
    unsigned pbytes = job->precision == FG_PREC_BF16 ? 2 : 4;
    struct act kept;
    act_of(m, job, &kept);
    unsigned c = kept.c, r = kept.r;
    uint32_t tp = job->tp ? job->tp : 1, dp = job->dp ? job->dp : 1;

    struct stage_sums t;
    if (set->table_tried && set->table)
        table_sums(set->table, job, &t);
    else
        sum_stage(m, job, &kept, set, &t);
    uint64_t tied = tied_copy_here(m, job, t.has_head);
    uint64_t params = t.sum[S_PARAMS] + tied, linear = t.sum[S_LINEAR] + tied;
    uint64_t quantizable = t.sum[S_QUANTIZABLE], adapters = t.sum[S_ADAPTERS];
    uint64_t largest_linear = t.largest, experts_here = t.sum[S_EXPERTS];
    uint64_t act_block_max = t.act_block_max, act_sum = t.sum[S_ACT], act_other = t.act_other;
    uint64_t layers_here = t.layers;
    if (lora && adapters == 0 && job->layer_last == 0)
        return fg_err_set(err, FG_E_INVAL,
                          "the LoRA targets match no linear layer of %s; use all-linear, attn, "
                          "qv, or roles like q,k,v,o,gate,up,down", m->id);

    /* ---- static part ---- */
    struct fg_breakdown *b = &e->b;
    uint64_t train_params = full ? params : adapters;
    e->trainable_params = train_params;
    e->adapter_params = adapters;
    unsigned wbytes = pbytes;
    unsigned gbytes = full ? wbytes : 4;
    /* Adam m and v in the parameter dtype (torch.optim.AdamW); 8-bit Adam
     * 2 bytes [T101]; SGD with momentum one state. */
    bool adam = job->optimizer == FG_OPT_ADAMW || job->optimizer == FG_OPT_ADAMW_FUSED;
    unsigned obytes = adam ? 2 * (full ? wbytes : 4)
                    : job->optimizer == FG_OPT_ADAMW_8BIT ? 2 : (full ? wbytes : 4);
    /* job->master (memory.h): bf16 parameters, and the fp32 master copy (4 B) held with the
     * Adam states, sharded as they are (Megatron DistributedOptimizer; DeepSpeed
     * bf16_optimizer: the ZeRO paper's 2 + 2 + 12 bytes per parameter). */
    bool master_opt = full && job->master == FG_MASTER_OPTIMIZER && job->precision == FG_PREC_BF16;
    unsigned state_bytes = obytes;
    if (master_opt) {
        gbytes = job->main_grad_bytes ? job->main_grad_bytes : 4;
        state_bytes = adam ? 8 : job->optimizer == FG_OPT_ADAMW_8BIT ? 2 : 4;
        obytes = 4 + state_bytes;
    }
    /* Under ZeRO-3 / FSDP the data-parallel group also spans the context-parallel ranks
     * (Megatron parallel_state: the distributed optimizer shards over dp x cp). */
    if (job->cp > 1)
        dp = (uint32_t)((uint64_t)dp * job->cp > UINT32_MAX ? UINT32_MAX : dp * job->cp);
    uint64_t shard_w = job->zero >= 3 ? dp : 1;
    uint64_t shard_g = job->zero >= 2 ? dp : 1;
    uint64_t shard_o = job->zero >= 1 ? dp : 1;
    /* job->unsharded_copy (memory.h): the weights line again, unsharded, and only where
     * that line is sharded (ZeRO-3 over dp > 1). */
    bool want_copy = job->unsharded_copy && shard_w > 1;
    uint64_t copy_w = 0;
    if (job->mode == FG_MODE_QLORA) {
        /* [BNB]: linear weights of the blocks quantized; embeddings, norms and
         * the head stay bf16 (transformers' bitsandbytes integration skips lm_head). */
        double per = quant_bytes(job->quant);
        uint64_t exq = experts_here < quantizable ? experts_here : quantizable;
        /* peft prepare_model_for_kbit_training casts what is not Params4bit to fp32 */
        uint64_t rest = (params - quantizable) * (job->kbit_prepared ? 4 : pbytes);
        b->weights = sharded_bytes(quantizable, exq, per, shard_w, job->ep) + rest / shard_w;
        if (want_copy)
            copy_w = sharded_bytes(quantizable, exq, per, 1, job->ep) + rest;
        add_line(e, "weights", b->weights, false, "bitsandbytes; QLoRA paper",
                 "%s base: %.4f B x %llu linear params + the rest in %s",
                 job->quant == FG_QUANT_INT8 ? "int8" : job->quant == FG_QUANT_NF4_DQ ? "nf4-dq"
                                                                                      : "nf4",
                 per, (unsigned long long)quantizable,
                 job->kbit_prepared ? "fp32 (peft prepare_model_for_kbit_training)"
                                    : "the parameter dtype");
    } else {
        b->weights = sharded_bytes(params, experts_here, wbytes, shard_w, job->ep);
        if (want_copy)
            copy_w = sharded_bytes(params, experts_here, wbytes, 1, job->ep);
        add_line(e, "weights", b->weights, false, full ? "PyTorch AMP / Megatron" : "frozen base",
                 "%s weights: %u B x %llu params%s", wbytes == 4 ? "fp32" : "bf16", wbytes,
                 (unsigned long long)params, shard_w > 1 ? ", sharded over DP" : "");
    }
    if (full) {
        b->gradients = sharded_bytes(params, experts_here, gbytes, shard_g, job->ep);
        b->optimizer = sharded_bytes(params, experts_here, obytes, shard_o, job->ep);
        add_line(e, "gradients", b->gradients, false, "parameter dtype",
                 "gradients: %u B x %llu params", gbytes, (unsigned long long)params);
        if (master_opt)
            add_line(e, "optimizer", b->optimizer, false,
                     "Megatron distrib_optimizer.py; ZeRO paper",
                     "fp32 master weights + %s state: %u B x %llu params%s",
                     fg_optimizer_name(job->optimizer), obytes, (unsigned long long)params,
                     shard_o > 1 ? ", sharded over DP" : "");
        else
            add_line(e, "optimizer", b->optimizer, false, "torch AdamW; Transformer Math 101",
                     "%s state: %u B x %llu params", fg_optimizer_name(job->optimizer), obytes,
                     (unsigned long long)params);
        /* ZeRO-Offload / FSDP CPUOffload: the optimizer step runs on the CPU, so its states
         * (and master weights) live there (DeepSpeed zero/stage_1_and_2.py cpu_offload);
         * offloading parameters also moves the gradients (torch FSDP CPUOffload
         * offload_params; DeepSpeed offload_param under ZeRO-3). */
        if (job->offload != FG_OFFLOAD_NONE) {
            add_line(e, "optimizer", 0, false, "DeepSpeed ZeRO-Offload; FSDP CPUOffload",
                     "optimizer state on the CPU (offload): %llu B not on the GPU",
                     (unsigned long long)b->optimizer);
            b->optimizer = 0;
        }
        if (job->offload == FG_OFFLOAD_PARAMS) {
            add_line(e, "weights", 0, false, "DeepSpeed offload_param; FSDP CPUOffload",
                     "weights and gradients on the CPU (offload): %llu B not on the GPU",
                     (unsigned long long)fg__add_sat(b->weights, b->gradients));
            b->weights = 0;
            b->gradients = 0;
        }
    } else {
        /* [PEFT]: fp32 adapters with fp32 grads and Adam states; lit-gpt's and torchtune's
         * in the base's dtype, torch AdamW's states following it (job.lora_base_dtype).
         * Sharded as the base's are by the ZeRO stage: FSDP shards every parameter it
         * wraps, trainable or not, with the gradients and the optimizer states that follow
         * them (torch distributed/fsdp: FlatParameter / fully_shard; torchtune
         * lora_finetune_distributed shards the whole PEFT model); DeepSpeed ZeRO-1/2
         * partition the states / gradients of whatever trains. */
        unsigned ab = job->lora_base_dtype ? pbytes : 4;
        unsigned aob = !job->lora_base_dtype || job->optimizer == FG_OPT_ADAMW_8BIT ? obytes
                     : adam ? 2 * ab : ab;
        b->adapters = fg__add_sat(
            fg__add_sat(sharded_bytes(adapters, 0, ab, shard_w, job->ep),
                        sharded_bytes(adapters, 0, ab, shard_g, job->ep)),
            sharded_bytes(adapters, 0, aob, shard_o, job->ep));
        add_line(e, "adapters", b->adapters, false,
                 job->lora_base_dtype ? "lit-gpt / torchtune LoRA" : "peft autocast_adapter_dtype",
                 "LoRA r=%u: %llu adapter params x %u B (%s weight, grad, %s)%s",
                 job->lora_rank, (unsigned long long)adapters, 2 * ab + aob,
                 ab == 4 ? "fp32" : "bf16", fg_optimizer_name(job->optimizer),
                 shard_o > 1 ? ", sharded over DP" : "");
    }
    /* Runtime transients that do not grow with the batch. */
    uint64_t overhead = 0;
    if (full && !master_opt &&
        (job->precision == FG_PREC_BF16_MIXED || job->precision == FG_PREC_FP16_MIXED)) {
        uint64_t copies = sharded_bytes(linear, experts_here < linear ? experts_here : linear, 2,
                                        shard_w, job->ep);
        overhead += copies;
        add_line(e, "overhead", copies, false, "PyTorch autocast weight cache (Megatron 18 B/P)",
                 "bf16 working copies of %llu linear weights saved for backward",
                 (unsigned long long)linear);
    }
    if (job->mode == FG_MODE_QLORA) {
        /* bitsandbytes MatMul4Bit: F.dequantize_4bit(B, state) comes out in the dtype the
         * weight was quantized from (16-bit), then .to(A.dtype) copies it again where the
         * linear computes in fp32 (bnb_compute fp32, or the fp32 hidden states of
         * prepare_model_for_kbit_training); forward and backward each make one. */
        unsigned ce = job->bnb_compute == FG_BNB_FP32 ? 4 : c;
        uint64_t deq = fg__mul_sat(largest_linear, 2 * (2 + (ce > 2 ? ce : 0)));
        overhead += deq;
        add_line(e, "overhead", deq, false, "bitsandbytes MatMul4Bit dequantize_4bit",
                 ce > 2 ? "dequantized bf16 + fp32 copies of the largest linear, fwd and bwd"
                        : "dequantized bf16 copy of the largest linear, forward and backward");
    }
    if (job->mode == FG_MODE_LORA && t.sum[S_MERGED]) {
        /* peft's ParamWrapper (tuners/lora/layer.py; what target_modules become on
         * transformers 5's fused experts) rebuilds each adapted expert tensor as W + BA on
         * every forward, and grouped_mm keeps that copy for backward: one copy of the
         * adapted experts in the base dtype, one block's under recompute.  Measured on
         * H200 (tests/calibration/measured-h200.tsv): Mixtral-8x7B cut to 4 layers, LoRA at
         * 1 x 2048 tokens, keeps 14.8 GB after the forward where its full fine-tune keeps
         * 3.2 GB; the copies are 11.3 GB of the difference. */
        uint64_t n = t.sum[S_MERGED] / (job->grad_ckpt && layers_here ? layers_here : 1);
        uint64_t merged = fg__mul_sat(n, wbytes);
        overhead = fg__add_sat(overhead, merged);
        add_line(e, "overhead", merged, false, "peft ParamWrapper on fused experts",
                 "expert weights rebuilt as W + BA and kept for backward: %llu params%s",
                 (unsigned long long)n, job->grad_ckpt ? " (one block, recomputed)" : "");
    }
    if (job->zero >= 3 && dp > 1) {
        /* The gathered parameters come in the dtype the shards are stored in: a QLoRA
         * base gathers its 4-bit data and scales (torchao NF4Tensor's
         * fsdp_pre_all_gather under torchtune's FSDP2; bitsandbytes Params4bit with
         * bnb_4bit_quant_storage under FSDP-QLoRA), not 16-bit weights. */
        double gb = job->mode == FG_MODE_QLORA ? quant_bytes(job->quant) : 2.0;
        double g = (double)largest_linear * 8 * gb;
        uint64_t gather = g >= 1.8e19 ? UINT64_MAX : (uint64_t)g;
        overhead = fg__add_sat(overhead, gather);
        add_line(e, "overhead", gather, false, "FSDP / ZeRO-3 all-gather",
                 "all-gathered %s parameters of the layer in flight and the next",
                 job->mode == FG_MODE_QLORA ? "quantized" : "bf16");
    }
    if (want_copy) {
        /* Measured, not derived: lit-gpt 8641822's FSDP LoRA (Llama-2 7b / 13b on 2 and
         * 4x A100 40GB) peaks at the ZeRO-3 estimate plus one whole bf16 model per rank
         * (measured-dev rows 44, 45, 47 within -1% .. +10%; row 46 ran out of memory).
         * A framework copy, so overhead like the all-gather buffers above, and
         * breakdown.weights stays the shard; it lasts the whole run, so a full
         * fine-tune's step phase holds it too (below). */
        overhead = fg__add_sat(overhead, copy_w);
        add_line(e, "overhead", copy_w, false, "measured rows 44/45/47; lit-gpt 8641822 FSDP",
                 "unsharded copy of the weights beside the DP shard: %llu params",
                 (unsigned long long)params);
    }
    b->overhead = overhead;

    /* ---- per-sample part ---- */
    uint64_t inflight = job->inflight ? job->inflight : 1;
    /* Context parallel splits each sequence over cp ranks: a rank keeps its share of the
     * tokens' activations and logits, and scores of its queries against every key
     * (Megatron-Core context parallel, transformer/attention.py with ring attention). */
    uint64_t sq = job->cp > 1 ? (seq + job->cp - 1) / job->cp : seq;
    uint64_t act_tok;
    if (job->grad_ckpt) {
        /* Recompute per block [KOR full recompute]: keep each block's input
         * (r h) and one block's working set during its backward. */
        act_tok = layers_here * r * m->hidden + act_block_max + act_other;
        add_line(e, "activations", fg__mul_sat(act_tok, sq) * inflight, true,
                 "Korthikanti 2022, full recompute",
                 "checkpointed: %llu block inputs + one block's working set, %llu tokens",
                 (unsigned long long)layers_here, (unsigned long long)sq);
    } else {
        act_tok = act_sum + act_other;
        add_line(e, "activations", fg__mul_sat(act_tok, sq) * inflight, true,
                 job->attention == FG_ATTN_EAGER ? "saved tensors per node"
                                                 : "saved tensors per node (SDPA, no score matrix)",
                 "%llu blocks x %llu tokens, %llu B/token/block max",
                 (unsigned long long)layers_here, (unsigned long long)sq,
                 (unsigned long long)act_block_max);
    }
    /* Attention that keeps its scores (model.h score_bytes) keeps heads x s of them per
     * token in each block, one block's under recompute. */
    uint64_t score = t.sum[S_SCORE] / (job->grad_ckpt && layers_here ? layers_here : 1);
    score = fg__mul_sat(fg__mul_sat(fg__mul_sat(score, sq), seq), inflight);
    add_line(e, "activations", score, true,
             job->attention != FG_ATTN_EAGER ? "torch SDPA math path (fewer K/V heads)"
             : kept.attn_drop ? "transformers eager attention + dropout mask"
                              : "transformers eager attention",
             "attention scores kept for backward: heads x %llu x %llu per block",
             (unsigned long long)sq, (unsigned long long)seq);
    /* What the framework keeps beside the modelling code's tensors (struct act), per token
     * in each block, one block's under recompute, as the scores. */
    uint64_t per_block = job->grad_ckpt && layers_here ? layers_here : 1, framework = 0;
    static const struct {
        int sum;
        const char *source, *what;
    } kept_rows[] = {
        {S_QIN, "bitsandbytes<0.43.2 MatMul4Bit.forward",
         "4-bit linears' inputs, kept as cast to the compute dtype"},
        {S_LDROP, "peft tuners/lora/layer.py Linear.forward",
         "LoRA dropout: bool masks, dropped inputs wider than the blocks' own"},
        {S_HDROP, "torch native_dropout (config hidden dropout)",
         "hidden-state dropout masks, 1 B per element"},
    };
    for (size_t i = 0; i < sizeof kept_rows / sizeof kept_rows[0]; i++) {
        uint64_t tok = t.sum[kept_rows[i].sum] / per_block;
        if (kept_rows[i].sum == S_HDROP && kept.hidden_drop &&
            (job->layer_last == 0 || job->stage_embed))
            tok += m->hidden; /* the embeddings' dropout, on the first stage */
        uint64_t k = fg__mul_sat(fg__mul_sat(tok, sq), inflight);
        framework = fg__add_sat(framework, k);
        add_line(e, "activations", k, true, kept_rows[i].source, "%s, %llu tokens",
                 kept_rows[i].what, (unsigned long long)sq);
    }
    e->act_per_token_layer_max = act_block_max;
    uint64_t act = fg__add_sat(fg__mul_sat(fg__mul_sat(act_tok, sq), inflight), score);
    act = fg__add_sat(act, framework);
    uint64_t logits = 0;
    if (t.has_head && !m->encoder_only) {
        /* [HF] ForCausalLMLoss: logits.float(); cross_entropy saves the fp32
         * log-softmax (4V) and backward holds its gradient and the upcast's
         * gradient (4V + 4V).  Chunked CE keeps only the bf16 logits. */
        uint64_t per_tok = job->chunked_ce ? (uint64_t)c * m->vocab / tp : 12ull * m->vocab / tp;
        logits = fg__mul_sat(per_tok, sq);
        add_line(e, "logits", logits, true, "transformers ForCausalLMLoss fp32 upcast",
                 "%s: %llu tokens x %llu vocab x %llu B", job->chunked_ce ? "chunked CE"
                                                                         : "logits + fp32 loss",
                 (unsigned long long)sq, (unsigned long long)m->vocab,
                 (unsigned long long)per_tok / (m->vocab ? m->vocab : 1));
    }
    /* Caching-allocator fragmentation: reserved runs ~5% over allocated for
     * the batch-dependent tensors (xMem arXiv 2510.21048; LLMem arXiv 2404.10933, 2 MiB blocks;
     * ROCm Megatron PR #162 models 7%). */
    uint64_t frag = (act + logits) / 20;
    add_line(e, "overhead", frag, true, "PyTorch caching allocator",
             "allocator fragmentation: 5%% of activations and logits");

    b->activations = fg__mul_sat(act, job->batch);
    b->logits = fg__mul_sat(logits, job->batch);
    b->overhead = fg__add_sat(b->overhead, fg__mul_sat(frag, job->batch));
    if (full) {
        /* Two phases (see memory.h): activations peak before any gradient
         * exists; the step holds gradients, states and foreach AdamW's
         * temporary (torch/optim/adamw.py _multi_tensor_adamw: exp_avg_sq.sqrt()
         * materialised once per parameter, in the state dtype); the fused
         * kernel (adamw-fused) updates each tensor in place and keeps none. */
        uint64_t temp = job->optimizer == FG_OPT_ADAMW && job->offload == FG_OFFLOAD_NONE
                            ? sharded_bytes(params, experts_here, state_bytes / 2, shard_o,
                                            job->ep)
                            : 0;
        e->static_bytes = fg__add_sat(fg__add_sat(b->weights, b->optimizer), overhead);
        e->step_bytes = fg__add_sat(fg__add_sat(fg__add_sat(b->weights, b->gradients), b->optimizer), temp);
        e->step_bytes = fg__add_sat(e->step_bytes, copy_w);
        add_line(e, "overhead", temp, false, "torch foreach AdamW step",
                 "optimizer step temporaries (sqrt of v), step phase only");
        b->overhead = fg__add_sat(b->overhead, temp);
    } else {
        e->static_bytes = fg__add_sat(fg__add_sat(fg__add_sat(b->weights, b->gradients),
                                          fg__add_sat(b->optimizer, b->adapters)), overhead);
    }
    e->per_sample_bytes = fg__add_sat(fg__add_sat(act, logits), frag);
    e->total_bytes = fg_estimate_at(e, job->batch);
    if (e->total_bytes == UINT64_MAX)
        return fg_err_set(err, FG_E_OVERFLOW, "memory estimate overflows 64 bits");
    return 0;
}

int fg_memory_estimate(const struct fg_model *m, const struct fg_job *job, struct fg_estimate *e,
                       struct fg_err *err)
{
    struct part_set set = {0};
    return estimate(m, job, e, true, &set, err);
}

int fg_memory_estimate_totals(const struct fg_model *m, const struct fg_job *job,
                              struct fg_estimate *e, struct fg_err *err)
{
    struct part_set set = {0};
    int rc = estimate(m, job, e, false, &set, err);
    e->n_lines = 0;
    return rc;
}

/*
 * What a block's part reads of the job (add_node and node_act_per_token): the mode (LoRA
 * or not), TP, EP, the LoRA targets and rank, the precision, and struct act (compute and
 * residual bytes, the kept tensors: QLoRA's, dropout's).  Two jobs equal in these have equal
 * block parts.
 */
struct part_key {
    bool lora;
    enum fg_attention attention;
    uint32_t tp, ep, rank;
    enum fg_lora_targets targets;
    enum fg_precision precision;
    struct act act;  /* compute / residual bytes and the kept tensors' switches */
    bool lora_fused_qkv;
    char list[sizeof ((struct fg_job *)0)->lora_list];
};

static void part_key_of(const struct fg_model *m, const struct fg_job *job, struct part_key *k)
{
    memset(k, 0, sizeof *k);
    act_of(m, job, &k->act);
    k->lora_fused_qkv = job->lora_fused_qkv;
    k->lora = job->mode == FG_MODE_LORA || job->mode == FG_MODE_QLORA;
    k->attention = job->attention;
    k->tp = job->tp ? job->tp : 1;
    k->ep = job->ep;
    k->rank = job->lora_rank;
    k->targets = job->lora_targets;
    k->precision = job->precision;
    if (job->lora_targets == FG_LORA_LIST)
        memcpy(k->list, job->lora_list, sizeof k->list);
}

static bool same_key(const struct part_key *a, const struct part_key *b)
{
    return a->lora == b->lora && a->attention == b->attention && a->tp == b->tp &&
           a->ep == b->ep && a->rank == b->rank &&
           a->targets == b->targets && a->precision == b->precision &&
           a->act.c == b->act.c && a->act.r == b->act.r &&
           a->act.qin_bytes == b->act.qin_bytes && a->act.lora_drop == b->act.lora_drop &&
           a->act.lora_drop_bytes == b->act.lora_drop_bytes &&
           a->lora_fused_qkv == b->lora_fused_qkv &&
           a->act.attn_drop == b->act.attn_drop && a->act.hidden_drop == b->act.hidden_drop &&
           (a->targets != FG_LORA_LIST || !strcmp(a->list, b->list));
}

/* A few part sets under their keys, replaced in turn: a planner goes through a handful of
 * (TP, EP) shapes, and the same ones again at each GPU count. */
enum { PART_SETS = 8 };
struct fg__parts {
    struct part_key key[PART_SETS];
    struct part_set set[PART_SETS];
    unsigned used, next;
};

/* Not zeroed (13 KB; a plan makes one): a set is cleared when a key takes it. */
struct fg__parts *fg__parts_new(void)
{
    struct fg__parts *p = malloc(sizeof *p);
    if (p)
        p->used = p->next = 0;
    return p;
}

void fg__parts_free(struct fg__parts *p)
{
    for (unsigned i = 0; p && i < p->used; i++)
        table_free(p->set[i].table);
    free(p);
}

int fg__memory_estimate_parts(const struct fg_model *m, const struct fg_job *job,
                              struct fg_estimate *e, struct fg__parts *parts, struct fg_err *err)
{
    struct part_key k;
    part_key_of(m, job, &k);
    unsigned i = 0;
    while (i < parts->used && !same_key(&parts->key[i], &k))
        i++;
    if (i == parts->used) {
        if (parts->used < PART_SETS) {
            i = parts->used++; /* never used: nothing to free */
        } else {
            i = parts->next++ % PART_SETS;
            table_free(parts->set[i].table);
        }
        memcpy(&parts->key[i], &k, sizeof k);
        memset(&parts->set[i], 0, sizeof parts->set[i]);
    }
    struct part_set *set = &parts->set[i];
    if (!set->table_tried && job->mode != FG_MODE_SERVE) {
        set->table = table_build(m, job, &k.act, set);
        set->table_tried = true;
    }
    int rc = estimate(m, job, e, false, set, err);
    e->n_lines = 0;
    return rc;
}

uint64_t fg_model_active_params(const struct fg_model *m)
{
    uint64_t s = 0;
    for (size_t i = 0; i < m->n_nodes; i++) {
        const struct fg_node *n = &m->nodes[i];
        uint64_t p = n->params - n->buffers;
        if (n->kind == FG_NODE_MOE && n->experts) {
            uint64_t routed = 0;
            for (unsigned k = 0; k < n->nlin; k++)
                if (n->lin[k].count > 1)
                    routed += (uint64_t)n->lin[k].in * n->lin[k].out * n->lin[k].count;
            if (routed > p)
                routed = p;
            p = p - routed + routed / n->experts * n->top_k;
        }
        if (n->kind == FG_NODE_EMBED || n->stack == FG_STACK_TOWER)
            continue; /* a lookup, not a matmul */
        s += p;
    }
    return s;
}

double fg_memory_flops_per_token(const struct fg_model *m, const struct fg_job *job)
{
    /* 6 N per trained token (2 forward, 4 backward; Kaplan et al. 2020),
     * 2 N when serving; LoRA still back-propagates through the frozen base
     * (activation gradients, ~4 N), so it is counted as 6 N as well; plus the
     * attention score FLOPs 6 * 2 * L * s * d per token for training. */
    double n = (double)fg_model_active_params(m);
    double f = job->mode == FG_MODE_SERVE ? 2 * n : 6 * n;
    uint64_t seq = job->seq_len ? job->seq_len : 2048;
    for (size_t i = 0; i < m->n_nodes; i++) {
        const struct fg_node *nd = &m->nodes[i];
        if (nd->kind == FG_NODE_ATTN || nd->kind == FG_NODE_MLA) {
            double ctx = nd->window && nd->window < seq ? nd->window : (double)seq;
            f += (job->mode == FG_MODE_SERVE ? 2.0 : 6.0) * 2.0 * ctx / 2.0 * nd->heads *
                 nd->head_dim;
        }
    }
    return f;
}
