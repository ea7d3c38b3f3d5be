/*
 * test_nvml.c - engine/hw/nvml.c, the node-side sampler, against the fake
 * libnvidia-ml.so.1 the Makefile builds from tests/fake_nvml.c (scripted figures).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hw/nvml.h"

#ifndef FG_FAKE_NVML /* the Makefile's $(FAKE_NVML): build/, or build/san/ under sanitize.sh */
#define FG_FAKE_NVML "build/tests/fake-nvml/libnvidia-ml.so.1"
#endif
#define FAKE FG_FAKE_NVML
#define MIB (1024ull * 1024)

static void nap(unsigned ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int reset(void **state)
{
    (void)state;
    unsetenv("FAKE_NVML_MIB");
    unsetenv("FAKE_NVML_SEQ");
    unsetenv("FAKE_NVML_FAIL_INIT");
    unsetenv("FAKE_NVML_HANG_MS");
    unsetenv("FAKE_NVML_GPUS");
    return 0;
}

static void sampler_devices_should_read_slurm_gpu_lists(void **state)
{
    (void)state;
    struct fg_sampler_opts o = {0};
    struct fg_err err = {0};
    assert_int_equal(fg_sampler_devices(&o, "0,2-4", &err), 0);
    assert_int_equal(o.n_devices, 4);
    assert_int_equal(o.devices[0], 0);
    assert_int_equal(o.devices[3], 4);
    assert_int_equal(fg_sampler_devices(&o, "3", &err), 0);
    assert_int_equal(o.n_devices, 1);
    assert_int_equal(fg_sampler_devices(&o, "", &err), FG_E_PARSE);
    assert_int_equal(fg_sampler_devices(&o, "0,", &err), FG_E_PARSE);
    assert_int_equal(fg_sampler_devices(&o, "4-2", &err), FG_E_PARSE);
    assert_int_equal(fg_sampler_devices(&o, "gpu0", &err), FG_E_PARSE);
}

static void sampler_should_keep_the_largest_device(void **state)
{
    (void)state;
    setenv("FAKE_NVML_MIB", "0:1000,1:3000,2:7000", 1);
    struct fg_sampler_opts o = {.library = FAKE, .interval_ms = 10};
    struct fg_err err = {0};
    struct fg_sampler *s;
    assert_int_equal(fg_sampler_devices(&o, "0-1", &err), 0); /* device 2 is another job's */
    assert_int_equal(fg_sampler_start(&o, &s, &err), 0);
    nap(50);
    uint64_t peak, n;
    fg_sampler_stop(s, 1000, &peak, &n);
    assert_int_equal(peak, 3000 * MIB);
    assert_true(n >= 2);
}

static void sampler_should_catch_a_spike_between_two_samples_it_sees(void **state)
{
    (void)state;
    setenv("FAKE_NVML_SEQ", "1000,9000,2000,2000", 1);
    struct fg_sampler_opts o = {.library = FAKE, .interval_ms = 5};
    struct fg_err err = {0};
    struct fg_sampler *s;
    assert_int_equal(fg_sampler_devices(&o, "0", &err), 0);
    assert_int_equal(fg_sampler_start(&o, &s, &err), 0);
    nap(60);
    uint64_t n;
    assert_int_equal(fg_sampler_peak(s, &n), 9000 * MIB);
    assert_true(n >= 3);
    fg_sampler_stop(s, 1000, NULL, NULL);
}

static void sampler_start_should_fail_without_nvml_and_change_nothing(void **state)
{
    (void)state;
    struct fg_sampler_opts o = {.library = "/nonexistent/libnvidia-ml.so.1"};
    struct fg_err err = {0};
    struct fg_sampler *s = (struct fg_sampler *)&o;
    assert_int_equal(fg_sampler_devices(&o, "0", &err), 0);
    assert_int_equal(fg_sampler_start(&o, &s, &err), FG_E_NOTFOUND);
    assert_null(s);
    setenv("FAKE_NVML_FAIL_INIT", "1", 1);
    o.library = FAKE;
    assert_int_equal(fg_sampler_start(&o, &s, &err), FG_E_IO);
    assert_non_null(strstr(err.detail, "Driver Not Loaded"));
    unsetenv("FAKE_NVML_FAIL_INIT");
    setenv("FAKE_NVML_GPUS", "2", 1);
    assert_int_equal(fg_sampler_devices(&o, "0-3", &err), 0);
    assert_int_equal(fg_sampler_start(&o, &s, &err), FG_E_IO);
    assert_non_null(strstr(err.detail, "GPU 2"));
    fg_sampler_stop(NULL, 0, NULL, NULL);
}

/* An NVML call on a hung GPU blocks: stopping gives up at its deadline and the thread frees
 * itself when the call returns. */
static void sampler_stop_should_not_wait_for_a_hung_gpu(void **state)
{
    (void)state;
    setenv("FAKE_NVML_MIB", "0:1000", 1);
    /* a hang far longer than the bounds below, which keep a loaded host's margin (3 s) */
    setenv("FAKE_NVML_HANG_MS", "4000", 1);
    struct fg_sampler_opts o = {.library = FAKE, .interval_ms = 5};
    struct fg_err err = {0};
    struct fg_sampler *s;
    assert_int_equal(fg_sampler_devices(&o, "0", &err), 0);
    double t0 = now_ms();
    assert_int_equal(fg_sampler_start(&o, &s, &err), 0);
    assert_true(now_ms() - t0 < 3000); /* starting never waits on NVML */
    nap(20);
    t0 = now_ms();
    uint64_t n = 99;
    fg_sampler_stop(s, 50, NULL, &n);
    double took = now_ms() - t0;
    assert_true(took < 3000);
    assert_int_equal(n, 0);
    nap(4200); /* let the abandoned thread return and free itself */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(sampler_devices_should_read_slurm_gpu_lists, reset),
        cmocka_unit_test_setup(sampler_should_keep_the_largest_device, reset),
        cmocka_unit_test_setup(sampler_should_catch_a_spike_between_two_samples_it_sees, reset),
        cmocka_unit_test_setup(sampler_start_should_fail_without_nvml_and_change_nothing, reset),
        cmocka_unit_test_setup(sampler_stop_should_not_wait_for_a_hung_gpu, reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
