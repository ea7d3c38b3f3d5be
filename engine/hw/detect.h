/*
 * detect.h - the GPUs of a node, seen through hwloc, matched to the GPU table.
 *
 * A GPU is a PCI device of class 0x03xx (display) or 0x12xx (processing
 * accelerator) from a GPU vendor (NVIDIA, AMD, Habana, Intel except its VGA
 * parts) or from a vendor that has a table row; BMC VGA chips (ASPEED, Matrox)
 * are dropped.  Each is matched to a table row by PCI vendor:device, never by
 * hwloc's name strings (they come from the exporting machine's pci.ids, which
 * is stale; see docs/design.md).  Memory comes from an hwloc OS-device
 * attribute when there is one (CUDA, RSMI, LevelZero, OpenCL), else from the
 * table row.  MI250/MI250X GCDs are separate PCI functions and count one
 * each; an MI300A in CPX mode shows several rsmi devices under one PCI
 * device and counts one per partition.
 *
 * Zero GPUs is a valid answer, not an error.  A GPU whose PCI id has no row
 * is returned with known = false and a message giving the id and the row to
 * add; the other GPUs are still returned.
 *
 * The engine never reads the environment: the front end passes the job's
 * device lists (SLURM_STEP_GPUS or SLURM_JOB_GPUS, CUDA_VISIBLE_DEVICES,
 * ROCR_VISIBLE_DEVICES) in struct fg_detect_opts.
 *
 * Errors follow error.h.  fg_detect_gpus fails with FG_E_NOTFOUND / FG_E_IO
 * (the XML file), FG_E_PARSE (hwloc cannot load it, or a malformed device
 * list), FG_E_RANGE (a device list names a GPU the node does not have),
 * FG_E_UNSUPPORTED (a MIG instance in a device list, an hwloc library of
 * another major version than the one built against, or libhwloc.so.15 that
 * cannot be loaded: it is dlopen'ed on the first call, not linked; the detail
 * names the package to install), FG_E_NOMEM.
 *
 * Ownership: the result belongs to the caller, who frees it with
 * fg_detect_result_free().  Each gpu's `row` is borrowed from the table given
 * in the options (the built-in table when NULL) and valid while that table is.
 */
#ifndef FG_DETECT_H
#define FG_DETECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "hw/gpu.h"

/* opts.flags */
enum {
    /* Let hwloc run its OpenCL and GL components on a live load.  Off by
     * default: inside a job step those would initialise the vendor drivers
     * (an OpenCL ICD creates a context per device; GL talks to an X server)
     * in slurmstepd, which is slow and can hang; see docs/design.md. */
    FG_DETECT_ALLOW_DRIVER_COMPONENTS = 1u << 0,
};

struct fg_detect_opts {
    /* An hwloc XML topology (v1 or v2 format) to read instead of this
     * machine; borrowed.  NULL: discover this machine. */
    const char *xml_path;
    /* Node-wide GPU list of the job or step: indices in node order (the
     * `index` field below, which is Slurm's gres order when the node's
     * gres.conf comes from AutoDetect), "a-b" ranges, or UUIDs.  Pass
     * SLURM_STEP_GPUS inside a step, else SLURM_JOB_GPUS.  When set, the
     * vendor lists below are ignored: under ConstrainDevices Slurm numbers
     * CUDA_VISIBLE_DEVICES inside the job's device cgroup, so only this list
     * maps onto the PCI devices hwloc sees.  NULL: no restriction; "" or
     * "NoDevFiles": no GPU.  Borrowed. */
    const char *visible;
    const char *visible_name;  /* where visible came from, for messages; NULL: "visible" */
    /* CUDA_VISIBLE_DEVICES: indices among the node's NVIDIA GPUs (runtime
     * order) or GPU-UUIDs; restricts NVIDIA GPUs only.  Borrowed, may be NULL. */
    const char *cuda_visible;
    /* ROCR_VISIBLE_DEVICES: the same for AMD GPUs.  Borrowed, may be NULL. */
    const char *rocr_visible;
    /* The table to match against; borrowed; NULL: fg_gpu_table_builtin(). */
    const struct fg_gpu_table *table;
    unsigned flags;            /* FG_DETECT_* */
};

struct fg_detected_gpu {
    unsigned index;          /* node order: by runtime index, then PCI address */
    unsigned runtime_index;  /* CUDA/NVML, ROCr/RSMI or LevelZero index among GPUs of its
                                vendor (from hwloc's osdev names, else PCI bus order) */
    char busid[20];          /* PCI address "0000:5f:00.0" (domains above ffff print wider) */
    uint16_t vendor, device;
    uint16_t subvendor, subdevice;
    uint16_t class_id;       /* PCI class, 0x0302 */
    const struct fg_gpu *row;  /* table row; NULL when the PCI id has none */
    bool known;              /* row != NULL */
    uint64_t memory_bytes;   /* 0 only for an unknown GPU without a memory attribute */
    char memory_source[16];  /* "CUDA", "RSMI", "LevelZero", "OpenCL", "table" or "none" */
    unsigned partition;      /* 0-based partition of its PCI device (MI300A CPX) */
    unsigned partitions;     /* partitions of its PCI device; 1 normally */
    char model[64];          /* hwloc's GPUModel, else the row's name, else "" */
    char osdevs[64];         /* hwloc OS devices under it: "cuda1,nvml1" */
    char uuid[48];           /* NVIDIAUUID / AMDUUID when hwloc has one, else "" */
    char cpuset[256];        /* CPUs near it: cpuset of the non-I/O ancestor, list format
                                "14-27,126-139"; "" when unknown */
    char numa[64];           /* NUMA nodes near it, list format; "" when unknown */
    char message[640];       /* for people: an unknown id and the row to add, or how the
                                memory of a partition was derived; "" when none */
};

struct fg_detect_result {
    size_t n;                      /* GPUs returned (after restriction) */
    struct fg_detected_gpu *gpus;  /* n entries in node order; owned by the result */
    size_t n_on_node;              /* GPUs on the node before restriction */
    size_t n_unknown;              /* of the n returned, those with known == false */
    char restricted_by[64];        /* name of the list that restricted the set, or "" */
    char topology[256];            /* the XML path, or "this machine" */
    bool this_system;              /* hwloc says the topology is this machine's (false for XML,
                                      or when HWLOC_XMLFILE / HWLOC_SYNTHETIC override it) */
    char blacklisted[32];          /* hwloc components excluded: "opencl,gl" or "" */
};

/*
 * Detect the GPUs.  o may be NULL (this machine, no restriction, built-in
 * table).  On success *out holds a result (possibly with n == 0); the caller
 * frees it with fg_detect_result_free().  On failure *out is untouched.
 */
int fg_detect_gpus(const struct fg_detect_opts *o, struct fg_detect_result **out,
                   struct fg_err *err);

/* NULL-safe. */
void fg_detect_result_free(struct fg_detect_result *r);

#endif
