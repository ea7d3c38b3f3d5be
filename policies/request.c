/*
 * request.c - Slurm's GPU request spellings and the card a request is judged on
 * (request.h).  Moved here from gate.c and decide.c so that the CLI, the plugin and the Lua
 * filters (through the CLI) read a request one way.
 */
#include "request.h"

#include <stdio.h>
#include <string.h>

void fg_request_init(struct fg_request *q)
{
    memset(q, 0, sizeof *q);
    q->nodes = 1;
}

uint32_t fg_request_total(const struct fg_request *q)
{
    if (q->via == FG_VIA_NONE)
        return 0;
    if (q->via == FG_VIA_GPUS)
        return q->count;
    uint64_t t = (uint64_t)q->count * (q->nodes ? q->nodes : 1);
    return t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
}

uint32_t fg_request_per_node(const struct fg_request *q)
{
    uint32_t n = q->nodes ? q->nodes : 1;
    if (q->via == FG_VIA_NONE)
        return 0;
    return q->via == FG_VIA_GPUS ? (q->count + n - 1) / n : q->count;
}

/* The gres type to suggest: the job's own spelling, else the card's first alias. */
static void type_of(const struct fg_request *q, char *buf, size_t cap)
{
    if (q->type[0]) {
        snprintf(buf, cap, "%s", q->type);
    } else if (q->gpu && q->gpu->aliases[0]) {
        size_t n = strcspn(q->gpu->aliases, ",");
        snprintf(buf, cap, "%.*s", (int)n, q->gpu->aliases);
    } else {
        snprintf(buf, cap, "TYPE");
    }
}

void fg_request_spell(const struct fg_request *q, uint32_t count, uint32_t nodes, char *buf,
                      size_t cap)
{
    char type[40], nn[32] = "", t[44] = "";
    type_of(q, type, sizeof type);
    if (nodes > 1)
        snprintf(nn, sizeof nn, "--nodes=%u ", nodes);
    if (q->type[0])
        snprintf(t, sizeof t, "%s:", q->type);
    switch (q->via) {
    case FG_VIA_GRES:
        snprintf(buf, cap, "%s--gres=gpu:%s%u", nn, t, count);
        break;
    case FG_VIA_GPUS:
        snprintf(buf, cap, "%s--gpus=%s%u", nn, t, count);
        break;
    case FG_VIA_GPUS_PER_NODE:
        snprintf(buf, cap, "%s--gpus-per-node=%s%u", nn, t, count);
        break;
    default:
        snprintf(buf, cap, "%s--gres=gpu:%s:%u", nn, type, count);
        break;
    }
}

void fg_request_describe(const struct fg_request *q, char *buf, size_t cap)
{
    char s[128];
    uint32_t nodes = q->nodes ? q->nodes : 1, total = fg_request_total(q);
    if (q->via == FG_VIA_NONE) {
        snprintf(buf, cap, "no GPU");
        return;
    }
    fg_request_spell(q, q->count, nodes, s, sizeof s);
    if (q->via == FG_VIA_GPUS && nodes > 1)
        snprintf(buf, cap, "%s: %u GPU%s in all (--gpus counts the job's GPUs; "
                           "--gpus-per-node and --gres count each node's)",
                 s, total, total == 1 ? "" : "s");
    else if (nodes > 1)
        snprintf(buf, cap, "%s: %u GPUs in all (%u per node x %u nodes)", s, total, q->count,
                 nodes);
    else
        snprintf(buf, cap, "%s: %u GPU%s", s, total, total == 1 ? "" : "s");
}

bool fg_gpu_count_parse(const char *s, size_t n, uint32_t *out)
{
    uint64_t v = 0;
    if (!n)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
        if (v > 65535)
            return false;
    }
    *out = (uint32_t)v;
    return v > 0;
}

/* e[0..len) of one entry: "", "4", "t4", "t4:4" (a "(S:0-1)" socket suffix is ignored). */
static void entry_parse(const char *e, size_t len, char *type, size_t cap, uint32_t *count)
{
    const char *paren = memchr(e, '(', len);
    if (paren)
        len = (size_t)(paren - e);
    const char *colon = memchr(e, ':', len);
    type[0] = '\0';
    *count = 1;
    if (colon) {
        size_t tl = (size_t)(colon - e);
        snprintf(type, cap, "%.*s", (int)(tl < cap ? tl : cap - 1), e);
        if (!fg_gpu_count_parse(colon + 1, len - tl - 1, count))
            *count = 1;
    } else if (!fg_gpu_count_parse(e, len, count)) {
        snprintf(type, cap, "%.*s", (int)(len < cap ? len : cap - 1), e);
        *count = 1;
    }
}

