/*
 * policy.c - fitgate.conf and plugstack arguments through one key table.
 * See policy.h for the syntax, the precedence and the error contract.
 */
#include "policy.h"
#include "util/fileio.h"
#include "hw/gpu.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define POLICY_MAX_DIRS 8

enum ktype { K_ACTION, K_BORDER, K_ONERR, K_ONUNK, K_REAL, K_UINT, K_BOOL, K_MODES, K_DIRS, K_PATH,
             K_URL, K_SECONDS, K_LOG, K_GRES, K_CALIB };

/* Where a key may be set. */
#define W_FILE 1u /* a site-wide line of fitgate.conf */
#define W_PART 2u /* after PartitionName= */
#define W_ARG 4u  /* a plugstack argument */

struct key {
    const char *name;    /* as documented; matched ignoring case */
    enum ktype type;
    double min, max;     /* K_REAL, K_UINT, K_SECONDS */
    const char *def;     /* default, parsed by the same code as a file value */
    unsigned where;
    bool rule;           /* lives in struct fg_rules (else in struct fg_policy) */
    size_t off, size;    /* field offset; size for strings */
};

#define R(field) true, offsetof(struct fg_rules, field), sizeof(((struct fg_rules *)0)->field)
#define P(field) false, offsetof(struct fg_policy, field), sizeof(((struct fg_policy *)0)->field)
#define ALL (W_FILE | W_PART | W_ARG)
#define SITE (W_FILE | W_ARG)

/* The table: adding a key is a row here (and a field in policy.h).  Each row also names
 * its enum key_id (KEY_<ID>), so code that means one key says which, not where. */
#define KEY_ROWS(X) \
    X(ACTION, "Action", K_ACTION, 0, 0, "reject", ALL, R(action)) \
    X(HEADROOM, "Headroom", K_REAL, 1.0, 4.0, "1.15", ALL, R(headroom)) \
    X(CONSERVATIVE, "Conservative", K_REAL, 1.0, 4.0, "1.43", ALL, R(conservative)) \
    X(BORDERLINE, "Borderline", K_BORDER, 0, 0, "warn", ALL, R(borderline)) \
    X(ALLOWED_MODES, "AllowedModes", K_MODES, 0, 0, "all", ALL, R(modes)) \
    X(MIN_GPUS, "MinGPUs", K_UINT, 1, 65535, "1", ALL, R(min_gpus)) \
    X(MAX_GPUS, "MaxGPUs", K_UINT, 1, 65535, "64", ALL, R(max_gpus)) \
    X(MIN_GPUS_PER_NODE, "MinGPUsPerNode", K_UINT, 1, 1024, "1", ALL, R(min_gpus_node)) \
    X(MAX_GPUS_PER_NODE, "MaxGPUsPerNode", K_UINT, 1, 1024, "8", ALL, R(max_gpus_node)) \
    X(SHRINK_OVER_REQUEST, "ShrinkOverRequest", K_BOOL, 0, 0, "no", ALL, R(shrink)) \
    X(ALLOW_OVERRIDE, "AllowOverride", K_BOOL, 0, 0, "no", ALL, R(allow_override)) \
    X(REQUIRE_TAG, "RequireTag", K_BOOL, 0, 0, "no", ALL, R(require_tag)) \
    X(DEFAULT_GPU, "DefaultGPU", K_GRES, 0, 0, "", ALL, R(default_gpu)) \
    X(ON_UNKNOWN, "OnUnknown", K_ONUNK, 0, 0, "warn", ALL, R(on_unknown)) \
    X(MODEL_DIRS, "ModelDirs", K_DIRS, 0, 0, "", SITE, P(model_dirs)) \
    X(CACHE_DIR, "CacheDir", K_PATH, 0, 0, "", SITE, P(cache_dir)) \
    X(HUB_ENDPOINT, "HubEndpoint", K_URL, 0, 0, "https://huggingface.co", SITE, P(hub_endpoint)) \
    X(HUB_TIMEOUT, "HubTimeout", K_SECONDS, 0.1, 600, "5", SITE, P(hub_timeout_ms)) \
    X(CHECKPOINT_SCAN, "CheckpointScan", K_BOOL, 0, 0, "yes", SITE, P(checkpoint_scan)) \
    X(GPU_TABLE, "GpuTable", K_PATH, 0, 0, "", SITE, P(gpu_table)) \
    X(ON_ERROR, "OnError", K_ONERR, 0, 0, "allow", SITE, P(on_error)) \
    X(LOG_FILE, "LogFile", K_LOG, 0, 0, "", SITE, P(log_file)) \
    X(CALIBRATION, "Calibration", K_CALIB, 0, 0, "", SITE, P(calib)) \
    X(GPU_SAMPLER, "GpuSampler", K_SECONDS, 0, 3600, "0", SITE, P(gpu_sampler_ms)) \
    X(CONF, "Conf", K_PATH, 0, 0, "", W_ARG, P(conf)) \
    X(TOPOLOGY, "Topology", K_PATH, 0, 0, "", W_ARG, P(topology)) \
    X(ENGINE, "Engine", K_PATH, 0, 0, "", W_ARG, P(engine)) \
    X(NVML, "Nvml", K_PATH, 0, 0, "", W_ARG, P(nvml))

