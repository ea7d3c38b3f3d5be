/*
 * tensors.h - a model's structure from its checkpoint's tensors (source/st_layout.h),
 * for a model_type no family reader knows: the count is the headers' sum, exactly; the
 * structure the activations need (per-block linear shapes, heads, MLP width, experts,
 * vocab, hidden, layers) is read from the tensor names and shapes, with the head count and
 * the experts' top-k taken from config.json (the tensors do not store them).
 *
 * Error contract: see error.h.  Ownership: the layout is borrowed for the call.
 */
#ifndef FG_ARCH_TENSORS_H
#define FG_ARCH_TENSORS_H

#include "model/model.h"
#include "source/config.h"
#include "source/st_layout.h"
#include "util/error.h"

/*
 * Build m (empty, model_type and dtype set) from l and the config c: certainty
 * FG_CERT_CHECKPOINT, reader "checkpoint tensors", a note naming the route and what came
 * from config.json.  Where names cannot be mapped to blocks (no block index, a block
 * without attention or MLP, packed quantized weights, no head count in config.json) every
 * tensor is still counted, in an "Other" node, and the model is FG_CERT_UNSURE with
 * unsure_key "checkpoint-structure" saying which part.  FG_E_MISSING for an empty layout,
 * FG_E_NOMEM.
 */
int fg__arch_read_tensors(const struct fg_cfg *c, struct fg_model *m,
                          const struct fg_st_layout *l, struct fg_err *err);

/*
 * What l stores that m does not build, named in out (cap bytes, "" when nothing) and
 * counted in *elements: blocks of the block stack past m's main layers (the MTP layers a
 * DeepSeek-V3 or GLM-4.5 checkpoint stores and their transformers classes do not load),
 * and vision / audio tower tensors when m has no tower (a text-only class of a
 * multimodal checkpoint).
 */
void fg__tensors_unused(const struct fg_st_layout *l, const struct fg_model *m, char *out,
                        size_t cap, uint64_t *elements);

#endif
