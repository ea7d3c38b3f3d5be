/*
 * titan.h - internal to the estimator (memory_node.c): what torchtitan's tensor-parallel
 * layout keeps per token that transformers' does not, read from torchtitan main (b5bcd76,
 * 2026-08-21).  Pure functions; nothing fails or allocates.
 */
#ifndef FG_TITAN_H
#define FG_TITAN_H

#include <stdbool.h>
#include <stdint.h>

#include "job/job.h"

/*
 * The bytes one token keeps in a norm of width w under sequence parallel (struct act sp
 * without Transformer Engine: torchtitan's TP, ParallelismConfig.enable_sequence_parallel =
 * True): the norm runs on this rank's share of the sequence, so its own kept tensors are
 * over tp, and the input the next column-parallel linears keep (c bytes an element) is the
 * all-gathered whole one.  rms: an RMSNorm (an fp32 copy and the normalised output in the
 * stream's r bytes), else a LayerNorm (its input).
 */
uint64_t fg__titan_norm_sp(uint64_t w, bool rms, unsigned r, unsigned c, uint32_t tp);

/*
 * What FSDP2 holds unsharded through a step, for params parameters of this rank's stage.
 * Under PP a stage stays gathered whatever parallelism.fsdp_reshard_after_forward says
 * (its "default" is `not pp_enabled`, distributed/fsdp.py
 * get_fsdp_reshard_after_forward_policy; and torch's pipelining, distributed/pipelining/
 * stage.py backward_maybe_with_nosync, sets set_reshard_after_backward and
 * set_requires_gradient_sync False until the last micro-batch), and the gradients
 * accumulate unsharded in FSDP2's reduce dtype (fp32): 6 B a parameter.  Without PP,
 * "never" keeps each block's bf16 parameters gathered from its forward to its backward:
 * all of them at the forward's end, 2 B a parameter.  0 unless the job runs FSDP2's mixed
 * precision (job.fsdp_mixed) sharded over dp > 1 ranks.
 */
uint64_t fg__titan_unsharded(const struct fg_job *job, uint32_t dp, uint64_t params);

/*
 * The symmetric-memory workspace async TP keeps per sample of sq tokens (0 unless
 * job.async_tp with tp > 1).  torchtitan parallelism.enable_async_tensor_parallel turns on
 * inductor's micro-pipeline TP over symm_mem (distributed/tensor_parallel.py
 * maybe_enable_async_tp): every all-gather + matmul and matmul + reduce-scatter runs through
 * torch/distributed/_symmetric_memory/__init__.py, whose get_symm_mem_workspace keeps one
 * buffer per TP group, grown to the largest request and never freed.  The largest is the
 * reduce-scatter's (_pipelined_produce_and_all2all: out_chunks[0] x 2, one output chunk of
 * tokens / tp x hidden in bf16, twice); the all-gather asks for one input shard, less.  The
 * gathered inputs and the unreduced outputs are allocated as plain TP allocates them.
 */
uint64_t fg__titan_async_tp_workspace(const struct fg_job *job, uint64_t sq, uint64_t hidden,
                                      uint32_t tp);

/*
 * The logits torch pipelining keeps on the last stage for the micro-batches of a step that
 * came before the one running, per sample of sq tokens (0 unless job.pp_keeps_outputs,
 * pp > 1 and the stage holds the head).  Up to torchtitan v0.2.0 (and 9dec370, December
 * 2024) the trainer calls pp_schedule.step(target=, losses=) with the outputs returned
 * (train.py train_step); torchtitan e5ef99a ("Update PP to release memory earlier", first
 * in v0.2.1) passes return_outputs=False so that they are not.  The stage keeps each
 * micro-batch's output in stage.output_chunks from its forward to the step's end (the list
 * torchtitan's graph_pp runner, 21e795494 experiments/graph_trainer/graph_pp/runner.py
 * _post_fwd_common, appends to as upstream's stage does).  The output is the head's, in
 * the bf16 of FSDP2's param_dtype (c bytes) and vocab-parallel under TP (ColwiseParallel
 * output_layouts=Shard(-1) with loss_parallel): vocab / tp entries a token.  The running
 * micro-batch's own logits are the loss line's; the n - 1 before it are these.  n: the
 * micro-batches of the step (job.pp_microbatches, else pp x chunks).
 */
uint64_t fg__titan_pp_outputs(const struct fg_job *job, bool head, uint64_t sq, uint64_t vocab,
                              uint32_t tp, unsigned c);

#endif