bool fg_gpu_spec_parse(const char *spec, bool gres, char *type, size_t cap, uint32_t *count)
{
    for (const char *s = spec; *s;) {
        size_t n = strcspn(s, ",");
        const char *e = s;
        size_t len = n;
        if (gres) {
            if (len > 5 && (!strncmp(e, "gres:", 5) || !strncmp(e, "gres/", 5)))
                e += 5, len -= 5;
            if (!(len >= 3 && !strncmp(e, "gpu", 3) && (len == 3 || e[3] == ':'))) {
                s += n;
                if (*s == ',')
                    s++;
                continue;
            }
            e += 3;
            len -= 3;
            if (len)
                e++, len--;
        }
        entry_parse(e, len, type, cap, count);
        return true;
    }
    return false;
}

bool fg_request_from_option(struct fg_request *q, const char *opt, const char *value,
                            uint32_t nodes, const struct fg_gpu_table *table)
{
    char type[32];
    uint32_t count;
    bool gres = !strcmp(opt, "gres");
    if (!value || !fg_gpu_spec_parse(value, gres, type, sizeof type, &count))
        return false;
    q->via = gres ? FG_VIA_GRES : !strcmp(opt, "gpus") ? FG_VIA_GPUS : FG_VIA_GPUS_PER_NODE;
    snprintf(q->type, sizeof q->type, "%s", type);
    q->count = count;
    q->nodes = nodes ? nodes : 1;
    q->gpu = type[0] && table ? fg_gpu_find(table, type, NULL) : NULL;
    return true;
}

void fg_request_from_plugin(struct fg_request *q, uint32_t count)
{
    if (!count || q->via != FG_VIA_NONE)
        return;
    q->via = FG_VIA_PLUGIN;
    q->count = count;
}

/* The smallest card of a comma list of gres types the table knows; *n_types how many. */
static const struct fg_gpu *smallest_of(const char *types, const struct fg_gpu_table *t,
                                        unsigned *n_types)
{
    const struct fg_gpu *best = NULL;
    *n_types = 0;
    for (const char *s = types; s && *s;) {
        size_t len = strcspn(s, ",");
        char type[32];
        const struct fg_gpu *g;
        snprintf(type, sizeof type, "%.*s", (int)(len < 31 ? len : 31), s);
        if (type[0] && (g = fg_gpu_find(t, type, NULL))) {
            (*n_types)++;
            if (!best || g->memory_bytes < best->memory_bytes)
                best = g;
        }
        s += len;
        if (*s == ',')
            s++;
    }
    return best;
}

int fg_request_card(struct fg_request *q, const struct fg_gpu_table *table, const char *ft_gpu,
                    const char *default_gpu, const char *part_name, const char *part_types,
                    unsigned *count, struct fg_err *err)
{
    if (count)
        *count = 0;
    if (q->type[0]) {
        if (!(q->gpu = fg_gpu_find(table, q->type, NULL)))
            return fg_err_set(err, FG_E_NOTFOUND, "the GPU type '%s' is not in fitgate's GPU "
                              "table; 'fitgate gpus --table' lists the known cards and "
                              "aliases",
                              q->type);
        return 0;
    }
    if (ft_gpu && *ft_gpu) {
        /* through fg_err_set, which shows the user's control characters as \xNN */
        if (!(q->gpu = fg_gpu_find(table, ft_gpu, count)))
            return fg_err_set(err, FG_E_NOTFOUND, "unknown GPU '%s'; 'fitgate gpus --table' "
                              "lists the known cards and aliases", ft_gpu);
        return 0;
    }
    q->gpu = NULL;
    if (q->via == FG_VIA_NONE)
        return 0;
    if (default_gpu && *default_gpu) {
        q->gpu = fg_gpu_find(table, default_gpu, NULL); /* DefaultGPU= */
        return 0;
    }
    unsigned n = 0;
    q->gpu = smallest_of(part_types, table, &n);
    if (q->gpu && n > 1)
        snprintf(q->note, sizeof q->note, "the request names no GPU type: judged on the "
                 "smallest card of partition %s, %s (its nodes have %s)",
                 part_name && *part_name ? part_name : "(default)", q->gpu->label, part_types);
    return 0;
}

uint32_t fg_request_arrange(const struct fg_request *q, uint32_t per_node_max,
                            uint32_t per_node_min, uint32_t t, uint32_t *count, uint32_t *nodes)
{
    uint32_t n = q->nodes ? q->nodes : 1, per;
    uint32_t pn_max = per_node_max ? per_node_max : 8;
    if (!t)
        t = 1;
    if (t % n == 0 && t / n <= pn_max && t / n >= 1) {
        per = t / n;
    } else {
        n = (t + pn_max - 1) / pn_max;
        per = (t + n - 1) / n;
    }
    if (per < per_node_min)
        per = per_node_min;
    *nodes = n;
    *count = q->via == FG_VIA_GPUS ? per * n : per;
    return per * n;
}
