/*
 * gpu.h - the GPU table: one row per card (PCI ids, memory, dense BF16
 * TFLOP/s, bandwidth, interconnect, the gres type names sites use).
 *
 * The rows live in conf/gpus.conf, one Slurm-style Key=Value line per card
 * (the file's header documents the keys).  That file is compiled in at build
 * time; a site file in the same format adds rows or replaces rows by Name.
 *
 * Errors follow error.h: int functions return 0 or a negative FG_E_* code and
 * fill err; a malformed row is FG_E_PARSE (or FG_E_RANGE for a number out of
 * bounds) with a detail "FILE:LINE: what, and what to write instead".
 *
 * Ownership:
 *   - fg_gpu_table_builtin() returns a table that belongs to the library:
 *     static data made at build time, never freed (fg_gpu_table_free
 *     ignores it).  Safe to call from several threads.
 *   - fg_gpu_table_load() returns a table the caller frees with
 *     fg_gpu_table_free().
 *   - struct fg_gpu pointers returned by lookups are borrowed from their
 *     table and valid until that table is freed (builtin: forever).
 * Lookups never allocate and never fail loudly: NULL means "no such card".
 */
#ifndef FG_GPU_H
#define FG_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* One table row. */
struct fg_gpu {
    char name[64];          /* "NVIDIA H100 SXM5 80GB"; unique within a table */
    char label[24];         /* short label for tables: "H100 80 GB", "T4 16 GB" */
    uint16_t vendor;        /* PCI vendor id */
    uint16_t devices[8];    /* PCI device ids */
    size_t n_devices;
    uint64_t memory_bytes;  /* driver-reported total where known, else memory_gb * 1e9 */
    uint32_t memory_gb;     /* marketed GB (per GCD for multi-GCD cards, see gcds) */
    double bf16_tflops;     /* dense bf16; 0 when the card has none (then see fp16_tflops) */
    double fp16_tflops;     /* dense fp16 tensor; equals bf16_tflops unless the file gives it */
    double bw_tbps;         /* memory bandwidth, TB/s */
    double link_gbps;       /* GPU-to-GPU, GB/s bidirectional per GPU */
    char interconnect[48];  /* free text, "" when not given */
    char aliases[256];      /* comma list, lower case: "h100,h100_80g,nvidia_h100_80gb_hbm3" */
    unsigned gcds;          /* schedulable devices per physical card (MI250X: 2); the
                               row's figures are per schedulable device */
};

struct fg_gpu_table;

/*
 * The compiled-in table: conf/gpus.conf read at build time by the same reader
 * as a site file (tools/gen_gpus.c), so nothing is parsed or allocated at run
 * time.  Borrowed, never freed, never NULL.
 */
const struct fg_gpu_table *fg_gpu_table_builtin(void);

/*
 * The built-in rows plus the site file at path: a site row whose Name equals
 * a built-in row replaces it in place, other site rows are appended; site
 * rows are looked up first.  path NULL gives a private copy of the built-in
 * table.  Fails with FG_E_NOTFOUND / FG_E_IO (file), FG_E_PARSE / FG_E_RANGE
 * (row; detail names path:line), FG_E_NOMEM.  *out is set only on success;
 * the caller frees it with fg_gpu_table_free().
 */
int fg_gpu_table_load(const char *path, struct fg_gpu_table **out, struct fg_err *err);

/* fg_gpu_table_load of the site's file (the policy's GpuTable=): also refused, FG_E_DENIED,
 * when another user owns it or its group or all may write it (fileio.h fg__site_file_check). */
int fg_gpu_table_load_site(const char *path, struct fg_gpu_table **out, struct fg_err *err);

/* Same, with the site rows given as text; origin names it in messages (copied). */
int fg_gpu_table_load_text(const char *text, const char *origin, struct fg_gpu_table **out,
                           struct fg_err *err);

/* NULL-safe; does nothing for the built-in table. */
void fg_gpu_table_free(struct fg_gpu_table *t);

/* Number of rows (0 for NULL). */
size_t fg_gpu_table_count(const struct fg_gpu_table *t);

/* Row i in file order (built-in rows first, then added site rows); NULL when out of range. */
const struct fg_gpu *fg_gpu_table_at(const struct fg_gpu_table *t, size_t i);

/* True when row i came from a site file (added or replacing a built-in row). */
int fg_gpu_table_is_site_row(const struct fg_gpu_table *t, size_t i);

/* Whether any row has this PCI vendor id (detection keeps such devices). */
int fg_gpu_table_has_vendor(const struct fg_gpu_table *t, uint16_t vendor);

/*
 * A card by name, label or gres alias.  Accepts "h100", "H200", "A100-80GB",
 * "NVIDIA H100 SXM5 80GB", "Tesla T4", "h100:4" (--gpus), "gpu:h100", "gpu:h100:4",
 * "gres:gpu:a100_80g:2", "gres/gpu:h100=2", "gpu:h100:4(S:0-1)", and a
 * comma list of gres ("gpu:h100:2,mps:100": the gpu entry is used).
 * Matching ignores case, blanks, '-' and '_', reads "80gb" as "80g", and
 * retries without a leading vendor word (NVIDIA, Tesla, GeForce, AMD,
 * Instinct, Intel, Habana).  A name shared by several rows gives the first
 * one, site rows before built-in rows.
 *
 * count (may be NULL) receives the GPU count the spec carries, 0 when it has
 * none.  With the gpu prefix the count is reported even for an unknown type
 * ("gpu:foo:4": NULL and 4); "x:N" without it counts only when x is a card
 * (so "mps:100" is NULL and 0, not 100 GPUs).  Returns NULL when spec names
 * no row, when it is malformed (a count that is not a whole number in
 * 1..65535, too many ':' fields), or when it is a bare count ("gpu:4":
 * *count is still 4).  t NULL means the built-in table.
 * Cost: no allocation; one pass over a few hundred pre-normalized keys.
 */
const struct fg_gpu *fg_gpu_find(const struct fg_gpu_table *t, const char *spec, unsigned *count);

/* The row holding this PCI vendor:device pair (site rows first); NULL when none.
 * t NULL means the built-in table. */
const struct fg_gpu *fg_gpu_find_pci(const struct fg_gpu_table *t, uint16_t vendor,
                                     uint16_t device);

/* The matmul rate a planner should use: bf16_tflops, else fp16_tflops. */
double fg_gpu_tflops(const struct fg_gpu *g);

#endif
