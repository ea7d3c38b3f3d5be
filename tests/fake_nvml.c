/*
 * fake_nvml.c - a libnvidia-ml.so.1 that serves scripted memory figures, for
 * the sampler's tests without a GPU (tests/test_nvml.c, bench).
 *
 * FAKE_NVML_GPUS=N               devices 0..N-1 (default 8)
 * FAKE_NVML_MIB=D:MIB[,D:MIB]    one process on device D using MIB MiB, every call
 * FAKE_NVML_SEQ=MIB,MIB,...      device 0 instead: the k-th call returns the k-th value
 *                                (the last one after the list ends)
 * FAKE_NVML_FAIL_INIT=1          nvmlInit fails (NVML_ERROR_DRIVER_NOT_LOADED)
 * FAKE_NVML_HANG_MS=MS           every process query sleeps MS first (a hung GPU)
 * none of FAKE_NVML_MIB / _SEQ   the file devN beside this library holds device N's MiB
 *                                (jobs on the loopback cluster write theirs there:
 *                                slurmstepd's environment is not the test's)
 *
 * The entry points and structs are NVML's ABI (nvml.h): _v2 handles, _v3 process
 * queries filling nvmlProcessInfo_v2_t.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct proc_v2 {
    unsigned int pid;
    unsigned long long used;
    unsigned int gpu_instance, compute_instance;
};

static unsigned calls;

static unsigned env_u(const char *name, unsigned def)
{
    const char *v = getenv(name);
    return v && *v ? (unsigned)strtoul(v, NULL, 10) : def;
}

int nvmlInit_v2(void)
{
    return env_u("FAKE_NVML_FAIL_INIT", 0) ? 9 : 0;
}

int nvmlShutdown(void)
{
    return 0;
}

const char *nvmlErrorString(int rc)
{
    return rc == 9 ? "Driver Not Loaded" : "Unknown Error";
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void **device)
{
    if (index >= env_u("FAKE_NVML_GPUS", 8))
        return 2; /* NVML_ERROR_INVALID_ARGUMENT */
    *device = (void *)(unsigned long)(index + 1);
    return 0;
}

static unsigned long long mib_for(unsigned dev)
{
    const char *seq = getenv("FAKE_NVML_SEQ");
    if (seq && *seq && dev == 0) {
        unsigned k = __atomic_fetch_add(&calls, 1u, __ATOMIC_RELAXED);
        const char *p = seq;
        unsigned long long v = strtoull(p, NULL, 10);
        for (unsigned i = 0; i < k && (p = strchr(p, ',')); i++)
            v = strtoull(++p, NULL, 10);
        return v;
    }
    const char *m = getenv("FAKE_NVML_MIB");
    if (!m) {
        Dl_info info;
        const char *slash;
        char path[4096];
        unsigned long long v = 0;
        if (!dladdr((void *)&mib_for, &info) || !info.dli_fname ||
            !(slash = strrchr(info.dli_fname, '/')))
            return 0;
        snprintf(path, sizeof path, "%.*s/dev%u", (int)(slash - info.dli_fname),
                 info.dli_fname, dev);
        FILE *f = fopen(path, "r");
        if (f) {
            if (fscanf(f, "%llu", &v) != 1)
                v = 0;
            fclose(f);
        }
        return v;
    }
    for (const char *p = m; p && *p;) {
        char *end;
        unsigned long d = strtoul(p, &end, 10);
        if (*end != ':')
            break;
        unsigned long long v = strtoull(end + 1, &end, 10);
        if (d == dev)
            return v;
        p = *end == ',' ? end + 1 : end;
    }
    return 0;
}

int nvmlDeviceGetComputeRunningProcesses_v3(void *device, unsigned int *count,
                                            struct proc_v2 *infos)
{
    unsigned dev = (unsigned)(unsigned long)device - 1, hang = env_u("FAKE_NVML_HANG_MS", 0);
    if (hang) {
        struct timespec t = {hang / 1000, (long)(hang % 1000) * 1000000L};
        nanosleep(&t, NULL);
    }
    unsigned long long mib = mib_for(dev);
    if (!mib) {
        *count = 0;
        return 0;
    }
    if (*count < 1) {
        *count = 1;
        return 7; /* NVML_ERROR_INSUFFICIENT_SIZE */
    }
    memset(infos, 0, sizeof *infos);
    infos[0].pid = 4242 + dev;
    infos[0].used = mib << 20;
    infos[0].gpu_instance = infos[0].compute_instance = ~0u;
    *count = 1;
    return 0;
}