enum key_id {
#define KEY_ID(id, ...) KEY_##id,
    KEY_ROWS(KEY_ID)
#undef KEY_ID
};

static const struct key keys[] = {
#define KEY_ROW(id, name, ...) {name, __VA_ARGS__},
    KEY_ROWS(KEY_ROW)
#undef KEY_ROW
};
#define NKEYS (sizeof keys / sizeof keys[0])
_Static_assert(NKEYS <= FG_POLICY_KEYS, "raise FG_POLICY_KEYS");
_Static_assert(FG_POLICY_KEYS <= 64, "struct fg_policy_part.set is a 64-bit mask");

bool fg_policy_key_at(size_t i, struct fg_policy_key_info *out)
{
    if (i >= NKEYS)
        return false;
    const struct key *k = &keys[i];
    *out = (struct fg_policy_key_info){
        .name = k->name, .def = k->def, .min = k->min, .max = k->max,
        .bounded = k->type == K_REAL || k->type == K_UINT || k->type == K_SECONDS,
        .real = k->type == K_REAL, .in_file = k->where & W_FILE, .in_part = k->where & W_PART,
        .in_arg = k->where & W_ARG};
    return true;
}

static const char *const action_names[] = {"off", "warn", "reject", "resize"};
static const char *const border_names[] = {"allow", "warn", "reject"};
static const char *const onerr_names[] = {"allow", "reject"};
static const char *const onunk_names[] = {"allow", "warn", "reject"};
static const char *const mode_names[] = {"full", "lora", "qlora", "serve"};

const char *fg_action_name(enum fg_action a)
{
    return (unsigned)a < 4 ? action_names[a] : "?";
}

const char *fg_borderline_name(enum fg_borderline b)
{
    return (unsigned)b < 3 ? border_names[b] : "?";
}

const char *fg_on_error_name(enum fg_on_error e)
{
    return (unsigned)e < 2 ? onerr_names[e] : "?";
}

const char *fg_on_unknown_name(enum fg_on_unknown u)
{
    return (unsigned)u < 3 ? onunk_names[u] : "?";
}

void fg_modes_str(unsigned modes, char *buf, size_t cap)
{
    size_t off = 0;
    if (cap)
        buf[0] = '\0';
    for (unsigned i = 0; i < 4; i++) {
        if (!(modes & (1u << i)) || off >= cap)
            continue;
        int w = snprintf(buf + off, cap - off, "%s%s", off ? "," : "", mode_names[i]);
        if (w < 0)
            return;
        off += (size_t)w;
    }
}

/* ---- value parsers: 0, or FG_E_RANGE / FG_E_PARSE with `why` filled ------ */

static int parse_names(const char *v, const char *const *names, int n, int *out, char *why,
                       size_t cap)
{
    for (int i = 0; i < n; i++) {
        if (!strcasecmp(v, names[i])) {
            *out = i;
            return 0;
        }
    }
    size_t off = (size_t)snprintf(why, cap, "expected one of ");
    for (int i = 0; i < n && off < cap; i++)
        off += (size_t)snprintf(why + off, cap - off, "%s%s", i ? "|" : "", names[i]);
    return FG_E_PARSE;
}

/* Decimal number without sign or exponent ("1.15", "2"), locale-free.  The digits are read
 * as one integer and divided once by a power of ten, so "1.15" gives the same double as the
 * C literal 1.15 (IEEE division rounds correctly). */
