/*
 * bench_exec.c - whole-process timings: wall time, CPU time and peak resident memory of
 * commands run many times, interleaved, with medians and spread (a small hyperfine that
 * also reports ru_maxrss and needs nothing but libc).
 *
 *   bench_exec [-n RUNS] [-w WARMUP] [-o SAMPLES.tsv] [-q] [-p LABEL=SHELL-CMD]...
 *              LABEL=CMD [LABEL=CMD]...
 *
 * CMD is split on blank space (no quoting) and run with execvp, not through a shell, so a
 * shell's own start-up is not timed; leading NAME=VALUE words are set in the child's
 * environment first.  Every round runs each LABEL once, the order rotated by one each
 * round so that no command always follows the same one.  -p runs a shell command (untimed)
 * before each run of LABEL, e.g. to empty a cache for a cold-path timing.  stdout and
 * stderr of the commands go to /dev/null (-q keeps stderr).
 *
 * Per LABEL it prints: runs, failures (non-zero exit), the median wall time with the
 * interquartile range and min / max, the median CPU time (user + sys of the child, from
 * wait4), the median and largest peak RSS (ru_maxrss of the child), the ratio of its
 * median wall time to the first LABEL's, and the paired ratio: the median over rounds of
 * (this LABEL's wall time / the first LABEL's in the same round), which a load that drifts
 * during the measurement moves less, with a 95% bootstrap interval (2000 resamples of the
 * rounds), and the median paired CPU difference.  -o writes every sample (label, round,
 * wall_us, cpu_us, maxrss_kb, status) as TSV.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CMDS 16
#define MAX_ARGS 64

struct cmd {
    char label[64];
    char *argv[MAX_ARGS + 1];
    char *envs[MAX_ARGS];
    int nenv;
    const char *prep;
    double *wall, *cpu; /* ms */
    long *rss;          /* KB */
    int n, failed;
};

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int cmp_l(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return x < y ? -1 : x > y;
}

/* Quantile q of sorted v[0..n) by linear interpolation. */
static double quantile(const double *v, int n, double q)
{
    if (n == 0)
        return 0;
    double pos = q * (n - 1);
    int i = (int)pos;
    double f = pos - i;
    return i + 1 < n ? v[i] * (1 - f) + v[i + 1] * f : v[i];
}

static int parse_cmd(char *spec, struct cmd *c)
{
    char *eq = strchr(spec, '=');
    if (!eq || eq == spec || (size_t)(eq - spec) >= sizeof c->label)
        return -1;
    memcpy(c->label, spec, (size_t)(eq - spec));
    c->label[eq - spec] = '\0';
    int argc = 0;
    char *save = NULL;
    for (char *w = strtok_r(eq + 1, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save)) {
        if (argc == 0 && strchr(w, '=') && w[0] != '=' && w[0] != '/' && w[0] != '.') {
            if (c->nenv >= MAX_ARGS)
                return -1;
            c->envs[c->nenv++] = w;
            continue;
        }
        if (argc >= MAX_ARGS)
            return -1;
        c->argv[argc++] = w;
    }
    c->argv[argc] = NULL;
    return argc ? 0 : -1;
}

/* Run c once; fills wall / cpu / rss of sample i.  Returns the wait status. */
static int run_once(struct cmd *c, int i, bool quiet)
{
    if (c->prep) {
        int rc = system(c->prep);
        if (rc != 0)
            fprintf(stderr, "bench_exec: %s: prep command exited %d\n", c->label, rc);
    }
    double t0 = now_ms();
    pid_t pid = fork();
    if (pid < 0) {
        perror("bench_exec: fork");
        exit(2);
    }
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, 1);
            if (quiet)
                dup2(null, 2);
        }
        for (int k = 0; k < c->nenv; k++)
            putenv(c->envs[k]);
        execvp(c->argv[0], c->argv);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0) {
        if (errno != EINTR) {
            perror("bench_exec: wait4");
            exit(2);
        }
    }
    double t1 = now_ms();
    c->wall[i] = t1 - t0;
    c->cpu[i] = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
                (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
    c->rss[i] = ru.ru_maxrss;
    return status;
}

