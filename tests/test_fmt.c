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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fmt_should_write_what_snprintf_writes_for_the_engines_conversions),
        cmocka_unit_test(fmt_should_hand_other_conversions_to_the_c_library),
        cmocka_unit_test(copy_should_write_what_snprintf_percent_s_writes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
