/*
 * test_learn.c - `fitgate learn` (cli/cmd_learn.c) on the scripted site of
 * tests/fixtures/learn (gen.py): 20 jobs whose peaks were scripted as a ratio of
 * estimate + context, which learn must give back exactly, with the joins it
 * must refuse, the flags it must raise and the calibration it must write.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../cli/cli.h"
#include "audit.h"
#include "memory/calib.h"
#include "util/fileio.h"

#define F "tests/fixtures/learn/"

/* Run fitgate learn with argv; its standard output into *out (caller frees). */
static int learn(char **argv, int argc, char **out)
{
    char path[] = "/tmp/fitgate-test-learn-out-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    fflush(stdout);
    int saved = dup(1);
    assert_true(saved >= 0);
    assert_true(dup2(fd, 1) >= 0);
    int rc = fg_cli_learn(argc, argv);
    fflush(stdout);
    assert_true(dup2(saved, 1) >= 0);
    close(saved);
    close(fd);
    size_t len;
    *out = NULL;
    assert_int_equal(fg__read_file(path, 1 << 24, out, &len), 0);
    unlink(path);
    return rc;
}

static const cJSON *job(const cJSON *root, double id)
{
    const cJSON *j;
    cJSON_ArrayForEach(j, cJSON_GetObjectItem(root, "jobs"))
        if (cJSON_GetObjectItem(j, "job_id")->valuedouble == id)
            return j;
    return NULL;
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItem(o, k);
    assert_non_null(v);
    return v->valuedouble;
}

static bool flag(const cJSON *o, const char *k)
{
    return cJSON_IsTrue(cJSON_GetObjectItem(o, k));
}

static void learn_should_give_each_job_its_scripted_ratio(void **state)
{
    (void)state;
    /* gen.py's JOBS: job id and the ratio its peak was scripted at */
    static const struct {
        double id, ratio;
    } script[] = {
        {7001, 1.05}, {7002, 1.10}, {7003, 1.08}, {7004, 1.12}, {7005, 1.07}, {7006, 1.09},
        {7007, 1.11}, {7008, 1.06}, {7010, 0.95}, {7011, 0.97}, {7012, 0.93}, {7013, 0.99},
        {7014, 0.30}, {7020, 1.20}, {7021, 1.25}, {7022, 1.40}, {7023, 1.15}, {7030, 1.00},
        {7031, 0.98}, {7032, 1.01},
    };
    char *argv[] = {"learn", F "audit.log", "--sacct", F "sacct.txt", "--logs", F "logs",
                    "--json"};
    char *out;
    assert_int_equal(learn(argv, 7, &out), 0);
    cJSON *root = cJSON_Parse(out);
    assert_non_null(root);
    const cJSON *c = cJSON_GetObjectItem(root, "counts");
    assert_int_equal(num(c, "joined"), 20);
    assert_int_equal(num(c, "unmatched"), 1);    /* a submit id no decision has */
    assert_int_equal(num(c, "other_user"), 1);   /* another user's submit id */
    assert_int_equal(num(c, "not_in_sacct"), 1);
    assert_int_equal(num(c, "family_unknown"), 0); /* every decision records model_type */
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(root, "jobs")), 20); /* 7010 once */
    for (size_t i = 0; i < sizeof script / sizeof script[0]; i++) {
        const cJSON *j = job(root, script[i].id);
        assert_non_null(j);
        if (fabs(num(j, "ratio") - script[i].ratio) > 1e-12)
            print_message("job %.0f: ratio %.15f, scripted %.4f\n", script[i].id,
                          num(j, "ratio"), script[i].ratio);
        assert_true(fabs(num(j, "ratio") - script[i].ratio) <= 1e-12);
    }
    /* like with like: 7010's 4 tasks of one GPU; 7020's one task on 2 GPUs */
    assert_int_equal(num(job(root, 7010), "gpus_per_task"), 1);
    assert_int_equal(num(job(root, 7020), "gpus_per_task"), 2);
    assert_int_equal(num(job(root, 7020), "peak_bytes"), 12000.0 * 1048576);
    /* the admitted job that ran out, found in its output */
    const cJSON *oom = job(root, 7022);
    assert_true(flag(oom, "admitted") && flag(oom, "gpu_oom"));
    assert_non_null(strstr(cJSON_GetObjectItem(oom, "evidence")->valuestring,
                           "slurm-7022.out: \"CUDA out of memory\""));
    /* OUT_OF_MEMORY is the host's */
    assert_true(flag(job(root, 7031), "host_oom"));
    assert_false(flag(job(root, 7031), "gpu_oom"));
    /* 24% of four H100: two could have gone */
    assert_int_equal(num(job(root, 7014), "gpus_freeable"), 2);
    assert_int_equal(num(job(root, 7013), "gpus_freeable"), 0);
    /* verdict against outcome: 7022 was allowed and died of GPU memory */
    int seen = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, cJSON_GetObjectItem(root, "verdict_outcome")) {
        const char *vd = cJSON_GetObjectItem(v, "verdict")->valuestring;
        const char *oc = cJSON_GetObjectItem(v, "outcome")->valuestring;
        if (!strcmp(vd, "allow") && !strcmp(oc, "GPU_OOM"))
            seen += num(v, "jobs") == 1;
        if (!strcmp(vd, "warn") && !strcmp(oc, "COMPLETED"))
            seen += num(v, "jobs") == 2; /* 7004, 7023 */
        if (!strcmp(vd, "allow") && !strcmp(oc, "OUT_OF_MEMORY"))
            seen += num(v, "jobs") == 1;
    }
    assert_int_equal(seen, 3);
    int n = 0;
    const cJSON *g;
    cJSON_ArrayForEach(g, cJSON_GetObjectItem(root, "by_framework_mode_family")) {
        const char *key = cJSON_GetObjectItem(g, "group")->valuestring;
        const cJSON *r = cJSON_GetObjectItem(g, "ratio");
        assert_string_not_equal(key, "hf lora qwen"); /* never the name's letters */
        if (!strcmp(key, "hf lora qwen3")) { /* Qwen3-8B and Qwen3-4B: one architecture */
            assert_int_equal(num(r, "jobs"), 8);
            assert_true(fabs(num(r, "median") - 1.085) < 1e-12);
            assert_true(fabs(num(r, "p10") - 1.05) < 1e-12);
            assert_true(fabs(num(r, "p90") - 1.12) < 1e-12);
            n++;
        } else if (!strcmp(key, "torchtune qlora mistral")) {
            assert_int_equal(num(g, "admitted_gpu_oom"), 1);
            assert_int_equal(num(g, "gpus_freeable"), 3);
            n++;
        }
    }
    assert_int_equal(n, 2);
    cJSON_ArrayForEach(g, cJSON_GetObjectItem(root, "by_partition"))
        if (!strcmp(cJSON_GetObjectItem(g, "group")->valuestring, "serve"))
            assert_int_equal(num(cJSON_GetObjectItem(g, "ratio"), "jobs"), 3);
    cJSON_Delete(root);
    free(out);
}

