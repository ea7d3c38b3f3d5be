/*
 * st_layout.h - every tensor a checkpoint's safetensors headers name, kept compact enough to
 * cache: one row per (name pattern, dtype, shape).  A name keeps its first number (the block
 * index: "model.layers.12.self_attn.q_proj.weight") and has every later number replaced by
 * '*' ("model.layers.3.mlp.experts.*.down_proj.weight"), so per-expert tensors fold into one
 * row whose count is the number of experts.  DeepSeek-V3's 91,991 tensors fold into about
 * 3,000 rows.  arch/arch_tensors.c builds a model's structure from it for a model_type no
 * family reader knows.
 *
 * Ownership: a layout is caller-owned (fg_st_layout_init / fg_st_layout_free); rows and
 * their names belong to it.  Error contract: see error.h.
 */
#ifndef FG_ST_LAYOUT_H
#define FG_ST_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

struct cJSON;

#define FG_ST_ROW_NAME 192   /* a longer name is cut and its row marked (long_name) */
#define FG_ST_ROW_DIMS 4     /* a fifth dimension and on fold into the fourth */
#define FG_ST_LAYOUT_MAX_ROWS 200000u /* past it the layout is dropped (overflow) */

struct fg_st_row {
    char name[FG_ST_ROW_NAME];
    uint8_t dtype;          /* enum fg_st_dtype */
    uint8_t ndim;
    bool long_name;
    uint64_t shape[FG_ST_ROW_DIMS];
    uint64_t count;         /* tensors the row stands for */
};

struct fg_st_layout {
    struct fg_st_row *rows;
    size_t n, cap;
    size_t *slot;           /* open-addressing index of rows (n + 1, 0 empty) */
    size_t nslot;
    uint64_t tensors;       /* tensors added */
    bool overflow;          /* more than FG_ST_LAYOUT_MAX_ROWS rows: rows dropped */
};

void fg_st_layout_init(struct fg_st_layout *l);
void fg_st_layout_free(struct fg_st_layout *l);

/* dst takes src's rows (dst's are freed); src is left empty. */
void fg_st_layout_move(struct fg_st_layout *dst, struct fg_st_layout *src);

/* The pattern of a tensor name: its first number kept, later ones '*'.  false when cut. */
bool fg_st_layout_pattern(const char *name, char *out, size_t cap);

/* Add one tensor (dtype an enum fg_st_dtype, ndim dims); FG_E_NOMEM.  Past
 * FG_ST_LAYOUT_MAX_ROWS rows the layout is marked overflow and emptied (0). */
int fg_st_layout_add(struct fg_st_layout *l, const char *name, int dtype, const uint64_t *shape,
                     size_t ndim, struct fg_err *err);

/* Elements of one tensor of row r (the product of its shape). */
uint64_t fg_st_row_numel(const struct fg_st_row *r);

/* Elements over every row (tensors x shape products). */
uint64_t fg_st_layout_elements(const struct fg_st_layout *l);

/* The layout as a JSON array of [name, dtype, [shape], count] (NULL when out of memory). */
struct cJSON *fg_st_layout_to_cjson(const struct fg_st_layout *l);

/* Read such an array into l (emptied first); FG_E_PARSE naming origin when a row is not
 * one fg_st_layout_to_cjson writes. */
int fg_st_layout_from_cjson(const struct cJSON *a, const char *origin, struct fg_st_layout *l,
                            struct fg_err *err);

#endif