static int parse_decimal(const char *v, double *out)
{
    uint64_t mant = 0;
    double scale = 1;
    int digits = 0;
    const char *s = v;
    if (*s < '0' || *s > '9')
        return -1;
    for (; *s >= '0' && *s <= '9'; s++) {
        mant = mant * 10 + (uint64_t)(*s - '0');
        if (++digits > 15)
            return -1;
    }
    if (*s == '.') {
        s++;
        if (*s < '0' || *s > '9')
            return -1;
        for (; *s >= '0' && *s <= '9'; s++) {
            mant = mant * 10 + (uint64_t)(*s - '0');
            scale *= 10;
            if (++digits > 15)
                return -1;
        }
    }
    if (*s)
        return -1;
    *out = (double)mant / scale;
    return 0;
}

static int parse_bool(const char *v, bool *out, char *why, size_t cap)
{
    int b = fg_yes_no(v);
    if (b < 0) {
        snprintf(why, cap, "expected yes|no");
        return FG_E_PARSE;
    }
    *out = b;
    return 0;
}

static int parse_modes(const char *v, unsigned *out, char *why, size_t cap)
{
    if (!strcasecmp(v, "all")) {
        *out = 0xfu;
        return 0;
    }
    unsigned m = 0;
    const char *s = v;
    while (*s) {
        size_t n = strcspn(s, ",");
        int idx = -1;
        for (int i = 0; i < 4; i++)
            if (n == strlen(mode_names[i]) && !strncasecmp(s, mode_names[i], n))
                idx = i;
        if (idx < 0) {
            snprintf(why, cap, "'%.*s' is not a mode; expected a comma list of "
                               "full,lora,qlora,serve or all", (int)(n > 32 ? 32 : n), s);
            return FG_E_PARSE;
        }
        m |= 1u << idx;
        s += n;
        if (*s == ',')
            s++;
    }
    if (!m) {
        snprintf(why, cap, "no mode given; expected a comma list of full,lora,qlora,serve or all");
        return FG_E_PARSE;
    }
    *out = m;
    return 0;
}

static bool clean_text(const char *v)
{
    for (; *v; v++)
        if ((unsigned char)*v < 0x21 || *v == 0x7f)
            return false;
    return true;
}

static int parse_path(const char *v, char *dst, size_t size, char *why, size_t cap)
{
    if (!*v) {
        dst[0] = '\0';
        return 0;
    }
    if (v[0] != '/' || !clean_text(v)) {
        snprintf(why, cap, "expected an absolute path without blanks");
        return FG_E_PARSE;
    }
    if (strlen(v) >= size) {
        snprintf(why, cap, "path longer than %zu bytes", size - 1);
        return FG_E_RANGE;
    }
    memcpy(dst, v, strlen(v) + 1);
    return 0;
}

static int parse_dirs(const char *v, char *dst, size_t size, char *why, size_t cap)
{
    size_t n = 0;
    for (const char *s = v; *s;) {
        size_t len = strcspn(s, ":");
        if (len && s[0] != '/') {
            snprintf(why, cap, "'%.*s' is not an absolute directory", (int)(len > 64 ? 64 : len),
                     s);
            return FG_E_PARSE;
        }
        if (len && ++n > POLICY_MAX_DIRS) {
            snprintf(why, cap, "more than %d directories", POLICY_MAX_DIRS);
            return FG_E_RANGE;
        }
        s += len;
        if (*s == ':')
            s++;
    }
    if (!clean_text(v)) {
        snprintf(why, cap, "expected a colon list of absolute directories without blanks");
        return FG_E_PARSE;
    }
    if (strlen(v) >= size) {
        snprintf(why, cap, "list longer than %zu bytes", size - 1);
        return FG_E_RANGE;
    }
    memcpy(dst, v, strlen(v) + 1);
    return 0;
}

static int parse_url(const char *v, char *dst, size_t size, char *why, size_t cap)
{
    if (!strcasecmp(v, "none") || !strcasecmp(v, "off")) {
        dst[0] = '\0';
        return 0;
    }
    size_t len = strlen(v);
    if ((strncmp(v, "https://", 8) && strncmp(v, "http://", 7)) || !clean_text(v) ||
        len <= 8) {
        snprintf(why, cap, "expected an http(s):// URL, or none to stay offline");
        return FG_E_PARSE;
    }
    while (len > 8 && v[len - 1] == '/')
        len--;
    if (len >= size) {
        snprintf(why, cap, "URL longer than %zu bytes", size - 1);
        return FG_E_RANGE;
    }
    memcpy(dst, v, len);
    dst[len] = '\0';
    return 0;
}

