/*
 * nvml.c - the NVML sampler (nvml.h): dlopen'ed libnvidia-ml, a thread, the peak.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hw/nvml.h"

/* NVML's ABI (nvml.h of the CUDA toolkit): the types this file needs, nothing more. */
typedef int nvml_return;   /* nvmlReturn_t: 0 NVML_SUCCESS */
typedef void *nvml_device; /* nvmlDevice_t: an opaque pointer */
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_VALUE_NOT_AVAILABLE (~0ull)
/* nvmlProcessInfo_v1_t: what the unversioned entry point fills (kept by every driver for
 * binaries built against older headers); _v2 and _v3 fill nvmlProcessInfo_v2_t, which adds
 * the MIG instance ids. */
struct proc_v1 {
    unsigned int pid;
    unsigned long long used;
};
struct proc_v2 {
    unsigned int pid;
    unsigned long long used;
    unsigned int gpu_instance, compute_instance;
};

#define MAX_PROCS 256

struct fg_sampler {
    void *lib;
    nvml_return (*init)(void);
    nvml_return (*shutdown)(void);
    nvml_return (*handle)(unsigned int, nvml_device *);
    nvml_return (*procs)(nvml_device, unsigned int *, void *);
    const char *(*error_string)(nvml_return);
    size_t proc_size;           /* sizeof the struct procs() fills */
    nvml_device handles[FG_SAMPLER_MAX_DEVICES];
    size_t n;
    unsigned interval_ms;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool stop, done, abandoned; /* under lock */
    uint64_t peak, samples;     /* under lock */
    unsigned char buf[MAX_PROCS * sizeof(struct proc_v2)];
};

int fg_sampler_devices(struct fg_sampler_opts *o, const char *list, struct fg_err *err)
{
    o->n_devices = 0;
    for (const char *p = list; *p;) {
        char *end;
        if (*p < '0' || *p > '9')
            goto bad;
        unsigned long a = strtoul(p, &end, 10), b = a;
        if (*end == '-') {
            if (end[1] < '0' || end[1] > '9')
                goto bad;
            b = strtoul(end + 1, &end, 10);
        }
        if (b < a || b > 1023 || (*end && (*end != ',' || !end[1])))
            goto bad;
        for (unsigned long d = a; d <= b; d++) {
            if (o->n_devices == FG_SAMPLER_MAX_DEVICES)
                return fg_err_set(err, FG_E_RANGE, "more than %d GPUs in '%.80s'",
                                  FG_SAMPLER_MAX_DEVICES, list);
            o->devices[o->n_devices++] = (unsigned)d;
        }
        p = *end ? end + 1 : end;
    }
    if (o->n_devices)
        return 0;
bad:
    return fg_err_set(err, FG_E_PARSE, "'%.80s' is not a list of GPU indexes (0,1 or 0-3)",
                      list);
}

/* One sample: the processes' used bytes summed per device, the largest device kept. */
static void sample(struct fg_sampler *s)
{
    uint64_t top = 0;
    for (size_t i = 0; i < s->n; i++) {
        unsigned int n = MAX_PROCS;
        if (s->procs(s->handles[i], &n, s->buf) != 0 || n > MAX_PROCS)
            continue; /* NVML_ERROR_INSUFFICIENT_SIZE: processes came and went: next time */
        uint64_t sum = 0;
        for (unsigned int k = 0; k < n; k++) {
            unsigned long long used;
            memcpy(&used, s->buf + k * s->proc_size + offsetof(struct proc_v1, used),
                   sizeof used);
            if (used != NVML_VALUE_NOT_AVAILABLE)
                sum += used;
        }
        if (sum > top)
            top = sum;
    }
    pthread_mutex_lock(&s->lock);
    if (top > s->peak)
        s->peak = top;
    s->samples++;
    pthread_mutex_unlock(&s->lock);
}

static void release(struct fg_sampler *s)
{
    if (s->shutdown)
        s->shutdown();
    dlclose(s->lib);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->wake);
    free(s);
}

/* Now on the realtime clock (pthread_cond_timedwait's) plus ms. */
static struct timespec after_ms(unsigned ms)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += ms / 1000;
    t.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

static void *run(void *arg)
{
    struct fg_sampler *s = arg;
    sample(s); /* the first at once, on this thread: starting never waits on NVML */
    pthread_mutex_lock(&s->lock);
    while (!s->stop) {
        struct timespec t = after_ms(s->interval_ms);
        int rc = pthread_cond_timedwait(&s->wake, &s->lock, &t);
        if (s->stop)
            break;
        if (rc == ETIMEDOUT) {
            pthread_mutex_unlock(&s->lock);
            sample(s); /* NVML without the lock: stop never waits behind a slow call */
            pthread_mutex_lock(&s->lock);
        }
    }
    s->done = true;
    bool abandoned = s->abandoned;
    pthread_cond_broadcast(&s->wake);
    pthread_mutex_unlock(&s->lock);
    if (abandoned)
        release(s); /* stop gave up waiting: the last one out frees */
    return NULL;
}

