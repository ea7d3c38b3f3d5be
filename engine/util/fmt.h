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

/*
 * Text from users, files and the network on its way to a terminal or a log: what fitgate
 * prints passes through fg__esc (error details, log lines, the CLI's stdout and stderr, the
 * plugin's Slurm messages, HTML).  A unit is one byte of ASCII, one well-formed UTF-8
 * sequence, or one byte of malformed UTF-8.  A unit is unsafe, and each of its bytes is
 * written as \xNN (lower-case hex), when it is:
 *   a C0 control (0x00-0x1f; newline and tab are kept under FG_ESC_KEEP_NL), DEL (0x7f);
 *   a C1 control in UTF-8 (U+0080-U+009F: U+009B is CSI to some terminals);
 *   malformed UTF-8 (a lone 0x9b is CSI to an 8-bit terminal);
 *   a line or paragraph separator (U+2028, U+2029) or a bidirectional control (U+200E,
 *   U+200F, U+202A-U+202E, U+2066-U+2069), which reorder or break what is shown.
 * Everything else, printable ASCII and the rest of UTF-8, is copied as it is; a backslash
 * too (the escape is for the eye and for log parsers, not a round trip).
 */
enum { FG_ESC_KEEP_NL = 1 };

/* The unit at s (n > 0 bytes left): its length; *unsafe as above.  *partial: the bytes
 * left are the start of a well-formed sequence that n cuts short (the unit is then
 * reported as one unsafe byte; a stream may wait for the rest instead). */
size_t fg__esc_unit(const unsigned char *s, size_t n, int flags, int *unsafe, int *partial);

/* src (n bytes; NUL bytes are escaped too) into dst (cap > 0), NUL-terminated, cut at a
 * whole unit or escape when it does not fit; returns the length written. */
size_t fg__esc(char *dst, size_t cap, const char *src, size_t n, int flags);

/* Whether the NUL-terminated s holds an unsafe unit (s then needs fg__esc). */
int fg__esc_needed(const char *s, int flags);

/* s (NUL-terminated, cap bytes of room) escaped in place, cut to cap - 1 bytes. */
void fg__esc_inplace(char *s, size_t cap, int flags);

#endif
