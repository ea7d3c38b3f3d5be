/*
 * gpu_find.c - lookups in a GPU table (gpu.h): by name, gres alias or gres spelling
 * ("gpu:h100:2"), and by PCI id.  They run over the keys gpu.c normalized once when the
 * table was made (gpu_table.h), so fg_gpu_find costs a scan of a few hundred short strings
 * and no allocation (the planner and the plugin call it in loops).
 */
#include "hw/gpu.h"
#include "hw/gpu_table.h"

#include <stdbool.h>
#include <string.h>
#include <strings.h>

static const struct fg_gpu *find_norm(const struct fg_gpu_table *t, const char *k)
{
    for (size_t i = 0; i < t->n_keys; i++)
        if (t->keys[i].norm[0] == k[0] && !strcmp(t->keys[i].norm, k))
            return &t->rows[t->keys[i].row];
    return NULL;
}

static bool field_is(const char *s, size_t len, const char *word)
{
    return strlen(word) == len && !strncasecmp(s, word, len);
}

/* A gres count: a whole number in 1..65535. */
static bool read_count(const char *s, size_t len, unsigned *out)
{
    uint64_t v;
    if (!fg__gpu_read_u64(s, len, 1, 65535, &v))
        return false;
    *out = (unsigned)v;
    return true;
}

const struct fg_gpu *fg_gpu_find(const struct fg_gpu_table *t, const char *spec, unsigned *count)
{
    if (count)
        *count = 0;
    if (!t)
        t = fg_gpu_table_builtin();
    if (!spec)
        return NULL;

    /* Pick the gpu entry of a gres list ("gpu:h100:2,mps:100"). */
    const char *s = spec, *lim = spec + strlen(spec);
    if (memchr(s, ',', (size_t)(lim - s))) {
        const char *found = NULL, *found_lim = NULL;
        for (const char *p = s; p <= lim;) {
            const char *e = memchr(p, ',', (size_t)(lim - p));
            const char *ie = e ? e : lim;
            const char *q = p;
            while (q < ie && (*q == ' ' || *q == '\t'))
                q++;
            if ((size_t)(ie - q) > 5 && (!strncasecmp(q, "gres:", 5) || !strncasecmp(q, "gres/", 5)))
                q += 5;
            if ((size_t)(ie - q) >= 3 && !strncasecmp(q, "gpu", 3) && (q + 3 == ie || q[3] == ':' || q[3] == '=')) {
                found = p;
                found_lim = ie;
                break;
            }
            if (!e)
                break;
            p = e + 1;
        }
        if (!found)
            return NULL;
        s = found;
        lim = found_lim;
    }
    while (s < lim && (*s == ' ' || *s == '\t'))
        s++;
    while (lim > s && (lim[-1] == ' ' || lim[-1] == '\t'))
        lim--;
    if ((size_t)(lim - s) > 5 && (!strncasecmp(s, "gres:", 5) || !strncasecmp(s, "gres/", 5)))
        s += 5;
    /* "gpu:h100:4(S:0-1)", "gpu:h100:4(IDX:0-3)" as squeue / scontrol print
     * them; a name's own "(SXM2/PCIe)" has no ':' and stays. */
    if (lim > s && lim[-1] == ')') {
        const char *o = lim;
        while (o > s && *o != '(')
            o--;
        if (*o == '(' && memchr(o, ':', (size_t)(lim - o)))
            lim = o;
    }
    if (lim == s)
        return NULL;

    /* Split on ':' (and a TRES-style '=' before the count: "gres/gpu:h100=2"). */
    const char *f[3];
    size_t fl[3], nf = 0;
    for (const char *p = s;;) {
        const char *e = p;
        while (e < lim && *e != ':' && *e != '=')
            e++;
        if (nf == 3)
            return NULL;
        f[nf] = p;
        fl[nf] = (size_t)(e - p);
        nf++;
        if (e == lim)
            break;
        p = e + 1;
    }
    const char *name;
    size_t name_len;
    unsigned n = 0;
    bool typed = false; /* "type:N" as --gpus / --gpus-per-node take it */
    if (field_is(f[0], fl[0], "gpu")) {
        if (nf == 1)
            return NULL;
        if (nf == 2 && read_count(f[1], fl[1], &n)) {
            if (count)
                *count = n;
            return NULL; /* "gpu:4": a count, no type */
        }
        name = f[1];
        name_len = fl[1];
        if (nf == 3 && !read_count(f[2], fl[2], &n))
            return NULL;
    } else {
        if (nf == 3)
            return NULL;
        name = f[0];
        name_len = fl[0];
        if (nf == 2 && !read_count(f[1], fl[1], &n))
            return NULL;
        typed = nf == 2;
    }
    /* The count of an unknown type is still reported ("gpu:foo:4": 4 x a
     * card we do not know) - but not for "x:N" without the gpu prefix,
     * which is as likely another gres ("mps:100", "shard:2"). */
    if (count && !typed)
        *count = n;
    char k[FG__GPU_NORM_MAX];
    size_t kl = fg__gpu_norm(name, name_len, k, sizeof k);
    if (kl == (size_t)-1 || kl == 0)
        return NULL;
    const struct fg_gpu *g = find_norm(t, k);
    if (!g) {
        const char *st = fg__gpu_strip_vendor(k);
        if (st != k)
            g = find_norm(t, st);
    }
    if (g && count)
        *count = n;
    return g;
}

const struct fg_gpu *fg_gpu_find_pci(const struct fg_gpu_table *t, uint16_t vendor,
                                     uint16_t device)
{
    if (!t)
        t = fg_gpu_table_builtin();
    uint32_t id = (uint32_t)vendor << 16 | device;
    for (size_t i = 0; i < t->n_pci; i++)
        if (t->pci[i] == id)
            return &t->rows[t->pci_row[i]];
    return NULL;
}
