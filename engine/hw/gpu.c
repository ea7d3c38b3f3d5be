/*
 * gpu.c - the GPU table: the gpus.conf reader and the cached built-in table;
 * the lookups by name / gres alias / PCI id are engine/hw/gpu_find.c.
 *
 * The built-in rows are conf/gpus.conf read by this file's reader at build
 * time (tools/gen_gpus.c -> build/gen/gpus_table.c, gpu_table.h), so there is
 * one reader and one format for the shipped table and for site files, and no
 * process pays for parsing the shipped text.  Lookups run over keys
 * normalized once when a table is made, so fg_gpu_find costs a scan of a few
 * hundred short strings and no allocation (the planner and the plugin call it
 * in loops).
 */
#include "hw/gpu.h"
#include "hw/gpu_table.h"
#include "util/fileio.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_ROWS 4096
#define MAX_SITE_BYTES (1u << 20)

/* ------------------------------------------------------------------------
 * The keys of a row (data apart from logic): name, whether required, and
 * what a value looks like (for messages).
 */
enum key_id {
    K_NAME, K_LABEL, K_VENDOR, K_DEVICES, K_MEMGB, K_MEMBYTES, K_BF16, K_FP16,
    K_BW, K_LINK, K_INTERCONNECT, K_ALIASES, K_GCDS, K__COUNT
};

static const struct {
    const char *key;
    bool required;
    const char *expect;
} row_keys[K__COUNT] = {
    [K_NAME] = {"Name", true, "a card name, at most 63 characters (quote it if it has blanks)"},
    [K_LABEL] = {"Label", true, "a short label, at most 23 characters, e.g. \"H100 80 GB\""},
    [K_VENDOR] = {"Vendor", true, "a PCI vendor id of 4 hex digits, e.g. 10de"},
    [K_DEVICES] = {"Devices", true, "1 to 8 PCI device ids of 4 hex digits, e.g. 2330,2331"},
    [K_MEMGB] = {"MemoryGB", true, "a whole number of GB in 1..100000"},
    [K_MEMBYTES] = {"MemoryBytes", false, "a whole number of bytes within 0.5x-1.5x of MemoryGB x 10^9"},
    [K_BF16] = {"BF16TFLOPS", false, "a decimal number in (0, 1000000], e.g. 989 or 35.6"},
    [K_FP16] = {"FP16TFLOPS", false, "a decimal number in (0, 1000000], e.g. 65"},
    [K_BW] = {"MemBWTBps", true, "a decimal number of TB/s in (0, 1000], e.g. 3.35"},
    [K_LINK] = {"LinkGBps", true, "a decimal number of GB/s in (0, 100000], e.g. 900"},
    [K_INTERCONNECT] = {"Interconnect", false, "free text, at most 47 characters"},
    [K_ALIASES] = {"Aliases", false, "a comma list of gres names of [a-z0-9_.-], at most 255 characters"},
    [K_GCDS] = {"GCDs", false, "a whole number in 1..16"},
};

/* Leading words a lookup may drop ("NVIDIA A100-80GB" -> "a10080g"), normalized. */
static const char *const vendor_words[] = {"nvidia", "tesla", "geforce", "amd", "instinct",
                                           "radeon", "intel", "habana"};

/* ------------------------------------------------------------------------ */

/* Rows as read from one source, with their line numbers for messages. */
struct rowvec {
    struct fg_gpu *rows;
    unsigned *lines;
    size_t n, cap;
};

static void rowvec_free(struct rowvec *v)
{
    free(v->rows);
    free(v->lines);
    memset(v, 0, sizeof *v);
}

static int rowvec_push(struct rowvec *v, const struct fg_gpu *g, unsigned line)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 64;
        struct fg_gpu *r = realloc(v->rows, cap * sizeof *r);
        if (!r)
            return FG_E_NOMEM;
        v->rows = r;
        unsigned *l = realloc(v->lines, cap * sizeof *l);
        if (!l)
            return FG_E_NOMEM;
        v->lines = l;
        v->cap = cap;
    }
    v->rows[v->n] = *g;
    v->lines[v->n] = line;
    v->n++;
    return 0;
}

/* ------------------------------------------------------------------------
 * Normalization: lower-case letters and digits only, and "<digit>gb" read
 * as "<digit>g", so "A100-80GB", "a100_80g" and "A100 80 GB" meet.
 * Returns the length, or (size_t)-1 when out (cap bytes) is too small.
 */
