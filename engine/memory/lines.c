/*
 * lines.c - what every stage of the estimate shares (pipeline.h): the attributed-line writer,
 * moving lines to the CPU, the bitsandbytes rates and the tied copy of a pipeline stage.
 */
#include "memory/pipeline.h"

#include <stdarg.h>
#include <string.h>

#include "util/fmt.h"
#include "util/sat.h"

/* The tied matrix on a pipeline stage that holds the head but not the embedding: that stage
 * keeps its own copy (Megatron's share_embeddings_and_output_weights: the last stage
 * allocates the word embeddings and all-reduces their gradient with the first [MEG]). */
uint64_t fg__tied_copy_here(const struct fg_model *m, const struct fg_job *job,
                            bool has_head)
{
    if (!m->tied || !has_head || job->layer_last == 0 || job->stage_embed)
        return 0;
    return m->vocab * m->hidden / (job->tp ? job->tp : 1);
}

/* Bytes per quantized weight [BNB]: int8 (LLM.int8) adds one fp32 scale per
 * row of ~4096; NF4 one fp32 absmax per 64; double quantization 8-bit
 * absmax with one fp32 per 256 blocks. */
double fg__quant_bytes(enum fg_quant q)
{
    return q == FG_QUANT_INT8 ? 1.0 + 4.0 / 4096
         : q == FG_QUANT_NF4_DQ ? 0.5 + 1.0 / 64 + 4.0 / (64 * 256)
                                : 0.5 + 4.0 / 64;
}

void fg__put_line(struct fg_estimate *e, const char *key, uint64_t bytes, bool per_sample,
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

/* A totals-only estimate wrote no lines (its n_lines only says "full"): nothing to move. */
void fg__offloaded(struct fg_estimate *e, bool lines, const char *key, const char *source)
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
