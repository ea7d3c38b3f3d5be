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
#include "memory/memory_int.h"
#include "memory/memory.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/fmt.h"
#include "memory/memory_stage.h"
#include "source/wquant.h"
#include "stack/trainer.h"
#include "memory/memory_train.h"
#include "util/sat.h"

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

/* The lines of key move to the CPU: kept, with 0 bytes on the GPU and the source saying so.
 * A totals-only estimate wrote no lines (its n_lines only says "full"): nothing to move. */
static void offloaded(struct fg_estimate *e, bool lines, const char *key, const char *source)
{
    for (size_t i = 0; lines && i < e->n_lines; i++) {
        struct fg_line *l = &e->lines[i];
        if (strcmp(l->key, key) || l->per_sample)
            continue;
        char what[sizeof l->what];
        fg__copy(what, sizeof what, l->what);
        fg__fmt(l->what, sizeof l->what, "on the CPU (offload): %s", what);
        fg__copy(l->source, sizeof l->source, source);
        l->bytes = 0;
    }
}


uint64_t fg_estimate_at(const struct fg_estimate *e, uint64_t batch)
{
    uint64_t t = fg__add_sat(e->static_bytes, fg__mul_sat(e->per_sample_bytes, batch));
    return t > e->step_bytes ? t : e->step_bytes;
}

static int estimate_serve(const struct fg_model *m, const struct fg_job *job,
                          struct fg_estimate *e, struct fg_err *err)
{
    uint64_t seq = e->seq_len, work = 0;
    struct fg_wquant wq;
    int rc = fg_wquant_for_serving(&m->wq, (enum fg_wq_method)job->serve_wq, &wq, err);
    if (rc)
        return rc;
    struct serve_part t;
    fg__sum_served(m, job, seq, &wq, &t);
    uint64_t tied = tied_copy_here(m, job, t.has_head);
    t.weights += tied;
    t.wbytes = fg__add_sat(t.wbytes, fg__mul_sat(tied, job->precision == FG_PREC_FP32 ? 4 : 2));
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
    /* Serving dtype: bf16 unless fp32 is asked; a quantized checkpoint (or the engine's
     * --quantization) in its own scheme (wquant.h); a QLoRA-style --quant base stores the
     * block linears at the bitsandbytes rates. */
    uint64_t wbytes;
    const char *wsrc = "serving dtype";
    char what[64];
    if (job->quant != FG_QUANT_NONE) {
        uint64_t lin = t.lin;
        if (lin > weights)
            lin = weights;
        wbytes = (uint64_t)((double)lin * quant_bytes(job->quant)) + (weights - lin) * 2;
        wsrc = "bitsandbytes";
        fg__copy(what, sizeof what, "quantized (--quant)");
    } else if (m->stored_bytes && !wq.runtime && job->precision != FG_PREC_FP32) {
        wbytes = fg__served_from_headers(m, job, &wq, t.wbytes);
        wsrc = "safetensors headers";
        fg__fmt(what, sizeof what, "as stored (%.1f GB in all), %s", (double)m->stored_bytes / 1e9,
                wq.method != FG_WQ_NONE ? wq.label : "quantized");
    } else if (wq.method != FG_WQ_NONE) {
        wbytes = t.wbytes;
        wsrc = wq.runtime ? "vLLM --quantization at load" : "config.json quantization_config";
        fg__copy(what, sizeof what, wq.label);
    } else {
        wbytes = t.wbytes;
        fg__copy(what, sizeof what, job->precision == FG_PREC_FP32 ? "fp32" : "bf16");
    }
    e->b.weights = wbytes;
    e->b.kv_cache = fg__mul_sat(kv, job->batch);
    e->b.ssm_state = fg__mul_sat(state, job->batch);
    e->b.activations = fg__mul_sat(work, job->batch);
    e->static_bytes = wbytes;
    e->per_sample_bytes = fg__add_sat(fg__add_sat(kv, state), work);
    e->total_bytes = fg_estimate_at(e, job->batch);
    add_line(e, "weights", wbytes, false, wsrc, "%s weights: %llu params", what,
             (unsigned long long)weights);
    add_line(e, "kv_cache", kv, true, "vLLM get_num_kv_heads; MLA latent",
             "%s KV cache for %llu tokens per sequence", job->kv_bytes == 1 ? "fp8" : "bf16",
             (unsigned long long)seq);
    add_line(e, "ssm_state", state, true, "transformers Mamba2/LFM2 cache",
             "fixed SSM / conv state per sequence");
    add_line(e, "activations", work, true,
             m->encoder_only ? "encoder forward, no cache" : "prefill, measured on H200",
             "one block's forward working set for %llu tokens", (unsigned long long)seq);
    return 0;
}




