/*
 * html.h - what every page fitgate writes shares: escaping, the head, and the
 * write beside the target and rename over it (`plan --html`, `report --html`,
 * `learn --html`).  Each page keeps its own style sheet and body.
 */
#ifndef FG_CLI_HTML_H
#define FG_CLI_HTML_H

#include <stdio.h>

#include "util/error.h"

/*
 * Write s (NULL: nothing) to f escaped for HTML text and attribute values alike
 * (& < > " ' as entities); control characters other than newline and tab, DEL,
 * malformed UTF-8, C1 and bidirectional controls become the text \xNN (util/fmt.h
 * fg__esc): the document stays valid and shows what was there.
 */
void fg_cli_html_esc(FILE *f, const char *s);

/*
 * The page from <!DOCTYPE html> to the opening <body> line: title (escaped)
 * and css (copied as it is, written by us) in the head.
 */
void fg_cli_html_head(FILE *f, const char *title, const char *css);

/* Writes a whole page to f (borrowed; not closed); 0 or a negative FG_E_*. */
typedef int (*fg_cli_html_writer)(FILE *f, const void *ctx, struct fg_err *err);

/*
 * Call write(f, ctx, err) on a temporary file beside path and rename it over
 * path, so a reader never sees half a page and a failed run leaves an earlier
 * page in place; the file is made as readable as any the user writes (umask).
 * A path that exists and is not a regular file (/dev/stdout, a pipe) is
 * written directly.  Fails with write's error, FG_E_NOMEM, or FG_E_IO with a
 * detail that names path.
 */
int fg_cli_html_file(const char *path, fg_cli_html_writer write, const void *ctx,
                     struct fg_err *err);

#endif
