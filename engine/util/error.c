#include "util/error.h"
#include "util/fmt.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *fg_strerror(int code)
{
    switch (code) {
    case FG_OK:
        return "success";
#define FG__ERR_CASE(name, val, text) case FG_E_##name: return text;
        FG_ERRNO_MAP(FG__ERR_CASE)
#undef FG__ERR_CASE
    default:
        return "unknown error";
    }
}

/* control characters, malformed UTF-8 and the like as \xNN (fmt.h fg__esc) */
static void scrub(char *s)
{
    fg__esc_inplace(s, FG_ERR_DETAIL_MAX, 0);
}

int fg_err_set(struct fg_err *err, int code, const char *fmt, ...)
{
    if (!err)
        return code;
    va_list ap;
    err->code = code;
    va_start(ap, fmt);
    vsnprintf(err->detail, sizeof err->detail, fmt, ap);
    va_end(ap);
    scrub(err->detail);
    return code;
}

void fg_err_prefix(struct fg_err *err, const char *fmt, ...)
{
    if (!err)
        return;
    char head[FG_ERR_DETAIL_MAX], old[FG_ERR_DETAIL_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    memcpy(old, err->detail, sizeof old);
    size_t hl = strlen(head);
    if (hl > sizeof err->detail - 3)
        hl = sizeof err->detail - 3;
    memcpy(err->detail, head, hl);
    memcpy(err->detail + hl, ": ", 2);
    size_t room = sizeof err->detail - hl - 3;
    size_t ol = strnlen(old, room);
    memcpy(err->detail + hl + 2, old, ol);
    err->detail[hl + 2 + ol] = '\0';
    scrub(err->detail);
}

void fg_err_clear(struct fg_err *err)
{
    if (!err)
        return;
    err->code = FG_OK;
    err->detail[0] = '\0';
}
