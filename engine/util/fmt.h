/*
 * fmt.h - snprintf for the engine's hot paths (internal).
 *
 * A graph build names and describes every node ("Attention_12", "GQA 32q/8kv x128") and
 * an estimate formats its attributed lines; glibc's snprintf spent more instructions on
 * that than the rest of a plan (callgrind, bench/RESULTS.md).  fg__fmt writes the same
 * bytes as snprintf for the conversions the engine uses: %%, %c, %s, %.Ns, %.*s, and
 * %d %i with no, l or ll length, %u with no, l, ll or z length.  Any other conversion, flag or width hands the
 * whole call to vsnprintf, so the output never differs, only the speed.
 *
 * Contract: snprintf's.  dst gets at most cap - 1 bytes and a NUL when cap > 0; the
 * return value is the length the whole output has (truncated or not).
 */
#ifndef FG_FMT_H
#define FG_FMT_H

#include <stdarg.h>
#include <stddef.h>

int fg__fmt(char *dst, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* fg__fmt(dst, cap, "%s", src) without reading a format: at most cap - 1 bytes and a NUL
 * (cap > 0); NULL copies as "". */
void fg__copy(char *dst, size_t cap, const char *src);

/* Append item to the comma list in dst (cap bytes): "a" -> "a,b"; dropped whole when it
 * does not fit. */
void fg__list_append(char *dst, size_t cap, const char *item);
int fg__vfmt(char *dst, size_t cap, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

#endif