/* The weights line: the quantized base of QLoRA, else the parameters in their dtype. */
static void train_weights(struct train *x)
{
    const struct fg_job *job = x->job;
    struct fg_estimate *e = x->e;
    struct fg_breakdown *b = &e->b;
    uint64_t params = x->params, quantizable = x->quantizable, experts_here = x->experts_here;
    if (job->mode == FG_MODE_QLORA) {
        /* [BNB]: linear weights of the blocks quantized; embeddings, norms and
         * the head stay bf16 (transformers' bitsandbytes integration skips lm_head). */
        double per = quant_bytes(job->quant);
        uint64_t exq = experts_here < quantizable ? experts_here : quantizable;
        /* peft prepare_model_for_kbit_training casts what is not Params4bit to fp32 */
        uint64_t rest = (params - quantizable) * (job->kbit_prepared ? 4 : x->pbytes);
        b->weights = sharded_bytes(quantizable, exq, per, x->shard_w, job->ep) + rest / x->shard_w;
        if (x->want_copy)
            x->copy_w = sharded_bytes(quantizable, exq, per, 1, job->ep) + rest;
        add_line(e, "weights", b->weights, false, "bitsandbytes; QLoRA paper",
                 "%s base: %.4f B x %llu linear params + the rest in %s",
                 job->quant == FG_QUANT_INT8 ? "int8" : job->quant == FG_QUANT_NF4_DQ ? "nf4-dq"
                                                                                      : "nf4",
                 per, (unsigned long long)quantizable,
                 job->kbit_prepared ? "fp32 (peft prepare_model_for_kbit_training)"
                                    : "the parameter dtype");
    } else {
        b->weights = sharded_bytes(params, experts_here, x->wbytes, x->shard_w, job->ep);
        if (x->want_copy)
            x->copy_w = sharded_bytes(params, experts_here, x->wbytes, 1, job->ep);
        add_line(e, "weights", b->weights, false, x->full ? "PyTorch AMP / Megatron" : "frozen base",
                 "%s weights: %u B x %llu params%s", x->wbytes == 4 ? "fp32" : "bf16", x->wbytes,
                 (unsigned long long)params, x->shard_w > 1 ? ", sharded over DP" : "");
    }
}

/* A full fine-tune's gradients and optimizer states, where they live (offload). */
static void train_states_full(struct train *x)
{
    const struct fg_job *job = x->job;
    struct fg_estimate *e = x->e;
    struct fg_breakdown *b = &e->b;
    uint64_t params = x->params, experts_here = x->experts_here;
    b->gradients = sharded_bytes(params, experts_here, x->gbytes, x->shard_g, job->ep);
    b->optimizer = sharded_bytes(params, experts_here, x->obytes, x->shard_o, job->ep);
    if (job->optimizer_in_bwd) {
        /* job.h optimizer_in_bwd: one parameter's gradient at a time, the largest */
        uint64_t big = x->largest_linear, emb = x->m->vocab * x->m->hidden / x->tp;
        if (x->t.has_head || job->layer_last == 0 || job->stage_embed)
            big = emb > big ? emb : big;
        b->gradients = fg__mul_sat(big, x->gbytes);
        add_line(e, "gradients", b->gradients, false,
                 "torchtune optimizer_in_bwd (full_finetune_single_device.py)",
                 "one parameter's gradient at a time: %u B x %llu (stepped in backward)",
                 x->gbytes, (unsigned long long)big);
    } else {
        /* Alive through forward and backward (struct train grads_alive): Megatron's buffer
         * always, torch's .grad from the second accumulated micro-batch on. */
        add_line(e, "gradients", b->gradients, false,
                 job->grads_persist ? "Megatron param_and_grad_buffer.py grad_data"
                 : job->grad_accum > 1 ? "transformers Trainer gradient accumulation"
                                       : "parameter dtype",
                 "gradients: %u B x %llu params%s", x->gbytes, (unsigned long long)params,
                 job->grads_persist ? ", one buffer alive throughout"
                 : job->grad_accum > 1 ? ", alive across the accumulated micro-batches" : "");
    }
    if (x->master_opt)
        add_line(e, "optimizer", b->optimizer, false,
                 "Megatron distrib_optimizer.py; ZeRO paper",
                 "%s master weights + %s state: %u B x %llu params%s",
                 job->master_bytes == 2 ? "bf16" : "fp32", fg_optimizer_name(job->optimizer), x->obytes, (unsigned long long)params,
                 x->shard_o > 1 ? ", sharded over DP" : "");
    else
        add_line(e, "optimizer", b->optimizer, false, job->optimizer >= FG_OPT_PAGED_ADAMW
                 ? "bitsandbytes paged optimizer (on the GPU)" : "torch AdamW; Transformer Math 101",
                 "%s state: %u B x %llu params", fg_optimizer_name(job->optimizer), x->obytes,
                 (unsigned long long)params);
    /* ZeRO-Offload / FSDP CPUOffload: the optimizer step runs on the CPU, so its states
     * (and master weights) live there (DeepSpeed zero/stage_1_and_2.py cpu_offload);
     * offloading parameters also moves the gradients (torch FSDP CPUOffload
     * offload_params; DeepSpeed offload_param under ZeRO-3). */
    if (job->offload != FG_OFFLOAD_NONE) {
        offloaded(e, x->lines, "optimizer", "DeepSpeed ZeRO-Offload; FSDP CPUOffload");
        b->optimizer = 0;
    }
    if (job->offload == FG_OFFLOAD_PARAMS) {
        offloaded(e, x->lines, "weights", "DeepSpeed offload_param; FSDP CPUOffload");
        offloaded(e, x->lines, "gradients", "DeepSpeed offload_param; FSDP CPUOffload");
        b->weights = 0;
        b->gradients = 0;
    }
}

