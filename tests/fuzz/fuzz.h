/*
 * fuzz.h - what every fitgate fuzz target checks beyond the sanitizers: the
 * error contract of error.h on every failing call, and the engine's log lines.
 *
 *   - an int function returns 0 or a negative code from FG_ERRNO_MAP, and the
 *     same code is in err->code;
 *   - err->detail is NUL-terminated, not empty, and holds no control
 *     character (it ends up in Slurm's log and on the user's terminal);
 *   - with FUZZ_STRICT=1 in the environment, the same for text the engine
 *     hands out without a promise in its header: log lines, model notes and
 *     node descriptions (off by default: known gaps, see the QA report).
 *
 * A broken rule aborts, which libFuzzer reports as a crash with the input.
 */
#ifndef FG_FUZZ_H
#define FG_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/log.h"

static inline void fuzz_fail(const char *what, const char *text)
{
    fprintf(stderr, "fuzz: contract broken: %s: '%.600s'\n", what, text ? text : "(null)");
    abort();
}

/* s is a NUL-terminated string; cap, when not 0, the size of the array holding it. */
static inline void fuzz_no_controls(const char *what, const char *s, size_t cap)
{
    if (cap && !memchr(s, '\0', cap))
        fuzz_fail(what, "not NUL-terminated");
    for (const char *p = s; *p; p++)
        if ((unsigned char)*p < 0x20 || (unsigned char)*p == 0x7f)
            fuzz_fail(what, s);
}

/* rc from an int function of the engine, with its err.  FUZZ_DEBUG=1 prints each failure
 * (to see what a seed reaches: run the target on it with -runs=1). */
static inline void fuzz_check_rc(int rc, const struct fg_err *err)
{
    static int debug = -1;
    if (debug < 0) {
        const char *v = getenv("FUZZ_DEBUG");
        debug = v && *v == '1';
    }
    if (debug)
        fprintf(stderr, "fuzz: rc %d %s\n", rc, rc ? err->detail : "");
    if (rc == 0)
        return;
    if (rc > 0 || strcmp(fg_strerror(rc), "unknown error") == 0)
        fuzz_fail("return code not in FG_ERRNO_MAP", fg_strerror(rc));
    if (err->code != rc)
        fuzz_fail("err->code differs from the return code", err->detail);
    fuzz_no_controls("err->detail", err->detail, sizeof err->detail);
    if (!err->detail[0])
        fuzz_fail("err->detail is empty", fg_strerror(rc));
}

/* FUZZ_STRICT=1: also check text the headers make no promise about. */
static inline int fuzz_strict(void)
{
    static int strict = -1;
    if (strict < 0) {
        const char *v = getenv("FUZZ_STRICT");
        strict = v && *v == '1';
    }
    return strict;
}

/* A text the engine produces without a documented promise (notes, log lines). */
static inline void fuzz_check_text(const char *what, const char *s, size_t cap)
{
    if (fuzz_strict())
        fuzz_no_controls(what, s, cap);
}

static inline void fuzz_log_sink(enum fg_log_level level, const char *msg, void *ctx)
{
    (void)level;
    (void)ctx;
    fuzz_check_text("engine log line", msg, 0);
}

/* Route every engine log line through the check. */
static inline void fuzz_log_init(void)
{
    fg_log_set_sink(fuzz_log_sink, NULL, FG_LOG_DEBUG);
}

/* libFuzzer's entry points.  Every target defines LLVMFuzzerTestOneInput; one that needs
 * setup beyond fuzz_log_init (a server, a model, stderr closed) defines LLVMFuzzerInitialize
 * and calls fuzz_log_init first, the others define it with FUZZ_INITIALIZE_LOG_ONLY. */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_INITIALIZE_LOG_ONLY                                                                   \
    int LLVMFuzzerInitialize(int *argc, char ***argv)                                              \
    {                                                                                              \
        (void)argc;                                                                                \
        (void)argv;                                                                                \
        fuzz_log_init();                                                                           \
        return 0;                                                                                  \
    }

/* The input as a NUL-terminated string (it may hold NULs before the end); the caller frees
 * it with free().  NULL when out of memory. */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (text) {
        memcpy(text, data, size);
        text[size] = '\0';
    }
    return text;
}

#endif
