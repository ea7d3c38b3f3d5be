#include "util/fmt.h"

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