static void learn_should_write_a_calibration_the_policy_reads(void **state)
{
    (void)state;
    char path[] = "/tmp/fitgate-test-calibration-XXXXXX", html[64];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    snprintf(html, sizeof html, "%s.html", path);
    char *argv[] = {"learn", F "audit.log", "--sacct", F "sacct.txt", "--logs", F "logs",
                    "--min-jobs", "5", "--write-calibration", path, "--html", html};
    char *out;
    assert_int_equal(learn(argv, 12, &out), 0);
    free(out);
    struct fg_calib c;
    struct fg_err err = {0};
    assert_int_equal(fg_calib_load(&c, path, &err), 0);
    /* hf lora (8 completed) and lightning full (5); torchtune qlora has 3, vllm serve 2 */
    assert_int_equal(c.n, 2);
    const struct fg_calib_row *r = fg_calib_find(&c, "hf", FG_MODE_LORA);
    assert_non_null(r);
    /* median of (peak - context) / estimate: (1.08213 + 1.09239) / 2, gen.py's numbers
     * with the 777 MiB context */
    assert_true(r->factor == 1.087);
    assert_int_equal(r->jobs, 8);
    assert_true(r->low == 1.051 && r->high == 1.125);
    r = fg_calib_find(&c, "lightning", FG_MODE_FULL);
    assert_non_null(r);
    assert_true(r->factor == 0.949);
    assert_true(r->low == 0 && r->high == 0); /* 5 jobs: no interval */
    assert_null(fg_calib_find(&c, "torchtune", FG_MODE_QLORA));
    char *page = NULL;
    size_t len;
    assert_int_equal(fg__read_file(html, 1 << 20, &page, &len), 0);
    assert_int_equal((int)(strstr(page, "<svg") != NULL), 1);
    int circles = 0;
    for (const char *p = page; (p = strstr(p, "<circle")); p++)
        circles++;
    assert_int_equal(circles, 20);
    assert_non_null(strstr(page, "class=\"oom\" "));
    free(page);
    unlink(path);
    unlink(html);
}

