/*
 * st_layout.c - a checkpoint's tensors, one row per name pattern, dtype and shape
 * (st_layout.h).
 */
#include "source/st_layout.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source/st_dtype.h"

/* dtype names from st_dtype.h's table (safetensors.c calls this module, so this one
 * includes and links nothing of it) */
static const char *const dtype_names[] = {
#define DT_NAME(name, bits) #name,
    FG_ST_DTYPE_MAP(DT_NAME)
#undef DT_NAME
};

static const char *dtype_name(unsigned d)
{
    return d < sizeof dtype_names / sizeof dtype_names[0] ? dtype_names[d] : NULL;
}

void fg_st_layout_init(struct fg_st_layout *l)
{
    memset(l, 0, sizeof *l);
}

void fg_st_layout_free(struct fg_st_layout *l)
{
    if (!l)
        return;
    free(l->rows);
    free(l->slot);
    fg_st_layout_init(l);
}

void fg_st_layout_move(struct fg_st_layout *dst, struct fg_st_layout *src)
{
    if (dst == src)
        return;
    fg_st_layout_free(dst);
    *dst = *src;
    fg_st_layout_init(src);
}

bool fg_st_layout_pattern(const char *name, char *out, size_t cap)
{
    size_t o = 0;
    bool first = true, cut = false;
    for (const char *p = name; *p && !cut;) {
        /* a number is a dot-separated component of digits only */
        bool at_start = p == name || p[-1] == '.';
        size_t d = 0;
        while (isdigit((unsigned char)p[d]))
            d++;
        if (at_start && d && (p[d] == '.' || !p[d])) {
            if (first) {
                cut = o + d >= cap;
                if (!cut)
                    memcpy(out + o, p, d), o += d;
                first = false;
            } else {
                cut = o + 1 >= cap;
                if (!cut)
                    out[o++] = '*';
            }
            p += d;
            continue;
        }
        cut = o + 1 >= cap;
        if (!cut)
            out[o++] = *p++;
    }
    if (cap)
        out[o < cap ? o : cap - 1] = '\0';
    return !cut;
}

static uint64_t hash_row(const char *name, int dtype, const uint64_t *shape, size_t ndim)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const char *p = name; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    h = (h ^ (uint64_t)dtype) * 1099511628211ull;
    for (size_t i = 0; i < ndim; i++)
        h = (h ^ shape[i]) * 1099511628211ull;
    return h;
}

static bool same_row(const struct fg_st_row *r, const char *name, int dtype,
                     const uint64_t *shape, size_t ndim)
{
    return r->dtype == dtype && r->ndim == ndim && !strcmp(r->name, name) &&
           !memcmp(r->shape, shape, ndim * sizeof *shape);
}

/* Grow the index to twice the rows and put every row back. */
static bool rehash(struct fg_st_layout *l)
{
    size_t n = l->nslot ? l->nslot * 2 : 256;
    size_t *s = calloc(n, sizeof *s);
    if (!s)
        return false;
    for (size_t i = 0; i < l->n; i++) {
        const struct fg_st_row *r = &l->rows[i];
        size_t k = hash_row(r->name, r->dtype, r->shape, r->ndim) & (n - 1);
        while (s[k])
            k = (k + 1) & (n - 1);
        s[k] = i + 1;
    }
    free(l->slot);
    l->slot = s;
    l->nslot = n;
    return true;
}

/* Add n tensors of one name, dtype and shape. */
static int add_n(struct fg_st_layout *l, const char *name, int dtype, const uint64_t *shape,
                 size_t ndim, uint64_t n, struct fg_err *err)
{
    char pat[FG_ST_ROW_NAME];
    uint64_t sh[FG_ST_ROW_DIMS] = {0};
    bool whole = fg_st_layout_pattern(name, pat, sizeof pat);
    size_t nd = ndim < FG_ST_ROW_DIMS ? ndim : FG_ST_ROW_DIMS;
    for (size_t i = 0; i < ndim; i++) {
        if (i < FG_ST_ROW_DIMS)
            sh[i] = shape[i];
        else
            sh[FG_ST_ROW_DIMS - 1] *= shape[i];
    }
    l->tensors += n;
    if (l->overflow)
        return 0;
    if ((l->n + 1) * 2 > l->nslot && !rehash(l))
        return fg_err_set(err, FG_E_NOMEM, "out of memory for the checkpoint's tensor list");
    size_t k = hash_row(pat, dtype, sh, nd) & (l->nslot - 1);
    for (; l->slot[k]; k = (k + 1) & (l->nslot - 1)) {
        struct fg_st_row *r = &l->rows[l->slot[k] - 1];
        if (same_row(r, pat, dtype, sh, nd)) {
            r->count += n;
            return 0;
        }
    }
    if (l->n >= FG_ST_LAYOUT_MAX_ROWS) {
        uint64_t t = l->tensors;
        fg_st_layout_free(l);
        l->tensors = t;
        l->overflow = true;
        return 0;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        struct fg_st_row *rows = realloc(l->rows, cap * sizeof *rows);
        if (!rows)
            return fg_err_set(err, FG_E_NOMEM, "out of memory for the checkpoint's tensor list");
        l->rows = rows;
        l->cap = cap;
    }
    struct fg_st_row *r = &l->rows[l->n];
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", pat);
    r->dtype = (uint8_t)dtype;
    r->ndim = (uint8_t)nd;
    r->long_name = !whole;
    memcpy(r->shape, sh, sizeof sh);
    r->count = n;
    l->slot[k] = ++l->n;
    return 0;
}

