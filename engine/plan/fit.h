/*
 * fit.h - one estimate against one card: the largest micro-batch under the
 * headroom, and a verdict.
 *
 *   fits        headroom x estimate(batch 1) and conservative x estimate fit
 *   borderline  fits on the estimate, not on the conservative peak: measure one step first
 *   split       needs more than one card (the planner says how)
 *   no          does not fit any layout the planner may use
 *
 * Card memory: what the driver reports (nvidia-smi memory.total; the marketed
 * GB x 10^9 where the table has no driver figure), minus what the driver keeps
 * and the CUDA context, which the process pays on every card whatever the job.
 */
#ifndef FG_FIT_H
#define FG_FIT_H

#include <stdint.h>

#include "memory/memory.h"

/*
 * What a job cannot allocate on a card, measured on the calibration card (H200, torch 2.11
 * cu130, tests/calibration/measured-h200*.tsv): the driver keeps 615 MiB of what NVML
 * reports as the total (memory.total 143,771 MiB; cudaMemGetInfo's total 150,109,880,320 B,
 * device_total), and the CUDA context with the memory outside PyTorch's allocator takes
 * 777 MiB (device_used_end - reserved_end, median of 85 rows, 695-783).  An H100 80 GB
 * (NVML 81,559 MiB) leaves 84.1 GB; its own gap to cudaMemGetInfo is 478 MiB (hwloc
 * CUDAGlobalMemorySize 85,019,590,656 B), so the H200 figure is the larger, kept for every
 * card.
 */
#define FG_DRIVER_RESERVED_BYTES (615ull << 20)
/* What a process holds outside PyTorch's allocator (CUDA context, cuBLAS / cuDNN handles):
 * the part of FG_CUDA_CONTEXT_BYTES a whole-process figure (nvidia-smi per process, Slurm's
 * gres/gpumem) includes, where the driver's reserve is not. */
#define FG_CUDA_PROCESS_BYTES (777ull << 20)
#define FG_CUDA_CONTEXT_BYTES (FG_DRIVER_RESERVED_BYTES + FG_CUDA_PROCESS_BYTES)

struct fg_fit_opts {
    double headroom;        /* default 1.15 */
    double conservative;    /* default 1.43: the measured-peak upper bound of the seeds */
    uint64_t context_bytes; /* default FG_CUDA_CONTEXT_BYTES */
};

enum fg_verdict { FG_FIT_FITS, FG_FIT_BORDERLINE, FG_FIT_SPLIT, FG_FIT_NO };

struct fg_fit {
    enum fg_verdict verdict;
    uint64_t usable_bytes;  /* card bytes the job may use */
    uint64_t max_batch;     /* largest micro-batch under the headroom; 0 when batch 1 does not fit */
    uint64_t need_bytes;    /* headroom x estimate at the job's batch */
};

void fg_fit_opts_default(struct fg_fit_opts *o);

/* Usable bytes of a card given its marketed GB and driver-reported bytes (0 = unknown). */
uint64_t fg_fit_usable(uint64_t marketed_gb, uint64_t driver_bytes, const struct fg_fit_opts *o);

/* Verdict of e on a card with usable bytes (single card; split / no is the planner's call). */
void fg_fit_card(const struct fg_estimate *e, uint64_t usable, const struct fg_fit_opts *o,
                 struct fg_fit *out);

/* Bytes at micro-batch mb keeping the job's batch per step by accumulation: fg_estimate_at,
 * plus accum_bytes where mb is below the job's micro-batch (ceil(batch / mb) steps). */
uint64_t fg_estimate_accum_at(const struct fg_estimate *e, uint64_t mb);

/* Largest b with headroom x (static + b x per_sample) <= usable; 0 if none.  A b below
 * the job's micro-batch keeps its batch per step by gradient accumulation, so it is held to
 * fg_estimate_accum_at (the gradients alive beside the activations, memory.h accum_bytes). */
uint64_t fg_fit_max_batch(const struct fg_estimate *e, uint64_t usable, double headroom);

const char *fg_verdict_name(enum fg_verdict v);

#endif