size_t fg__gpu_norm(const char *s, size_t len, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 'A' && c <= 'Z')
            c = (unsigned char)(c - 'A' + 'a');
        else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
            continue;
        if (c == 'b' && o >= 2 && out[o - 1] == 'g' && out[o - 2] >= '0' && out[o - 2] <= '9')
            continue;
        if (o + 1 >= cap)
            return (size_t)-1;
        out[o++] = (char)c;
    }
    out[o] = '\0';
    return o;
}

/* The key without leading vendor words; points into k. */
const char *fg__gpu_strip_vendor(const char *k)
{
    for (bool again = true; again;) {
        again = false;
        for (size_t i = 0; i < sizeof vendor_words / sizeof vendor_words[0]; i++) {
            size_t l = strlen(vendor_words[i]);
            if (!strncmp(k, vendor_words[i], l) && k[l]) {
                k += l;
                again = true;
            }
        }
    }
    return k;
}

/* ------------------------------------------------------------------------
 * Strict value readers.  Each returns true on success.
 */
static bool read_hex16(const char *s, size_t len, uint16_t *out)
{
    if (len != 4)
        return false;
    unsigned v = 0;
    for (size_t i = 0; i < 4; i++) {
        char c = s[i];
        unsigned d;
        if (c >= '0' && c <= '9')
            d = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            d = (unsigned)(c - 'A' + 10);
        else
            return false;
        v = v * 16 + d;
    }
    *out = (uint16_t)v;
    return true;
}

bool fg__gpu_read_u64(const char *s, size_t len, uint64_t min, uint64_t max, uint64_t *out)
{
    if (len == 0 || len > 20)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    if (v < min || v > max)
        return false;
    *out = v;
    return true;
}

/*
 * A plain decimal "123" or "123.45": no sign, exponent, blanks or locale
 * (strtod follows LC_NUMERIC, and the plugin runs inside slurmstepd, whose
 * locale we do not control).
 */
static bool read_decimal(const char *s, size_t len, double min_excl, double max, double *out)
{
    size_t i = 0, int_digits = 0, frac_digits = 0;
    double v = 0, scale = 1;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, int_digits++)
        v = v * 10 + (s[i] - '0');
    if (i < len && s[i] == '.') {
        for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++, frac_digits++) {
            scale /= 10;
            v += (s[i] - '0') * scale;
        }
        if (!frac_digits)
            return false;
    }
    if (i != len || !int_digits || int_digits + frac_digits > 15)
        return false;
    if (!(v > min_excl && v <= max))
        return false;
    *out = v;
    return true;
}

static bool copy_text(const char *s, size_t len, char *dst, size_t cap)
{
    if (len >= cap)
        return false;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return false;
    memcpy(dst, s, len);
    dst[len] = '\0';
    return true;
}

static bool read_devices(const char *s, size_t len, struct fg_gpu *g)
{
    g->n_devices = 0;
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && s[i] != ',')
            continue;
        uint16_t d;
        if (g->n_devices == sizeof g->devices / sizeof g->devices[0] ||
            !read_hex16(s + start, i - start, &d))
            return false;
        for (size_t j = 0; j < g->n_devices; j++)
            if (g->devices[j] == d)
                return false;
        g->devices[g->n_devices++] = d;
        start = i + 1;
    }
    return g->n_devices > 0;
}

static bool read_aliases(const char *s, size_t len, char *dst, size_t cap)
{
    if (len == 0 || len >= cap)
        return false;
    size_t item = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c == ',') {
            if (item == 0)
                return false;
            item = 0;
        } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
                   c == '.') {
            item++;
        } else {
            return false;
        }
        dst[i] = c;
    }
    dst[len] = '\0';
    return item > 0;
}

/* ------------------------------------------------------------------------
 * The line reader.  A row is blanks-separated Key=Value pairs; a value may be
 * double-quoted to hold blanks.  '#' outside quotes ends the line.
 */
struct pair {
    const char *key, *val;
    size_t key_len, val_len;
};

/* Next pair from *p (a line without its newline, end at lim).  Returns 1 with
 * a pair, 0 at the end of the line, or a negative code with err filled. */