static void learn_should_refuse_what_it_cannot_read(void **state)
{
    (void)state;
    char *out;
    char *no_log[] = {"learn", "--sacct", F "sacct.txt"};
    assert_int_equal(learn(no_log, 3, &out), 2);
    free(out);
    char *bad[] = {"learn", F "audit.log", "--sacct", F "audit.log"};
    assert_int_equal(learn(bad, 4, &out), 2);
    free(out);
    char *range[] = {"learn", F "audit.log", "--sacct", F "sacct.txt", "--far-below", "3"};
    assert_int_equal(learn(range, 6, &out), 2);
    free(out);
    char *nan[] = {"learn", F "audit.log", "--far-below", "nan"}; /* in no range */
    assert_int_equal(learn(nan, 4, &out), 2);
    free(out);
}

/* Without Slurm's gres/gpumem: the node's GpuSampler= peak (gpu_peak_bytes on its last stepd
 * line), already per GPU, is the job's peak. */
static void learn_should_take_the_nodes_own_sample_where_slurm_has_none(void **state)
{
    (void)state;
    char path[] = "/tmp/fitgate-test-learn-nvml-XXXXXX", line[FG_AUDIT_LINE_MAX];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    struct fg_audit_rec sub, start, end;
    fg_audit_rec_init(&sub, FG_AUDIT_AT_SBATCH);
    snprintf(sub.user, sizeof sub.user, "ana");
    snprintf(sub.framework, sizeof sub.framework, "hf");
    snprintf(sub.mode, sizeof sub.mode, "lora");
    snprintf(sub.model, sizeof sub.model, "Qwen/Qwen3-8B");
    sub.estimate_bytes = (20000ull - 777) << 20; /* + FG_CUDA_PROCESS_BYTES: 20,000 MiB */
    sub.usable_bytes = 85520809984ull - (1392ull << 20);
    sub.gpus_after = 1;
    start = sub;
    start.where = FG_AUDIT_AT_STEPD;
    start.job_id = 9001;
    end = start;
    end.gpu_peak_bytes = 23000ull << 20; /* 1.15 x (estimate + context) */
    size_t n = fg_audit_format(&sub, line, sizeof line);
    assert_int_equal(write(fd, line, n), (ssize_t)n);
    n = fg_audit_format(&start, line, sizeof line);
    assert_int_equal(write(fd, line, n), (ssize_t)n);
    n = fg_audit_format(&end, line, sizeof line);
    assert_int_equal(write(fd, line, n), (ssize_t)n);
    /* a decision that carried a site calibration of x1.25: its estimate was scaled */
    fg_audit_rec_init(&sub, FG_AUDIT_AT_SBATCH);
    snprintf(sub.user, sizeof sub.user, "ana");
    snprintf(sub.framework, sizeof sub.framework, "hf");
    snprintf(sub.mode, sizeof sub.mode, "lora");
    sub.estimate_bytes = 25000ull << 20;
    sub.calibration_milli = 1250;
    end = sub;
    end.where = FG_AUDIT_AT_STEPD;
    end.job_id = 9002;
    end.gpu_peak_bytes = (25000ull + 777) << 20;
    n = fg_audit_format(&sub, line, sizeof line);
    assert_int_equal(write(fd, line, n), (ssize_t)n);
    n = fg_audit_format(&end, line, sizeof line);
    assert_int_equal(write(fd, line, n), (ssize_t)n);
    close(fd);
    char *argv[] = {"learn", path, "--json"};
    char *out;
    assert_int_equal(learn(argv, 3, &out), 0);
    unlink(path);
    cJSON *root = cJSON_Parse(out);
    assert_non_null(root);
    assert_int_equal(num(cJSON_GetObjectItem(root, "counts"), "joined"), 2);
    const cJSON *j = job(root, 9001);
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItem(j, "peak_source")->valuestring, "nvml");
    assert_string_equal(cJSON_GetObjectItem(j, "state")->valuestring, "UNKNOWN");
    assert_true(fabs(num(j, "ratio") - 1.15) < 1e-12);
    /* the calibrated estimate was exact (ratio 1); against the model's own, x1.25 */
    j = job(root, 9002);
    assert_non_null(j);
    assert_true(fabs(num(j, "ratio") - 1.0) < 1e-12);
    assert_true(fabs(num(j, "factor") - 1.25) < 1e-12);
    assert_true(fabs(num(j, "calibration_applied") - 1.25) < 1e-12);
    cJSON_Delete(root);
    free(out);
}

