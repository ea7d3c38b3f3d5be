/*
 * audit.c - the audit trail's line format, its reader, and the writer to a
 * file or the local syslog.  See audit.h; docs/audit.md documents the line.
 *
 * The line's fields are one table (name, type, offset): the writer walks it
 * in order, the reader looks each row up, so adding a field is a row.
 */
#include "audit.h"
#include "stack/trainer.h"
#include "util/fileio.h"
#include "util/fmt.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* ---- names ------------------------------------------------------------------ */

#define FG__AUDIT_TEXT(name, text) text,
static const char *const verdict_names[] = {FG_AUDIT_X_VERDICT(FG__AUDIT_TEXT)};
static const char *const where_names[] = {FG_AUDIT_X_WHERE(FG__AUDIT_TEXT)};
#undef FG__AUDIT_TEXT

const char *fg_audit_verdict_name(enum fg_audit_verdict v)
{
    return (unsigned)v < FG_AUDIT_N_VERDICTS ? verdict_names[v] : "?";
}

const char *fg_audit_where_name(enum fg_audit_where w)
{
    return (unsigned)w < FG_AUDIT_N_WHERE ? where_names[w] : "?";
}

static int name_index(const char *const *names, int n, const char *name)
{
    for (int i = 0; name && i < n; i++)
        if (!strcmp(names[i], name))
            return i;
    return -1;
}

int fg_audit_verdict_from_name(const char *name)
{
    return name_index(verdict_names, FG_AUDIT_N_VERDICTS, name);
}

int fg_audit_where_from_name(const char *name)
{
    return name_index(where_names, FG_AUDIT_N_WHERE, name);
}

/* ---- the field table ----------------------------------------------------------- */

enum ftype { F_STR, F_U32, F_U64, F_TIME, F_TIME_UTC, F_VERDICT, F_WHERE };

struct field {
    const char *name;
    enum ftype type;
    size_t off, size;
    bool required;   /* the reader refuses a line without it */
    bool only_set;   /* written only when not 0 or "" (keys added later, on some lines only) */
};

#define FLD(name, type, member, req)                                                         \
    {name, type, offsetof(struct fg_audit_rec, member),                                     \
     sizeof(((struct fg_audit_rec *)0)->member), req, false}
#define FLD_SET(name, type, member)                                                          \
    {name, type, offsetof(struct fg_audit_rec, member),                                     \
     sizeof(((struct fg_audit_rec *)0)->member), false, true}

/* In the order written.  "v" comes first and is not a member: always FG_AUDIT_VERSION. */
static const struct field fields[] = {
    FLD("time", F_TIME, time, true),
    FLD("time_utc", F_TIME_UTC, time, false), /* derived from time; ignored when read */
    FLD("submit_id", F_STR, submit_id, false),
    FLD_SET("key", F_STR, key),
    FLD("job_id", F_U64, job_id, false),
    FLD("where", F_WHERE, where, false),
    FLD("user", F_STR, user, false),
    FLD("uid", F_U32, uid, false),
    FLD("partition", F_STR, partition, false),
    FLD("model", F_STR, model, false),
    FLD_SET("model_type", F_STR, model_type),
    FLD("revision", F_STR, revision, false),
    FLD("request", F_STR, request, false),
    FLD("request_after", F_STR, request_after, false),
    FLD("gpus_asked", F_U32, gpus_asked, false),
    FLD("gpus_after", F_U32, gpus_after, false),
    FLD("nodes", F_U32, nodes, false),
    FLD("nodes_after", F_U32, nodes_after, false),
    FLD("time_limit_min", F_U32, time_limit_min, false),
    FLD_SET("time_limit", F_STR, time_limit),
    FLD("card", F_STR, card, false),
    FLD("framework", F_STR, framework, false),
    FLD("mode", F_STR, mode, false),
    FLD("layout", F_STR, layout, false),
    FLD("estimate_bytes", F_U64, estimate_bytes, false),
    FLD("per_gpu_bytes", F_U64, per_gpu_bytes, false),
    FLD("usable_bytes", F_U64, usable_bytes, false),
    FLD("verdict", F_VERDICT, verdict, true),
    FLD("message", F_STR, message, false),
    FLD("override_reason", F_STR, override_reason, false),
    FLD("version", F_STR, version, false),
    FLD_SET("gpu_peak_bytes", F_U64, gpu_peak_bytes),
    FLD_SET("calibration_milli", F_U32, calibration_milli),
};
#define NFIELDS (sizeof fields / sizeof fields[0])

