/*
 * visible.h - internal to the engine: the device lists that restrict the GPUs a job sees,
 * applied to the GPUs detect.c found on the node.  The lists and their rules are
 * struct fg_detect_opts's (detect.h): the node-wide list (SLURM_STEP_GPUS or
 * SLURM_JOB_GPUS) in node order, which replaces the vendor lists when set; else
 * CUDA_VISIBLE_DEVICES over the NVIDIA GPUs and ROCR_VISIBLE_DEVICES over the AMD GPUs, in
 * runtime order; each a comma list of indices, a-b ranges or GPU-UUIDs; "" or NoDevFiles
 * keep no GPU.
 *
 * Ownership: everything is borrowed for the call.
 * Error contract: see error.h.  FG_E_PARSE (a malformed list), FG_E_RANGE (a list names a
 * GPU the node does not have, or a UUID prefix that matches several), FG_E_UNSUPPORTED (a
 * MIG instance), FG_E_NOMEM.
 */
#ifndef FG_VISIBLE_H
#define FG_VISIBLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* What a list can name of one GPU. */
struct fg__visible_gpu {
    uint16_t vendor;           /* PCI vendor: 0x10de NVIDIA, 0x1002 AMD */
    unsigned index;            /* node order (the node-wide list) */
    unsigned runtime_index;    /* among the GPUs of its vendor (the vendor lists) */
    const char *uuid;          /* "" when unknown */
};

/* The lists; NULL where unset.  visible_name names the node-wide one in messages (NULL:
 * "visible"). */
struct fg__visible_lists {
    const char *visible, *visible_name, *cuda, *rocr;
};

/*
 * keep[i] for each of the n GPUs v: whether the lists keep it (all true when no list is
 * set).  restricted_by (cap bytes, "" on entry) gets the names of the lists that applied.
 */
int fg__visible_keep(const struct fg__visible_lists *l, const struct fg__visible_gpu *v,
                     size_t n, bool *keep, char *restricted_by, size_t cap, struct fg_err *err);

#endif
