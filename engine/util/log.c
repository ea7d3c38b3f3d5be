#include "util/log.h"
#include "util/fmt.h"

#include <stdarg.h>
#include <stdio.h>

static fg_log_fn sink;
static void *sink_ctx;
static enum fg_log_level sink_max = FG_LOG_INFO;

void fg_log_set_sink(fg_log_fn fn, void *ctx, enum fg_log_level max_level)
{
    sink = fn;
    sink_ctx = ctx;
    sink_max = max_level;
}

void fg__log(enum fg_log_level level, const char *fmt, ...)
{
    if (!sink || level > sink_max)
        return;
    char raw[1024], buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    /* messages quote ids, URLs and headers from users and servers: no raw
     * control character may reach a terminal or syslog (as fg_err_set): \xNN */
    fg__esc(buf, sizeof buf, raw, n < 0 ? 0 : (size_t)n < sizeof raw ? (size_t)n : sizeof raw - 1, 0);
    sink(level, buf, sink_ctx);
}
