/*
 * bench_sampler.c - what GpuSampler= costs (engine/hw/nvml.c), without a GPU:
 *
 *   absent   fg_sampler_start where libnvidia-ml.so.1 is not there (the "no NVML" case
 *            every tagged job on such a node pays): wall time per attempt;
 *   sample   the sampling thread on 8 devices of the fake NVML (tests/fake_nvml.c) at a
 *            1 ms interval for --ms: process CPU time per sample and per device query.
 *
 * The fake answers from memory: the figures are fitgate's own overhead (thread wake-up,
 * dlsym'ed calls, the sums), not the driver's ioctl behind a real NVML call.
 * Usage: bench_sampler FAKE_LIB [--ms N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "hw/nvml.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double cpu_s(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec / 1e6 +
           (double)u.ru_stime.tv_sec + (double)u.ru_stime.tv_usec / 1e6;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_sampler FAKE_LIB [--ms N]\n");
        return 2;
    }
    unsigned ms = argc > 3 && !strcmp(argv[2], "--ms") ? (unsigned)atoi(argv[3]) : 3000;
    /* the name the plugin loads: dlopen searches the cache and the default paths, and fails */
    struct fg_sampler_opts o = {.library = NULL, .interval_ms = 1};
    struct fg_err err = {0};
    struct fg_sampler *s;
    fg_sampler_devices(&o, "0-7", &err);

    enum { N = 201 };
    double t[N];
    for (int i = 0; i < N; i++) {
        double t0 = now_s();
        if (fg_sampler_start(&o, &s, &err) != FG_E_NOTFOUND) {
            fprintf(stderr, "bench_sampler: this machine has an NVML: no 'absent' figure\n");
            if (!err.code)
                fg_sampler_stop(s, 2000, NULL, NULL);
            break;
        }
        t[i] = now_s() - t0;
    }
    qsort(t, N, sizeof t[0], cmp);
    printf("absent: no NVML library: %.1f us per tagged job (median of %d; p10 %.1f, p90 %.1f)\n",
           t[N / 2] * 1e6, N, t[N / 10] * 1e6, t[N * 9 / 10] * 1e6);

    setenv("FAKE_NVML_MIB", "0:20480,1:20480,2:20480,3:20480,4:20480,5:20480,6:20480,7:20480", 1);
    o.library = argv[1];
    double c0 = cpu_s(), w0 = now_s();
    if (fg_sampler_start(&o, &s, &err)) {
        fprintf(stderr, "bench_sampler: %s\n", err.detail);
        return 1;
    }
    struct timespec nap = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&nap, NULL);
    uint64_t peak, n;
    fg_sampler_stop(s, 2000, &peak, &n);
    double cpu = cpu_s() - c0, wall = now_s() - w0;
    printf("sample: 8 GPUs, 1 ms interval, %.1f s: %llu samples, %.2f us CPU per sample "
           "(%.2f us per GPU query), %.2f%% of one core; peak %llu MiB\n", wall,
           (unsigned long long)n, cpu / (double)n * 1e6, cpu / (double)n / 8 * 1e6,
           100 * cpu / wall, (unsigned long long)(peak >> 20));
    printf("at GpuSampler=5 (one sample every 5 s): %.4f%% of one core, %.1f ms CPU per "
           "hour of job\n", 100 * cpu / (double)n / 5.0, cpu / (double)n * 720 * 1e3);
    return 0;
}
