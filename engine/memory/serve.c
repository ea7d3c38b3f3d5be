/*
 * serve.c - a serving estimate (pipeline.h fg__serve_estimate): the weights in the serving
 * dtype or as stored, the KV cache and SSM state per sequence, and the prefill's working set.
 */
#include "memory/pipeline.h"

#include "source/wquant.h"
#include "util/fmt.h"
#include "util/sat.h"

int fg__serve_estimate(const struct fg_model *m, const struct fg_job *job, struct fg_estimate *e,
                       struct fg_err *err)
{
    uint64_t seq = e->seq_len, work = 0;
    struct fg_wquant wq;
    int rc = fg_wquant_for_serving(&m->wq, (enum fg_wq_method)job->serve_wq, &wq, err);
    if (rc)
        return rc;
    struct serve_part t;
    fg__sum_served(m, job, seq, &wq, &t);
    uint64_t tied = fg__tied_copy_here(m, job, t.has_head);
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
        wbytes = (uint64_t)((double)lin * fg__quant_bytes(job->quant)) + (weights - lin) * 2;
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
    /* bitsandbytes matmul_4bit: only a one-token input takes gemv_4bit; the prefill's goes
     * through MatMul4Bit.forward, F.dequantize_4bit(B, quant_state).to(A.dtype): the whole
     * weight in the dtype it was quantized from, and a second copy where the activations
     * are another (job.h bnb_fp16_quant: fp16 weights, bf16 activations) - at most the
     * largest 4-bit linear's, once (autograd/_functions.py, 0.40 .. 0.45). */
    uint64_t deq = 0;
    if (job->quant == FG_QUANT_NF4 || job->quant == FG_QUANT_NF4_DQ) {
        unsigned el = job->precision == FG_PREC_FP32 ? 4 : 2;
        unsigned from = job->bnb_fp16_quant ? 2 : el;
        bool second = job->bnb_fp16_quant && job->precision != FG_PREC_FP16_MIXED;
        deq = fg__mul_sat(t.largest, from + (second ? el : 0));
    }
    e->b.weights = wbytes;
    e->b.overhead = deq;
    e->static_bytes = fg__add_sat(wbytes, deq);
    e->b.kv_cache = fg__mul_sat(kv, job->batch);
    e->b.ssm_state = fg__mul_sat(state, job->batch);
    e->b.activations = fg__mul_sat(work, job->batch);
    e->per_sample_bytes = fg__add_sat(fg__add_sat(kv, state), work);
    e->total_bytes = fg_estimate_at(e, job->batch);
    add_line(e, "weights", wbytes, false, wsrc, "%s weights: %llu params", what,
             (unsigned long long)weights);
    add_line(e, "overhead", deq, false, "bitsandbytes MatMul4Bit dequantize_4bit",
             "prefill: the largest 4-bit linear dequantized (%llu params)%s",
             (unsigned long long)t.largest,
             job->bnb_fp16_quant && job->precision != FG_PREC_FP16_MIXED
                 ? ", fp16 and a bf16 copy" : "");
    add_line(e, "kv_cache", kv, true, "vLLM get_num_kv_heads; MLA latent",
             "%s KV cache for %llu tokens per sequence",
             t.ds_mla ? "fp8_ds_mla (+ indexer)" : job->kv_bytes == 1 ? "fp8" : "bf16",
             (unsigned long long)seq);
    add_line(e, "ssm_state", state, true, "transformers Mamba2/LFM2 cache",
             "fixed SSM / conv state per sequence");
    add_line(e, "activations", work, true,
             m->encoder_only ? "encoder forward, no cache" : "prefill, measured on H200",
             "one block's forward working set for %llu tokens", (unsigned long long)seq);
    return 0;
}
