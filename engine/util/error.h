/*
 * error.h - the error contract of libfitgate, written once.
 *
 * Every engine function that can fail returns an int: 0 on success or a
 * negative FG_E* code from the table below.  Results travel through
 * out-parameters.  Functions that return a pointer return NULL on failure.
 *
 * A failing function also fills the caller's struct fg_err (when the caller
 * passes one; NULL is allowed) with the code and a human-readable detail
 * that names the thing that was wrong: the file and key, the file:line, the
 * offending value.  There is no global error slot.
 *
 * FG_E_LIMIT is the one code a front end reads as the job's own doing: an input the job
 * controls (its model directory's safetensors headers and index, its config.json) past a bound
 * that keeps the check within the controller's time (safetensors.h, config.h).  It is refused
 * as a bad option value is, whatever OnError= says, never left to time out.  Every other
 * failure to read a model is the site's to decide (OnError=).
 */
#ifndef FG_ERROR_H
#define FG_ERROR_H

#include <stddef.h>

/* X(name, value, text) */
#define FG_ERRNO_MAP(X)                                                     \
    X(NOMEM,       -1, "out of memory")                                    \
    X(IO,          -2, "cannot read or write a file")                      \
    X(PARSE,       -3, "malformed input")                                  \
    X(TYPE,        -4, "value has the wrong type")                         \
    X(RANGE,       -5, "value out of range")                               \
    X(MISSING,     -6, "required value missing")                           \
    X(UNSUPPORTED, -7, "unsupported architecture or option")               \
    X(INVAL,       -8, "invalid argument")                                 \
    X(OVERFLOW,    -9, "size arithmetic overflow")                         \
    X(NOTFOUND,   -10, "not found")                                        \
    X(TIMEDOUT,   -11, "deadline passed")                                  \
    X(NET,        -12, "network error")                                    \
    X(DENIED,     -13, "access denied")                                    \
    X(NOFIT,      -14, "does not fit")                                     \
    X(LIMIT,      -15, "over a bound on what a job may send")

enum fg_errno {
    FG_OK = 0,
#define FG__ERR_ENUM(name, val, text) FG_E_##name = (val),
    FG_ERRNO_MAP(FG__ERR_ENUM)
#undef FG__ERR_ENUM
};

#define FG_ERR_DETAIL_MAX 512

struct fg_err {
    int code;                        /* 0 or FG_E_* */
    char detail[FG_ERR_DETAIL_MAX];  /* what was wrong and, where known, what to do */
};

/* Static text for a code; never NULL ("unknown error" for codes not in the table). */
const char *fg_strerror(int code);

/*
 * Record code and a printf-style detail in err (which may be NULL) and
 * return code, so callers can write `return fg_err_set(err, FG_E_RANGE, ...)`.
 * Control characters (and the rest util/fmt.h fg__esc escapes) in the
 * formatted detail are written as \xNN, so text that came from users or the
 * network cannot forge log lines.
 */
int fg_err_set(struct fg_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefix err->detail with "prefix: " (used to add a file name to a key error). */
void fg_err_prefix(struct fg_err *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Reset err to FG_OK with an empty detail.  NULL-safe. */
void fg_err_clear(struct fg_err *err);

#endif