/* Parse v for key k into the struct at base (a struct fg_rules or a struct fg_policy). */
static int set_value(const struct key *k, void *base, const char *v, char *why, size_t cap)
{
    char *field = (char *)base + k->off;
    int idx, rc;
    double d;
    switch (k->type) {
    case K_ACTION:
        if ((rc = parse_names(v, action_names, 4, &idx, why, cap)))
            return rc;
        *(enum fg_action *)(void *)field = (enum fg_action)idx;
        return 0;
    case K_BORDER:
        if ((rc = parse_names(v, border_names, 3, &idx, why, cap)))
            return rc;
        *(enum fg_borderline *)(void *)field = (enum fg_borderline)idx;
        return 0;
    case K_ONERR:
        if ((rc = parse_names(v, onerr_names, 2, &idx, why, cap)))
            return rc;
        *(enum fg_on_error *)(void *)field = (enum fg_on_error)idx;
        return 0;
    case K_ONUNK:
        if ((rc = parse_names(v, onunk_names, 3, &idx, why, cap)))
            return rc;
        *(enum fg_on_unknown *)(void *)field = (enum fg_on_unknown)idx;
        return 0;
    case K_REAL:
    case K_SECONDS:
        if (parse_decimal(v, &d)) {
            snprintf(why, cap, "expected a number%s in %g..%g",
                     k->type == K_SECONDS ? " of seconds" : "", k->min, k->max);
            return FG_E_PARSE;
        }
        if (d < k->min || d > k->max) {
            snprintf(why, cap, "out of range %g..%g", k->min, k->max);
            return FG_E_RANGE;
        }
        if (k->type == K_REAL)
            *(double *)(void *)field = d;
        else
            *(uint32_t *)(void *)field = (uint32_t)(d * 1000.0 + 0.5);
        return 0;
    case K_UINT:
        if (parse_decimal(v, &d) || strchr(v, '.')) {
            snprintf(why, cap, "expected a whole number in %g..%g", k->min, k->max);
            return FG_E_PARSE;
        }
        if (d < k->min || d > k->max) {
            snprintf(why, cap, "out of range %g..%g", k->min, k->max);
            return FG_E_RANGE;
        }
        *(uint32_t *)(void *)field = (uint32_t)d;
        return 0;
    case K_BOOL:
        return parse_bool(v, (bool *)(void *)field, why, cap);
    case K_MODES:
        return parse_modes(v, (unsigned *)(void *)field, why, cap);
    case K_DIRS:
        return parse_dirs(v, field, k->size, why, cap);
    case K_PATH:
        return parse_path(v, field, k->size, why, cap);
    case K_CALIB: { /* the site calibration (calib.h), read now: its errors are the policy's */
        struct fg_calib *c = (struct fg_calib *)(void *)field;
        char path[sizeof c->path];
        struct fg_err e = {0};
        if ((rc = parse_path(v, path, sizeof path, why, cap)))
            return rc;
        if (!path[0]) {
            memset(c, 0, sizeof *c);
            return 0;
        }
        if ((rc = fg_calib_load_site(c, path, &e))) {
            snprintf(why, cap, "%.*s", (int)(cap > 1 ? cap - 1 : 0), e.detail);
            memset(c, 0, sizeof *c);
        }
        return rc;
    }
    case K_URL:
        return parse_url(v, field, k->size, why, cap);
    case K_GRES: /* a gres type as jobs write it: --gres=gpu:TYPE:N */
        for (const char *c = v; *c; c++)
            if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_' ||
                  *c == '-' || *c == '.')) {
                snprintf(why, cap, "expected a gres type such as a100 or h100_80g");
                return FG_E_PARSE;
            }
        if (strlen(v) >= k->size) {
            snprintf(why, cap, "gres type longer than %zu bytes", k->size - 1);
            return FG_E_RANGE;
        }
        snprintf(field, k->size, "%s", v);
        return 0;
    case K_LOG: /* the audit trail (audit.h): syslog, or a file */
        if (!strcasecmp(v, "syslog")) {
            snprintf(field, k->size, "syslog");
            return 0;
        }
        if ((rc = parse_path(v, field, k->size, why, cap)) == FG_E_PARSE)
            snprintf(why, cap, "expected syslog, or an absolute path without blanks");
        return rc;
    }
    snprintf(why, cap, "internal: unknown key type");
    return FG_E_INVAL;
}