/*
 * [PEFT]: fp32 adapters with fp32 grads and Adam states; lit-gpt's and torchtune's in the
 * base's dtype, torch AdamW's states following it (job.lora_base_dtype).  Sharded as the
 * base's are by the ZeRO stage: FSDP shards every parameter it wraps, trainable or not, with
 * the gradients and the optimizer states that follow them (torch distributed/fsdp:
 * FlatParameter / fully_shard; torchtune lora_finetune_distributed shards the whole PEFT
 * model); DeepSpeed ZeRO-1/2 partition the states / gradients of whatever trains.
 */
static void train_states_adapters(struct train *x)
{
    const struct fg_job *job = x->job;
    struct fg_estimate *e = x->e;
    uint64_t adapters = x->adapters;
    /* job.adapters_bf16 (TRL QLoRA): the adapters are cast to bf16, the states follow */
    bool own = job->lora_base_dtype || job->adapters_bf16;
    unsigned ab = job->adapters_bf16 ? 2 : job->lora_base_dtype ? x->pbytes : 4;
    unsigned aob = !own || job->optimizer == FG_OPT_ADAMW_8BIT ||
                           job->optimizer >= FG_OPT_PAGED_ADAMW
                       ? x->obytes
                   : x->adam ? 2 * ab : ab;
    uint64_t wg = fg__add_sat(sharded_bytes(adapters, 0, ab, x->shard_w, job->ep),
                              sharded_bytes(adapters, 0, ab, x->shard_g, job->ep));
    uint64_t states = sharded_bytes(adapters, 0, aob, x->shard_o, job->ep);
    /* ZeRO-Offload / FSDP CPUOffload move what trains, adapters as a full fine-tune's
     * weights: the optimizer's states (DeepSpeed zero/stage_1_and_2.py cpu_offload: the fp32
     * partition and its Adam states on the CPU), and with params also the adapters' weights
     * and gradients (FSDP CPUOffload offload_params; DeepSpeed offload_param).  The frozen
     * base stays counted on the GPU (it is gathered there for every forward). */
    uint64_t all = fg__add_sat(wg, states);
    if (job->offload != FG_OFFLOAD_NONE)
        states = 0;
    if (job->offload == FG_OFFLOAD_PARAMS)
        wg = 0;
    e->b.adapters = fg__add_sat(wg, states);
    add_line(e, "adapters", e->b.adapters ? e->b.adapters : all, false,
             job->offload != FG_OFFLOAD_NONE ? "DeepSpeed ZeRO-Offload; FSDP CPUOffload"
             : job->adapters_bf16            ? "TRL sft_trainer.py: QLoRA adapters cast to bf16"
             : job->lora_base_dtype          ? "lit-gpt / torchtune LoRA"
                                             : "peft autocast_adapter_dtype",
             "LoRA r=%u: %llu adapter params x %u B (%s weight, grad, %s)%s%s",
             job->lora_rank, (unsigned long long)adapters, 2 * ab + aob,
             ab == 4 ? "fp32" : "bf16", fg_optimizer_name(job->optimizer),
             x->shard_o > 1 ? ", sharded over DP" : "",
             job->offload == FG_OFFLOAD_OPTIMIZER ? "; states on the CPU (offload)" : "");
    if (!e->b.adapters)
        offloaded(e, x->lines, "adapters", "DeepSpeed offload_param; FSDP CPUOffload");
}

