/*
 * fuzz_jobfile.c - libFuzzer target: a framework config (YAML or JSON) ->
 * fg_jobfile_parse -> the format its keys tell -> every format's rows applied
 * to a spec (fg_jobfile_apply through a file of the input) -> fg_jobspec_finish.
 *
 * Seeds: every file under tests/fixtures/configs (tests/fuzz/seeds.sh).
 * Checks: the sanitizers; fuzz.h's error contract on every call; a parse that
 * succeeds keeps jobfile.h's bounds (keys, path lengths); the spec's records of
 * keys used and keys not modelled are NUL-terminated.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "fuzz.h"
#include "job/jobfile.h"
#include "job/jobspec.h"

/* fuzz_jobjson.c includes this file with FUZZ_JOBFILE_JSON: the same checks on JSON texts
 * only (DeepSpeed's, accelerate's, any framework's config written as JSON), named .json. */
#ifdef FUZZ_JOBFILE_JSON
#define FUZZ_JOBFILE_EXT "json"
#else
#define FUZZ_JOBFILE_EXT "yaml"
#endif

static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_log_init();
    snprintf(path, sizeof path, "/tmp/fuzz_jobfile.%d." FUZZ_JOBFILE_EXT, (int)getpid());
    return 0;
}

static void apply(const char *format, const uint8_t *data, size_t size)
{
    static struct fg_jobspec s;
    struct fg_err err = {0};
    char arg[96];
    FILE *f = fopen(path, "wb");
    if (!f)
        return;
    fwrite(data, 1, size, f);
    fclose(f);
    fg_jobspec_init(&s, "--ft-");
    snprintf(arg, sizeof arg, "%s%s%s", format, *format ? ":" : "", path);
    int rc = fg_jobspec_set(&s, FG_JOBOPT_CONFIG, arg, &err);
    fuzz_check_rc(rc, &err);
    if (rc)
        return;
    rc = fg_jobfile_apply(&s, "/nonexistent", &err);
    fuzz_check_rc(rc, &err);
    for (size_t i = 0; i < s.n_from && i < FG_JOBSPEC_FROM; i++) {
        fuzz_no_controls("key used", s.from[i].set, sizeof s.from[i].set);
        if (!memchr(s.from[i].where, '\0', sizeof s.from[i].where))
            fuzz_fail("key record not terminated", "");
    }
    for (size_t i = 0; i < s.n_unknown && i < FG_JOBSPEC_UNKNOWN; i++)
        if (!memchr(s.unknown[i], '\0', sizeof s.unknown[i]))
            fuzz_fail("unknown record not terminated", "");
    if (!rc) {
        rc = fg_jobspec_finish(&s, &err);
        fuzz_check_rc(rc, &err);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fg_jobfile *f = (struct fg_jobfile *)1;
    struct fg_err err = {0};
#ifdef FUZZ_JOBFILE_JSON
    size_t lead = 0;
    while (lead < size && (data[lead] == ' ' || data[lead] == '\t' || data[lead] == '\n' ||
                           data[lead] == '\r'))
        lead++;
    if (lead == size || data[lead] != '{')
        return 0; /* a JSON object is what the reader takes for JSON (jobfile.c) */
#endif
    int rc = fg_jobfile_parse((const char *)data, size, "fuzz." FUZZ_JOBFILE_EXT, &f, &err);
    fuzz_check_rc(rc, &err);
    if (rc) {
        if (f)
            fuzz_fail("fg_jobfile_parse failed but left *out set", err.detail);
        return 0;
    }
    if (f->n > FG_JOBFILE_MAX_KEYS)
        fuzz_fail("more keys than FG_JOBFILE_MAX_KEYS", f->name);
    for (size_t i = 0; i < f->n; i++)
        if (!memchr(f->keys[i].path, '\0', sizeof f->keys[i].path) || !f->keys[i].value)
            fuzz_fail("a key without its path or value", f->name);
    enum fg_jobfile_format fmt = fg_jobfile_detect(f);
    fg_jobfile_free(f);
    /* the format its keys tell, then one named, so every format's rows see the input */
    apply("", data, size);
    static unsigned turn;
    const char *named = fg_jobfile_format_name((enum fg_jobfile_format)(1 + turn++ % (FG_JF_COUNT - 1)));
    (void)fmt;
    apply(named, data, size);
    return 0;
}