static int find_key(const char *name, size_t len)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (strlen(keys[i].name) == len && !strncasecmp(keys[i].name, name, len))
            return (int)i;
    return -1;
}

static void known_keys(char *buf, size_t cap, unsigned where)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < NKEYS && off < cap; i++)
        if (keys[i].where & where)
            off += (size_t)snprintf(buf + off, cap - off, "%s%s", off ? " " : "", keys[i].name);
}

void fg_policy_init(struct fg_policy *p)
{
    char why[160];
    memset(p, 0, sizeof *p);
    for (size_t i = 0; i < NKEYS; i++) {
        void *base = keys[i].rule ? (void *)&p->rules : (void *)p;
        /* The defaults are rows of the table; they always parse. */
        (void)set_value(&keys[i], base, keys[i].def, why, sizeof why);
    }
}

/* Records the first error only; later ones are dropped (reported once). */
static int record(struct fg_err *err, int first_rc, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int record(struct fg_err *err, int first_rc, int rc, const char *fmt, ...)
{
    if (first_rc)
        return first_rc;
    if (err) {
        char msg[FG_ERR_DETAIL_MAX];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        fg_err_set(err, rc, "%s", msg);
    }
    return rc;
}

/* Resolved rules of part i (site-wide rules under its overrides). */
static void resolve(const struct fg_policy *p, const struct fg_policy_part *part,
                    struct fg_rules *out)
{
    *out = p->rules;
    for (size_t k = 0; k < NKEYS; k++) {
        if (!(part->set & (1ull << k)) || !keys[k].rule)
            continue;
        memcpy((char *)out + keys[k].off, (const char *)&part->rules + keys[k].off,
               keys[k].size);
    }
}

/* Cross-key checks: conservative >= headroom, min <= max. */
static int check_rules(const struct fg_rules *r, char *why, size_t cap, int *k_late)
{
    if (r->conservative < r->headroom) {
        snprintf(why, cap, "Conservative=%g is below Headroom=%g (the conservative peak is the "
                           "larger factor)", r->conservative, r->headroom);
        *k_late = KEY_CONSERVATIVE;
        return FG_E_RANGE;
    }
    if (r->min_gpus > r->max_gpus) {
        snprintf(why, cap, "MinGPUs=%u is above MaxGPUs=%u", r->min_gpus, r->max_gpus);
        *k_late = KEY_MAX_GPUS;
        return FG_E_RANGE;
    }
    if (r->min_gpus_node > r->max_gpus_node) {
        snprintf(why, cap, "MinGPUsPerNode=%u is above MaxGPUsPerNode=%u", r->min_gpus_node,
                 r->max_gpus_node);
        *k_late = KEY_MAX_GPUS_PER_NODE;
        return FG_E_RANGE;
    }
    return 0;
}

static int validate(const struct fg_policy *p, const char *origin, int first, struct fg_err *err)
{
    char why[200];
    int k;
    int rc = check_rules(&p->rules, why, sizeof why, &k);
    if (rc) {
        /* name the later of the two lines involved */
        int other = k == KEY_CONSERVATIVE ? KEY_HEADROOM : k == KEY_MAX_GPUS ? KEY_MIN_GPUS
                                                                           : KEY_MIN_GPUS_PER_NODE;
        unsigned line = p->key_line[k] > p->key_line[other] ? p->key_line[k]
                                                            : p->key_line[other];
        if (line)
            first = record(err, first, rc, "%s:%u: %s", origin, line, why);
        else
            first = record(err, first, rc, "%s: %s", origin, why);
    }
    for (size_t i = 0; i < p->n_parts; i++) {
        struct fg_rules r;
        resolve(p, &p->parts[i], &r);
        if ((rc = check_rules(&r, why, sizeof why, &k)))
            first = record(err, first, rc, "%s:%u: PartitionName=%s: %s", origin,
                           p->parts[i].line, p->parts[i].name, why);
    }
    return first;
}

static bool valid_part_name(const char *s, size_t n)
{
    if (!n || n >= sizeof(((struct fg_policy_part *)0)->name))
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.'))
            return false;
    }
    return true;
}