/* Numbers are written as JSON integers; readers that hold them in a double (cJSON,
 * JavaScript) are exact up to 2^53, which the reader enforces. */
#define JSON_INT_MAX 9007199254740992.0

/* ---- building a record ---------------------------------------------------------- */

static void copy(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src ? src : "");
}

void fg_audit_set_time_limit(struct fg_audit_rec *rec, uint32_t minutes)
{
    rec->time_limit_min = minutes >= FG_TIME_NO_VAL ? 0 : minutes;
    copy(rec->time_limit, sizeof rec->time_limit, minutes == FG_TIME_UNLIMITED ? "unlimited"
                                                                               : "");
}

void fg_audit_rec_init(struct fg_audit_rec *rec, enum fg_audit_where where)
{
    static unsigned seq;
    struct timespec ts;
    char host[64];
    memset(rec, 0, sizeof *rec);
    clock_gettime(CLOCK_REALTIME, &ts);
    rec->time = (int64_t)ts.tv_sec;
    if (gethostname(host, sizeof host))
        copy(host, sizeof host, "unknown");
    host[sizeof host - 1] = '\0';
    /* pid and nanoseconds tell processes and decisions apart; seq, decisions of one process
     * in the same nanosecond (threads of slurmctld's job_submit) */
    snprintf(rec->submit_id, sizeof rec->submit_id, "%s:%ld:%lld.%09ld:%u", host,
             (long)getpid(), (long long)ts.tv_sec, ts.tv_nsec,
             __atomic_fetch_add(&seq, 1u, __ATOMIC_RELAXED));
    copy(rec->key, sizeof rec->key, rec->submit_id);
    rec->uid = (uint32_t)getuid();
    rec->where = where;
    rec->verdict = FG_AUDIT_ALLOW;
    copy(rec->version, sizeof rec->version, FITGATE_VERSION);
}

static void layout_str(const struct fg_layout *l, char *buf, size_t cap)
{
    int w = snprintf(buf, cap, "TP=%u PP=%u DP=%u", l->tp ? l->tp : 1, l->pp ? l->pp : 1,
                     l->dp ? l->dp : 1);
    size_t off = w > 0 && (size_t)w < cap ? (size_t)w : cap;
    if (l->ep > 1 && off < cap)
        off += (size_t)snprintf(buf + off, cap - off, " EP=%u", l->ep);
    if (l->zero && off < cap)
        snprintf(buf + off, cap - off, " ZeRO=%u", l->zero);
}