int main(int argc, char **argv)
{
    int runs = 30, warm = 2;
    bool quiet = true;
    const char *tsv = NULL;
    struct cmd cmds[MAX_CMDS];
    int n = 0;
    char *preps[MAX_CMDS];
    int npreps = 0;
    memset(cmds, 0, sizeof cmds);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc) {
            runs = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "-w") && i + 1 < argc) {
            warm = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            tsv = argv[++i];
        } else if (!strcmp(argv[i], "-q")) {
            quiet = false;
        } else if (!strcmp(argv[i], "-p") && i + 1 < argc) {
            if (npreps == MAX_CMDS)
                return fprintf(stderr, "bench_exec: too many -p\n"), 2;
            preps[npreps++] = argv[++i];
        } else if (n < MAX_CMDS && parse_cmd(argv[i], &cmds[n]) == 0) {
            n++;
        } else {
            fprintf(stderr, "usage: bench_exec [-n RUNS] [-w WARMUP] [-o SAMPLES.tsv] [-q] "
                            "[-p LABEL=SHELL-CMD]... LABEL=CMD...\n");
            return 2;
        }
    }
    if (n == 0 || runs < 1 || warm < 0)
        return fprintf(stderr, "bench_exec: nothing to run\n"), 2;
    for (int p = 0; p < npreps; p++) {
        char *eq = strchr(preps[p], '=');
        int k = 0;
        if (eq)
            for (; k < n; k++)
                if ((size_t)(eq - preps[p]) == strlen(cmds[k].label) &&
                    !strncmp(preps[p], cmds[k].label, (size_t)(eq - preps[p])))
                    break;
        if (!eq || k == n)
            return fprintf(stderr, "bench_exec: -p %s names no LABEL\n", preps[p]), 2;
        cmds[k].prep = eq + 1;
    }
    for (int k = 0; k < n; k++) {
        cmds[k].wall = calloc((size_t)(runs + warm), sizeof(double));
        cmds[k].cpu = calloc((size_t)(runs + warm), sizeof(double));
        cmds[k].rss = calloc((size_t)(runs + warm), sizeof(long));
        if (!cmds[k].wall || !cmds[k].cpu || !cmds[k].rss)
            return fprintf(stderr, "bench_exec: out of memory\n"), 2;
    }
    FILE *out = tsv ? fopen(tsv, "w") : NULL;
    if (tsv && !out)
        return fprintf(stderr, "bench_exec: %s: %s\n", tsv, strerror(errno)), 2;
    if (out)
        fprintf(out, "label\tround\twall_us\tcpu_us\tmaxrss_kb\tstatus\n");
    for (int r = 0; r < warm + runs; r++) {
        for (int j = 0; j < n; j++) {
            struct cmd *c = &cmds[(j + r) % n];
            int i = c->n;
            int st = run_once(c, i, quiet);
            if (r < warm)
                continue; /* warm-up: page cache, dynamic loader, the controller's caches */
            if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
                c->failed++;
            if (out)
                fprintf(out, "%s\t%d\t%.0f\t%.0f\t%ld\t%d\n", c->label, r - warm,
                        c->wall[i] * 1e3, c->cpu[i] * 1e3, c->rss[i],
                        WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
            c->n++;
        }
    }
    if (out)
        fclose(out);
    /* paired statistics first, while the samples are still in round order */
    double *paired = calloc((size_t)n * 4, sizeof(double)), *tmp = calloc((size_t)runs, sizeof(double));
    double *rs = calloc((size_t)runs, sizeof(double)), *boot = calloc(2000, sizeof(double));
    if (!paired || !tmp || !rs || !boot)
        return fprintf(stderr, "bench_exec: out of memory\n"), 2;
    unsigned long long seed = 0x2545f4914f6cdd1dull;
    for (int k = 0; k < n; k++) {
        int m = cmds[k].n < cmds[0].n ? cmds[k].n : cmds[0].n;
        for (int i = 0; i < m; i++)
            tmp[i] = cmds[0].wall[i] > 0 ? cmds[k].wall[i] / cmds[0].wall[i] : 0;
        for (int b = 0; b < 2000 && m > 0; b++) {
            for (int i = 0; i < m; i++) {
                seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17; /* xorshift64 */
                rs[i] = tmp[seed % (unsigned long long)m];
            }
            qsort(rs, (size_t)m, sizeof(double), cmp_d);
            boot[b] = quantile(rs, m, 0.5);
        }
        qsort(boot, 2000, sizeof(double), cmp_d);
        qsort(tmp, (size_t)m, sizeof(double), cmp_d);
        paired[4 * k] = quantile(tmp, m, 0.5);
        paired[4 * k + 1] = quantile(boot, 2000, 0.025);
        paired[4 * k + 2] = quantile(boot, 2000, 0.975);
        for (int i = 0; i < m; i++)
            tmp[i] = cmds[k].cpu[i] - cmds[0].cpu[i];
        qsort(tmp, (size_t)m, sizeof(double), cmp_d);
        paired[4 * k + 3] = quantile(tmp, m, 0.5);
    }
    double base = 0;
    printf("%-20s %5s %4s %10s %21s %19s %9s %10s %10s %7s %7s %13s %9s\n", "label", "runs",
           "fail", "median ms", "IQR ms", "min..max ms", "cpu ms", "rss KB", "max rss", "ratio",
           "paired", "paired 95%", "+cpu ms");
    for (int k = 0; k < n; k++) {
        struct cmd *c = &cmds[k];
        qsort(c->wall, (size_t)c->n, sizeof(double), cmp_d);
        qsort(c->cpu, (size_t)c->n, sizeof(double), cmp_d);
        qsort(c->rss, (size_t)c->n, sizeof(long), cmp_l);
        double med = quantile(c->wall, c->n, 0.5);
        if (k == 0)
            base = med;
        char iqr[32], range[32];
        snprintf(iqr, sizeof iqr, "%.3f..%.3f", quantile(c->wall, c->n, 0.25),
                 quantile(c->wall, c->n, 0.75));
        snprintf(range, sizeof range, "%.2f..%.2f", c->wall[0], c->wall[c->n - 1]);
        char ci[32];
        snprintf(ci, sizeof ci, "%.3f..%.3f", paired[4 * k + 1], paired[4 * k + 2]);
        printf("%-20s %5d %4d %10.3f %21s %19s %9.3f %10ld %10ld %7.3f %7.3f %13s %+9.3f\n",
               c->label, c->n, c->failed, med, iqr, range, quantile(c->cpu, c->n, 0.5),
               c->rss[c->n / 2], c->rss[c->n - 1], base > 0 ? med / base : 0, paired[4 * k], ci,
               paired[4 * k + 3]);
    }
    free(paired);
    free(tmp);
    free(rs);
    free(boot);
    for (int k = 0; k < n; k++) {
        free(cmds[k].wall);
        free(cmds[k].cpu);
        free(cmds[k].rss);
    }
    return 0;
}
