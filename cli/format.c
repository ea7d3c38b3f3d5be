#include "format.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/fmt.h"

const char *fg_cli_gb(uint64_t bytes, char *buf, size_t cap)
{
    double gb = (double)bytes / 1e9;
    if (gb >= 100)
        snprintf(buf, cap, "%.0f GB", gb);
    else if (gb >= 10)
        snprintf(buf, cap, "%.1f GB", gb);
    else
        snprintf(buf, cap, "%.2f GB", gb);
    return buf;
}

const char *fg_cli_count(uint64_t v, char *buf, size_t cap)
{
    char raw[32];
    int n = snprintf(raw, sizeof raw, "%llu", (unsigned long long)v);
    size_t o = 0;
    for (int i = 0; i < n && o + 2 < cap; i++) {
        buf[o++] = raw[i];
        if ((n - i - 1) % 3 == 0 && i != n - 1)
            buf[o++] = ',';
    }
    buf[o] = '\0';
    return buf;
}

/* ---- the output sink (format.h fg_cli_escape_stdio) ------------------------------------ */

struct esc_stream {
    int fd;
    unsigned char pending[4]; /* the start of a UTF-8 sequence cut by a buffer's end */
    size_t n_pending;
};

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* s[0..n) escaped to the descriptor: runs of safe bytes straight from s, each unsafe unit as
 * \xNN; a sequence cut at the end of this write waits for the next (a stream's buffer may
 * end inside a character) unless last; NUL bytes are escaped too. */
static int esc_flush_units(struct esc_stream *e, const unsigned char *s, size_t n, bool last)
{
    static const char hex[] = "0123456789abcdef";
    size_t i = 0, run = 0; /* s[run..i) is safe and not yet written */
    while (i < n) {
        unsigned char c = s[i];
        if ((c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t') {
            i++; /* the common case, without the call */
            continue;
        }
        int unsafe, partial;
        size_t len = fg__esc_unit(s + i, n - i, FG_ESC_KEEP_NL, &unsafe, &partial);
        if (!unsafe) {
            i += len;
            continue;
        }
        if (i > run && write_all(e->fd, (const char *)s + run, i - run))
            return -1;
        if (partial && !last) {
            memcpy(e->pending, s + i, n - i);
            e->n_pending = n - i;
            return 0;
        }
        char out[16];
        for (size_t k = 0; k < len; k++) {
            out[4 * k] = '\\';
            out[4 * k + 1] = 'x';
            out[4 * k + 2] = hex[s[i + k] >> 4];
            out[4 * k + 3] = hex[s[i + k] & 15];
        }
        if (write_all(e->fd, out, 4 * len))
            return -1;
        i += len;
        run = i;
    }
    return i > run ? write_all(e->fd, (const char *)s + run, i - run) : 0;
}

static ssize_t esc_write(void *cookie, const char *buf, size_t size)
{
    struct esc_stream *e = cookie;
    const unsigned char *s = (const unsigned char *)buf;
    size_t used = 0;
    if (e->n_pending) {
        /* complete the cut sequence with this write's first bytes */
        unsigned char seq[8];
        size_t have = e->n_pending, take = size < 4 - have ? size : 4 - have;
        memcpy(seq, e->pending, have);
        memcpy(seq + have, s, take);
        int unsafe, partial;
        size_t len = fg__esc_unit(seq, have + take, FG_ESC_KEEP_NL, &unsafe, &partial);
        e->n_pending = 0;
        if (partial && have + take < 4 && take == size) {
            memcpy(e->pending, seq, have + take); /* still cut: wait again */
            e->n_pending = have + take;
            return (ssize_t)size;
        }
        if (len <= have) {
            /* the old bytes were not the start of a sequence after all: escaped alone */
            if (esc_flush_units(e, seq, have, true))
                return -1;
        } else {
            if (esc_flush_units(e, seq, len, true))
                return -1;
            used = len - have;
        }
    }
    if (esc_flush_units(e, s + used, size - used, false))
        return -1;
    return (ssize_t)size;
}

static FILE *esc_open(int fd)
{
    static struct esc_stream streams[2];
    struct esc_stream *e = &streams[fd == 2];
    e->fd = fd;
    e->n_pending = 0;
    cookie_io_functions_t io = {.write = esc_write};
    return fopencookie(e, "w", io);
}

int fg_cli_escape_stdio(void)
{
    FILE *out = esc_open(1), *err = out ? esc_open(2) : NULL;
    if (!out || !err) {
        if (out)
            fclose(out);
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    setvbuf(out, NULL, isatty(1) ? _IOLBF : _IOFBF, BUFSIZ);
    setvbuf(err, NULL, _IONBF, 0);
    stdout = out;
    stderr = err;
    return 0;
}

/* ---- JSON ------------------------------------------------------------------------------ */

char *fg_cli_json_safe(char *text)
{
    if (!text || !fg__esc_needed(text, FG_ESC_KEEP_NL))
        return text;
    static const char hex[] = "0123456789abcdef";
    size_t n = strlen(text);
    /* at most 7 bytes out per byte in (a malformed byte: \\xNN) */
    char *out = malloc(7 * n + 1);
    if (!out) {
        free(text);
        return NULL;
    }
    const unsigned char *s = (const unsigned char *)text;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        int unsafe, partial;
        size_t len = fg__esc_unit(s + i, n - i, FG_ESC_KEEP_NL, &unsafe, &partial);
        if (!unsafe) {
            memcpy(out + o, s + i, len);
            o += len;
        } else if (len == 1 && s[i] >= 0x80) {
            o += (size_t)sprintf(out + o, "\\\\x%c%c", hex[s[i] >> 4], hex[s[i] & 15]);
        } else {
            /* the code point as \uXXXX: ASCII, two-byte (C1) or three-byte sequences */
            unsigned cp = len == 1   ? s[i]
                          : len == 2 ? ((s[i] & 0x1fu) << 6) | (s[i + 1] & 0x3fu)
                                     : ((s[i] & 0x0fu) << 12) | ((s[i + 1] & 0x3fu) << 6) |
                                           (s[i + 2] & 0x3fu);
            o += (size_t)sprintf(out + o, "\\u%04x", cp);
        }
        i += len;
    }
    out[o] = '\0';
    free(text);
    return out;
}

char *fg_cli_json_print(const struct cJSON *item)
{
    return fg_cli_json_safe(cJSON_Print(item));
}