/* One job: its decision (model, model_type; "" as lines before fitgate recorded it) and
 * the node's end line with its sampled peak, so no sacct is needed. */
static void put_job(int fd, uint64_t job_id, const char *model, const char *model_type)
{
    char line[FG_AUDIT_LINE_MAX];
    struct fg_audit_rec r;
    fg_audit_rec_init(&r, FG_AUDIT_AT_SBATCH);
    snprintf(r.user, sizeof r.user, "ana");
    snprintf(r.framework, sizeof r.framework, "hf");
    snprintf(r.mode, sizeof r.mode, "lora");
    snprintf(r.model, sizeof r.model, "%s", model);
    snprintf(r.model_type, sizeof r.model_type, "%s", model_type);
    r.estimate_bytes = 10000ull << 20;
    for (int k = 0; k < 2; k++) {
        size_t n = fg_audit_format(&r, line, sizeof line);
        assert_int_equal(write(fd, line, n), (ssize_t)n);
        r.where = FG_AUDIT_AT_STEPD;
        r.job_id = job_id;
        r.model_type[0] = '\0'; /* the node's line records none */
        r.gpu_peak_bytes = 11000ull << 20;
    }
}

/* The family is the architecture the decision recorded; a line written before it was
 * recorded takes the config's model_type where this machine holds the model, else the
 * group "(unknown)": never the name's leading letters ("Qwen/Qwen3-4B" is not "qwen"). */
static void learn_should_group_on_the_recorded_architecture_never_on_the_name(void **state)
{
    (void)state;
    char path[] = "/tmp/fitgate-test-learn-family-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    put_job(fd, 9101, "Qwen/Qwen3-8B", "qwen3");
    put_job(fd, 9102, "tests/fixtures/models/Qwen--Qwen3-8B", ""); /* config here: qwen3 */
    put_job(fd, 9103, "Qwen/Qwen3-4B", "");                        /* in no cache */
    put_job(fd, 9104, "Qwen/Qwen3-4B", "");
    close(fd);
    char *argv[] = {"learn", path, "--json"}, *out;
    assert_int_equal(learn(argv, 3, &out), 0);
    cJSON *root = cJSON_Parse(out);
    assert_non_null(root);
    assert_int_equal(num(cJSON_GetObjectItem(root, "counts"), "joined"), 4);
    assert_int_equal(num(cJSON_GetObjectItem(root, "counts"), "family_unknown"), 2);
    assert_string_equal(cJSON_GetObjectItem(job(root, 9102), "family")->valuestring, "qwen3");
    assert_string_equal(cJSON_GetObjectItem(job(root, 9103), "family")->valuestring,
                        "(unknown)");
    int seen = 0;
    const cJSON *g;
    cJSON_ArrayForEach(g, cJSON_GetObjectItem(root, "by_framework_mode_family")) {
        const char *key = cJSON_GetObjectItem(g, "group")->valuestring;
        double jobs = num(cJSON_GetObjectItem(g, "ratio"), "jobs");
        if (!strcmp(key, "hf lora qwen3") && jobs == 2)
            seen++;
        else if (!strcmp(key, "hf lora (unknown)") && jobs == 2)
            seen++;
        else
            fail_msg("group '%s' of %.0f jobs", key, jobs);
    }
    assert_int_equal(seen, 2);
    cJSON_Delete(root);
    free(out);
    /* the text report says what the group is */
    assert_int_equal(learn(argv, 2, &out), 0);
    assert_non_null(strstr(out, "(unknown): 2 jobs whose audit line records no model_type"));
    free(out);
    unlink(path);
}

/* A copy of the scripted site's trail owned by uid and mode (root only: chown). */
static void trail_copy(char *path, uid_t uid, mode_t mode)
{
    char *text = NULL;
    size_t len;
    assert_int_equal(fg__read_file(F "audit.log", 1 << 20, &text, &len), 0);
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, len), (ssize_t)len);
    assert_int_equal(fchown(fd, uid, (gid_t)-1), 0);
    assert_int_equal(fchmod(fd, mode), 0);
    close(fd);
    free(text);
}

/* One user's trail vouches for that user's jobs only: a line of another uid in it (a forged
 * decision or node line, a forged peak) is not believed, nor is any line of a trail others
 * may write; root's trail (the controller's), the reader's own and --trust-owner's are. */
