/*
 * learnrec.c - compact audit records for fitgate learn: see learnrec.h.
 * Strings live in 1 MiB arena blocks; the distinct ones are found through an
 * open-addressing hash table (FNV-1a, at most half full).
 */
#include <stdlib.h>
#include <string.h>

#include "learnrec.h"

#define BLOCK (1u << 20)

struct block {
    struct block *next;
    size_t used;
    char text[];
};

struct fg_cli__pool {
    struct block *blocks;
    const char **slot;
    size_t n_slots, n;
};

static char *arena_copy(struct fg_cli__pool *p, const char *s, size_t len)
{
    struct block *b = p->blocks;
    size_t need = len + 1, size = need > BLOCK ? need : BLOCK;
    if (!b || b->used + need > BLOCK) {
        b = malloc(sizeof *b + size);
        if (!b)
            return NULL;
        b->next = p->blocks;
        b->used = 0;
        p->blocks = b;
    }
    char *c = b->text + b->used;
    memcpy(c, s, len);
    c[len] = '\0';
    b->used += need;
    return c;
}

static size_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return (size_t)h;
}

static int grow(struct fg_cli__pool *p)
{
    size_t n = p->n_slots ? p->n_slots * 2 : 256;
    const char **t = calloc(n, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < p->n_slots; i++) {
        if (!p->slot[i])
            continue;
        size_t k = hash(p->slot[i]) & (n - 1);
        while (t[k])
            k = (k + 1) & (n - 1);
        t[k] = p->slot[i];
    }
    free(p->slot);
    p->slot = t;
    p->n_slots = n;
    return 0;
}

const char *fg_cli_lrecs_intern(struct fg_cli_lrecs *set, const char *s)
{
    if (!set->pool && !(set->pool = calloc(1, sizeof *set->pool)))
        return NULL;
    struct fg_cli__pool *p = set->pool;
    if (2 * (p->n + 1) > p->n_slots && grow(p))
        return NULL;
    size_t k = hash(s) & (p->n_slots - 1);
    for (; p->slot[k]; k = (k + 1) & (p->n_slots - 1))
        if (!strcmp(p->slot[k], s))
            return p->slot[k];
    char *c = arena_copy(p, s, strlen(s));
    if (!c)
        return NULL;
    p->slot[k] = c;
    p->n++;
    return c;
}

int fg_cli_lrecs_add(struct fg_cli_lrecs *set, const struct fg_audit_rec *rec)
{
    if (set->n == set->cap) {
        size_t nc = set->cap ? set->cap * 2 : 256;
        struct fg_cli_lrec *v = realloc(set->v, nc * sizeof *v);
        if (!v)
            return -1;
        set->v = v;
        set->cap = nc;
    }
    if (!set->pool && !fg_cli_lrecs_intern(set, ""))
        return -1;
    struct fg_cli_lrec *r = &set->v[set->n];
    *r = (struct fg_cli_lrec){
        .job_id = rec->job_id, .estimate_bytes = rec->estimate_bytes,
        .per_gpu_bytes = rec->per_gpu_bytes, .usable_bytes = rec->usable_bytes,
        .gpu_peak_bytes = rec->gpu_peak_bytes, .gpus_after = rec->gpus_after,
        .calibration_milli = rec->calibration_milli, .uid = rec->uid, .verdict = rec->verdict,
        .where = rec->where,
    };
    r->submit_id = arena_copy(set->pool, rec->submit_id, strlen(rec->submit_id));
    r->user = fg_cli_lrecs_intern(set, rec->user);
    r->partition = fg_cli_lrecs_intern(set, rec->partition);
    r->model = fg_cli_lrecs_intern(set, rec->model);
    r->model_type = fg_cli_lrecs_intern(set, rec->model_type);
    r->framework = fg_cli_lrecs_intern(set, rec->framework);
    r->mode = fg_cli_lrecs_intern(set, rec->mode);
    if (!r->submit_id || !r->user || !r->partition || !r->model || !r->model_type ||
        !r->framework || !r->mode)
        return -1;
    set->n++;
    return 0;
}

void fg_cli_lrecs_free(struct fg_cli_lrecs *set)
{
    if (!set->pool) {
        free(set->v);
        return;
    }
    for (struct block *b = set->pool->blocks, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    free(set->pool->slot);
    free(set->pool);
    free(set->v);
    set->v = NULL;
    set->pool = NULL;
    set->n = set->cap = 0;
}
