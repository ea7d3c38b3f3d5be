/*
 * log.h - the engine never prints: it hands messages to a sink the front
 * end registers (the CLI prints to stderr, the plugin calls slurm_info /
 * slurm_error).  Without a sink, messages are dropped.
 */
#ifndef FG_LOG_H
#define FG_LOG_H

enum fg_log_level { FG_LOG_ERROR = 0, FG_LOG_WARN = 1, FG_LOG_INFO = 2, FG_LOG_DEBUG = 3 };

/* msg is borrowed for the duration of the call. */
typedef void (*fg_log_fn)(enum fg_log_level level, const char *msg, void *ctx);

/* Set the process-wide sink (NULL to drop messages) and the most verbose level passed on. */
void fg_log_set_sink(fg_log_fn fn, void *ctx, enum fg_log_level max_level);

/* Internal: format and pass to the sink. */
void fg__log(enum fg_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
