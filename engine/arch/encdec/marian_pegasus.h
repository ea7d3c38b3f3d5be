/*
 * marian_pegasus.h - internal to the seq readers (marian_pegasus.c, florence_git_fuyu.c): what they share.
 */
#ifndef FG_ARCH_SEQ_H
#define FG_ARCH_SEQ_H

#include <stddef.h>

#include "arch/arch.h"

/* Move nodes [from, n_nodes) of m to the encoder stack, names prefixed "Enc." (the
 * convention of bart_t5_whisper.c). */
void fg__seq_mark_encoder(struct fg_model *m, size_t from);

/* A cross-attention a standalone decoder builds but cannot run (no encoder output):
 * `params` stored scalars in a node of block li outside the attention math; FG_E_NOMEM. */
int fg__seq_unused_cross(struct fg_model *m, int32_t li, uint64_t params, struct fg_err *err);

#endif
