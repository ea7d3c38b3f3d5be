/*
 * memory_node.c - one node under a job (memory_node.h): the parameters it holds on this
 * GPU, its LoRA adapters, the bytes it keeps per token for backward, and what it holds
 * when serving.  The short source names ([MEG], [KOR], [HF], ...) are memory.c's.
 */
#include "memory/memory_node.h"
#include "memory/titan.h"

#include <string.h>

#include "util/sat.h"

/* Does LoRA target this linear?  PEFT "all-linear" is every nn.Linear but
 * the output layer (peft/tuners/tuners_utils.py _maybe_include_all_linear_layers); in a
 * list it is the role "*" (job.c). */
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
            if ((n == rl && !strncmp(p, role, n)) || (n == 1 && *p == '*'))
                return true;
            p += n + (e ? 1 : 0);
        }
        return false;
    }
    }
    return false;
}

/* The list names the routed experts' fused tensors themselves (role "experts": peft
 * LoraConfig target_parameters, axolotl lora_target_parameters), which peft adapts through
 * ParamWrapper (tuners/lora/layer.py) wherever the experts are parameters, not modules. */
static bool experts_targeted(const struct fg_job *job)
{
    if (job->lora_targets != FG_LORA_LIST)
        return false;
    for (const char *p = job->lora_list; (p = strstr(p, "experts")); p += 7)
        if ((p == job->lora_list || p[-1] == ',') && (p[7] == ',' || !p[7]))
            return true;
    return false;
}

/* Does a LoRA adapter sit on linear l of node n, as add_lora makes them: never on the head
 * or the embeddings, nor on a MoE model's dense MLP or shared experts where peft maps the
 * fused experts (FG_LORA_EXPERTS_MERGED), nor on routed experts and a router it cannot
 * reach (FG_LORA_EXPERTS_NONE). */
static bool lora_on(const struct fg_node *n, const struct fg_job *job, const struct fg_linear *l)
{
    bool mapped = n->lora_experts == FG_LORA_EXPERTS_MERGED;
    if (n->kind == FG_NODE_MOE && l->count > 1 && experts_targeted(job))
        return true;
    if (!lora_targets(job, l->role))
        return false;
    switch (n->kind) {
    case FG_NODE_HEAD: case FG_NODE_EMBED:
        return false;
    case FG_NODE_MLP:
        return !mapped;
    case FG_NODE_MOE:
        if (l->count > 1 || !strcmp(l->role, "router"))
            return n->lora_experts != FG_LORA_EXPERTS_NONE;
        return !(mapped && !strncmp(l->role, "shared_", 7));
    default:
        return true;
    }
}

/* Parameters of a node that live on this GPU under TP / EP (Megatron's
 * buckets [MEG]: dense matrices split by TP, routed experts by EP, norms
 * replicated; the embedding and head are vocab-parallel over TP).  A tied head
 * holds no tensor of its own, even where the checkpoint writes one (transformers
 * ties lm_head to the embedding at load; measured: Qwen3-0.6B trains 596,049,920
 * parameters of its 751,632,384 stored, tests/calibration/measured-h200.tsv). */
