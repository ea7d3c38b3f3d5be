/*
 * sacct.h - Slurm's accounting records as `sacct -p` prints them, per job.
 *
 * What fitgate learn needs from a job: its state and exit code, the GPUs it
 * had, and the GPU memory its tasks used (gres/gpumem, recorded when the
 * cluster accounts GPUs: AccountingStorageTRES=gres/gpu, gres.conf
 * AutoDetect=nvml; Slurm 23.02 and later).
 *
 * What gres/gpumem is (SchedMD/slurm src/plugins/gpu/nvml/gpu_nvml.c
 * gpu_p_usage_read, _get_nvml_process_info): for one process, the sum over
 * the node's GPUs of NVML's usedGpuMemory for that pid (compute and graphics
 * processes): driver-level memory, the CUDA context and everything the
 * framework's allocator reserved, not what it had allocated.  The task's
 * figure sums its processes (jobacct_gather), sampled every
 * JobAcctGatherFrequency (30 s by default); TRESUsageInMax is the largest
 * sample of the step's largest task.  A spike between two samples is not
 * seen.  MIG devices are not accounted (doc/html/gres.shtml, Accounting).
 *
 * sacct prints it in bytes through convert_num_unit with sacct's default
 * CONVERT_NUM_UNIT_EXACT (src/sacct/print.c _print_tres_field;
 * src/common/slurmdb_defs.c slurmdb_make_tres_string_from_simple,
 * TRES_STR_FLAG_BYTES; src/common/slurm_protocol_api.c convert_num_unit2):
 * divided by 1024 while the value stays a multiple of 512, so "36266M",
 * "1.50G" or "123456789" (bytes).  gres/gpuutil is printed as an integer.
 *
 * Error contract: error.h.  Ownership: fg_sacct_parse's result belongs to
 * the caller, freed with fg_sacct_free (NULL-safe).
 */
#ifndef FG_SACCT_H
#define FG_SACCT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/error.h"

struct fg_sacct_job {
    uint64_t job_id;        /* JobIDRaw when the output has it, else JobID */
    char state[32];         /* the job's own row, first word: "COMPLETED", "CANCELLED" */
    int exit_code, exit_signal;   /* ExitCode "1:0" */
    uint32_t gpus;          /* AllocTRES gres/gpu of the job (0: none or not shown) */
    bool has_gpumem;        /* some step had gres/gpumem in TRESUsageInMax */
    uint64_t gpumem_task_max;   /* bytes: the largest step's TRESUsageInMax gres/gpumem */
    /* bytes per GPU: max over steps of gres/gpumem / (the step's GPUs / its tasks), the
     * figure comparable with an estimate per GPU plus the context */
    uint64_t gpumem_per_gpu;
    uint32_t gpus_per_task; /* of the step that gave gpumem_per_gpu */
    uint32_t gpuutil_max;   /* TRESUsageInMax gres/gpuutil, percent (summed over GPUs) */
    bool has_uid;           /* the output has a UID column: whose job it was */
    uint32_t uid;
};

struct fg_sacct {
    size_t n;
    struct fg_sacct_job *jobs;   /* sorted by job id */
};

/*
 * Parse `sacct -p` output (text, len bytes): a header line naming the columns
 * (JobID or JobIDRaw, State required; ExitCode, AllocTRES, TRESUsageInMax,
 * NTasks, UID used when present), then one row per job and per step ("123",
 * "123.batch", "123.0", "123.extern").  Steps fold into their job; a step
 * before its job makes the job.  Array and heterogeneous ids ("123_4",
 * "123+1") are read through JobIDRaw; without it they fail.  Fails FG_E_PARSE
 * (no header, a row with another number of fields, a malformed id, size or
 * exit code) naming line and column, FG_E_NOMEM.
 */
int fg_sacct_parse(const char *text, size_t len, struct fg_sacct **out, struct fg_err *err);
/* The longest line read (a row of sacct -p is a few hundred bytes): memory stays bounded on
 * any input, /dev/zero included. */
#define FG_SACCT_LINE_MAX (1u << 20)

/*
 * The same read from a stream, line by line (never the whole text in memory): the jobs
 * are joined through a hash index of their ids, O(rows) whatever their order.  A NUL
 * byte fails FG_E_PARSE, a line longer than FG_SACCT_LINE_MAX FG_E_RANGE (naming the
 * line; nothing more is read), a read error FG_E_IO.  fg_sacct_parse reads its text this
 * way.
 */
int fg_sacct_read(FILE *in, struct fg_sacct **out, struct fg_err *err);
void fg_sacct_free(struct fg_sacct *s);

/* The job with that id, or NULL; borrowed from s. */
const struct fg_sacct_job *fg_sacct_find(const struct fg_sacct *s, uint64_t job_id);

/*
 * The value of one TRES ("gres/gpumem") in a TRES list ("cpu=00:00:11,gres/gpumem=36266M")
 * copied into buf: true when present.
 */
bool fg_sacct_tres(const char *list, const char *name, char *buf, size_t cap);

/* A size as convert_num_unit prints it ("36266M", "1.50G", "4096", "0") -> bytes. */
int fg_sacct_size(const char *s, uint64_t *out);

#endif
