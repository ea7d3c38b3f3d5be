/*
 * gpu_table.h - internal to engine/hw/gpu.c (the reader), engine/hw/gpu_find.c (the
 * lookups) and the build-time generator (tools/gen_gpus.c); never installed.
 * It includes no gpu.h (a row is struct fg_gpu there): gpu.c and gpu_find.c
 * depend on it, not it on them.
 *
 * The built-in table is conf/gpus.conf parsed at build time: tools/gen_gpus.c
 * runs gpu.c's own reader over the file and writes the resulting table (rows,
 * normalized lookup keys, PCI index) as C data, build/gen/gpus_table.c.  So
 * the shipped rows and a site file still go through one reader, but no
 * process parses the shipped text: that parse was 0.71 M instructions in
 * every tagged sbatch and every CLI run (callgrind, bench/RESULTS.md 3).
 */
#ifndef FG_GPU_TABLE_H
#define FG_GPU_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

struct fg_gpu;

struct fg__gpu_key {
    char *norm;     /* normalized lookup key; owned by the table (built-in: static) */
    uint32_t row;
};

struct fg_gpu_table {
    struct fg_gpu *rows;
    unsigned char *site;            /* per row: 1 when it came from a site file */
    size_t n;
    struct fg__gpu_key *keys;       /* lookup order: site rows first, then file order */
    size_t n_keys;
    uint32_t *pci;                  /* (vendor << 16 | device) per entry of pci_row, same order */
    uint32_t *pci_row;
    size_t n_pci;
    bool builtin;                   /* static data: fg_gpu_table_free ignores it */
};

/* The built-in table (build/gen/gpus_table.c); never written to. */
extern const struct fg_gpu_table fg__gpu_builtin;

/*
 * The rows of text alone (no built-in rows, none marked as site rows), indexed
 * as fg_gpu_table_load_text would; errors name origin:line.  The caller frees
 * *out with fg_gpu_table_free().  For the generator and the test that checks
 * the generated table against the file.
 */
int fg__gpu_table_parse(const char *text, const char *origin, struct fg_gpu_table **out,
                        struct fg_err *err);

/*
 * Shared by the reader and the lookups.  fg__gpu_norm: s (len bytes) as a lookup key,
 * lower-case letters and digits only and "<digit>gb" read as "<digit>g", so "A100-80GB",
 * "a100_80g" and "A100 80 GB" meet; returns the length, or (size_t)-1 when out (cap bytes,
 * at most FG__GPU_NORM_MAX needed) is too small.  fg__gpu_strip_vendor: a key without its
 * leading vendor words (points into k).  fg__gpu_read_u64: a whole decimal number of s in
 * min..max, false otherwise.
 */
#define FG__GPU_NORM_MAX 256
size_t fg__gpu_norm(const char *s, size_t len, char *out, size_t cap);
const char *fg__gpu_strip_vendor(const char *k);
bool fg__gpu_read_u64(const char *s, size_t len, uint64_t min, uint64_t max, uint64_t *out);

#endif
