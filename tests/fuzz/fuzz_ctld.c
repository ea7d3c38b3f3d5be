/*
 * fuzz_ctld.c - libFuzzer target: what `fitgate ctld` reads on standard input (the job's
 * options, NUL-separated, the model first: contrib/job_submit.lua writes them) ->
 * cli/cmd_ctld.c's reader -> the vector its child hands fg_cli_check -> the check itself
 * (option parsers, the GPU request, --ft-config files the fields name, the model lookup,
 * the estimate, the policy's decision), in this process.
 *
 * The reader and the vector are cmd_ctld.c's own (the file is included, so its static
 * functions are the ones tested); the child's fork, identity change and timeout are not
 * run: the check runs in-process, offline, with an empty Hugging Face cache, so every
 * input is decided from the fields alone and from files they name.
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
    int rc = read_input(&c, &text);
    dup2(saved, 0);
    close(saved);
    if (rc == 0 && c.n_args) {
        /* the vector child() builds for the check */
        char **argv = calloc(c.n_args + 8, sizeof *argv);
        if (argv) {
            int n = 0;
            argv[n++] = "check";
            for (size_t i = 0; i < c.n_args; i++)
                argv[n++] = c.args[i];
            argv[n++] = "--offline";
            argv[n++] = "--json";
            argv[n++] = "--log-as=job_submit";
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
    free(c.args);
    free(text);
    return 0;
}
