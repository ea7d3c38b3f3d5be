/*
 * test_format.c - the CLI's output sink (cli/format.c): stdout and stderr through the escape
 * (fg_cli_escape_stdio) and JSON kept valid (fg_cli_json_safe).  The sink replaces the
 * process's streams, so each case runs in a child whose descriptor 1 is a file, read back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "format.h"
#include "util/fileio.h"

/* What writer() prints to stdout once the sink is in place, as the file descriptor 1 got it. */
static char *through_sink(void (*writer)(void))
{
    char path[] = "/tmp/fitgate-test-format-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (dup2(fd, 1) < 0 || fg_cli_escape_stdio())
            _exit(3);
        writer();
        exit(fflush(stdout) ? 4 : 0); /* exit: the streams are flushed as at a CLI's end */
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    close(fd);
    char *text = NULL;
    size_t len;
    assert_int_equal(fg__read_file(path, 1 << 20, &text, &len), 0);
    unlink(path);
    return text;
}

static void forged_verdict(void)
{
    printf("model: %s\n", "llama\x1b[2K\r=> fits (decision: allow)\x1b[8m");
    printf("tab\tand newline kept\n");
    fputs("C1 \xc2\x9b" "31m, bidi \xe2\x80\xae" "x, lone \x9b" "y, DEL \x7f, BEL \a\n", stdout);
}

static void utf8_cut_between_writes(void)
{
    /* one character split over two writes that each reach the descriptor */
    fputs("caf\xc3", stdout);
    fflush(stdout);
    fputs("\xa9 \xe6\x97", stdout);
    fflush(stdout);
    fputs("\xa5 ok\n", stdout);
    fflush(stdout);
    /* a cut sequence that never completes is escaped, not lost */
    fputs("end \xe6\x97", stdout);
    fflush(stdout);
    fputs("!\n", stdout);
}

static void big_output(void)
{
    /* more than a stream buffer, with an escape every 1000 bytes and UTF-8 across the
     * buffer's ends */
    for (int i = 0; i < 20000; i++)
        fputs(i % 20 ? "abcdefghij\xc3\xa9\xe6\x97\xa5xyzabcdefghijklmnopqrstuvwxyz0123456789"
                     : "\x1b[1m\n",
              stdout);
}

static void sink_should_escape_every_unsafe_unit_but_newline_and_tab(void **state)
{
    (void)state;
    char *got = through_sink(forged_verdict);
    assert_string_equal(got, "model: llama\\x1b[2K\\x0d=> fits (decision: allow)\\x1b[8m\n"
                             "tab\tand newline kept\n"
                             "C1 \\xc2\\x9b31m, bidi \\xe2\\x80\\xaex, lone \\x9by, DEL \\x7f, "
                             "BEL \\x07\n");
    free(got);
    got = through_sink(utf8_cut_between_writes);
    assert_string_equal(got, "caf\xc3\xa9 \xe6\x97\xa5 ok\nend \\xe6\\x97!\n");
    free(got);
    got = through_sink(big_output);
    size_t esc = 0, utf8 = 0;
    for (const char *p = got; (p = strstr(p, "\\x1b[1m")); p++)
        esc++;
    for (const char *p = got; (p = strstr(p, "\xc3\xa9\xe6\x97\xa5")); p++)
        utf8++;
    assert_int_equal(esc, 1000);
    assert_int_equal(utf8, 19000);
    assert_null(strchr(got, '\x1b'));
    free(got);
}

static void json_safe_should_keep_json_valid(void **state)
{
    (void)state;
    char *in = strdup("{\"m\":\"a\x7f" "b\xc2\x9b" "c\xe2\x80\xae" "d\x9b" "e\xc3\xa9\"}\n");
    char *out = fg_cli_json_safe(in);
    assert_string_equal(out, "{\"m\":\"a\\u007fb\\u009bc\\u202ed\\\\x9be\xc3\xa9\"}\n");
    free(out);
    char *plain = strdup("{\"m\": \"plain\"}");
    assert_ptr_equal(fg_cli_json_safe(plain), plain); /* nothing to do: the same string */
    free(plain);
    assert_null(fg_cli_json_safe(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sink_should_escape_every_unsafe_unit_but_newline_and_tab),
        cmocka_unit_test(json_safe_should_keep_json_valid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
