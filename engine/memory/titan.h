/*
 * titan.h - internal to the estimator (memory_node.c): what torchtitan's tensor-parallel
 * layout keeps per token that transformers' does not, read from torchtitan main (b5bcd76,
 * 2026-08-21).  Pure functions; nothing fails or allocates.
 */
#ifndef FG_TITAN_H
#define FG_TITAN_H

#include <stdint.h>

#include "memory/memory_node.h"

/*
 * The bytes one token keeps in a norm node under sequence parallel (struct act sp without
 * Transformer Engine: torchtitan's TP, ParallelismConfig.enable_sequence_parallel = True):
 * the norm runs on this rank's share of the sequence, so its own kept tensors are over tp,
 * and the input the next column-parallel linears keep is the all-gathered whole one.
 */
uint64_t fg__titan_norm_sp(const struct fg_node *n, const struct act *a, uint32_t tp);

#endif
