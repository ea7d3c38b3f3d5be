/*
 * train_transients.c - the static transients stage (stages.def): runtime copies that do not
 * grow with the batch.
 */
#include "memory/pipeline.h"
#include "memory/titan.h"

#include "util/sat.h"

/* Runtime transients that do not grow with the batch: autocast's weight copies, QLoRA's
 * dequantized weights, peft's rebuilt experts, FSDP's gathered layers, an unsharded copy. */
int fg__train_transients(struct train *x, struct fg_err *err)
{
    (void)err;
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
         * prepare_model_for_kbit_training), or in bf16 from fp16 weights (job.h
         * bnb_fp16_quant).  forward and backward each make their own, one at a time:
         * forward's is a temporary of F.linear, freed before backward's (backward:
         * grad_A = torch.matmul(grad_output, F.dequantize_4bit(B, ...).to(...).t())). */
        unsigned ce = job->bnb_compute == FG_BNB_FP32 ? 4 : x->kept.c;
        unsigned second = ce > 2 ? ce
                        : job->bnb_fp16_quant && job->precision != FG_PREC_FP16_MIXED ? 2 : 0;
        /* a 4-bit head (job.h head_4bit) is dequantized whole for every chunk of logits */
        uint64_t head = x->t.has_head && job->head_4bit ? x->m->vocab * x->m->hidden / x->tp : 0;
        uint64_t big = head > largest_linear ? head : largest_linear;
        uint64_t deq = fg__mul_sat(big, 2 + second);
        overhead += deq;
        add_line(e, "overhead", deq, false, "bitsandbytes MatMul4Bit dequantize_4bit",
                 second == 4 ? "dequantized bf16 + fp32 copies of the largest linear"
                 : second    ? "dequantized fp16 + bf16 copies of the largest linear"
                             : "dequantized bf16 copy of the largest linear");
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
    uint64_t held = fg__titan_unsharded(job, x->dp, x->params);
    if (held) {
        /* titan.h: the whole stage stays gathered, so no per-layer all-gather buffer */
        overhead = fg__add_sat(overhead, held);
        add_line(e, "overhead", held, false, "torchtitan fsdp.py; torch pipelining stage.py",
                 job->pp > 1 ? "FSDP2 under PP: bf16 params kept gathered, fp32 grads "
                               "unsharded: 6 B x %llu"
                             : "FSDP2 reshard_after_forward never: bf16 params kept "
                               "gathered: 2 B x %llu", (unsigned long long)x->params);
    } else if (job->zero >= 3 && (x->dp > 1 || job->offload == FG_OFFLOAD_PARAMS)) {
        /* The gathered parameters come in the dtype the shards are stored in: a QLoRA
         * base gathers its 4-bit data and scales (torchao NF4Tensor's
         * fsdp_pre_all_gather under torchtune's FSDP2; bitsandbytes Params4bit with
         * bnb_4bit_quant_storage under FSDP-QLoRA), not 16-bit weights. */
        double gb = job->mode == FG_MODE_QLORA ? fg__quant_bytes(job->quant) : 2.0;
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
    return 0;
}
