/* format.h - numbers as the CLI and the HTML report print them, and the CLI's output sink. */
#ifndef FG_CLI_FORMAT_H
#define FG_CLI_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Decimal gigabytes, 3 significant digits ("178 GB", "16.4 GB", "1.30 GB"); returns buf. */
const char *fg_cli_gb(uint64_t bytes, char *buf, size_t cap);

/* Thousands separated by commas ("8,888,227,328"); returns buf. */
const char *fg_cli_count(uint64_t v, char *buf, size_t cap);

/*
 * The CLI's one output sink: stdout and stderr replaced (main.c, before any output) by
 * streams that write to descriptors 1 and 2 through util/fmt.h's escape, so nothing a
 * config.json, an audit line, a sacct row or a server sent reaches the terminal raw:
 * every control character but newline and tab, malformed UTF-8, C1 and bidirectional
 * controls as \xNN.  Buffering as before (stdout by lines on a terminal, else by blocks;
 * stderr unbuffered).  A write error (EPIPE, a full disk) makes the stream's fflush fail,
 * as before.  Returns 0, or -1 with the streams left as they were.
 */
int fg_cli_escape_stdio(void);

/*
 * JSON text from cJSON_Print made safe for the same sink without breaking the JSON: DEL,
 * C1, U+2028/9 and the bidirectional controls as \u escapes, a malformed UTF-8 byte as the
 * six characters \\xNN (the four "\xNN" once read).  cJSON escapes the C0 controls
 * itself.  Frees text; returns a new string (free()), or NULL when memory runs out.
 */
char *fg_cli_json_safe(char *text);

/* cJSON_Print(item) through fg_cli_json_safe: what the CLI prints as JSON; NULL when
 * memory runs out. */
struct cJSON;
char *fg_cli_json_print(const struct cJSON *item);

#endif
