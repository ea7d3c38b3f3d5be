/*
 * test_fmt.c - fg__fmt writes what snprintf writes: every case is formatted by both, at
 * every buffer size from 0 to past the end, and the bytes and return values compared.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "util/fmt.h"

/* Both formatters on one call at every capacity; the buffers start with the same junk so
 * that a byte written past the NUL (or not written) shows. */
#define SAME_AS_SNPRINTF(...)                                                                  \
    do {                                                                                        \
        char want[160], got[160];                                                              \
        int full = snprintf(want, sizeof want, __VA_ARGS__);                                    \
        assert_true(full >= 0 && full < (int)sizeof want);                                     \
        for (size_t cap = 0; cap <= (size_t)full + 2; cap++) {                                  \
            memset(want, 'x', sizeof want);                                                     \
            memset(got, 'x', sizeof got);                                                       \
            int a = snprintf(want, cap, __VA_ARGS__);                                           \
            int b = fg__fmt(got, cap, __VA_ARGS__);                                             \
            assert_int_equal(a, b);                                                             \
            assert_memory_equal(want, got, sizeof want);                                        \
        }                                                                                       \
    } while (0)

static void fmt_should_write_what_snprintf_writes_for_the_engines_conversions(void **state)
{
    (void)state;
    SAME_AS_SNPRINTF("%s", "");
    SAME_AS_SNPRINTF("plain text, no conversion");
    SAME_AS_SNPRINTF("%s_%d", "Attention", 12);
    SAME_AS_SNPRINTF("%s %lluq/%llukv x%llu, window %llu", "GQA", 32ull, 8ull, 128ull, 4096ull);
    SAME_AS_SNPRINTF("%llu x %llu", 0ull, ULLONG_MAX);
    SAME_AS_SNPRINTF("%d %d %d %i", 0, -1, INT_MIN, INT_MAX);
    SAME_AS_SNPRINTF("%ld %lu %lld", LONG_MIN, ULONG_MAX, LLONG_MIN);
    SAME_AS_SNPRINTF("%u%% %zu %c", 100u, (size_t)7, 'q');
    SAME_AS_SNPRINTF("Enc.%.27s|", "a name longer than twenty-seven characters");
    SAME_AS_SNPRINTF("%.*s|%.*s|%.0s|", 3, "abcdef", -1, "neg", "gone");
    SAME_AS_SNPRINTF("%s ends with a percent %%", "text");
}

static void fmt_should_hand_other_conversions_to_the_c_library(void **state)
{
    (void)state;
    SAME_AS_SNPRINTF("%.4f B x %llu", 0.5625, 123456789ull);
    SAME_AS_SNPRINTF("%5d|%-4s|%x|%08llu", 42, "ab", 255u, 77ull);
    SAME_AS_SNPRINTF("%s then %.2f then %s", "first", 2.0 / 3, "last");
    SAME_AS_SNPRINTF("%zd %+d", (ptrdiff_t)-5, 3);
}

static void copy_should_write_what_snprintf_percent_s_writes(void **state)
{
    (void)state;
    static const char *const srcs[] = {"", "q", "Attention_12", "a longer role name than the cap"};
    for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++)
        for (size_t cap = 1; cap <= strlen(srcs[i]) + 2; cap++) {
            char want[64], got[64];
            memset(want, 'x', sizeof want);
            memset(got, 'x', sizeof got);
            snprintf(want, cap, "%s", srcs[i]);
            fg__copy(got, cap, srcs[i]);
            assert_memory_equal(want, got, sizeof want);
        }
    char got[4] = "zzz";
    fg__copy(got, sizeof got, NULL);
    assert_string_equal(got, "");
}

/* fg__esc: what may reach a terminal or a log, byte for byte. */
static void esc_should_show_every_unsafe_unit_as_hex(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        size_t n;
        int flags;
        const char *want;
    } cases[] = {
        {"plain ascii, (a) [b] \\ ~", 0, 0, "plain ascii, (a) [b] \\ ~"},
        /* the forged verdict: ESC, CR, a newline, BEL */
        {"llama\x1b[2K\r=> fits\n\x07", 0, 0, "llama\\x1b[2K\\x0d=> fits\\x0a\\x07"},
        {"a\nb\tc\x7f", 0, FG_ESC_KEEP_NL, "a\nb\tc\\x7f"},
        {"a\nb\tc", 0, 0, "a\\x0ab\\x09c"},
        /* UTF-8 kept; C1 (U+009B CSI), bidi (U+202E, U+2066), U+2028 escaped */
        {"\xc3\xa9\xe6\x97\xa5 \xf0\x9f\x98\x80", 0, 0, "\xc3\xa9\xe6\x97\xa5 \xf0\x9f\x98\x80"},
        {"x\xc2\x9b" "31m", 0, 0, "x\\xc2\\x9b" "31m"},
        {"\xc2\xa0", 0, 0, "\xc2\xa0"}, /* U+00A0 is printable */
        {"\xe2\x80\xae" "evil\xe2\x81\xa6", 0, 0, "\\xe2\\x80\\xae" "evil\\xe2\\x81\\xa6"},
        {"\xe2\x80\xa8", 0, 0, "\\xe2\\x80\\xa8"},
        {"\xe2\x80\x94", 0, 0, "\xe2\x80\x94"}, /* an em dash is text */
        /* malformed: a lone CSI byte, overlong, surrogate, cut sequences */
        {"\x9b" "1m", 0, 0, "\\x9b" "1m"},
        {"\xc0\x80", 0, 0, "\\xc0\\x80"},
        {"\xed\xa0\x80", 0, 0, "\\xed\\xa0\\x80"},
        {"\xe6\x97", 0, 0, "\\xe6\\x97"},
        {"\xf4\x90\x80\x80", 0, 0, "\\xf4\\x90\\x80\\x80"},
        /* NUL bytes inside the length are escaped too */
        {"a\0b", 3, 0, "a\\x00b"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[256];
        size_t n = cases[i].n ? cases[i].n : strlen(cases[i].in);
        size_t len = fg__esc(out, sizeof out, cases[i].in, n, cases[i].flags);
        assert_string_equal(out, cases[i].want);
        assert_int_equal(len, strlen(cases[i].want));
        assert_int_equal(fg__esc_needed(cases[i].in, cases[i].flags),
                         strcmp(cases[i].in, cases[i].want) != 0 && !cases[i].n);
    }
    /* cut at a whole escape, never inside one, always NUL-terminated */
    for (size_t cap = 1; cap < 12; cap++) {
        char out[16];
        memset(out, 'z', sizeof out);
        size_t len = fg__esc(out, cap, "ab\x1b\x1b", 4, 0);
        assert_true(len < cap);
        assert_int_equal(out[len], '\0');
        assert_true(len == 0 || len == 1 || len == 2 || len == 6 || len == 10);
    }
    char in_place[16] = "x\x1b[2J";
    fg__esc_inplace(in_place, sizeof in_place, 0);
    assert_string_equal(in_place, "x\\x1b[2J");
    char tight[8] = "ab\x1b" "cd";
    fg__esc_inplace(tight, sizeof tight, 0);
    assert_string_equal(tight, "ab\\x1b" "c");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fmt_should_write_what_snprintf_writes_for_the_engines_conversions),
        cmocka_unit_test(fmt_should_hand_other_conversions_to_the_c_library),
        cmocka_unit_test(copy_should_write_what_snprintf_percent_s_writes),
        cmocka_unit_test(esc_should_show_every_unsafe_unit_as_hex),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