static void learn_should_believe_a_trail_only_for_its_owners_jobs(void **state)
{
    (void)state;
    if (geteuid() != 0) {
        print_message("skipped: needs root (chown)\n");
        return;
    }
    char ana[] = "/tmp/fitgate-test-learn-ana-XXXXXX", open_[] = "/tmp/fitgate-test-learn-0666-XXXXXX";
    trail_copy(ana, 1001, 0640); /* gen.py's ana is uid 1001 */
    char *argv[] = {"learn", ana, "--sacct", F "sacct.txt", "--json"}, *out;
    assert_int_equal(learn(argv, 5, &out), 0);
    cJSON *root = cJSON_Parse(out);
    assert_non_null(root);
    const cJSON *c = cJSON_GetObjectItem(root, "counts"), *j;
    assert_int_equal(num(c, "untrusted"), 44 - 14); /* ana has 6 decisions and 8 node lines */
    assert_true(num(c, "joined") > 0);
    cJSON_ArrayForEach(j, cJSON_GetObjectItem(root, "jobs"))
        assert_string_equal(cJSON_GetObjectItem(j, "user")->valuestring, "ana");
    cJSON_Delete(root);
    free(out);
    /* the controller's trail when SlurmUser is not root: --trust-owner */
    char *trusted[] = {"learn", ana, "--sacct", F "sacct.txt", "--trust-owner", "1001", "--json"};
    assert_int_equal(learn(trusted, 7, &out), 0);
    root = cJSON_Parse(out);
    assert_int_equal(num(cJSON_GetObjectItem(root, "counts"), "joined"), 20);
    assert_int_equal(num(cJSON_GetObjectItem(root, "counts"), "untrusted"), 0);
    cJSON_Delete(root);
    free(out);
    char *nobody[] = {"learn", ana, "--trust-owner", "no-such-user-xyz"};
    assert_int_equal(learn(nobody, 4, &out), 2);
    free(out);
    unlink(ana);
    /* a trail its group or others may write: nothing in it is believed, root's or not */
    trail_copy(open_, 0, 0666);
    char *shared[] = {"learn", open_, "--sacct", F "sacct.txt", "--json"};
    assert_int_equal(learn(shared, 5, &out), 0);
    root = cJSON_Parse(out);
    assert_int_equal(num(cJSON_GetObjectItem(root, "counts"), "joined"), 0);
    assert_int_equal(num(cJSON_GetObjectItem(root, "counts"), "untrusted"), 44);
    cJSON_Delete(root);
    free(out);
    unlink(open_);
}

/* Slurm's accounting has the last word on whose job it is: with a UID column, a job whose
 * lines name another uid is not joined (counted as another user's); and with --sacct, a job
 * it does not list is not joined on a node's sample alone. */
static void learn_should_join_only_jobs_slurm_gives_the_same_user(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len;
    assert_int_equal(fg__read_file(F "sacct.txt", 1 << 20, &text, &len), 0);
    char path[] = "/tmp/fitgate-test-learn-uid-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    /* every row Slurm's: uid 1001 (ana's), a UID column after the others */
    for (char *line = strtok(text, "\n"), *first = line; line; line = strtok(NULL, "\n"))
        fprintf(f, "%s%s\n", line, line == first ? "UID|" : "1001|");
    fclose(f);
    free(text);
    char *argv[] = {"learn", F "audit.log", "--sacct", path, "--json"}, *out;
    assert_int_equal(learn(argv, 5, &out), 0);
    cJSON *root = cJSON_Parse(out);
    assert_non_null(root);
    const cJSON *j, *c = cJSON_GetObjectItem(root, "counts");
    assert_true(num(c, "joined") > 0 && num(c, "joined") < 20);
    assert_true(num(c, "other_user") > 1);
    cJSON_ArrayForEach(j, cJSON_GetObjectItem(root, "jobs"))
        assert_string_equal(cJSON_GetObjectItem(j, "user")->valuestring, "ana");
    cJSON_Delete(root);
    free(out);
    unlink(path);
}

/* --logs: a FIFO named like a job's output does not block, a symbolic link is not followed,
 * and a file another user planted under a job's name is not that job's evidence. */
