/*
 * jsonscan.c - counting what a JSON text would build, before a parser builds it (jsonscan.h).
 */
#include "util/jsonscan.h"

#include <string.h>

void fg__json_count(const char *text, size_t len, uint64_t *objects, uint64_t *pairs)
{
    uint64_t o = 0, p = 0;
    const char *c = text, *end = text + len;
    while (c < end) {
        const char *q = memchr(c, '"', (size_t)(end - c));
        const char *stop = q ? q : end;
        for (; c < stop; c++) {
            o += *c == '{';
            p += *c == ':';
        }
        if (!q)
            break;
        for (c = q + 1; c < end && *c != '"'; c++) /* the string, its escapes skipped */
            if (*c == '\\' && c + 1 < end)
                c++;
        c++;
    }
    *objects = o;
    *pairs = p;
}