static uint64_t node_params_here(const struct fg_node *n, const struct fg_job *job)
{
    /* job.h head_untied: the framework's head is a tensor of its own */
    uint64_t alias = n->kind == FG_NODE_HEAD && job->head_untied ? 0 : n->alias;
    uint64_t p = n->params - n->buffers - alias;
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

/*
 * Bytes one token keeps for backward in one node as Megatron-Core with Transformer Engine
 * keeps them (struct act te), after megatron/training/theoretical_memory_usage.py
 * (Megatron-LM d98e8a6): per layer sbh(10 + 24/t) without sequence parallel, all of it over
 * t with it (compute_activation_memory: sbh(18 + 4 ffn/h)/t), from Korthikanti 2022 Table
 * 2 with the scores recomputed (flash attention).  Node by node, in bf16 (2 B):
 *   norm       its input, 2 w (the 4 sbh of the two LayerNorms);
 *   attention  the QKV input 2 h and the dropout mask h (replicated), and Q, K, V and the
 *              projection's input, 2 (2 q + 2 kv) (over t): 3 + 8/t for MHA;
 *   MLP        the fc1 input 2 h and the dropout mask h (replicated), fc1's output and fc2's
 *              input over t: 2 I + 2 I, and a gated fc1's output is 2 I wide
 *              (megatron/core/transformer/mlp.py: ffn_hidden_size * 2 under
 *              gated_linear_unit), 6 I: 3 + 16/t for a 4h MLP, the formula's;
 *   MoE        the MLP's replicated part, the router's logits and fp32 probabilities, each
 *              top-k slot's dispatched token and expert MLP (over t only where EP is 1:
 *              with EP the experts are not split by TP here), the shared experts over t;
 *   MLA        as attention with its widths, the latents (q_lora, kv_lora) replicated;
 *   others     as transformers keeps them (node_act_per_token).
 * Sequence parallel divides the replicated parts by t too.
 */
static uint64_t node_act_te(const struct fg_node *n, const struct act *a, uint32_t tp,
                            uint32_t ep)
{
    uint64_t q = (uint64_t)n->heads * n->head_dim, kv = (uint64_t)n->kv_heads * n->head_dim;
    uint64_t rep = 0, split = 0, widths = n->gated ? 6 : 4, h = n->hidden;
    switch (n->kind) {
    case FG_NODE_NORM:
        rep = 2ull * n->width;
        break;
    case FG_NODE_ATTN:
        rep = 3 * h;
        split = 4 * q + 4 * kv;
        break;
    case FG_NODE_MLA: {
        uint64_t hv = (uint64_t)n->heads * n->v_head_dim;
        rep = 3 * h + 2ull * (n->q_lora + n->kv_lora + n->rope_dim);
        split = 4 * q + 4 * hv;
        break;
    }
    case FG_NODE_MLP:
        rep = 3 * h;
        split = widths * n->inter;
        break;
    case FG_NODE_MOE: {
        /* router logits (2 B) and fp32 probabilities per expert */
        uint64_t slots = n->top_k * (2 * h + widths * n->inter);
        rep = 3 * h + 6ull * n->experts;
        split = widths * n->shared_inter;
        if (ep > 1)
            rep += slots;
        else
            split += slots;
        break;
    }
    default:
        return node_act_per_token(n, a->c, a->r, tp);
    }
    return (a->sp ? rep / tp : rep) + split / tp;
}

/* Bytes per token kept of an input of width w that the node's linears named by roles
 * read, under a frozen base (struct act): the tensor itself, when the 4-bit base keeps it
 * or an adapter on one of them keeps it as it is.  Adapters' own copies are S_LDROP's. */
static uint64_t frozen_input(const struct fg_node *n, const struct fg_job *job,
                             const struct act *a, uint64_t w, const char *const *roles)
{
    for (unsigned k = 0; k < n->nlin; k++) {
        const struct fg_linear *l = &n->lin[k];
        if (n->kind == FG_NODE_MOE && l->count > 1)
            continue;
        for (const char *const *r = roles; *r; r++)
            if (!strcmp(l->role, *r) && (a->base_keeps || (a->lora_shares && lora_on(n, job, l))))
                return (uint64_t)a->c * w;
    }
    return 0;
}

/* Does an adapter (or the 4-bit base) keep the routed experts' input of the roles? */
static bool experts_keep(const struct fg_node *n, const struct fg_job *job, const struct act *a,
                         const char *const *roles)
{
    for (unsigned k = 0; k < n->nlin; k++)
        for (const char *const *r = roles; *r; r++)
            if (n->lin[k].count > 1 && !strcmp(n->lin[k].role, *r) &&
                (a->base_keeps || lora_on(n, job, &n->lin[k])))
                return true;
    return false;
}

/*
 * node_act_per_token under a frozen base (LoRA, QLoRA): a linear whose weight takes no
 * gradient keeps no input (struct act frozen), and a frozen norm weight keeps nothing for
 * its gradient.  What is left in each node:
 *   norm      RMSNorm its fp32 copy of the input (4 w), LayerNorm its input (r w); the
 *             next linears' input is theirs to keep (frozen_input);
 *   attention q, k, v and the output with the log-sum-exp (SDPA), the inputs of q/k/v and o
 *             where kept;
 *   MLP       gate out, act(gate), up out (3 I; plain: the activation's input, I), the
 *             inputs of gate/up and down where kept;
 *   MoE       router softmax; per top-k slot the weighted expert output (h, which the
 *             routing weight's gradient reads), the expert MLP as above, the gathered token
 *             and the product where the experts are adapted; shared experts as the MLP;
 *   others    as trained in full (Mamba's fused kernel saves its own tensors).
 */
static uint64_t node_act_frozen(const struct fg_node *n, const struct fg_job *job,
                                const struct act *a, uint32_t tp)
{
    static const char *const attn_in[] = {"q", "k", "v", "qkv", "q_a", "kv_a", NULL};
    static const char *const attn_out[] = {"o", NULL}, *const mlp_out[] = {"down", NULL};
    static const char *const mlp_in[] = {"gate", "up", "gate_up", NULL};
    static const char *const moe_in[] = {"router", "shared_gate", "shared_up", NULL};
    static const char *const shared_out[] = {"shared_down", NULL};
    uint64_t c = a->c, q = (uint64_t)n->heads * n->head_dim, kv = (uint64_t)n->kv_heads * n->head_dim;
    uint64_t widths = n->gated ? 3 : 1;
    switch (n->kind) {
    case FG_NODE_NORM:
        return n->params == n->width ? 4ull * n->width : (uint64_t)a->r * n->width;
    case FG_NODE_ATTN:
        return frozen_input(n, job, a, n->hidden, attn_in) + (c * (2 * q + 2 * kv)) / tp +
               4ull * n->heads / tp + frozen_input(n, job, a, q, attn_out) / tp;
    case FG_NODE_MLA: {
        uint64_t hv = (uint64_t)n->heads * n->v_head_dim;
        return node_act_per_token(n, a->c, a->r, tp) - (c * hv) / tp +
               frozen_input(n, job, a, n->hidden, attn_in) +
               frozen_input(n, job, a, hv, attn_out) / tp;
    }
    case FG_NODE_MLP:
        return frozen_input(n, job, a, n->hidden, mlp_in) + c * widths * n->inter / tp +
               frozen_input(n, job, a, n->inter, mlp_out) / tp;
    case FG_NODE_MOE: {
        uint64_t slot = c * (n->hidden + widths * n->inter);
        if (experts_keep(n, job, a, mlp_in))
            slot += c * n->hidden;
        if (experts_keep(n, job, a, mlp_out))
            slot += c * n->inter;
        uint64_t shared = n->shared_inter ? c * widths * n->shared_inter +
                                                frozen_input(n, job, a, n->shared_inter, shared_out)
                                          : 0;
        return (c + 4) * n->experts + n->top_k * slot + shared / tp +
               frozen_input(n, job, a, n->hidden, moe_in);
    }
    default:
        return node_act_per_token(n, a->c, a->r, tp);
    }
}

/* What an attention that expands K and V to the query heads keeps beyond SDPA's q, k, v
 * (job.kv_expanded, lit-gpt model.py CausalSelfAttention.forward): with fewer K/V heads,
 * k.expand / v.expand and reshape copy both to the query width, 2 (q - kv); with as many,
 * v stays a view of the fused qkv output and SDPA's saved v keeps all of it, q + kv more. */
static uint64_t kv_expanded_per_token(const struct fg_node *n, unsigned c, uint32_t tp)
{
    uint64_t q = (uint64_t)n->heads * n->head_dim, kv = (uint64_t)n->kv_heads * n->head_dim;
    if (n->cross || n->kv_heads > n->heads)
        return 0;
    return (uint64_t)c * (n->kv_heads == n->heads ? q + kv : 2 * (q - kv)) / tp;
}

/*
 * KV cache bytes per token per attention node on one tensor-parallel rank, at el bytes per
 * element: K and V for the KV heads the rank holds, max(1, kv_heads / tp) (vLLM
 * config/model.py ModelConfig.get_num_kv_heads: a rank with fewer heads than TP replicates
 * one), and MLA one latent head on every rank, the compressed kv_lora plus the rope key
 * (get_num_kv_heads returns 1 under use_mla; SGLang MLATokenToKVPool keeps
 * kv_lora_rank + qk_rope_head_dim per token on each rank).  A cross-attention's cache is
 * the encoder's, sized as the decoder's.
 */
/* The width of an MLA node's sparse-attention indexer key (DeepSeek-V3.2's lightning
 * indexer, its idx_k linear), 0 without one. */
static uint32_t indexer_width(const struct fg_node *n)
{
    for (unsigned k = 0; k < n->nlin; k++)
        if (!strcmp(n->lin[k].role, "idx_k"))
            return n->lin[k].out;
    return 0;
}

/*
 * vLLM's cache of a sparse-MLA (DSA) layer per token, fp8_ds_mla (csrc cache kernels
 * concat_and_cache_ds_mla; vllm-project/vllm:tests/kernels entry_size = kv_lora_rank + 4 x 4 + 2 x
 * qk_rope_head_dim: the latent in fp8 with one fp32 scale per 128, the rope part in bf16:
 * 656 B for DeepSeek-V3.2), and the indexer's key cache beside it
 * (model_executor/models/deepseek_v2.py Indexer: DeepseekV32IndexerCache of head_dim +
 * head_dim / 128 x 4 bytes, fp8 with its scales: 132 B).  0 for a node without an indexer.
 */
static uint64_t ds_mla_per_token(const struct fg_node *n)
{
    uint64_t idx = indexer_width(n);
    if (n->kind != FG_NODE_MLA || !idx)
        return 0;
    return n->kv_lora + n->kv_lora / 128 * 4 + 2ull * n->rope_dim + idx + idx / 128 * 4;
}

static uint64_t kv_per_token(const struct fg_node *n, const struct fg_job *job, unsigned el)
{
    uint32_t tp = job->tp;
    uint64_t ds = job->kv_ds_mla ? ds_mla_per_token(n) : 0;
    if (ds)
        return ds;
    if (n->kind == FG_NODE_MLA)
        return (uint64_t)el * (n->kv_lora + n->rope_dim);
    if (n->kind != FG_NODE_ATTN || n->bidirectional)
        return 0;
    uint64_t heads = n->kv_heads / (tp ? tp : 1);
    return 2ull * el * (heads ? heads : 1) * n->head_dim;
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

void fg__act_of(const struct fg_model *m, const struct fg_job *job, struct act *a)
{
    bool qlora = job->mode == FG_MODE_QLORA, train = job->mode != FG_MODE_SERVE;
    bool kbit = qlora && job->kbit_prepared;
    memset(a, 0, sizeof *a);
    a->c = job->precision == FG_PREC_FP32 || kbit ? 4 : 2;
    /* "mixed" means fp32 parameters under autocast (PyTorch AMP; Lightning's bf16-mixed),
     * so the residual stream is fp32; "bf16" loads the parameters in bf16; FSDP2's mixed
     * precision computes with the bf16 gathered parameters: a bf16 stream (job.h) */
    a->r = (job->precision == FG_PREC_BF16 || job->fsdp_mixed) && !kbit ? 2 : 4;
    /* MatMul4Bit's kept input (bnb < 0.43.2) is a tensor of its own only where Linear4bit
     * cast it: bnb_compute fp32 over 2-byte activations */
    unsigned ce = job->bnb_compute == FG_BNB_FP32 ? 4 : a->c;
    if (qlora && job->bnb_keeps_input && ce > a->c)
        a->qin_bytes = ce;
    /* A frozen linear keeps no input: torch's autograd saves mm's self only when the
     * weight's gradient is wanted (pytorch gen_variable_type.py emit_save_inputs,
     * guard_for: should_compute_output).  MatMul4Bit before bitsandbytes 0.43.2 saved its
     * input A whatever needed it; a cast copy of it is qin_bytes, the tensor itself here. */
    a->frozen = train && job->mode != FG_MODE_FULL;
    a->base_keeps = a->frozen && qlora && job->bnb_keeps_input && !a->qin_bytes;
    /* What lora_A keeps (peft tuners/lora/layer.py Linear.forward:
     * lora_B(lora_A(dropout(self._cast_input_dtype(x, lora_A.weight.dtype))))): peft's fp32
     * adapters (autocast_adapter_dtype) cast a 2-byte input to a 4-byte copy of their own;
     * under autocast F.linear keeps its own bf16 cast instead; adapters in the base's
     * dtype (lit-gpt, torchtune) keep x itself.  Dropout keeps a bool mask, and lora_A the
     * dropped copy in place of x. */
    bool autocast = job->precision == FG_PREC_BF16_MIXED ||
                    job->precision == FG_PREC_FP16_MIXED || job->autocast;
    unsigned copy = autocast ? (job->autocast && job->lora_base_dtype ? 0 : 2)
                             : job->lora_base_dtype || job->adapters_bf16 || a->c == 4 ? 0 : 4;
    bool drop = job->lora_dropout > 0;
    if (a->frozen) {
        a->lora_own = drop ? 1 + (copy ? copy : a->c) : copy;
        a->lora_shares = !a->lora_own;
    }
    double pa = job->attn_dropout < 0 ? m->attn_dropout : job->attn_dropout;
    double ph = job->hidden_dropout < 0 ? m->hidden_dropout : job->hidden_dropout;
    a->attn_drop = train && pa > 0;
    a->hidden_drop = train && ph > 0;
    a->te = job->te_act && job->mode == FG_MODE_FULL && a->c == 2; /* TE's bf16 tensors */
    /* sequence parallel: Megatron-Core's under TE, torchtitan's over FSDP2 (titan.h) */
    a->sp = (a->te || job->fsdp_mixed) && job->sp && job->tp > 1;
}

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
    /* target_parameters on unmapped experts: one ParamWrapper per fused tensor at rank r,
     * lora_A (r E, in) and lora_B (out, r E): r (in + out) per expert, gate and up as the
     * one fused gate_up tensor (h -> 2 I) */
    bool param = !mapped && n->kind == FG_NODE_MOE && experts_targeted(job);
    uint64_t gu_rank = param ? r : 2 * r;
    if (n->kind == FG_NODE_HEAD || (n->kind == FG_NODE_MLP && mapped))
        return;
    for (unsigned k = 0; k < n->nlin; k++) {
        const struct fg_linear *l = &n->lin[k];
        bool routed = n->kind == FG_NODE_MOE && l->count > 1;
        uint64_t copies = routed && job->ep > 1 ? (l->count + job->ep - 1) / job->ep : l->count;
        bool hit = lora_targets(job, l->role);
        if (routed && (mapped || param) && strcmp(l->role, "down") != 0) { /* gate, up, gate_up */
            gu_in = l->in;
            gu_out += l->out;
            gu_copies = copies;
            gu_hit |= hit || param;
            continue;
        }
        if (!lora_on(n, job, l))
            continue; /* granite-3.1-1b-a400m on H200 trained q/k/v/o alone: 2,752,512 */
        p->sum[S_ADAPTERS] += r * (l->in + l->out) * copies;
        if (routed && (mapped || param))
            p->sum[S_MERGED] += (uint64_t)l->in * l->out / tp * copies;
    }
    if (gu_hit) {
        p->sum[S_ADAPTERS] += gu_rank * (gu_in + gu_out) * gu_copies;
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
 * What the LoRA adapters of a node keep of their own per token (struct act lora_own): for
 * each adapted linear (lora_on) `bytes` per input element, a cast copy of the input, or a
 * bool mask and the dropped copy lora_A multiplies (peft tuners/lora/layer.py
 * Linear.forward: lora_B(lora_A(dropout(x))), one cast and one nn.Dropout per adapted
 * module; lit-gpt lora.py LoRAQKVLinear.forward: one for the fused q, k, v,
 * job.lora_fused_qkv).  Routed experts are left out (peft's ParamWrapper adapts the fused
 * tensors, not per-token linears).
 */
static uint64_t node_lora_own_per_token(const struct fg_node *n, const struct fg_job *job,
                                        unsigned bytes, uint32_t tp)
{
    uint64_t in = 0;
    bool qkv_seen = false;
    for (unsigned k = 0; k < n->nlin; k++) {
        const struct fg_linear *l = &n->lin[k];
        if ((n->kind == FG_NODE_MOE && l->count > 1) || !lora_on(n, job, l))
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

/*
 * What torchtitan's per-op selective activation checkpointing keeps of a node per token
 * (distributed/activation_checkpoint.py SelectiveAC on main, _get_default_save_ops; the
 * same list as v0.2.2's _op_sac_save_list): the outputs of the save list, which holds
 * aten.linear / mm and the SDPA kernels, "except every second mm/linear" (a count per
 * checkpointed block, kept when odd).  The node's linears in call order: every other
 * output, the first kept (a routed expert's for each of the top-k slots); an attention
 * node's SDPA output and its fp32 log-sum-exp.  The count restarts per node: a Llama
 * block's attention runs four linears, so its MLP starts on an odd count as it would.
 * Float8 linears (torchao Float8Linear) run aten._scaled_mm, which is neither in the save
 * list nor one of the policy's mm_ops; their bf16 outputs are kept at the same places as
 * bf16's at most, which is what the published float8 runs measure (about bf16's memory),
 * so float8 keeps this set too.  Computed whatever the job, so the planner's part sets
 * need no key for it.
 */
static uint64_t node_sac_per_token(const struct fg_node *n, unsigned c, uint32_t tp)
{
    uint64_t kept = 0;
    for (unsigned k = 0; k < n->nlin; k += 2) {
        const struct fg_linear *l = &n->lin[k];
        uint64_t slots = l->count > 1 ? (n->top_k ? n->top_k : 1) : 1;
        kept += (uint64_t)l->out * slots * c;
    }
    if (n->kind == FG_NODE_ATTN || n->kind == FG_NODE_MLA) {
        uint64_t out = n->kind == FG_NODE_MLA ? (uint64_t)n->heads * n->v_head_dim
                                              : (uint64_t)n->heads * n->head_dim;
        kept += out * c + 4ull * n->heads;
    }
    return kept / tp;
}

void fg__add_node(const struct fg_node *n, const struct fg_job *job, const struct act *a,
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
    else if (n->kind == FG_NODE_HEAD && job->head_4bit) /* job.h: the head's weight (a tied
                                                          head stores none of its own) */
        p->sum[S_QUANTIZABLE] += node_params_here(n, job);
    for (unsigned k = 0; k < n->nlin; k++) {
        uint64_t one = (uint64_t)n->lin[k].in * n->lin[k].out;
        if (one / tp > p->largest)
            p->largest = one / tp;
    }
    if (lora)
        add_lora(n, job, tp, p);
    /* Towers (vision / audio) stay frozen and unused in text fine-tunes. */
    if (n->stack != FG_STACK_TOWER) {
        p->sum[S_ACT] += a->frozen ? node_act_frozen(n, job, a, tp)
                         : a->te   ? node_act_te(n, a, tp, job->ep)
                         : a->sp && n->kind == FG_NODE_NORM
                             ? fg__titan_norm_sp(n->width, n->params == n->width, a->r, a->c, tp)
                                   : node_act_per_token(n, a->c, a->r, tp);
        if (job->kv_expanded && n->kind == FG_NODE_ATTN)
            p->sum[S_ACT] += kv_expanded_per_token(n, a->c, tp);
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
        if (n->layer >= 0 && n->kind != FG_NODE_EMBED && n->kind != FG_NODE_HEAD)
        {
            p->sum[S_SAC] += node_sac_per_token(n, a->c, tp);
        }
        if (a->lora_own)
            p->sum[S_LDROP] += node_lora_own_per_token(n, job, a->lora_own, tp);
        if (a->hidden_drop)
            p->sum[S_HDROP] += node_hidden_drop_per_token(n);
        unsigned kept = job->attention == FG_ATTN_EAGER && n->eager_bytes ? eager_kept(n, a)
                                                                         : scores_kept(n, job);
        p->sum[S_SCORE] += (uint64_t)kept * n->heads / tp;
    }
}

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

/* The role class of a linear for a quantization scheme's keep list (wquant.h); 0 for the
 * linears every scheme leaves in the checkpoint dtype (routers, the indexer's weights_proj,
 * heads and embeddings). */
static unsigned wq_class(const struct fg_node *n, const struct fg_linear *l)
{
    static const char *const never[] = {"router", "shexp_gate", "idx_w", "score", "head",
                                        "dense", NULL};
    for (size_t i = 0; never[i]; i++)
        if (!strcmp(l->role, never[i]))
            return 0;
    switch (n->kind) {
    case FG_NODE_ATTN: case FG_NODE_MLA:
        return FG_WQK_ATTN;
    case FG_NODE_MLP:
        return FG_WQK_DENSE;
    case FG_NODE_MOE:
        return l->count > 1 ? FG_WQK_EXPERTS : FG_WQK_SHARED;
    case FG_NODE_MAMBA2: case FG_NODE_SHORTCONV:
        return FG_WQK_OTHER;
    default:
        return 0;
    }
}

/* Bytes of node n's weights on this GPU in scheme wq: the quantized linears at wq->bytes
 * (the routed experts' hidden width padded as the scheme pads it), the rest at el bytes. */
static uint64_t node_wbytes_here(const struct fg_node *n, const struct fg_job *job,
                                 const struct fg_wquant *wq, unsigned el)
{
    uint64_t here = node_params_here(n, job);
    if (!wq || wq->method == FG_WQ_NONE)
        return fg__mul_sat(here, el);
    uint32_t tp = job->tp ? job->tp : 1, ep = job->ep ? job->ep : 1;
    double q = 0, qb = 0;
    for (size_t i = 0; i < n->nlin; i++) {
        const struct fg_linear *l = &n->lin[i];
        unsigned c = wq_class(n, l);
        if (!c || (wq->keep & c))
            continue;
        bool routed = c == FG_WQK_EXPERTS;
        double elems = (double)l->in * l->out * l->count;
        elems /= routed ? (double)ep * (ep > 1 ? 1 : tp) : tp;
        double pad = 1;
        if (routed && wq->pad_hidden && n->hidden % wq->pad_hidden)
            pad = (double)((n->hidden + wq->pad_hidden - 1) / wq->pad_hidden * wq->pad_hidden) /
                  n->hidden;
        q += elems;
        qb += elems * pad * wq->bytes;
    }
    if (q > (double)here)
        q = (double)here;
    double t = ((double)here - q) * el + qb;
    return t >= 1.8e19 ? UINT64_MAX : (uint64_t)t;
}

void fg__add_served(const struct fg_node *n, const struct fg_job *job, uint64_t seq,
                    const struct fg_wquant *wq, struct serve_part *p)
{
    bool quantized = job->quant != FG_QUANT_NONE;
    unsigned el = job->precision == FG_PREC_FP32 ? 4 : 2;
    p->weights = fg__add_sat(p->weights, node_params_here(n, job));
    p->wbytes = fg__add_sat(p->wbytes, node_wbytes_here(n, job, wq, el));
    uint64_t ctx = n->window && n->window < seq ? n->window : seq;
    p->kv = fg__add_sat(p->kv, fg__mul_sat(kv_per_token(n, job, job->kv_bytes ? job->kv_bytes
                                                                               : 2), ctx));
    p->ds_mla |= job->kv_ds_mla && ds_mla_per_token(n);
    p->state = fg__add_sat(p->state, state_per_seq(n));
    /* a 4-bit head (job.h head_4bit) is quantized with the blocks' linears */
    bool head = n->kind == FG_NODE_HEAD && job->head_4bit;
    if (quantized && ((n->kind != FG_NODE_HEAD && n->kind != FG_NODE_EMBED) || head)) {
        uint64_t lin = head ? node_params_here(n, job) : node_linear_here(n, job);
        uint32_t tp = job->tp ? job->tp : 1;
        p->lin += lin;
        for (unsigned k = 0; !head && k < n->nlin; k++) {
            uint64_t one = (uint64_t)n->lin[k].in * n->lin[k].out / tp;
            p->largest = one > p->largest ? one : p->largest;
        }
        p->largest = head && lin > p->largest ? lin : p->largest;
    }
    p->has_head |= n->kind == FG_NODE_HEAD;
    uint64_t work = node_prefill_per_token(n, job, seq);
    p->work = work > p->work ? work : p->work;
}
