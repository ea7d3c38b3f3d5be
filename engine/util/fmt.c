#include "util/fmt.h"

#include <stdlib.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct sink {
    char *dst;
    size_t cap, len; /* len: bytes the whole output has so far */
};

/* Byte by byte: the pieces are a few characters long, shorter than a call to memcpy. */
static void put(struct sink *k, const char *s, size_t n)
{
    if (k->len + 1 < k->cap) {
        size_t room = k->cap - 1 - k->len;
        char *d = k->dst + k->len;
        for (size_t i = 0, e = n < room ? n : room; i < e; i++)
            d[i] = s[i];
    }
    k->len += n;
}

static void put_u(struct sink *k, unsigned long long v, int negative)
{
    char buf[24], *p = buf + sizeof buf;
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (negative)
        *--p = '-';
    put(k, p, (size_t)(buf + sizeof buf - p));
}

int fg__vfmt(char *dst, size_t cap, const char *fmt, va_list ap)
{
    va_list whole;
    va_copy(whole, ap);
    struct sink k = {dst, cap, 0};
    for (const char *f = fmt; *f;) {
        const char *pct = f;
        while (*pct && *pct != '%')
            pct++;
        put(&k, f, (size_t)(pct - f));
        if (!*pct)
            break;
        f = pct + 1;
        int prec = -1;
        if (*f == '.') {
            f++;
            if (*f == '*') {
                prec = va_arg(ap, int);
                f++;
            } else {
                prec = 0;
                while (*f >= '0' && *f <= '9')
                    prec = prec * 10 + (*f++ - '0');
            }
        }
        int len = 0; /* 1 l, 2 ll, 3 z */
        if (*f == 'l') {
            len = f[1] == 'l' ? 2 : 1;
            f += len;
        } else if (*f == 'z') {
            len = 3;
            f++;
        }
        char c = *f;
        if (c == 's' && len == 0) {
            const char *s = va_arg(ap, const char *);
            put(&k, s, prec >= 0 ? strnlen(s, (size_t)prec) : strlen(s));
        } else if (c == '%' && prec < 0 && len == 0) {
            put(&k, "%", 1);
        } else if (c == 'c' && prec < 0 && len == 0) {
            char ch = (char)va_arg(ap, int);
            put(&k, &ch, 1);
        } else if ((c == 'd' || c == 'i') && prec < 0 && len != 3) {
            long long v = len == 2 ? va_arg(ap, long long) : len == 1 ? va_arg(ap, long)
                                                                      : va_arg(ap, int);
            put_u(&k, v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v, v < 0);
        } else if (c == 'u' && prec < 0) {
            unsigned long long v = len == 2 ? va_arg(ap, unsigned long long)
                                 : len == 1 ? va_arg(ap, unsigned long)
                                 : len == 3 ? va_arg(ap, size_t) : va_arg(ap, unsigned);
            put_u(&k, v, 0);
        } else {
            /* anything else (flags, widths, %f, %x, ...): the C library does the whole call */
            int n = vsnprintf(dst, cap, fmt, whole);
            va_end(whole);
            return n;
        }
        f++;
    }
    va_end(whole);
    if (cap)
        dst[k.len < cap ? k.len : cap - 1] = '\0';
    return k.len > INT32_MAX ? -1 : (int)k.len;
}

void fg__copy(char *dst, size_t cap, const char *src)
{
    size_t n = src ? strnlen(src, cap - 1) : 0;
    memcpy(dst, src ? src : "", n);
    dst[n] = '\0';
}

int fg__fmt(char *dst, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = fg__vfmt(dst, cap, fmt, ap);
    va_end(ap);
    return n;
}

void fg__list_append(char *dst, size_t cap, const char *item)
{
    size_t l = strlen(dst), il = strlen(item);
    if (l + (l ? 1 : 0) + il + 1 > cap)
        return;
    if (l)
        dst[l++] = ',';
    memcpy(dst + l, item, il + 1);
}

/* ---- escaping (fmt.h fg__esc) ------------------------------------------------------- */

size_t fg__esc_unit(const unsigned char *s, size_t n, int flags, int *unsafe, int *partial)
{
    unsigned char c = s[0];
    *partial = 0;
    if (c < 0x80) {
        *unsafe = (c < 0x20 && !((flags & FG_ESC_KEEP_NL) && (c == '\n' || c == '\t'))) ||
                  c == 0x7f;
        return 1;
    }
    /* the well-formed sequences of Unicode 15 table 3-7: no overlong forms, no
     * surrogates, nothing above U+10FFFF */
    size_t len;
    unsigned char lo = 0x80, hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0)
            lo = 0xa0;
        else if (c == 0xed)
            hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0)
            lo = 0x90;
        else if (c == 0xf4)
            hi = 0x8f;
    } else {
        *unsafe = 1;
        return 1;
    }
    for (size_t i = 1; i < len; i++) {
        if (i == n) {
            *partial = 1;
            *unsafe = 1;
            return 1;
        }
        unsigned char l = i == 1 ? lo : 0x80, h = i == 1 ? hi : 0xbf;
        if (s[i] < l || s[i] > h) {
            *unsafe = 1;
            return 1;
        }
    }
    *unsafe = (c == 0xc2 && s[1] <= 0x9f) ||                         /* C1 */
              (c == 0xe2 && s[1] == 0x80 &&
               (s[2] == 0x8e || s[2] == 0x8f || (s[2] >= 0xa8 && s[2] <= 0xae))) ||
              (c == 0xe2 && s[1] == 0x81 && s[2] >= 0xa6 && s[2] <= 0xa9);
    return len;
}

size_t fg__esc(char *dst, size_t cap, const char *src, size_t n, int flags)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)src;
    size_t o = 0;
    if (!cap)
        return 0;
    for (size_t i = 0; i < n;) {
        int unsafe, partial;
        size_t len = fg__esc_unit(s + i, n - i, flags, &unsafe, &partial);
        size_t need = unsafe ? 4 * len : len;
        if (o + need >= cap)
            break;
        for (size_t k = 0; k < len; k++) {
            if (unsafe) {
                dst[o++] = '\\';
                dst[o++] = 'x';
                dst[o++] = hex[s[i + k] >> 4];
                dst[o++] = hex[s[i + k] & 15];
            } else {
                dst[o++] = (char)s[i + k];
            }
        }
        i += len;
    }
    dst[o] = '\0';
    return o;
}

int fg__esc_needed(const char *s, int flags)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        /* printable ASCII, the common case, without the call */
        if (u[i] >= 0x20 && u[i] < 0x7f) {
            i++;
            continue;
        }
        int unsafe, partial;
        i += fg__esc_unit(u + i, n - i, flags, &unsafe, &partial);
        if (unsafe)
            return 1;
    }
    return 0;
}

void fg__esc_inplace(char *s, size_t cap, int flags)
{
    if (!cap || !fg__esc_needed(s, flags))
        return;
    size_t n = strnlen(s, cap - 1);
    char tmp[4096];
    char *copy = n < sizeof tmp ? tmp : malloc(n + 1);
    if (!copy) {
        /* no memory for the copy: the unsafe units become '?' (never left raw) */
        for (size_t i = 0; i < n; i++)
            if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f)
                s[i] = '?';
        return;
    }
    memcpy(copy, s, n);
    fg__esc(s, cap, copy, n, flags);
    if (copy != tmp)
        free(copy);
}
