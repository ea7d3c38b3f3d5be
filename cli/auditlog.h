/*
 * auditlog.h - reading audit trails (policies/audit.h, docs/audit.md) line by
 * line for `fitgate report` and `fitgate learn`: the same lines accepted, the
 * same warnings for the others.
 */
#ifndef FG_CLI_AUDITLOG_H
#define FG_CLI_AUDITLOG_H

#include <stddef.h>
#include <stdint.h>

#include "audit.h"

/* Lines longer than this are skipped (and read through without being kept). */
#define FG_CLI_AUDIT_LINE_MAX (64 * 1024)
/* Bad lines warned about one by one; fg_cli_audit_read_all counts the rest. */
#define FG_CLI_AUDIT_WARNINGS 20

/* Called for each audit line read (rec borrowed for the call); 0, or -1 to stop after
 * printing why. */
typedef int (*fg_cli_audit_each)(const struct fg_audit_rec *rec, void *ctx);

/*
 * Read the audit trails at paths[0..n) in turn ("-": standard input) and
 * call each for every audit line: the JSON object alone or after a syslog
 * tag ("... fitgate[PID]: {...}").  *lines counts the lines read but blank
 * ones; *bad the lines skipped (too long, a NUL byte, no JSON object, not an
 * audit line this fitgate reads), each with a warning naming FILE:LINE while
 * *bad is at most FG_CLI_AUDIT_WARNINGS, and after the last trail one warning
 * counting the rest.  Returns 0, or -1 (after an error message on stderr)
 * when a trail cannot be opened or read, memory runs out, or each stops; the
 * trails after it are not read.
 */
int fg_cli_audit_read_all(const char *const *paths, size_t n, uint64_t *lines, uint64_t *bad,
                          fg_cli_audit_each each, void *ctx);

#endif
