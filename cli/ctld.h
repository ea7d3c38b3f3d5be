/*
 * ctld.h - internal to fitgate ctld (cmd_ctld.c): the job as it arrives on standard input
 * (ctld_args.c: the fixed argument vector) and the file systems it reads (ctld_mounts.c: the
 * stall window of job_submit.lua).  Everything here borrows from struct ctld, which
 * cmd_ctld.c owns and frees.
 */
#ifndef FG_CLI_CTLD_H
#define FG_CLI_CTLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "audit.h"
#include "policy.h"

#define CTLD_MAX_INPUT (16u << 20)
#define CTLD_MAX_ARGS 4096
#define CTLD_MAX_OUTPUT (1u << 20)
#define CTLD_MAX_STALLED 16 /* --stalled mount points */
#define CTLD_MAX_PATHS 16   /* a job's files whose file systems are named */

struct ctld {
    const char *policy, *key, *skip, *log_file;
    char *stalled[CTLD_MAX_STALLED]; /* --stalled: mount points whose check timed out lately */
    size_t n_stalled;
    bool untagged;
    enum fg_audit_where where; /* --door: job_submit (default), or sbatch / salloc / srun */
    uid_t uid;
    gid_t gid;
    bool run_as;
    long timeout_ms;
    uint64_t job_id;
    uint32_t time_limit;
    enum fg_on_error on_error;
    char user[64];
    struct fg_policy pol;
    bool pol_ok;
    char **args; /* NUL-separated input split, args[0] the model; borrowed from input */
    size_t n_args;
    const char *model;  /* args[0], "" when none */
    char **opts;        /* args[1..] re-spelt from the tables for the check; owned */
    size_t n_opts;
    char refused[400];  /* why the input is not a job's (refused as the job's error) */
};

/* The value of --name=... among the checked fields (c->opts), or NULL; borrowed. */
const char *fg__ctld_arg_value(const struct ctld *c, const char *name);

/*
 * Standard input, split at its NUL bytes into c->args (borrowed from *text, which the caller
 * frees).  0 when it was read (c->refused says why it is not a job's, if so: more than
 * CTLD_MAX_INPUT bytes or CTLD_MAX_ARGS fields, a last field without its NUL); -1 when it
 * could not be read at all.  Nothing past the cap is read: the answer does not wait for a
 * writer that goes on.
 */
int fg__ctld_read_input(struct ctld *c, char **text);

/*
 * The fixed argument vector: args[0] the model, a value; the rest each one of the options a
 * job may set, re-spelt into c->opts (owned by c).  The first field that is not sets
 * c->refused, naming it; the fields before it stay in c->opts for the audit line.  -1 out of
 * memory, else 0.
 */
int fg__ctld_check_fields(struct ctld *c);

/* The mount points of the job's files, without repeats, into mounts (CTLD_MAX_PATHS rows):
 * how many. */
size_t fg__ctld_job_mounts(const struct ctld *c, char (*mounts)[1024]);

/* The first of the n mounts that --stalled names, or NULL. */
const char *fg__ctld_on_stalled(const struct ctld *c, char (*mounts)[1024], size_t n);

/* Whether process pid (the check's child) waits on a file system. */
bool fg__ctld_waits_on_files(pid_t pid);

#endif
