/*
 * auditlog.h - reading audit trails (policies/audit.h, docs/audit.md) line by
 * line for `fitgate report` and `fitgate learn`: the same lines accepted, the
 * same warnings for the others.
 */
#ifndef FG_CLI_AUDITLOG_H
#define FG_CLI_AUDITLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "audit.h"

/* Lines longer than this are skipped (and read through without being kept). */
#define FG_CLI_AUDIT_LINE_MAX (64 * 1024)
/* A line longer than this is no trail's (/dev/zero, a binary file): the read stops with an
 * error naming the file and line; memory stays at FG_CLI_AUDIT_LINE_MAX. */
#define FG_CLI_AUDIT_LINE_HARD_MAX (16u << 20)
/* Bad lines warned about one by one; fg_cli_audit_read_all counts the rest. */
#define FG_CLI_AUDIT_WARNINGS 20

/* Where a line comes from: the trail's name, the line number and who can write the trail
 * (its owner's uid from fstat, and whether its group or others may write it).  A pipe
 * (standard input, "<(...)") is owned by whoever made it. */
struct fg_cli_trail {
    const char *name;
    uint64_t line;
    unsigned owner;
    bool others_write;
};

/* Called for each audit line read (rec borrowed for the call; its strings already escaped,
 * fg_audit_escape); 0, or -1 to stop after printing why. */
typedef int (*fg_cli_audit_each)(const struct fg_audit_rec *rec, const struct fg_cli_trail *at,
                                 void *ctx);

/*
 * Read the audit trails at paths[0..n) in turn ("-": standard input) and
 * call each for every audit line: the JSON object alone or after a syslog
 * tag ("... fitgate[PID]: {...}").  *lines counts the lines read but blank
 * ones; *bad the lines skipped (too long, a NUL byte, no JSON object, not an
 * audit line this fitgate reads), each with a warning naming FILE:LINE while
 * *bad is at most FG_CLI_AUDIT_WARNINGS, and after the last trail one warning
 * counting the rest.  A trail is a regular file or a pipe (standard input,
 * a FIFO, "<(zcat old.log.gz)"): opened without blocking, so a FIFO nobody
 * writes reads as empty; a device or a directory is refused.  Returns 0, or
 * -1 (after an error message on stderr naming the file) when a trail cannot
 * be opened or read, is not a file or a pipe, holds a line longer than
 * FG_CLI_AUDIT_LINE_HARD_MAX, memory runs out, or each stops; the trails
 * after it are not read.
 */
/*
 * path opened for reading as a stream (trails, --sacct): a regular file or a pipe, never
 * blocking on a FIFO without a writer (O_NONBLOCK for the open, blocking reads after it:
 * one nobody writes reads as empty); *st its fstat.  NULL with errno set: EINVAL for a
 * device or a socket, EISDIR for a directory, else the open's.
 */
struct stat;
FILE *fg_cli_open_stream(const char *path, struct stat *st);

int fg_cli_audit_read_all(const char *const *paths, size_t n, uint64_t *lines, uint64_t *bad,
                          fg_cli_audit_each each, void *ctx);

#endif
