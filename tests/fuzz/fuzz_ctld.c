/*
 * fuzz_ctld.c - libFuzzer target: what `fitgate ctld` reads on standard input (the job's
 * options, NUL-separated, the model first: contrib/job_submit.lua writes them) ->
 * cli/ctld_args.c's reader and fixed vector -> the argument vector cmd_ctld.c's child hands
 * fg_cli_check -> the check itself (option parsers, the GPU request, --ft-config files the
 * fields name, the model lookup, the estimate, the policy's decision), in this process.
 *
 * The reader, the field check and the vector are fitgate ctld's own (ctld_args.c, and
 * cmd_ctld.c's check_argv: the file is included, so its static functions are the ones
 * tested); the child's fork, identity change and timeout are not run: the check runs
 * in-process, offline, with an empty Hugging Face cache, so every input is decided from the
 * fields alone and from files they name.
 *
 * Seeds: tests/fuzz/corpus/ctld (vectors as job_submit.lua writes them, and the injections
 * of issue 35: --gpus-conf, --policy, --nodes in the model's slot).
 * Checks: the sanitizers (a leak on any path is a crash); the check's exit status is one of
 * 0 (fits), 1 (rejected), 2 (error), 3 (resized); fuzz.h's log contract.
 */
#include "../../cli/cmd_ctld.c"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "fuzz.h"

static char home[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_log_init();
    /* the check prints its answer and errors: not to the fuzzer's terminal (libFuzzer and
     * the sanitizers keep descriptor 2 and their own stream) */
    FILE *null = fopen("/dev/null", "w");
    if (null) {
        stdout = null;
        stderr = null;
    }
    snprintf(home, sizeof home, "/tmp/fuzz_ctld.%d", (int)getpid());
    mkdir(home, 0700);
    setenv("HOME", home, 1);
    setenv("HF_HOME", home, 1);
    setenv("XDG_CACHE_HOME", home, 1);
    setenv("HF_HUB_OFFLINE", "1", 1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* standard input as ctld reads it: a file the size of the input on descriptor 0 */
    int fd = memfd_create("fuzz_ctld_stdin", MFD_CLOEXEC);
    if (fd < 0)
        return 0;
    if (size && write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return 0;
    }
    lseek(fd, 0, SEEK_SET);
    int saved = dup(0);
    dup2(fd, 0);
    close(fd);
    struct ctld c = {.timeout_ms = 800, .on_error = FG_ONERR_ALLOW,
                     .where = FG_AUDIT_AT_JOB_SUBMIT};
    char *text = NULL;
    int rc = fg__ctld_read_input(&c, &text);
    dup2(saved, 0);
    close(saved);
    /* the fixed vector (ctld_args.c): a refused one never reaches the check; the others
     * reach it as child() hands them over */
    if (rc == 0 && !fg__ctld_check_fields(&c) && !c.refused[0]) {
        char **argv = calloc(c.n_opts + 10, sizeof *argv);
        char pol[16];
        if (argv) {
            int n = check_argv(&c, argv, pol, sizeof pol);
            int st = fg_cli_check(n, argv);
            fflush(stdout);
            if (st < 0 || st > 3) {
                char b[32];
                snprintf(b, sizeof b, "%d", st);
                fuzz_fail("fitgate check exit status outside 0..3", b);
            }
            free(argv);
        }
    }
    for (size_t i = 0; i < c.n_opts; i++)
        free(c.opts[i]);
    free(c.opts);
    free(c.args);
    free(text);
    return 0;
}
