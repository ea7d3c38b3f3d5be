/*
 * model_int.h - the model's private half: what the family readers
 * (engine/arch/), model.c and the estimator call to build and annotate a
 * model graph.  Nothing outside engine/ includes it (tests/integration/
 * layout.sh checks); the public half is model.h.  The functions follow
 * model.h's contract: pointers NULL on failure with err set, ints 0 or a
 * negative FG_E_* code.
 */
#ifndef FG_MODEL_INT_H
#define FG_MODEL_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "model/model.h"

/* Append a node; returns NULL when out of memory (err set). */
struct fg_node *fg__model_add(struct fg_model *m, enum fg_node_kind kind, int32_t layer,
                              const char *name, struct fg_err *err);

/* Append a node of block `layer` (from 0) named "<base>_<layer + 1>" ("Attention_12"); NULL
 * when out of memory (err set). */
struct fg_node *fg__model_add_block(struct fg_model *m, enum fg_node_kind kind, int32_t layer,
                                    const char *base, struct fg_err *err);

/*
 * Append `copies` copies of the block just built, nodes [first, n_nodes) of one layer, as
 * blocks layer, layer + 1, ...: the same nodes, named "<base>_<layer + 1>" and on.  A reader
 * calls it for the blocks whose inputs equal that block's (a block is a fraction of a
 * microsecond to copy and several to build); it declines (false, nothing added) when the
 * nodes are not all of one layer, a name is not one fg__model_add_block writes in place,
 * the model is built node_by_node, or memory is short; the reader then builds the block.
 */
bool fg__model_repeat_block(struct fg_model *m, size_t first, int32_t layer, uint32_t copies);

/* An empty model with m's shape (hidden, heads, kv_heads, head_dim, inter, vocab), where a
 * reader builds blocks aside to count them as a rule (MTP layers); the caller frees it with
 * fg_model_free.  NULL when out of memory (err set). */
struct fg_model *fg__model_scratch(const struct fg_model *m, struct fg_err *err);

/* Add a linear to a node and its params (in*out*count + bias*out*count). */
void fg__node_linear(struct fg_node *n, const char *role, uint64_t in, uint64_t out, uint64_t count,
                     bool bias);

/* Record a counting rule (adds scalars to the total at finalize). */
void fg__model_rule(struct fg_model *m, const char *name, int64_t scalars);

/* The same for a part the config declares (under key) that the original release stores and
 * the class does not build (the rule's optional flag: MTP layers): counted, dropped when a
 * checkpoint at hand shows it absent, and until then the stored count is unsure, naming key
 * (a fine-tune or a pruned release saved through transformers holds none). */
void fg__model_rule_optional(struct fg_model *m, const char *key, const char *name,
                             int64_t scalars);

/* Record a note for the output ("read as a generic decoder"). */
void fg__model_note(struct fg_model *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Record an assumption of the generic reader ("tie_word_embeddings absent: tied, the
 * PretrainedConfig default"); dropped past FG_MODEL_MAX_ASSUMED. */
void fg__model_assume(struct fg_model *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Mark the count unsure because of key, with a note saying why (kept: the first key of a
 * question of what is loaded, else the first of the stored count). */
void fg__model_unsure(struct fg_model *m, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The same for a question of the stored count alone, which leaves what is loaded (and the
 * memory estimate) as it is: m->unsure_count_only while no other key makes it unsure. */
void fg__model_unsure_count(struct fg_model *m, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Sum nodes and rules into params_total, derive the linear sums and the segments;
 * FG_E_OVERFLOW on overflow, FG_E_NOMEM. */
int fg__model_finalize(struct fg_model *m, struct fg_err *err);

/* The head and the final norm (a norm the readers name "Final ..."), which go with the last
 * pipeline stage (model.c's segment sides, memory_stage.c's on_stage). */
bool fg__node_head_side(const struct fg_node *n);

#endif