/* One line: tokens "Key=Value" (value may be "quoted"); '#' starts a comment. */
static int parse_line(struct fg_policy *p, char *line, unsigned lineno, const char *origin,
                      int first, struct fg_err *err)
{
    char *s = line;
    struct fg_policy_part *part = NULL;
    bool first_token = true;
    char why[200];
    for (;;) {
        while (*s == ' ' || *s == '\t' || *s == '\r')
            s++;
        if (!*s || *s == '#')
            break;
        char *key = s;
        while (*s && *s != '=' && *s != ' ' && *s != '\t' && *s != '#')
            s++;
        size_t klen = (size_t)(s - key);
        if (*s != '=') {
            first = record(err, first, FG_E_PARSE, "%s:%u: expected Key=Value, got '%.*s'",
                           origin, lineno, (int)(klen > 60 ? 60 : klen), key);
            return first; /* the rest of the line cannot be trusted */
        }
        s++;
        char *val = s, *vend;
        if (*s == '"') {
            val = ++s;
            while (*s && *s != '"')
                s++;
            if (*s != '"') {
                first = record(err, first, FG_E_PARSE, "%s:%u: %.*s: unterminated quote",
                               origin, lineno, (int)(klen > 60 ? 60 : klen), key);
                return first;
            }
            vend = s++;
        } else {
            while (*s && *s != ' ' && *s != '\t' && *s != '\r' && *s != '#')
                s++;
            vend = s;
        }
        char saved = *vend;
        *vend = '\0';
        if (klen == 13 && !strncasecmp(key, "PartitionName", 13)) {
            if (!first_token) {
                first = record(err, first, FG_E_PARSE,
                               "%s:%u: PartitionName= must start its line", origin, lineno);
                *vend = saved;
                return first;
            } else if (!valid_part_name(val, strlen(val))) {
                first = record(err, first, FG_E_PARSE,
                               "%s:%u: PartitionName='%.60s' is not a partition name", origin,
                               lineno, val);
                *vend = saved;
                return first;
            } else {
                for (size_t i = 0; i < p->n_parts; i++) {
                    if (!strcmp(p->parts[i].name, val)) {
                        first = record(err, first, FG_E_PARSE,
                                       "%s:%u: PartitionName=%s already given at line %u",
                                       origin, lineno, val, p->parts[i].line);
                        *vend = saved;
                        return first;
                    }
                }
                if (p->n_parts == FG_POLICY_MAX_PARTS) {
                    first = record(err, first, FG_E_RANGE,
                                   "%s:%u: more than %d PartitionName= lines", origin, lineno,
                                   FG_POLICY_MAX_PARTS);
                    *vend = saved;
                    return first;
                }
                part = &p->parts[p->n_parts++];
                memset(part, 0, sizeof *part);
                snprintf(part->name, sizeof part->name, "%s", val);
                part->line = lineno;
            }
        } else {
            int k = find_key(key, klen);
            unsigned where = part ? W_PART : W_FILE;
            if (k < 0) {
                char known[400];
                known_keys(known, sizeof known, where);
                first = record(err, first, FG_E_PARSE, "%s:%u: unknown key '%.*s' (known: %s)",
                               origin, lineno, (int)(klen > 60 ? 60 : klen), key, known);
            } else if (!(keys[k].where & where)) {
                first = record(err, first, FG_E_PARSE, "%s:%u: %s %s", origin, lineno,
                               keys[k].name,
                               part ? "applies to the whole site: give it on a line without "
                                      "PartitionName="
                                    : "is a plugstack.conf argument, not a fitgate.conf key");
            } else if (part ? (part->set >> k) & 1 : p->key_line[k] != 0) {
                /* a key given twice: which one the site meant is not for fitgate to guess */
                if (part)
                    first = record(err, first, FG_E_PARSE, "%s:%u: %s given twice on the line "
                                   "of PartitionName=%s", origin, lineno, keys[k].name,
                                   part->name);
                else
                    first = record(err, first, FG_E_PARSE, "%s:%u: %s already given at line "
                                   "%u: give each key once", origin, lineno, keys[k].name,
                                   p->key_line[k]);
            } else {
                void *base = part ? (void *)&part->rules
                                  : keys[k].rule ? (void *)&p->rules : (void *)p;
                int rc = set_value(&keys[k], base, val, why, sizeof why);
                if (rc)
                    first = record(err, first, rc, "%s:%u: %s=%.80s: %s", origin, lineno,
                                   keys[k].name, val, why);
                else if (part)
                    part->set |= 1ull << k;
                else
                    p->key_line[k] = lineno;
            }
        }
        *vend = saved;
        first_token = false;
    }
    return first;
}

