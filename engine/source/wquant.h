/*
 * wquant.h - the bytes a served model's weights take: the checkpoint's
 * quantization_config (config.json), or the runtime --quantization of a
 * serving engine, as one value per scheme.
 *
 * A scheme says how many bytes one quantized weight takes with its scales,
 * and which linears it leaves in the checkpoint dtype (bf16): embeddings and
 * the LM head always (vLLM VocabParallelEmbedding / ParallelLMHead take no
 * linear quant method unless a checkpoint quantizes the head, which none of
 * the schemes below do by default), norms (not linears), routers (the models'
 * gate is built with quant_config=None: vllm model_executor/models
 * deepseek_v2.py DeepseekV2MoE.gate, qwen3_moe.py, mixtral.py), and the
 * modules the config names (modules_to_not_convert, ignore,
 * exclude_modules).  The estimator (memory_node.c) applies it linear by
 * linear.
 *
 * The types (enum fg_wq_method, struct fg_wquant) are model.h's: the model carries its
 * checkpoint's scheme.  Values only: nothing here allocates.  Error contract: see
 * util/error.h.
 */
#ifndef FG_SOURCE_WQUANT_H
#define FG_SOURCE_WQUANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "source/config.h"
#include "util/error.h"

/*
 * Read root's quantization_config (or text_config's) into out; a config without one gives
 * FG_WQ_NONE.  An unknown quant_method, a bit width or group size out of range is
 * FG_E_UNSUPPORTED / FG_E_RANGE naming the key.
 */
int fg_wquant_read(const struct fg_cfg *root, struct fg_wquant *out, struct fg_err *err);

/*
 * The scheme a serving engine runs: the checkpoint's (ckpt) when asked is FG_WQ_NONE,
 * else asked, which must be the checkpoint's own method or fp8 on an unquantized
 * checkpoint (vLLM quantizes a bf16 checkpoint to fp8 at load: Fp8LinearMethod
 * process_weights_after_loading; any other runtime method needs a checkpoint made for
 * it).  FG_E_INVAL with vLLM's reason otherwise.
 */
int fg_wquant_for_serving(const struct fg_wquant *ckpt, enum fg_wq_method asked,
                          struct fg_wquant *out, struct fg_err *err);

/* "fp8", "mxfp4", ... ("none" for FG_WQ_NONE); NULL past the end. */
const char *fg_wq_method_name(enum fg_wq_method m);

/* Parse a --quantization value (vLLM's spelling; "auto" and "none" give FG_WQ_NONE). */
int fg_wq_method_parse(const char *s, enum fg_wq_method *out, struct fg_err *err);

/* "auto|fp8|mxfp4|...": every spelling fg_wq_method_parse accepts, into buf. */
void fg_wq_method_names(char *buf, size_t cap);

#endif