void fg_audit_from_decision(struct fg_audit_rec *rec, const struct fg_request *q,
                            const struct fg_decision *d)
{
    static const enum fg_audit_verdict kind_verdict[] = {
        [FG_DECIDE_ALLOW] = FG_AUDIT_ALLOW,
        [FG_DECIDE_WARN] = FG_AUDIT_WARN,
        [FG_DECIDE_REJECT] = FG_AUDIT_REJECT,
        [FG_DECIDE_RESIZE] = FG_AUDIT_RESIZE,
    };
    copy(rec->partition, sizeof rec->partition, q->partition);
    copy(rec->model, sizeof rec->model, q->model);
    copy(rec->card, sizeof rec->card, q->gpu ? q->gpu->name : q->type);
    rec->gpus_asked = fg_request_total(q);
    rec->nodes = q->nodes ? q->nodes : 1;
    rec->request[0] = '\0';
    if (q->via != FG_VIA_NONE)
        fg_request_spell(q, q->count, q->nodes, rec->request, sizeof rec->request);
    /* fg_decide always sets nodes >= 1; fg_decide_error leaves the request alone (0) */
    if (!d || d->nodes == 0) {
        rec->gpus_after = rec->gpus_asked;
        rec->nodes_after = rec->nodes;
        copy(rec->request_after, sizeof rec->request_after, rec->request);
        if (d) {
            rec->verdict = FG_AUDIT_ERROR;
            copy(rec->message, sizeof rec->message, d->lines[0]);
        }
        return;
    }
    struct fg_request after = *q;
    after.count = d->count;
    after.nodes = d->nodes;
    rec->gpus_after = fg_request_total(&after);
    rec->nodes_after = d->nodes;
    rec->request_after[0] = '\0';
    if (q->via != FG_VIA_NONE)
        fg_request_spell(q, d->count, d->nodes, rec->request_after, sizeof rec->request_after);
    rec->verdict = (unsigned)d->kind < sizeof kind_verdict / sizeof kind_verdict[0]
                       ? kind_verdict[d->kind]
                       : FG_AUDIT_ERROR;
    copy(rec->message, sizeof rec->message, d->lines[0]);
    rec->layout[0] = '\0';
    rec->per_gpu_bytes = 0;
    if (d->has_layout) {
        layout_str(&d->layout, rec->layout, sizeof rec->layout);
        rec->per_gpu_bytes = d->layout.peak_bytes;
    }
}

void fg_audit_from_assessment(struct fg_audit_rec *rec, const struct fg_assessment *a)
{
    /* a preference / RL trainer with its adaptation ("grpo+lora"): learn groups by it */
    if (a->job.trainer != FG_TRAINER_SFT)
        snprintf(rec->mode, sizeof rec->mode, "%s+%s", fg_trainer_name(a->job.trainer),
                 fg_mode_name(a->job.mode));
    else
        copy(rec->mode, sizeof rec->mode, fg_mode_name(a->job.mode));
    copy(rec->model_type, sizeof rec->model_type, a->model_type);
    rec->estimate_bytes = a->est.total_bytes;
    rec->usable_bytes = a->have_card ? a->usable : 0;
    rec->calibration_milli = a->calib ? (uint32_t)(a->calib->factor * 1000 + 0.5) : 0;
}

/* ---- formatting ------------------------------------------------------------------ */

struct out {
    char *buf;
    size_t cap, len;
    bool full;
};

static void put(struct out *o, const char *s, size_t n)
{
    if (o->full || o->len + n >= o->cap) {
        o->full = true;
        return;
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

static void putf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct out *o, const char *fmt, ...)
{
    char tmp[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp)
        o->full = true;
    else
        put(o, tmp, (size_t)n);
}

/* Length of the well-formed UTF-8 sequence at s (n bytes left), 0 if it is not one: a lead
 * byte of 0x80 or above that fg__esc_unit (util/fmt.h, Unicode 15 table 3-7) takes as one
 * unit is malformed. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    int unsafe, partial;
    size_t len = fg__esc_unit(s, n, 0, &unsafe, &partial);
    return s[0] >= 0x80 && len == 1 ? 0 : len;
}

/* A JSON string (RFC 8259 section 7) of the first `size` bytes at s, NUL-terminated or not. */
static void put_str(struct out *o, const char *s, size_t size)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *u = (const unsigned char *)s;
    size_t n = strnlen(s, size);
    put(o, "\"", 1);
    for (size_t i = 0; i < n;) {
        unsigned char c = u[i];
        size_t len = utf8_seq(u + i, n - i);
        const char *esc = NULL;
        char ubuf[7];
        if (len == 0) {
            esc = "\\ufffd"; /* not UTF-8: the replacement character */
            len = 1;
        } else if (c == '"') {
            esc = "\\\"";
        } else if (c == '\\') {
            esc = "\\\\";
        } else if (c == '\n') {
            esc = "\\n";
        } else if (c == '\r') {
            esc = "\\r";
        } else if (c == '\t') {
            esc = "\\t";
        } else if (c < 0x20 || c == 0x7f) {
            ubuf[0] = '\\', ubuf[1] = 'u', ubuf[2] = '0', ubuf[3] = '0';
            ubuf[4] = hex[c >> 4], ubuf[5] = hex[c & 15], ubuf[6] = '\0';
            esc = ubuf;
        } else if (len > 1) {
            /* C1 controls (U+009B is CSI to some terminals), U+2028 / U+2029 (line ends to
             * JavaScript and some log viewers) and the bidirectional controls: a trail read
             * with tail or less shows them as escapes (util/fmt.h fg__esc_unit) */
            int unsafe, partial;
            fg__esc_unit(u + i, len, 0, &unsafe, &partial);
            if (unsafe) {
                unsigned cp = len == 2 ? ((c & 0x1fu) << 6) | (u[i + 1] & 0x3fu)
                                       : ((c & 0x0fu) << 12) | ((u[i + 1] & 0x3fu) << 6) |
                                             (u[i + 2] & 0x3fu);
                snprintf(ubuf, sizeof ubuf, "\\u%04x", cp & 0xffffu);
                esc = ubuf;
            }
        }
        if (esc)
            put(o, esc, strlen(esc));
        else
            put(o, s + i, len);
        i += len;
    }
    put(o, "\"", 1);
}

