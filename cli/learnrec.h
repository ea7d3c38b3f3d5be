/*
 * learnrec.h - the audit lines `fitgate learn` joins, kept small: a site's
 * month is a million lines, and struct fg_audit_rec (fixed-size strings,
 * about 2.5 KB) a million times is gigabytes.  A struct fg_cli_lrec holds
 * the fields learn reads; its strings are interned once in the set's pool
 * (a user, model or framework is one copy however many lines name it), the
 * submit id is copied per line.
 *
 * Ownership: the set owns every record and string; pointers into it stay
 * valid until fg_cli_lrecs_free (records are reached by index while the set
 * grows: fg_cli_lrecs_add may move them).
 */
#ifndef FG_CLI_LEARNREC_H
#define FG_CLI_LEARNREC_H

#include <stddef.h>
#include <stdint.h>

#include "audit.h"

struct fg_cli_lrec {
    uint64_t job_id;
    const char *submit_id, *user, *partition, *model, *model_type, *framework, *mode;
    uint64_t estimate_bytes, per_gpu_bytes, usable_bytes, gpu_peak_bytes;
    uint32_t gpus_after, calibration_milli;
    uint32_t uid;           /* the line's uid: the owner its trail was checked against */
    enum fg_audit_verdict verdict;
    enum fg_audit_where where;
};

struct fg_cli__pool;

struct fg_cli_lrecs {
    struct fg_cli_lrec *v;
    size_t n, cap;
    struct fg_cli__pool *pool;
};

/* A copy of rec's learn fields appended to set: 0, or -1 when memory runs out. */
int fg_cli_lrecs_add(struct fg_cli_lrecs *set, const struct fg_audit_rec *rec);
/* The pool's copy of s (one per distinct string), or NULL when memory runs out. */
const char *fg_cli_lrecs_intern(struct fg_cli_lrecs *set, const char *s);
void fg_cli_lrecs_free(struct fg_cli_lrecs *set);

#endif
