/* auditlog.c - audit trails read line by line; see auditlog.h. */
#include "auditlog.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The JSON object in a line: the line itself, or what follows a syslog "fitgate[PID]: " tag. */
static const char *json_start(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s == '{')
        return s;
    const char *tag = strstr(s, " fitgate[");
    if (tag) {
        const char *close = strstr(tag, "]: {");
        return close ? close + 3 : NULL;
    }
    tag = strstr(s, " fitgate: {");
    return tag ? tag + 10 : NULL;
}

static void warn_bad(uint64_t *bad, const char *file, uint64_t lineno, const char *why)
{
    if (++*bad <= FG_CLI_AUDIT_WARNINGS)
        fprintf(stderr, "fitgate: warning: %s:%llu: skipped: %s\n", file,
                (unsigned long long)lineno, why);
}

/*
 * The next line of f into buf (at most cap - 1 bytes kept, NUL-terminated, without its
 * newline); the rest of a longer line is read and dropped, so one huge line costs no
 * memory, up to FG_CLI_AUDIT_LINE_HARD_MAX bytes, where the read stops (*len is then above
 * it).  *len is the whole line's length; *nul tells a NUL byte was in it.  false at the
 * end of the file.
 */
static bool read_line(FILE *f, char *buf, size_t cap, size_t *len, bool *nul)
{
    size_t n = 0;
    int c;
    *nul = false;
    while ((c = getc_unlocked(f)) != EOF && c != '\n') {
        if (c == '\0')
            *nul = true;
        if (n + 1 < cap)
            buf[n] = (char)c;
        if (++n > FG_CLI_AUDIT_LINE_HARD_MAX)
            break;
    }
    buf[n < cap ? n : cap - 1] = '\0';
    *len = n;
    return c != EOF || n > 0;
}

FILE *fg_cli_open_stream(const char *path, struct stat *st)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return NULL;
    if (fstat(fd, st) || !(S_ISREG(st->st_mode) || S_ISFIFO(st->st_mode))) {
        int e = S_ISDIR(st->st_mode) ? EISDIR : EINVAL;
        close(fd);
        errno = e;
        return NULL;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    FILE *f = fdopen(fd, "r");
    if (!f)
        close(fd);
    return f;
}

/* One trail of fg_cli_audit_read_all. */
static int read_trail(const char *path, uint64_t *lines, uint64_t *bad, fg_cli_audit_each each,
                      void *ctx)
{
    bool std = !strcmp(path, "-");
    const char *name = std ? "(stdin)" : path;
    struct stat st;
    FILE *f = std ? stdin : fg_cli_open_stream(path, &st);
    char *line = NULL;
    size_t n;
    bool nul;
    int rc = 0;
    if (!f) {
        fprintf(stderr, "fitgate: error: %s: %s\n", path,
                errno == EINVAL ? "not a regular file or a pipe" : strerror(errno));
        return -1;
    }
    if (std && fstat(0, &st)) {
        fprintf(stderr, "fitgate: error: (stdin): %s\n", strerror(errno));
        return -1;
    }
    struct fg_cli_trail at = {name, 0, (unsigned)st.st_uid,
                              (st.st_mode & (S_IWGRP | S_IWOTH)) != 0};
    if (!(line = malloc(FG_CLI_AUDIT_LINE_MAX + 1))) {
        fprintf(stderr, "fitgate: error: out of memory\n");
        rc = -1;
        goto out;
    }
    while (read_line(f, line, FG_CLI_AUDIT_LINE_MAX + 1, &n, &nul)) {
        at.line++;
        if (n > FG_CLI_AUDIT_LINE_HARD_MAX) {
            fprintf(stderr, "fitgate: error: %s:%llu: a line longer than %u MiB: not an audit "
                            "trail\n", name, (unsigned long long)at.line,
                    FG_CLI_AUDIT_LINE_HARD_MAX >> 20);
            rc = -1;
            goto out;
        }
        if (n > FG_CLI_AUDIT_LINE_MAX) {
            ++*lines;
            warn_bad(bad, name, at.line, "longer than 64 KiB");
            continue;
        }
        while (n > 0 && line[n - 1] == '\r')
            line[--n] = '\0';
        if (!nul && strspn(line, " \t") == n)
            continue; /* blank lines are nobody's decision */
        ++*lines;
        if (nul) {
            warn_bad(bad, name, at.line, "a NUL byte in the line");
            continue;
        }
        const char *json = json_start(line);
        if (!json) {
            warn_bad(bad, name, at.line, "not an audit line (no JSON object, no fitgate tag)");
            continue;
        }
        struct fg_audit_rec rec;
        struct fg_err err = {0};
        if (fg_audit_parse(json, strlen(json), &rec, &err)) {
            warn_bad(bad, name, at.line, err.detail);
            continue;
        }
        fg_audit_escape(&rec); /* what report and learn print, escaped once here */
        if ((rc = each(&rec, &at, ctx)))
            goto out;
    }
    if (ferror(f)) {
        fprintf(stderr, "fitgate: error: %s: %s\n", name, strerror(errno));
        rc = -1;
    }
out:
    free(line);
    if (f != stdin)
        fclose(f);
    return rc;
}

int fg_cli_audit_read_all(const char *const *paths, size_t n, uint64_t *lines, uint64_t *bad,
                          fg_cli_audit_each each, void *ctx)
{
    for (size_t i = 0; i < n; i++)
        if (read_trail(paths[i], lines, bad, each, ctx))
            return -1;
    if (*bad > FG_CLI_AUDIT_WARNINGS)
        fprintf(stderr, "fitgate: warning: %llu more lines skipped\n",
                (unsigned long long)(*bad - FG_CLI_AUDIT_WARNINGS));
    return 0;
}