static void rfc3339(int64_t t, char *buf, size_t cap)
{
    struct tm tm;
    time_t tt = (time_t)t;
    if (!gmtime_r(&tt, &tm) || !strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm))
        copy(buf, cap, "");
}

size_t fg_audit_format(const struct fg_audit_rec *rec, char *buf, size_t cap)
{
    struct out o = {buf, cap, 0, false};
    if (!cap)
        return 0;
    putf(&o, "{\"v\":%d", FG_AUDIT_VERSION);
    for (size_t i = 0; i < NFIELDS; i++) {
        const struct field *f = &fields[i];
        const char *p = (const char *)rec + f->off;
        char t[32];
        if (f->only_set && ((f->type == F_U64 && !*(const uint64_t *)(const void *)p) ||
                            (f->type == F_U32 && !*(const uint32_t *)(const void *)p) ||
                            (f->type == F_STR && !*p)))
            continue;
        if (f->off == offsetof(struct fg_audit_rec, key) && !strcmp(rec->key, rec->submit_id))
            continue; /* the line's own submission: the reader takes submit_id */
        put(&o, ",\"", 2);
        put(&o, f->name, strlen(f->name));
        put(&o, "\":", 2);
        switch (f->type) {
        case F_STR:
            put_str(&o, p, f->size);
            break;
        case F_U32:
            putf(&o, "%u", *(const uint32_t *)(const void *)p);
            break;
        case F_U64:
            putf(&o, "%llu", (unsigned long long)*(const uint64_t *)(const void *)p);
            break;
        case F_TIME:
            putf(&o, "%lld", (long long)*(const int64_t *)(const void *)p);
            break;
        case F_TIME_UTC:
            rfc3339(*(const int64_t *)(const void *)p, t, sizeof t);
            put_str(&o, t, sizeof t);
            break;
        case F_VERDICT:
            put_str(&o, fg_audit_verdict_name(*(const enum fg_audit_verdict *)(const void *)p),
                    16);
            break;
        case F_WHERE:
            put_str(&o, fg_audit_where_name(*(const enum fg_audit_where *)(const void *)p), 16);
            break;
        }
    }
    put(&o, "}\n", 2);
    if (o.full) {
        buf[0] = '\0';
        return 0;
    }
    buf[o.len] = '\0';
    return o.len;
}

/* ---- reading ---------------------------------------------------------------------- */