int fg_policy_parse(struct fg_policy *p, const char *text, size_t len, const char *origin,
                    struct fg_err *err)
{
    int first = 0;
    unsigned lineno = 0;
    size_t i = 0;
    if (!origin)
        origin = "fitgate.conf";
    if (memchr(text, '\0', len))
        return record(err, 0, FG_E_PARSE, "%s: binary data (NUL byte) in a text file", origin);
    while (i < len) {
        size_t j = i;
        while (j < len && text[j] != '\n')
            j++;
        lineno++;
        char *line = malloc(j - i + 1);
        if (!line)
            return record(err, first, FG_E_NOMEM, "%s: out of memory", origin);
        memcpy(line, text + i, j - i);
        line[j - i] = '\0';
        first = parse_line(p, line, lineno, origin, first, err);
        free(line);
        i = j + 1;
    }
    return validate(p, origin, first, err);
}

int fg_policy_load(struct fg_policy *p, const char *path, struct fg_err *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = fg__policy_read(path, &text, &len, err);
    if (!rc)
        rc = fg_policy_parse(p, text, len, path, err);
    free(text);
    return rc;
}

int fg_policy_gpu_table(const struct fg_policy *p, struct fg_gpu_table **out, struct fg_err *err)
{
    *out = NULL;
    if (!p->gpu_table[0])
        return 0;
    int rc = fg_gpu_table_load_site(p->gpu_table, out, err);
    if (rc) {
        unsigned line = p->key_line[KEY_GPU_TABLE];
        char at[24] = "";
        if (line)
            snprintf(at, sizeof at, " (line %u)", line);
        fg_err_prefix(err, "GpuTable=%.300s%s", p->gpu_table, at);
    }
    return rc;
}

int fg_policy_args(struct fg_policy *p, int argc, char *const *argv, const char *origin,
                   struct fg_err *err)
{
    int first = 0;
    char why[200];
    if (!origin)
        origin = "plugstack.conf";
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *eq = strchr(a, '=');
        if (!eq) {
            first = record(err, first, FG_E_PARSE, "%s: argument '%.60s': expected key=value",
                           origin, a);
            continue;
        }
        int k = find_key(a, (size_t)(eq - a));
        if (k < 0 || !(keys[k].where & W_ARG)) {
            char known[400];
            known_keys(known, sizeof known, W_ARG);
            first = record(err, first, FG_E_PARSE, "%s: unknown argument '%.*s' (known: %s)",
                           origin, (int)(eq - a > 60 ? 60 : eq - a), a, known);
            continue;
        }
        void *base = keys[k].rule ? (void *)&p->rules : (void *)p;
        int rc = set_value(&keys[k], base, eq + 1, why, sizeof why);
        if (rc)
            first = record(err, first, rc, "%s: argument %s=%.80s: %s", origin, keys[k].name,
                           eq + 1, why);
    }
    return validate(p, origin, first, err);
}

int fg_policy_setup(struct fg_policy *p, int argc, char *const *argv, const char *origin,
                    struct fg_err *err)
{
    fg_policy_init(p);
    /* The file named by the last conf= argument; a bad value is reported by the argument pass. */
    const char *conf = NULL;
    for (int i = 0; i < argc; i++)
        if (!strncasecmp(argv[i], "conf=/", 6))
            conf = argv[i] + 5;
    int first = 0;
    if (conf)
        first = fg_policy_load(p, conf, err);
    /* Arguments on top of the file. */
    int rc = fg_policy_args(p, argc, argv, origin, first ? NULL : err);
    return first ? first : rc;
}

static const struct fg_policy_part *find_part(const struct fg_policy *p, const char *partition)
{
    if (!partition || !*partition)
        return NULL;
    size_t n = strcspn(partition, ",");
    for (size_t i = 0; i < p->n_parts; i++)
        if (strlen(p->parts[i].name) == n && !strncmp(p->parts[i].name, partition, n))
            return &p->parts[i];
    return NULL;
}

void fg_policy_rules_for(const struct fg_policy *p, const char *partition, struct fg_rules *out)
{
    const struct fg_policy_part *part = find_part(p, partition);
    if (part)
        resolve(p, part, out);
    else
        *out = p->rules;
    out->calib = p->calib.n ? &p->calib : NULL;
}

bool fg_policy_has_partition(const struct fg_policy *p, const char *partition)
{
    return find_part(p, partition) != NULL;
}