/* Runtime transients that do not grow with the batch: autocast's weight copies, QLoRA's
 * dequantized weights, peft's rebuilt experts, FSDP's gathered layers, an unsharded copy. */
static void train_overheads(struct train *x)
{
    const struct fg_job *job = x->job;
    struct fg_estimate *e = x->e;
    uint64_t overhead = 0, linear = x->linear, experts_here = x->experts_here;
    uint64_t largest_linear = x->largest_linear, layers_here = x->layers_here;
    if (x->full && !x->master_opt && !job->fsdp_mixed &&
        (job->precision == FG_PREC_BF16_MIXED || job->precision == FG_PREC_FP16_MIXED)) {
        uint64_t copies = sharded_bytes(linear, experts_here < linear ? experts_here : linear, 2,
                                        x->shard_w, job->ep);
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
        unsigned ce = job->bnb_compute == FG_BNB_FP32 ? 4 : x->kept.c;
        /* a 4-bit head (job.h head_4bit) is dequantized whole for every chunk of logits */
        uint64_t head = x->t.has_head && job->head_4bit ? x->m->vocab * x->m->hidden / x->tp : 0;
        uint64_t big = head > largest_linear ? head : largest_linear;
        uint64_t deq = fg__mul_sat(big, 2 * (2 + (ce > 2 ? ce : 0)));
        overhead += deq;
        add_line(e, "overhead", deq, false, "bitsandbytes MatMul4Bit dequantize_4bit",
                 ce > 2 ? "dequantized bf16 + fp32 copies of the largest linear, fwd and bwd"
                        : "dequantized bf16 copy of the largest linear, forward and backward");
    }
    if (job->mode == FG_MODE_QLORA && job->embed_swap &&
        (job->layer_last == 0 || job->stage_embed)) {
        /* job.h embed_swap: the replaced embedding and the new one's never-freed gradient */
        uint64_t swap = fg__mul_sat(fg__mul_sat(x->m->vocab, x->m->hidden), 2ull * x->pbytes);
        overhead = fg__add_sat(overhead, swap);
        add_line(e, "overhead", swap, false, "litgpt finetune/lora.py StableEmbedding swap",
                 "replaced embedding kept + the new one's gradient: 2 x %llu x %llu",
                 (unsigned long long)x->m->vocab, (unsigned long long)x->m->hidden);
    }
    if (job->mode == FG_MODE_LORA && x->t.sum[S_MERGED]) {
        /* peft's ParamWrapper (tuners/lora/layer.py; what target_modules become on
         * transformers 5's fused experts) rebuilds each adapted expert tensor as W + BA on
         * every forward, and grouped_mm keeps that copy for backward: one copy of the
         * adapted experts in the base dtype, one block's under recompute.  Measured on
         * H200 (tests/calibration/measured-h200.tsv): Mixtral-8x7B cut to 4 layers, LoRA at
         * 1 x 2048 tokens, keeps 14.8 GB after the forward where its full fine-tune keeps
         * 3.2 GB; the copies are 11.3 GB of the difference. */
        uint64_t n = x->t.sum[S_MERGED] / (job->grad_ckpt && layers_here ? layers_here : 1);
        uint64_t merged = fg__mul_sat(n, x->wbytes);
        overhead = fg__add_sat(overhead, merged);
        add_line(e, "overhead", merged, false, "peft ParamWrapper on fused experts",
                 "expert weights rebuilt as W + BA and kept for backward: %llu params%s",
                 (unsigned long long)n, job->grad_ckpt ? " (one block, recomputed)" : "");
    }
    if (job->zero >= 3 && (x->dp > 1 || job->offload == FG_OFFLOAD_PARAMS)) {
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
    if (x->want_copy) {
        /* Measured, not derived: lit-gpt 8641822's FSDP LoRA (Llama-2 7b / 13b on 2 and
         * 4x A100 40GB) peaks at the ZeRO-3 estimate plus one whole bf16 model per rank
         * (measured-dev rows 44, 45, 47 within -1% .. +10%; row 46 ran out of memory).
         * A framework copy, so overhead like the all-gather buffers above, and
         * breakdown.weights stays the shard; it lasts the whole run, so a full
         * fine-tune's step phase holds it too (train_totals). */
        overhead = fg__add_sat(overhead, x->copy_w);
        add_line(e, "overhead", x->copy_w, false, "measured rows 44/45/47; lit-gpt 8641822 FSDP",
                 "unsharded copy of the weights beside the DP shard: %llu params",
                 (unsigned long long)x->params);
    }
    e->b.overhead = overhead;
    x->overhead = overhead;
}


/* The data-parallel machinery's buffers (memory_train.c): static, and the step's own. */
static void train_buffers(struct train *x)
{
    struct fg_estimate *e = x->e;
    struct train_buffers b;
    fg__train_buffers(x, &b);
    add_line(e, "overhead", b.ddp, false, "torch DDP reducer, gradient_as_bucket_view=False",
             "DDP buckets: a second copy of the gradients, %u B each", b.gb);
    add_line(e, "overhead", b.ds_bucket, false, "DeepSpeed zero/config.py reduce_bucket_size",
             "ZeRO reduce bucket%s: 5e8 elements x %u B", x->job->zero >= 3 ? "s (two)" : "",
             b.gb);
    add_line(e, "overhead", x->step_extra, false, "DeepSpeed stage_1_and_2.py / stage3.py step",
             "fp32 copy of the rank's gradient partition: 4 B x %llu, step phase only",
             (unsigned long long)b.ds_part);
    uint64_t add = fg__add_sat(b.ddp, b.ds_bucket);
    x->overhead = fg__add_sat(x->overhead, add);
    e->b.overhead = fg__add_sat(e->b.overhead, add);
}

/* A fused loss's logits line (memory_train.c) and Liger's head gradient; its bytes per sample. */
static uint64_t train_fused_loss(struct train *x, unsigned c)
{
    struct fg_estimate *e = x->e;
    bool liger = x->job->loss == FG_LOSS_LIGER;
    uint64_t gw, logits = fg__mul_sat(fg__fused_loss_tok(x, c, &gw), x->sq);
    add_line(e, "logits", logits, true,
             liger ? "Liger-Kernel fused_linear_cross_entropy.py"
                   : "ml-cross-entropy cce.py (no logits)",
             liger ? "fused linear CE: input grad, fp32 loss, one chunk's logits, %llu tokens"
                   : "cut CE: fp32 log-sum-exp and the input's grad, %llu tokens",
             (unsigned long long)x->sq);
    add_line(e, "overhead", gw, false, "Liger-Kernel fused_linear_cross_entropy.py",
             "the head's weight gradient, made in the forward: %u B each", x->wbytes);
    x->overhead = fg__add_sat(x->overhead, gw);
    e->b.overhead = fg__add_sat(e->b.overhead, gw);
    return logits;
}

/* The per-sample activations: the blocks' kept tensors (or the recompute's), the attention
 * scores, and what the framework keeps beside them (dropout masks, 4-bit inputs). */
static void train_activations(struct train *x)
{
    const struct fg_model *m = x->m;
    const struct fg_job *job = x->job;
    struct fg_estimate *e = x->e;
    uint64_t seq = x->seq, layers_here = x->layers_here;
    uint64_t act_block_max = x->t.act_block_max, act_sum = x->t.sum[S_ACT];
    uint64_t act_other = x->t.act_other;
    uint64_t inflight = job->inflight ? job->inflight : 1;
    /* Context parallel splits each sequence over cp ranks: a rank keeps its share of the
     * tokens' activations and logits, and scores of its queries against every key
     * (Megatron-Core context parallel, transformer/attention.py with ring attention). */
    uint64_t sq = job->cp > 1 ? (seq + job->cp - 1) / job->cp : seq;
    uint64_t act_tok;
    uint64_t in_tok = (uint64_t)x->kept.r * m->hidden / (x->kept.sp ? x->tp : 1); /* SP: over TP */
    if (job->act_offload) {
        /* job.h act_offload: the blocks' tensors on the CPU; the block in backward, the
         * forward stash (one block more at most) and the sides stay. */
        act_tok = 2 * act_block_max + act_other;
        add_line(e, "activations", fg__mul_sat(act_tok, sq) * inflight, true,
                 "torchtune _activation_offloading.py OffloadActivations",
                 "offloaded to the CPU: two blocks' working set stay, %llu tokens",
                 (unsigned long long)sq);
    } else if (job->grad_ckpt && job->ac_selective) {
        /* job.h ac_selective: each block's input, the outputs the op-SAC policy saves
         * (memory_node.c S_SAC), and one block's recompute working set in its backward */
        act_tok = layers_here * in_tok +
                  x->t.sum[job->float8 ? S_SAC8 : S_SAC] + act_block_max + act_other;
        add_line(e, "activations", fg__mul_sat(act_tok, sq) * inflight, true,
                 "torchtitan activation_checkpoint.py op SAC",
                 "selective: %llu block inputs + %s linear's and SDPA's outputs, %llu tokens",
                 (unsigned long long)layers_here, job->float8 ? "every float8" : "every other",
                 (unsigned long long)sq);
    } else if (job->grad_ckpt) {
        /* Recompute per block [KOR full recompute]: keep each block's input
         * (r h) and one block's working set during its backward. */
        act_tok = layers_here * in_tok + act_block_max + act_other;
        add_line(e, "activations", fg__mul_sat(act_tok, sq) * inflight, true,
                 "Korthikanti 2022, full recompute",
                 "checkpointed: %llu block inputs + one block's working set, %llu tokens",
                 (unsigned long long)layers_here, (unsigned long long)sq);
    } else {
        act_tok = act_sum + act_other;
        add_line(e, "activations", fg__mul_sat(act_tok, sq) * inflight, true,
                 x->kept.sp ? "Megatron theoretical_memory_usage.py + SP (TE)"
                 : x->kept.te ? "Megatron theoretical_memory_usage.py (TE)"
                 : job->attention == FG_ATTN_EAGER ? "saved tensors per node"
                                                   : "saved tensors per node (SDPA, no score matrix)",
                 "%llu blocks x %llu tokens, %llu B/token/block max",
                 (unsigned long long)layers_here, (unsigned long long)sq,
                 (unsigned long long)act_block_max);
    }
    /* Attention that keeps its scores (model.h score_bytes) keeps heads x s of them per
     * token in each block, one block's under recompute. */
    bool one_block = job->grad_ckpt || job->act_offload; /* what the GPU keeps of the blocks */
    uint64_t score = x->t.sum[S_SCORE] / (one_block && layers_here ? layers_here : 1);
    score = fg__mul_sat(fg__mul_sat(fg__mul_sat(score, sq), seq), inflight);
    add_line(e, "activations", score, true,
             job->attention != FG_ATTN_EAGER ? "torch SDPA math path (fewer K/V heads)"
             : x->kept.attn_drop ? "transformers eager attention + dropout mask"
                                 : "transformers eager attention",
             "attention scores kept for backward: heads x %llu x %llu per block",
             (unsigned long long)sq, (unsigned long long)seq);
    /* What the framework keeps beside the modelling code's tensors (struct act), per token
     * in each block, one block's under recompute, as the scores. */
    uint64_t per_block = one_block && layers_here ? layers_here : 1, framework = 0;
    static const struct {
        int sum;
        const char *source, *what;
    } kept_rows[] = {
        {S_QIN, "bitsandbytes<0.43.2 MatMul4Bit.forward",
         "4-bit linears' inputs, kept as cast to the compute dtype"},
        {S_LDROP, "peft tuners/lora/layer.py Linear.forward",
         "LoRA adapters' own inputs: casts to their dtype, dropout masks and copies"},
        {S_HDROP, "torch native_dropout (config hidden dropout)",
         "hidden-state dropout masks, 1 B per element"},
    };
    for (size_t i = 0; i < sizeof kept_rows / sizeof kept_rows[0]; i++) {
        uint64_t tok = x->t.sum[kept_rows[i].sum] / per_block;
        if (kept_rows[i].sum == S_HDROP && x->kept.hidden_drop &&
            (job->layer_last == 0 || job->stage_embed))
            tok += m->hidden; /* the embeddings' dropout, on the first stage */
        uint64_t k = fg__mul_sat(fg__mul_sat(tok, sq), inflight);
        framework = fg__add_sat(framework, k);
        add_line(e, "activations", k, true, kept_rows[i].source, "%s, %llu tokens",
                 kept_rows[i].what, (unsigned long long)sq);
    }
    e->act_per_token_layer_max = act_block_max;
    uint64_t act = fg__add_sat(fg__mul_sat(fg__mul_sat(act_tok, sq), inflight), score);
    x->act = fg__add_sat(act, framework);
    x->sq = sq;
}


/* The logits and loss, the allocator's share, and the totals of the two phases. */
static int train_totals(struct train *x, struct fg_err *err)
{
    const struct fg_model *m = x->m;
    const struct fg_job *job = x->job;
    struct fg_estimate *e = x->e;
    struct fg_breakdown *b = &e->b;
    uint64_t sq = x->sq, act = x->act, logits = 0;
    if (x->t.has_head && !m->encoder_only) {
        /* [HF] ForCausalLMLoss: logits.float(); cross_entropy saves the fp32
         * log-softmax (4V) and backward holds its gradient and the upcast's
         * gradient (4V + 4V).  A chunked loss keeps every chunk's logits in the compute
         * dtype and, per chunk, what its cross-entropy saves for backward: the fp32
         * log-softmax of torchtune's upcast chunks (ce_chunked_output_loss.py
         * compute_cross_entropy), one in the logits' dtype for lit-gpt's
         * (utils.py chunked_cross_entropy; fp32 under autocast), a log-sum-exp per
         * token for unsloth's kernel (Fast_CrossEntropyLoss: save_for_backward(logits,
         * logsumexp, labels)). */
        bool autocast = job->autocast || job->precision == FG_PREC_BF16_MIXED ||
                        job->precision == FG_PREC_FP16_MIXED;
        unsigned c = x->kept.c, lsm = job->ce_kept == FG_CE_LSE ? 0
                                    : job->ce_kept == FG_CE_FP32 || autocast ? 4 : c;
        uint64_t per_tok = job->chunked_ce ? (uint64_t)(c + lsm) * m->vocab / x->tp
                                           : 12ull * m->vocab / x->tp;
        logits = fg__mul_sat(per_tok, sq);
        if (job->loss != FG_LOSS_DEFAULT) {
            logits = train_fused_loss(x, c);
        } else {
            add_line(e, "logits", logits, true,
                     !job->chunked_ce ? "transformers ForCausalLMLoss fp32 upcast"
                     : job->ce_kept == FG_CE_FP32 ? "torchtune CEWithChunkedOutputLoss"
                     : job->ce_kept == FG_CE_COMPUTE ? "lit-gpt chunked_cross_entropy"
                                                     : "unsloth Fast_CrossEntropyLoss",
                     "%s: %llu tokens x %llu vocab x %llu B",
                     job->chunked_ce ? "chunked CE" : "logits + fp32 loss",
                     (unsigned long long)sq, (unsigned long long)m->vocab,
                     (unsigned long long)per_tok / (m->vocab ? m->vocab : 1));
        }
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
    if (x->full) {
        /* Two phases (see memory.h): activations peak before any gradient
         * exists; the step holds gradients, states and foreach AdamW's
         * temporary (torch/optim/adamw.py _multi_tensor_adamw: exp_avg_sq.sqrt()
         * materialised once per parameter, in the state dtype); the fused
         * kernel (adamw-fused) updates each tensor in place and keeps none. */
        uint64_t temp = job->optimizer == FG_OPT_ADAMW && job->offload == FG_OFFLOAD_NONE
                            ? sharded_bytes(x->params, x->experts_here, x->state_bytes / 2,
                                            x->shard_o, job->ep)
                            : 0;
        e->static_bytes = fg__add_sat(fg__add_sat(b->weights, b->optimizer), x->overhead);
        /* Gradients in the first phase too (job.h grads_persist, grad_accum); else what a
         * smaller micro-batch accumulating would add (memory.h accum_bytes). */
        if (job->grads_persist || job->grad_accum > 1)
            e->static_bytes = fg__add_sat(e->static_bytes, b->gradients);
        else
            e->accum_bytes = b->gradients;
        e->step_bytes = fg__add_sat(fg__add_sat(fg__add_sat(b->weights, b->gradients), b->optimizer), temp);
        e->step_bytes = fg__add_sat(e->step_bytes, x->copy_w);
        e->step_bytes = fg__add_sat(e->step_bytes, fg__add_sat(x->both_extra, x->step_extra));
        if (job->optimizer_in_bwd) {
            /* the steps run inside backward, beside the activations: no phase of its own */
            e->static_bytes = fg__add_sat(fg__add_sat(e->static_bytes, b->gradients), temp);
            e->step_bytes = 0;
        }
        add_line(e, "overhead", temp, false, "torch foreach AdamW step",
                 "optimizer step temporaries (sqrt of v), step phase only");
        b->overhead = fg__add_sat(fg__add_sat(b->overhead, temp), x->step_extra);
    } else {
        b->overhead = fg__add_sat(b->overhead, x->step_extra);
        e->static_bytes = fg__add_sat(fg__add_sat(fg__add_sat(b->weights, b->gradients),
                                          fg__add_sat(b->optimizer, b->adapters)), x->overhead);
        e->static_bytes = fg__add_sat(e->static_bytes, x->step_extra); /* one phase */
    }
    e->per_sample_bytes = fg__add_sat(fg__add_sat(act, logits), frag);
    e->total_bytes = fg_estimate_at(e, job->batch);
    if (e->total_bytes == UINT64_MAX)
        return fg_err_set(err, FG_E_OVERFLOW, "memory estimate overflows 64 bits");
    return 0;
}

/* A preference / RL trainer on top of the adaptation's estimate (memory_rl.h): the models
 * it keeps beside the policy sized here, its lines appended. */
static int trainer_part(const struct fg_model *m, const struct fg_job *job,
                        struct fg_estimate *e, bool lines, struct fg_err *err)
{
    const struct fg_trainer_row *row = fg_trainer_row(job->trainer);
    struct fg_estimate value, gen;
    struct fg__rl_aux aux = {0};
    struct fg__rl_lines add;
    struct fg_job j;
    int rc = 0;
    if (row->value_model) {
        fg__trainer_value_job(job, &j);
        if (!(rc = fg_memory_estimate_totals(m, &j, &value, err)))
            aux.value = &value;
    }
    if (!rc && row->generates && job->vllm_mode == FG_VLLM_NONE) {
        fg__trainer_generation_job(job, e->seq_len, &j);
        if (!(rc = fg_memory_estimate_totals(m, &j, &gen, err)))
            aux.generation = &gen;
    }
    if (rc)
        return rc;
    fg__memory_trainer(m, job, &aux, lines, e, &add);
    for (size_t i = 0; lines && i < add.n; i++)
        put_line(e, add.lines[i].key, add.lines[i].bytes, add.lines[i].per_sample,
                 add.lines[i].source, "%s", add.lines[i].what);
    e->total_bytes = fg_estimate_at(e, job->batch);
    if (e->total_bytes == UINT64_MAX)
        return fg_err_set(err, FG_E_OVERFLOW, "memory estimate overflows 64 bits");
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
    int rc = fg__train_check_job(job, err);
    if (rc)
        return rc;

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

    struct train x = {.m = m, .job = job, .e = e, .lines = lines, .seq = seq};
    bool lora = job->mode == FG_MODE_LORA || job->mode == FG_MODE_QLORA;
    x.full = job->mode == FG_MODE_FULL;
    /* "mixed" means fp32 parameters under autocast (PyTorch AMP; Lightning's
     * bf16-mixed), for a full fine-tune and a LoRA base alike, so the residual
     * stream is fp32; "bf16" loads the parameters in bf16 (the LoRA default). */
    x.pbytes = job->precision == FG_PREC_BF16 ? 2 : 4;
    fg__act_of(m, job, &x.kept);
    x.tp = job->tp ? job->tp : 1;
    x.dp = job->dp ? job->dp : 1;

    if (set->table_tried && set->table)
        fg__table_sums(set->table, job, &x.t);
    else
        fg__sum_stage(m, job, &x.kept, set, &x.t);
    uint64_t tied = tied_copy_here(m, job, x.t.has_head);
    x.params = x.t.sum[S_PARAMS] + tied;
    x.linear = x.t.sum[S_LINEAR] + tied;
    x.quantizable = x.t.sum[S_QUANTIZABLE];
    x.adapters = x.t.sum[S_ADAPTERS];
    x.largest_linear = x.t.largest;
    x.experts_here = x.t.sum[S_EXPERTS];
    x.layers_here = x.t.layers;
    if (lora && x.adapters == 0 && job->layer_last == 0)
        return fg_err_set(err, FG_E_INVAL,
                          "the LoRA targets match no linear layer of %s; use all-linear, attn, "
                          "qv, or roles like q,k,v,o,gate,up,down", m->id);

    /* ---- static part ---- */
    e->trainable_params = x.full ? x.params : x.adapters;
    e->adapter_params = x.adapters;
    fg__train_bytes(&x);
    train_weights(&x);
    if (x.full)
        train_states_full(&x);
    else
        train_states_adapters(&x);
    train_overheads(&x);
    train_buffers(&x);
    /* ---- per-sample part ---- */
    train_activations(&x);
    rc = train_totals(&x, err);
    if (!rc && job->trainer != FG_TRAINER_SFT)
        rc = trainer_part(m, job, e, lines, err);
    return rc;
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
        fg__table_free(p->set[i].table);
    free(p);
}

int fg__memory_estimate_parts(const struct fg_model *m, const struct fg_job *job,
                              struct fg_estimate *e, struct fg__parts *parts, struct fg_err *err)
{
    int rc = estimate(m, job, e, false, fg__parts_set(parts, m, job), err);
    e->n_lines = 0;
    return rc;
}