static int read_number(const cJSON *it, const struct field *f, double max, double *out,
                       struct fg_err *err)
{
    if (!cJSON_IsNumber(it))
        return fg_err_set(err, FG_E_PARSE, "\"%s\" is not a number", f->name);
    double d = it->valuedouble;
    if (d != d || d < 0 || d > max || d != (double)(uint64_t)d)
        return fg_err_set(err, FG_E_RANGE, "\"%s\": %.17g is not a whole number in 0..%.0f",
                          f->name, d, max);
    *out = d;
    return 0;
}

static int read_field(const cJSON *it, const struct field *f, struct fg_audit_rec *rec,
                      struct fg_err *err)
{
    char *p = (char *)rec + f->off;
    double d;
    int rc, idx;
    switch (f->type) {
    case F_STR:
        if (!cJSON_IsString(it))
            return fg_err_set(err, FG_E_PARSE, "\"%s\" is not a string", f->name);
        if (strlen(it->valuestring) >= f->size)
            return fg_err_set(err, FG_E_RANGE, "\"%s\" is longer than %zu bytes", f->name,
                              f->size - 1);
        memcpy(p, it->valuestring, strlen(it->valuestring) + 1);
        return 0;
    case F_U32:
        if ((rc = read_number(it, f, 4294967295.0, &d, err)))
            return rc;
        *(uint32_t *)(void *)p = (uint32_t)d;
        return 0;
    case F_U64:
    case F_TIME:
        if ((rc = read_number(it, f, JSON_INT_MAX, &d, err)))
            return rc;
        if (f->type == F_TIME)
            *(int64_t *)(void *)p = (int64_t)d;
        else
            *(uint64_t *)(void *)p = (uint64_t)d;
        return 0;
    case F_TIME_UTC:
        return 0;
    case F_VERDICT:
    case F_WHERE:
        idx = cJSON_IsString(it) ? f->type == F_VERDICT
                                       ? fg_audit_verdict_from_name(it->valuestring)
                                       : fg_audit_where_from_name(it->valuestring)
                                 : -1;
        if (idx < 0)
            return fg_err_set(err, FG_E_PARSE, "\"%s\" is not one of %s", f->name,
                              f->type == F_VERDICT
                                  ? "allow, warn, reject, resize, override, error"
                                  : "cli, sbatch, salloc, srun, job_submit");
        if (f->type == F_VERDICT)
            *(enum fg_audit_verdict *)(void *)p = (enum fg_audit_verdict)idx;
        else
            *(enum fg_audit_where *)(void *)p = (enum fg_audit_where)idx;
        return 0;
    }
    return fg_err_set(err, FG_E_INVAL, "internal: field type");
}

void fg_audit_escape(struct fg_audit_rec *rec)
{
    for (size_t i = 0; i < NFIELDS; i++)
        if (fields[i].type == F_STR)
            fg__esc_inplace((char *)rec + fields[i].off, fields[i].size, 0);
}

int fg_audit_parse(const char *line, size_t len, struct fg_audit_rec *rec, struct fg_err *err)
{
    const char *end = NULL;
    int rc = 0;
    memset(rec, 0, sizeof *rec);
    cJSON *doc = cJSON_ParseWithLengthOpts(line, len, &end, 0);
    if (!doc)
        return fg_err_set(err, FG_E_PARSE, "not JSON (near byte %zu)",
                          end && end >= line ? (size_t)(end - line) : (size_t)0);
    for (const char *s = end; s && s < line + len; s++)
        if (*s != ' ' && *s != '\t' && *s != '\r' && *s != '\n') {
            rc = fg_err_set(err, FG_E_PARSE, "text after the JSON object (byte %zu)",
                            (size_t)(s - line));
            goto out;
        }
    if (!cJSON_IsObject(doc)) {
        rc = fg_err_set(err, FG_E_PARSE, "not a JSON object");
        goto out;
    }
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, "v");
    if (!cJSON_IsNumber(v)) {
        rc = fg_err_set(err, FG_E_PARSE, "no \"v\" (format version)");
        goto out;
    }
    if (v->valuedouble != FG_AUDIT_VERSION) {
        rc = fg_err_set(err, FG_E_UNSUPPORTED, "format version %.17g (this fitgate reads %d)",
                        v->valuedouble, FG_AUDIT_VERSION);
        goto out;
    }
    for (size_t i = 0; i < NFIELDS; i++) {
        const cJSON *it = cJSON_GetObjectItemCaseSensitive(doc, fields[i].name);
        if (!it || cJSON_IsNull(it)) {
            if (fields[i].required) {
                rc = fg_err_set(err, FG_E_PARSE, "no \"%s\"", fields[i].name);
                goto out;
            }
            continue;
        }
        if ((rc = read_field(it, &fields[i], rec, err)))
            goto out;
    }
    if (!rec->key[0]) /* a line from before "key": its own submission's */
        copy(rec->key, sizeof rec->key, rec->submit_id);