static void learn_should_read_only_the_jobs_own_regular_outputs(void **state)
{
    (void)state;
    char dir[] = "/tmp/fitgate-test-learn-logs-XXXXXX", p[128];
    assert_non_null(mkdtemp(dir));
    snprintf(p, sizeof p, "%s/slurm-7022.out", dir);
    assert_int_equal(mkfifo(p, 0644), 0);
    snprintf(p, sizeof p, "%s/slurm-7022.err", dir);
    assert_int_equal(symlink("/etc/passwd", p), 0);
    snprintf(p, sizeof p, "%s/7022.out", dir);
    assert_int_equal(symlink(F "logs/slurm-7022.out", p), 0);
    alarm(20); /* a blocking open would hang the test: fail it instead */
    char *argv[] = {"learn", F "audit.log", "--sacct", F "sacct.txt", "--logs", dir, "--json"};
    char *out;
    assert_int_equal(learn(argv, 7, &out), 0);
    alarm(0);
    cJSON *root = cJSON_Parse(out);
    assert_non_null(root);
    assert_false(flag(job(root, 7022), "gpu_oom"));
    assert_int_equal(num(cJSON_GetObjectItem(root, "counts"), "logs_refused"), 3);
    cJSON_Delete(root);
    free(out);
    if (geteuid() == 0) {
        /* the real OOM message, in a file owned by another uid than the job's (bob, 1002) */
        char *text = NULL;
        size_t len;
        assert_int_equal(fg__read_file(F "logs/slurm-7022.out", 1 << 20, &text, &len), 0);
        snprintf(p, sizeof p, "%s/slurm-7003.out", dir);
        int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, len), (ssize_t)len);
        assert_int_equal(fchown(fd, 1666, (gid_t)-1), 0);
        close(fd);
        free(text);
        assert_int_equal(learn(argv, 7, &out), 0);
        root = cJSON_Parse(out);
        assert_false(flag(job(root, 7003), "gpu_oom"));
        cJSON_Delete(root);
        free(out);
        unlink(p);
    }
    char *missing[] = {"learn", F "audit.log", "--logs", "/nonexistent-fitgate-dir"};
    assert_int_equal(learn(missing, 4, &out), 2);
    free(out);
    const char *names[] = {"slurm-7022.out", "slurm-7022.err", "7022.out"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    rmdir(dir);
}

/* Trails that are not files: a FIFO nobody writes reads as empty, /dev/zero is refused,
 * and standard input of NULs stops at the line cap with the line named. */
static void learn_should_refuse_endless_and_blocking_trails(void **state)
{
    (void)state;
    char dir[] = "/tmp/fitgate-test-learn-fifo-XXXXXX", fifo[128];
    assert_non_null(mkdtemp(dir));
    snprintf(fifo, sizeof fifo, "%s/trail", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    alarm(20);
    char *argv[] = {"learn", fifo, "--json"}, *out;
    assert_int_equal(learn(argv, 3, &out), 0);
    free(out);
    char *zero[] = {"learn", "/dev/zero"};
    assert_int_equal(learn(zero, 2, &out), 2);
    free(out);
    char *sacct_zero[] = {"learn", F "audit.log", "--sacct", "/dev/zero"};
    assert_int_equal(learn(sacct_zero, 4, &out), 2);
    free(out);
    char *sacct_fifo[] = {"learn", F "audit.log", "--sacct", fifo};
    assert_int_equal(learn(sacct_fifo, 4, &out), 2); /* empty: no header line */
    free(out);
    alarm(0);
    unlink(fifo);
    rmdir(dir);
}

int main(void)
{
    /* no cache may hold these models: a decision that records no model_type is of family
     * "(unknown)" unless it names a model directory (cmd_learn.c family_of) */
    setenv("HF_HUB_CACHE", "/nonexistent/fitgate-test", 1);
    setenv("HF_HOME", "/nonexistent/fitgate-test", 1);
    unsetenv("FITGATE_MODEL_DIRS");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(learn_should_give_each_job_its_scripted_ratio),
        cmocka_unit_test(learn_should_write_a_calibration_the_policy_reads),
        cmocka_unit_test(learn_should_refuse_what_it_cannot_read),
        cmocka_unit_test(learn_should_take_the_nodes_own_sample_where_slurm_has_none),
        cmocka_unit_test(learn_should_group_on_the_recorded_architecture_never_on_the_name),
        cmocka_unit_test(learn_should_believe_a_trail_only_for_its_owners_jobs),
        cmocka_unit_test(learn_should_read_only_the_jobs_own_regular_outputs),
        cmocka_unit_test(learn_should_join_only_jobs_slurm_gives_the_same_user),
        cmocka_unit_test(learn_should_refuse_endless_and_blocking_trails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
