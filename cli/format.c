#include "format.h"

#include <stdio.h>

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