out:
    cJSON_Delete(doc);
    return rc;
}

/* ---- writing -------------------------------------------------------------------- */

/*
 * After a short write of n bytes on an O_APPEND file: no fragment left.  Where the file
 * ends right after the fragment, it is cut back to where the line began; if another writer
 * appended behind it meanwhile, the fragment is ended with a newline instead (one bad line
 * that readers skip, never the next line glued to it).  What was done, for the message.
 */
static const char *repair(int fd, ssize_t n)
{
    struct stat st;
    off_t end = lseek(fd, 0, SEEK_CUR); /* just after the fragment */
    if (n <= 0)
        return "";
    if (end >= n && !fstat(fd, &st) && st.st_size == end && !ftruncate(fd, end - n))
        return "; cut back";
    return write(fd, "\n", 1) == 1 ? "; the fragment ended with a newline"
                                    : "; a fragment is left";
}

static int redirect_fd = -1;

void fg_audit_redirect(int fd)
{
    redirect_fd = fd;
}

static int write_file(const char *target, const char *line, size_t len,
                      const struct fg_audit_rec *rec, struct fg_err *err)
{
    char path[4096];
    struct stat st;
    int rc;
    if (target[0] != '/')
        return fg_err_set(err, FG_E_INVAL, "LogFile=%s: not an absolute path", target);
    if ((rc = fg__path_expand("LogFile", target, rec->user, rec->uid, path, sizeof path, err)))
        return rc;
    /* O_NONBLOCK: a FIFO without a reader fails (ENXIO) instead of waiting for one, and a
     * full one fails (EAGAIN) instead of stopping sbatch; regular files ignore it */
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
                            O_CLOEXEC, 0640);
    if (fd < 0) {
        int e = errno;
        if (e == ELOOP)
            return fg_err_set(err, FG_E_DENIED, "audit log %s: a symbolic link (not followed)",
                              path);
        if (e == ENXIO)
            return fg_err_set(err, FG_E_IO, "audit log %s: a FIFO with no reader", path);
        return fg_err_set(err, e == EACCES || e == EPERM ? FG_E_DENIED : FG_E_IO,
                          "audit log %s: %s", path, strerror(e));
    }
    if (fstat(fd, &st)) {
        rc = fg_err_set(err, FG_E_IO, "audit log %s: %s", path, strerror(errno));
        goto out;
    }
    if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode)) {
        rc = fg_err_set(err, FG_E_IO, "audit log %s: not a file, FIFO or device", path);
        goto out;
    }
    /* A file root created just now for the line's user (%u / %U: the controller's check,
     * slurmctld as root, is the privileged side that creates per-user files): the user's,
     * so that their own sbatch can append to it */
    bool per_user = strstr(target, "%u") || strstr(target, "%U");
    if (S_ISREG(st.st_mode) && geteuid() == 0 && per_user && st.st_uid == 0 &&
        st.st_size == 0 && rec->uid && !fchown(fd, rec->uid, (gid_t)-1))
        st.st_uid = rec->uid;
    /* Another user's file in a shared directory would read this user's lines (and could
     * be made to hold forged ones): only the writer's own file, one root set up, or (for
     * root writing a per-user file) the line's own user's. */
    if (S_ISREG(st.st_mode) && st.st_uid != geteuid() && st.st_uid != 0 &&
        !(geteuid() == 0 && per_user && st.st_uid == rec->uid)) {
        rc = fg_err_set(err, FG_E_DENIED, "audit log %s: owned by uid %u, not by uid %u or root",
                        path, (unsigned)st.st_uid, (unsigned)geteuid());
        goto out;
    }
    ssize_t n;
    do
        n = write(fd, line, len); /* one write: O_APPEND places the whole line at the end */
    while (n < 0 && errno == EINTR);
    if (n < 0)
        rc = fg_err_set(err, FG_E_IO, "audit log %s: %s", path,
                        errno == EAGAIN ? "would block (FIFO full)" : strerror(errno));
    else if ((size_t)n != len)
        rc = fg_err_set(err, FG_E_IO, "audit log %s: short write (%zd of %zu bytes)%s", path,
                        n, len, S_ISREG(st.st_mode) ? repair(fd, n) : "");
