/* html.c - the pieces of every fitgate HTML page; see html.h. */
#include "html.h"
#include "util/fmt.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void fg_cli_html_esc(FILE *f, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    for (size_t i = 0; i < n;) {
        switch (s[i]) {
        case '&': fputs("&amp;", f); i++; continue;
        case '<': fputs("&lt;", f); i++; continue;
        case '>': fputs("&gt;", f); i++; continue;
        case '"': fputs("&quot;", f); i++; continue;
        case '\'': fputs("&#39;", f); i++; continue;
        default: break;
        }
        /* control characters, malformed UTF-8, C1 and bidirectional controls as the text
         * \xNN, as on a terminal (util/fmt.h fg__esc) */
        int unsafe, partial;
        size_t len = fg__esc_unit((const unsigned char *)s + i, n - i, FG_ESC_KEEP_NL, &unsafe,
                                  &partial);
        for (size_t k = 0; k < len; k++, i++) {
            if (unsafe)
                fprintf(f, "\\x%02x", (unsigned char)s[i]);
            else
                fputc(s[i], f);
        }
    }
}

void fg_cli_html_head(FILE *f, const char *title, const char *css)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta name=\"generator\" content=\"fitgate\">\n<title>", f);
    fg_cli_html_esc(f, title);
    fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n", css);
}

int fg_cli_html_file(const char *path, fg_cli_html_writer write, const void *ctx,
                     struct fg_err *err)
{
    struct stat st;
    if (!path || !*path)
        return fg_err_set(err, FG_E_INVAL, "--html needs a file name");
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        FILE *f = fopen(path, "w");
        if (!f)
            return fg_err_set(err, FG_E_IO, "%s: %s", path, strerror(errno));
        int rc = write(f, ctx, err);
        if (fclose(f) && !rc)
            rc = fg_err_set(err, FG_E_IO, "%s: %s", path, strerror(errno));
        return rc;
    }
    size_t n = strlen(path);
    char *tmp = malloc(n + 8);
    if (!tmp)
        return fg_err_set(err, FG_E_NOMEM, "out of memory");
    memcpy(tmp, path, n);
    memcpy(tmp + n, ".XXXXXX", 8);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        return fg_err_set(err, FG_E_IO, "%s: cannot create a file beside it: %s", path,
                          strerror(e));
    }
    /* mkstemp makes 0600; a page is as readable as any file the user writes */
    mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(fd, 0666 & ~mask);
    FILE *f = fdopen(fd, "w");
    if (!f) {
        int e = errno;
        close(fd);
        unlink(tmp);
        free(tmp);
        return fg_err_set(err, FG_E_IO, "%s: %s", path, strerror(e));
    }
    int rc = write(f, ctx, err);
    if ((ferror(f) | fclose(f)) && !rc)
        rc = fg_err_set(err, FG_E_IO, "%s: %s", path, strerror(errno));
    if (!rc && rename(tmp, path))
        rc = fg_err_set(err, FG_E_IO, "%s: %s", path, strerror(errno));
    if (rc) {
        unlink(tmp);
        if (err && err->code == FG_E_IO && !strstr(err->detail, path))
            fg_err_prefix(err, "%s", path);
    }
    free(tmp);
    return rc;
}