static void *sym(void *lib, const char *a, const char *b)
{
    void *p = dlsym(lib, a);
    return p || !b ? p : dlsym(lib, b);
}

int fg_sampler_start(const struct fg_sampler_opts *o, struct fg_sampler **out,
                     struct fg_err *err)
{
    *out = NULL;
    const char *name = o->library ? o->library : "libnvidia-ml.so.1";
    if (!o->n_devices || o->n_devices > FG_SAMPLER_MAX_DEVICES)
        return fg_err_set(err, FG_E_INVAL, "no GPUs to sample");
    struct fg_sampler *s = calloc(1, sizeof *s);
    if (!s)
        return fg_err_set(err, FG_E_NOMEM, "out of memory");
    if (!(s->lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) {
        free(s);
        return fg_err_set(err, FG_E_NOTFOUND, "%s: %s", name, dlerror());
    }
    s->init = (nvml_return(*)(void))sym(s->lib, "nvmlInit_v2", "nvmlInit");
    s->shutdown = (nvml_return(*)(void))sym(s->lib, "nvmlShutdown", NULL);
    s->handle = (nvml_return(*)(unsigned int, nvml_device *))sym(
        s->lib, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
    s->error_string = (const char *(*)(nvml_return))sym(s->lib, "nvmlErrorString", NULL);
    s->proc_size = sizeof(struct proc_v2);
    s->procs = (nvml_return(*)(nvml_device, unsigned int *, void *))sym(
        s->lib, "nvmlDeviceGetComputeRunningProcesses_v3",
        "nvmlDeviceGetComputeRunningProcesses_v2");
    if (!s->procs) {
        s->proc_size = sizeof(struct proc_v1);
        s->procs = (nvml_return(*)(nvml_device, unsigned int *, void *))sym(
            s->lib, "nvmlDeviceGetComputeRunningProcesses", NULL);
    }
    nvml_return rc;
    if (!s->init || !s->shutdown || !s->handle || !s->procs) {
        dlclose(s->lib);
        free(s);
        return fg_err_set(err, FG_E_IO, "%s: not NVML (nvmlInit, nvmlDeviceGetHandleByIndex "
                          "or nvmlDeviceGetComputeRunningProcesses missing)", name);
    }
    if ((rc = s->init())) {
        const char *why = s->error_string ? s->error_string(rc) : "";
        fg_err_set(err, FG_E_IO, "%s: nvmlInit: %d %s", name, rc, why ? why : "");
        s->shutdown = NULL;
        dlclose(s->lib);
        free(s);
        return FG_E_IO;
    }
    for (size_t i = 0; i < o->n_devices; i++) {
        if ((rc = s->handle(o->devices[i], &s->handles[s->n]))) {
            fg_err_set(err, FG_E_IO, "%s: GPU %u: nvmlDeviceGetHandleByIndex: %d", name,
                       o->devices[i], rc);
            s->shutdown();
            dlclose(s->lib);
            free(s);
            return FG_E_IO;
        }
        s->n++;
    }
    s->interval_ms = o->interval_ms ? o->interval_ms : 5000;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->wake, NULL);
    if (pthread_create(&s->thread, NULL, run, s)) {
        release(s);
        return fg_err_set(err, FG_E_NOMEM, "cannot start the sampling thread");
    }
    *out = s;
    return 0;
}

uint64_t fg_sampler_peak(struct fg_sampler *s, uint64_t *samples)
{
    pthread_mutex_lock(&s->lock);
    uint64_t p = s->peak;
    if (samples)
        *samples = s->samples;
    pthread_mutex_unlock(&s->lock);
    return p;
}

void fg_sampler_stop(struct fg_sampler *s, unsigned deadline_ms, uint64_t *peak,
                     uint64_t *samples)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    s->stop = true;
    pthread_cond_broadcast(&s->wake);
    struct timespec t = after_ms(deadline_ms);
    while (!s->done)
        if (pthread_cond_timedwait(&s->wake, &s->lock, &t) == ETIMEDOUT)
            break;
    bool done = s->done;
    pthread_t th = s->thread; /* s may be gone once the lock is released */
    if (peak)
        *peak = s->peak;
    if (samples)
        *samples = s->samples;
    if (!done)
        s->abandoned = true; /* stuck in NVML: it frees itself when it returns */
    pthread_mutex_unlock(&s->lock);
    if (done) {
        pthread_join(th, NULL);
        release(s);
    } else {
        pthread_detach(th);
    }
}