int fg_st_layout_add(struct fg_st_layout *l, const char *name, int dtype, const uint64_t *shape,
                     size_t ndim, struct fg_err *err)
{
    return add_n(l, name, dtype, shape, ndim, 1, err);
}

uint64_t fg_st_row_numel(const struct fg_st_row *r)
{
    uint64_t e = 1;
    for (unsigned i = 0; i < r->ndim; i++)
        e *= r->shape[i];
    return e;
}

uint64_t fg_st_layout_elements(const struct fg_st_layout *l)
{
    uint64_t t = 0;
    for (size_t i = 0; i < l->n; i++)
        t += fg_st_row_numel(&l->rows[i]) * l->rows[i].count;
    return t;
}

/* A count as an exact integer (cJSON would print a double with 15 digits). */
static cJSON *num(uint64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    return cJSON_CreateRaw(buf);
}

cJSON *fg_st_layout_to_cjson(const struct fg_st_layout *l)
{
    cJSON *a = cJSON_CreateArray();
    bool ok = a != NULL;
    for (size_t i = 0; ok && i < l->n; i++) {
        const struct fg_st_row *r = &l->rows[i];
        cJSON *row = cJSON_CreateArray(), *sh = cJSON_CreateArray();
        ok = row && sh && cJSON_AddItemToArray(a, row);
        if (!ok) {
            cJSON_Delete(row);
            cJSON_Delete(sh);
            break;
        }
        const char *dt = dtype_name(r->dtype);
        ok = cJSON_AddItemToArray(row, cJSON_CreateString(r->name)) &&
             cJSON_AddItemToArray(row, cJSON_CreateString(dt ? dt : "?")) &&
             cJSON_AddItemToArray(row, sh);
        for (unsigned d = 0; ok && d < r->ndim; d++)
            ok = cJSON_AddItemToArray(sh, num(r->shape[d]));
        ok = ok && cJSON_AddItemToArray(row, num(r->count));
    }
    if (!ok) {
        cJSON_Delete(a);
        return NULL;
    }
    return a;
}

/* A whole number in [1, 2^53] (0 for an empty dimension), else false. */
static bool whole(const cJSON *v, bool zero_ok, uint64_t *out)
{
    double d = cJSON_IsNumber(v) ? v->valuedouble : -1;
    if (!(d >= (zero_ok ? 0 : 1)) || d > 9007199254740992.0 || floor(d) != d)
        return false;
    *out = (uint64_t)d;
    return true;
}

static int dtype_named(const char *s)
{
    for (unsigned d = 0; d < FG_ST_DTYPE_COUNT; d++)
        if (!strcmp(dtype_name(d), s))
            return (int)d;
    return -1;
}

int fg_st_layout_from_cjson(const cJSON *a, const char *origin, struct fg_st_layout *l,
                            struct fg_err *err)
{
    fg_st_layout_free(l);
    const cJSON *row;
    int rc = cJSON_IsArray(a) ? 0 : FG_E_PARSE;
    cJSON_ArrayForEach(row, a) {
        const cJSON *nm = cJSON_GetArrayItem(row, 0), *dt = cJSON_GetArrayItem(row, 1);
        const cJSON *sh = cJSON_GetArrayItem(row, 2), *ct = cJSON_GetArrayItem(row, 3), *d;
        uint64_t shape[FG_ST_ROW_DIMS], count = 0;
        size_t nd = 0;
        int dtype = cJSON_IsString(dt) ? dtype_named(dt->valuestring) : -1;
        if (rc || !cJSON_IsArray(row) || cJSON_GetArraySize(row) != 4 || !cJSON_IsString(nm) ||
            dtype < 0 || !cJSON_IsArray(sh) || cJSON_GetArraySize(sh) > FG_ST_ROW_DIMS ||
            !whole(ct, false, &count)) {
            rc = FG_E_PARSE;
            break;
        }
        cJSON_ArrayForEach(d, sh) {
            if (!whole(d, true, &shape[nd++]))
                rc = FG_E_PARSE;
        }
        if (!rc) /* the row's name is a pattern already, which its pattern keeps */
            rc = add_n(l, nm->valuestring, dtype, shape, nd, count, err);
    }
    if (rc == FG_E_PARSE)
        rc = fg_err_set(err, FG_E_PARSE, "%.300s: a tensor row that is not [name, dtype, "
                        "[shape], count]", origin);
    if (rc)
        fg_st_layout_free(l);
    return rc;
}
