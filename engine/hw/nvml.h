/*
 * nvml.h - GPU memory in use, sampled from NVML on the node (docs/learn.md,
 * "The node-side sampler").
 *
 * For a job on a cluster without Slurm's GPU accounting (gres/gpumem needs
 * 23.02+, AccountingStorageTRES=gres/gpu and AutoDetect=nvml): a thread reads
 * what Slurm's gpu/nvml plugin reads (src/plugins/gpu/nvml/gpu_nvml.c
 * _get_nvml_process_info: nvmlDeviceGetComputeRunningProcesses, usedGpuMemory
 * per process), on the job's devices only, every interval, and keeps the
 * largest sum per device.  libnvidia-ml.so.1 is dlopen'ed, never linked: where
 * it is absent fg_sampler_start fails FG_E_NOTFOUND and nothing else happens.
 *
 * Bounded and never in the job's way: one NVML call per device per interval
 * (the cost is measured by `make bench`); the thread never takes a lock the
 * caller holds; fg_sampler_stop waits at most its deadline for the thread
 * (an NVML call on a hung GPU can block) and otherwise leaves it detached,
 * to free its own state when it returns.
 *
 * Devices are NVML indexes, which are Slurm's gres indexes under
 * AutoDetect=nvml (SLURM_STEP_GPUS / SLURM_JOB_GPUS).  Every process on a
 * device is counted: right when GPUs are allocated whole to one job, an
 * over-count under sharding or MPS.  MIG devices report no per-process
 * memory (NVML_VALUE_NOT_AVAILABLE): they count 0.
 *
 * Error contract: error.h.  fg_sampler_stop frees (or hands the thread) the
 * sampler; it is NULL-safe.
 */
#ifndef FG_NVML_H
#define FG_NVML_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

#define FG_SAMPLER_MAX_DEVICES 64

struct fg_sampler_opts {
    const char *library;       /* NULL: "libnvidia-ml.so.1" (tests: the fake one) */
    unsigned devices[FG_SAMPLER_MAX_DEVICES];
    size_t n_devices;
    unsigned interval_ms;      /* 0: 5000 */
};

struct fg_sampler;

/* Parse "0,1", "0-3", "0,2-3" (SLURM_STEP_GPUS) into o->devices; FG_E_PARSE on anything else. */
int fg_sampler_devices(struct fg_sampler_opts *o, const char *list, struct fg_err *err);

/* Open NVML and start the thread, which samples at once and then every interval.  FG_E_NOTFOUND: no NVML library;
 * FG_E_IO: NVML failed (its message); FG_E_NOMEM. */
int fg_sampler_start(const struct fg_sampler_opts *o, struct fg_sampler **out,
                     struct fg_err *err);

/* The largest bytes in use on one device so far, and how many samples were taken. */
uint64_t fg_sampler_peak(struct fg_sampler *s, uint64_t *samples);

/* Stop the thread (waiting at most deadline_ms), release the sampler;
 * the peak and sample count at that moment are returned through the pointers (NULL-able). */
void fg_sampler_stop(struct fg_sampler *s, unsigned deadline_ms, uint64_t *peak,
                     uint64_t *samples);

#endif