out:
    close(fd);
    return rc;
}

int fg__audit_write_syslog(const char *socket_path, const struct fg_audit_rec *rec,
                           struct fg_err *err)
{
    static const char *const mon[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    char msg[FG_AUDIT_LINE_MAX + 128];
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    struct tm tm;
    time_t t = (time_t)rec->time;
    int rc = 0;
    if (strlen(socket_path) >= sizeof sa.sun_path)
        return fg_err_set(err, FG_E_RANGE, "syslog socket path too long: %s", socket_path);
    memcpy(sa.sun_path, socket_path, strlen(socket_path) + 1);
    if (!localtime_r(&t, &tm))
        memset(&tm, 0, sizeof tm);
    /* RFC 3164 as glibc's syslog() sends it (misc/syslog.c __vsyslog_internal:
     * "<PRI>Mmm dd hh:mm:ss TAG[PID]: MSG"); PRI 14 = LOG_USER | LOG_INFO.  Written here,
     * not through openlog()/syslog(): those change the process's ident and facility
     * (slurmctld's, in job_submit) and block when the daemon's socket buffer is full. */
    int h = snprintf(msg, sizeof msg, "<14>%s %2d %02d:%02d:%02d fitgate[%ld]: ",
                     mon[tm.tm_mon % 12], tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     (long)getpid());
    if (h < 0 || (size_t)h >= 128)
        return fg_err_set(err, FG_E_RANGE, "syslog header too long");
    size_t len = fg_audit_format(rec, msg + h, sizeof msg - (size_t)h);
    if (!len)
        return fg_err_set(err, FG_E_RANGE, "audit line too long");
    len += (size_t)h - 1; /* without the newline: syslog messages are not lines */
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return fg_err_set(err, FG_E_IO, "syslog: socket: %s", strerror(errno));
    ssize_t n;
    do
        n = sendto(fd, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&sa,
                   sizeof sa);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        rc = fg_err_set(err, FG_E_IO, "syslog %s: %s", socket_path,
                        errno == EAGAIN ? "the daemon is not keeping up (would block)"
                                        : strerror(errno));
    close(fd);
    return rc;
}

int fg_audit_write(const char *target, const struct fg_audit_rec *rec, struct fg_err *err)
{
    char line[FG_AUDIT_LINE_MAX];
    if (!target || !*target)
        return 0;
    if (!strcmp(target, "syslog") && redirect_fd < 0)
        return fg__audit_write_syslog("/dev/log", rec, err);
    size_t len = fg_audit_format(rec, line, sizeof line);
    if (!len)
        return fg_err_set(err, FG_E_RANGE, "audit line too long");
    if (redirect_fd >= 0) {
        ssize_t n;
        do
            n = write(redirect_fd, line, len);
        while (n < 0 && errno == EINTR);
        return n == (ssize_t)len ? 0 : fg_err_set(err, FG_E_IO, "audit line: %s",
                                                  n < 0 ? strerror(errno) : "short write");
    }
    return write_file(target, line, len, rec, err);
}