static int next_pair(const char **p, const char *lim, struct pair *out, const char *origin,
                     unsigned line, struct fg_err *err)
{
    const char *s = *p;
    while (s < lim && (*s == ' ' || *s == '\t'))
        s++;
    if (s == lim || *s == '#') {
        *p = lim;
        return 0;
    }
    const char *k = s;
    while (s < lim && ((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
                       (*s >= '0' && *s <= '9') || *s == '_'))
        s++;
    if (s == k || s == lim || *s != '=') {
        const char *e = k;
        while (e < lim && *e != ' ' && *e != '\t')
            e++;
        return fg_err_set(err, FG_E_PARSE,
                          "%s:%u: '%.*s' is not Key=Value; write rows as Name=\"...\" Vendor=10de "
                          "Devices=2330 ... (see the header of gpus.conf)",
                          origin, line, (int)(e - k > 60 ? 60 : e - k), k);
    }
    out->key = k;
    out->key_len = (size_t)(s - k);
    s++; /* '=' */
    if (s < lim && *s == '"') {
        const char *v = ++s;
        while (s < lim && *s != '"')
            s++;
        if (s == lim)
            return fg_err_set(err, FG_E_PARSE, "%s:%u: %.*s: the quoted value has no closing '\"'",
                              origin, line, (int)out->key_len, out->key);
        out->val = v;
        out->val_len = (size_t)(s - v);
        s++;
        if (s < lim && *s != ' ' && *s != '\t' && *s != '#')
            return fg_err_set(err, FG_E_PARSE,
                              "%s:%u: %.*s: text right after the closing '\"'; separate pairs "
                              "with a blank",
                              origin, line, (int)out->key_len, out->key);
    } else {
        const char *v = s;
        while (s < lim && *s != ' ' && *s != '\t' && *s != '#')
            s++;
        out->val = v;
        out->val_len = (size_t)(s - v);
    }
    if (out->val_len == 0)
        return fg_err_set(err, FG_E_PARSE, "%s:%u: %.*s has no value; expected %s", origin, line,
                          (int)out->key_len, out->key, "a value after '='");
    *p = s;
    return 1;
}

static int bad_value(struct fg_err *err, int code, const char *origin, unsigned line,
                     enum key_id id, const struct pair *pr)
{
    return fg_err_set(err, code, "%s:%u: %s=%.*s is not valid; expected %s", origin, line,
                      row_keys[id].key, (int)(pr->val_len > 80 ? 80 : pr->val_len), pr->val,
                      row_keys[id].expect);
}

/* One non-empty line -> one row.  Returns 0, or a negative code with err. */
static int parse_row(const char *s, const char *lim, const char *origin, unsigned line,
                     struct fg_gpu *g, struct fg_err *err)
{
    bool seen[K__COUNT] = {0};
    memset(g, 0, sizeof *g);
    g->gcds = 1;
    struct pair pr = {0};
    int rc;
    while ((rc = next_pair(&s, lim, &pr, origin, line, err)) == 1) {
        int id = -1;
        for (int k = 0; k < K__COUNT; k++)
            if (strlen(row_keys[k].key) == pr.key_len &&
                !strncasecmp(row_keys[k].key, pr.key, pr.key_len))
                id = k;
        if (id < 0)
            return fg_err_set(err, FG_E_PARSE,
                              "%s:%u: unknown key '%.*s'; known keys: Name Label Vendor Devices "
                              "MemoryGB MemoryBytes BF16TFLOPS FP16TFLOPS MemBWTBps LinkGBps "
                              "Interconnect Aliases GCDs",
                              origin, line, (int)(pr.key_len > 40 ? 40 : pr.key_len), pr.key);
        if (seen[id])
            return fg_err_set(err, FG_E_PARSE, "%s:%u: %s is given twice in one row", origin,
                              line, row_keys[id].key);
        seen[id] = true;
        uint64_t u = 0;
        bool ok;
        switch ((enum key_id)id) {
        case K_NAME:
            ok = copy_text(pr.val, pr.val_len, g->name, sizeof g->name);
            break;
        case K_LABEL:
            ok = copy_text(pr.val, pr.val_len, g->label, sizeof g->label);
            break;
        case K_INTERCONNECT:
            ok = copy_text(pr.val, pr.val_len, g->interconnect, sizeof g->interconnect);
            break;
        case K_VENDOR:
            ok = read_hex16(pr.val, pr.val_len, &g->vendor) && g->vendor != 0 &&
                 g->vendor != 0xffff;
            break;
        case K_DEVICES:
            ok = read_devices(pr.val, pr.val_len, g);
            break;
        case K_MEMGB:
            ok = fg__gpu_read_u64(pr.val, pr.val_len, 1, 100000, &u);
            g->memory_gb = (uint32_t)u;
            break;
        case K_MEMBYTES:
            ok = fg__gpu_read_u64(pr.val, pr.val_len, 1, UINT64_C(1) << 50, &g->memory_bytes);
            break;
        case K_BF16:
            ok = read_decimal(pr.val, pr.val_len, 0, 1e6, &g->bf16_tflops);
            break;
        case K_FP16:
            ok = read_decimal(pr.val, pr.val_len, 0, 1e6, &g->fp16_tflops);
            break;
        case K_BW:
            ok = read_decimal(pr.val, pr.val_len, 0, 1000, &g->bw_tbps);
            break;
        case K_LINK:
            ok = read_decimal(pr.val, pr.val_len, 0, 100000, &g->link_gbps);
            break;
        case K_ALIASES:
            ok = read_aliases(pr.val, pr.val_len, g->aliases, sizeof g->aliases);
            break;
        case K_GCDS:
            ok = fg__gpu_read_u64(pr.val, pr.val_len, 1, 16, &u);
            g->gcds = (unsigned)u;
            break;
        default:
            ok = false;
        }
        if (!ok)
            return bad_value(err, FG_E_PARSE, origin, line, (enum key_id)id, &pr);
    }
    if (rc < 0)
        return rc;
    for (int k = 0; k < K__COUNT; k++)
        if (row_keys[k].required && !seen[k])
            return fg_err_set(err, FG_E_MISSING, "%s:%u: %s%s%s is missing; expected %s", origin,
                              line, seen[K_NAME] ? g->name : "", seen[K_NAME] ? ": " : "",
                              row_keys[k].key, row_keys[k].expect);
    if (!seen[K_BF16] && !seen[K_FP16])
        return fg_err_set(err, FG_E_MISSING,
                          "%s:%u: %s: give BF16TFLOPS (dense), or FP16TFLOPS for a card "
                          "without BF16",
                          origin, line, g->name);
    if (!seen[K_FP16])
        g->fp16_tflops = g->bf16_tflops;
    /* MemoryGB is marketed GB (10^9); the driver total sits within a few
     * percent of it (GDDR with ECC ~6% under, HBM stacks in GiB ~7% over,
     * an APU's share of unified memory ~20% under).  Outside 0.5x-1.5x the
     * number is in the wrong unit. */
    uint64_t nominal = (uint64_t)g->memory_gb * UINT64_C(1000000000);
    if (!seen[K_MEMBYTES])
        g->memory_bytes = nominal;
    else if (g->memory_bytes < nominal / 2 || g->memory_bytes > nominal + nominal / 2)
        return fg_err_set(err, FG_E_RANGE,
                          "%s:%u: %s: MemoryBytes=%llu is not near MemoryGB=%u (x 10^9 bytes); "
                          "give the driver's total in bytes (nvidia-smi MiB x 1048576)",
                          origin, line, g->name, (unsigned long long)g->memory_bytes,
                          g->memory_gb);
    return 0;
}

/* All rows of one source.  Names must be unique within it. */
static int parse_text(const char *text, const char *origin, struct rowvec *out,
                      struct fg_err *err)
{
    memset(out, 0, sizeof *out);
    unsigned line = 0;
    for (const char *p = text; *p;) {
        line++;
        const char *eol = strchr(p, '\n');
        const char *lim = eol ? eol : p + strlen(p);
        const char *next = eol ? eol + 1 : lim;
        if (lim > p && lim[-1] == '\r')
            lim--;
        const char *s = p;
        while (s < lim && (*s == ' ' || *s == '\t'))
            s++;
        p = next;
        if (s == lim || *s == '#')
            continue;
        struct fg_gpu g;
        int rc = parse_row(s, lim, origin, line, &g, err);
        if (rc)
            goto fail;
        for (size_t i = 0; i < out->n; i++)
            if (!strcasecmp(out->rows[i].name, g.name)) {
                rc = fg_err_set(err, FG_E_PARSE,
                                "%s:%u: Name \"%s\" is already used at line %u; names must be "
                                "unique",
                                origin, line, g.name, out->lines[i]);
                goto fail;
            }
        if (out->n == MAX_ROWS) {
            rc = fg_err_set(err, FG_E_RANGE, "%s:%u: more than %d rows", origin, line, MAX_ROWS);
            goto fail;
        }
        if ((rc = rowvec_push(out, &g, line))) {
            fg_err_set(err, rc, "%s: out of memory", origin);
            goto fail;
        }
        continue;
    fail:
        rowvec_free(out);
        return rc;
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Tables.
 */
void fg_gpu_table_free(struct fg_gpu_table *t)
{
    if (!t || t->builtin)
        return;
    for (size_t i = 0; i < t->n_keys; i++)
        free(t->keys[i].norm);
    free(t->keys);
    free(t->pci);
    free(t->pci_row);
    free(t->rows);
    free(t->site);
    free(t);
}

static int add_key(struct fg_gpu_table *t, size_t *cap, const char *text, size_t len,
                   uint32_t row)
{
    char buf[FG__GPU_NORM_MAX];
    size_t n = fg__gpu_norm(text, len, buf, sizeof buf);
    if (n == (size_t)-1 || n == 0)
        return 0; /* nothing a lookup could match */
    for (size_t i = 0; i < t->n_keys; i++)
        if (t->keys[i].row == row && !strcmp(t->keys[i].norm, buf))
            return 0;
    if (t->n_keys == *cap) {
        size_t c = *cap ? *cap * 2 : 256;
        struct fg__gpu_key *k = realloc(t->keys, c * sizeof *k);
        if (!k)
            return FG_E_NOMEM;
        t->keys = k;
        *cap = c;
    }
    char *dup = strdup(buf);
    if (!dup)
        return FG_E_NOMEM;
    t->keys[t->n_keys].norm = dup;
    t->keys[t->n_keys].row = row;
    t->n_keys++;
    return 0;
}

static int index_row(struct fg_gpu_table *t, size_t *cap, uint32_t r)
{
    const struct fg_gpu *g = &t->rows[r];
    int rc;
    if ((rc = add_key(t, cap, g->name, strlen(g->name), r)))
        return rc;
    char buf[FG__GPU_NORM_MAX];
    if (fg__gpu_norm(g->name, strlen(g->name), buf, sizeof buf) != (size_t)-1) {
        const char *s = fg__gpu_strip_vendor(buf);
        if (s != buf && (rc = add_key(t, cap, s, strlen(s), r)))
            return rc;
    }
    if ((rc = add_key(t, cap, g->label, strlen(g->label), r)))
        return rc;
    for (const char *a = g->aliases; *a;) {
        const char *e = strchr(a, ',');
        size_t l = e ? (size_t)(e - a) : strlen(a);
        if ((rc = add_key(t, cap, a, l, r)))
            return rc;
        a += l + (e ? 1 : 0);
    }
    for (size_t d = 0; d < g->n_devices; d++) {
        t->pci[t->n_pci] = (uint32_t)g->vendor << 16 | g->devices[d];
        t->pci_row[t->n_pci] = r;
        t->n_pci++;
    }
    return 0;
}

/* Build the lookup index: site rows first, then the others, each in file order. */
static int build_index(struct fg_gpu_table *t)
{
    size_t cap = 0, n_dev = 0;
    for (size_t i = 0; i < t->n; i++)
        n_dev += t->rows[i].n_devices;
    t->pci = malloc((n_dev ? n_dev : 1) * sizeof *t->pci);
    t->pci_row = malloc((n_dev ? n_dev : 1) * sizeof *t->pci_row);
    if (!t->pci || !t->pci_row)
        return FG_E_NOMEM;
    for (int pass = 1; pass >= 0; pass--)
        for (size_t i = 0; i < t->n; i++)
            if ((t->site[i] != 0) == (pass == 1)) {
                int rc = index_row(t, &cap, (uint32_t)i);
                if (rc)
                    return rc;
            }
    return 0;
}

/* A table of base rows (copied) merged with site rows (may be NULL). */
static int make_table(const struct fg_gpu *base, size_t n_base, const struct rowvec *site,
                      struct fg_gpu_table **out, struct fg_err *err)
{
    size_t n_site = site ? site->n : 0;
    struct fg_gpu_table *t = calloc(1, sizeof *t);
    if (!t)
        return fg_err_set(err, FG_E_NOMEM, "GPU table: out of memory");
    size_t cap = n_base + n_site;
    t->rows = malloc((cap ? cap : 1) * sizeof *t->rows);
    t->site = calloc(cap ? cap : 1, 1);
    if (!t->rows || !t->site)
        goto nomem;
    if (n_base)
        memcpy(t->rows, base, n_base * sizeof *base);
    t->n = n_base;
    for (size_t i = 0; i < n_site; i++) {
        size_t at = t->n;
        for (size_t j = 0; j < n_base; j++)
            if (!strcasecmp(t->rows[j].name, site->rows[i].name))
                at = j;
        t->rows[at] = site->rows[i];
        t->site[at] = 1;
        if (at == t->n)
            t->n++;
    }
    if (build_index(t))
        goto nomem;
    *out = t;
    return 0;
nomem:
    fg_gpu_table_free(t);
    return fg_err_set(err, FG_E_NOMEM, "GPU table: out of memory");
}

const struct fg_gpu_table *fg_gpu_table_builtin(void)
{
    return &fg__gpu_builtin;
}

int fg__gpu_table_parse(const char *text, const char *origin, struct fg_gpu_table **out,
                        struct fg_err *err)
{
    struct rowvec v;
    int rc = parse_text(text, origin, &v, err);
    if (rc)
        return rc;
    rc = make_table(v.rows, v.n, NULL, out, err);
    rowvec_free(&v);
    return rc;
}

int fg_gpu_table_load_text(const char *text, const char *origin, struct fg_gpu_table **out,
                           struct fg_err *err)
{
    if (!out)
        return fg_err_set(err, FG_E_INVAL, "fg_gpu_table_load_text: out is NULL");
    if (!origin)
        origin = "site GPU table";
    const struct fg_gpu_table *b = fg_gpu_table_builtin();
    struct rowvec v = {0};
    if (text) {
        int rc = parse_text(text, origin, &v, err);
        if (rc)
            return rc;
    }
    int rc = make_table(b->rows, b->n, &v, out, err);
    rowvec_free(&v);
    return rc;
}

static int load(const char *path, bool site, struct fg_gpu_table **out, struct fg_err *err)
{
    if (!out)
        return fg_err_set(err, FG_E_INVAL, "fg_gpu_table_load: out is NULL");
    if (!path)
        return fg_gpu_table_load_text(NULL, NULL, out, err);
    char *buf;
    size_t n;
    struct stat st;
    if (fg__read_file_st(path, MAX_SITE_BYTES, &buf, &n, &st) != 0) {
        int e = errno;
        if (e == EINVAL)
            return fg_err_set(err, FG_E_IO, "%s: not a regular file; give a gpus.conf file", path);
        if (e == EFBIG)
            return fg_err_set(err, FG_E_RANGE, "%s: larger than %u bytes; a GPU table is a few KB",
                              path, MAX_SITE_BYTES);
        if (e == ENOMEM)
            return fg_err_set(err, FG_E_NOMEM, "%s: out of memory", path);
        if (e == EIO)
            return fg_err_set(err, FG_E_IO, "%s: read error", path);
        return fg_err_set(err, e == ENOENT ? FG_E_NOTFOUND : FG_E_IO,
                          "%s: cannot open the site GPU table: %s", path, strerror(e));
    }
    int rc = site ? fg__site_file_check(&st, path, err) : 0;
    if (rc)
        ;
    else if (memchr(buf, '\0', n))
        rc = fg_err_set(err, FG_E_PARSE, "%s: contains NUL bytes; not a text file", path);
    else
        rc = fg_gpu_table_load_text(buf, path, out, err);
    free(buf);
    return rc;
}

int fg_gpu_table_load(const char *path, struct fg_gpu_table **out, struct fg_err *err)
{
    return load(path, false, out, err);
}

int fg_gpu_table_load_site(const char *path, struct fg_gpu_table **out, struct fg_err *err)
{
    return load(path, true, out, err);
}

size_t fg_gpu_table_count(const struct fg_gpu_table *t)
{
    return t ? t->n : 0;
}

const struct fg_gpu *fg_gpu_table_at(const struct fg_gpu_table *t, size_t i)
{
    return t && i < t->n ? &t->rows[i] : NULL;
}

int fg_gpu_table_is_site_row(const struct fg_gpu_table *t, size_t i)
{
    return t && i < t->n && t->site[i];
}

int fg_gpu_table_has_vendor(const struct fg_gpu_table *t, uint16_t vendor)
{
    if (!t)
        t = fg_gpu_table_builtin();
    for (size_t i = 0; i < t->n; i++)
        if (t->rows[i].vendor == vendor)
            return 1;
    return 0;
}

double fg_gpu_tflops(const struct fg_gpu *g)
{
    if (!g)
        return 0;
    return g->bf16_tflops > 0 ? g->bf16_tflops : g->fp16_tflops;
}
