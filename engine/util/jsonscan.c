/*
 * jsonscan.c - passes over a JSON text before a parser builds it (jsonscan.h).
 */
#include "util/jsonscan.h"

#include <stdbool.h>
#include <stdlib.h>
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

char *fg__json_python_infinity(const char *text, size_t len)
{
    static const char word[] = "Infinity";
    const size_t n = sizeof word - 1;
    char *copy = NULL;
    bool in_string = false;
    for (size_t i = 0; i < len; i++) {
        if (in_string) {
            if (text[i] == '\\')
                i++;
            else if (text[i] == '"')
                in_string = false;
        } else if (text[i] == '"') {
            in_string = true;
        } else if (text[i] == 'I' && len - i >= n && !memcmp(text + i, word, n)) {
            if (!copy && (copy = malloc(len)))
                memcpy(copy, text, len);
            if (!copy)
                return NULL;
            memcpy(copy + i, "1e999   ", n);
            i += n - 1;
        }
    }
    return copy;
}
