/*
 * test_plugin.c - the plugin's engine part (fitgate_engine.so's objects)
 * without Slurm: this binary stands in for sbatch / slurmstepd.  It exports
 * `opt`, slurm_option_get and slurm_option_set (linked with -rdynamic, so the
 * plugin's guarded dlsym probe finds them as it finds sbatch's), and stubs
 * the SPANK calls the plugin makes (messages and environments recorded).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>

#include "../cli/cli.h"
#include "../plugin/fitgate.h"

/* ---- the stand-in for Slurm --------------------------------------------------------- */

#define NEMO "tests/fixtures/models/nvidia--NVIDIA-Nemotron-Nano-9B-v2"
#define QWEN "tests/fixtures/models/Qwen--Qwen3-0.6B"
#define T4X8 "tests/fixtures/hwloc/mpibind-g4dnmetal.xml"

struct kv {
    char name[64];
    char value[512];
};

static struct {
    char msgs[8192];          /* every message, one a line, "E: " or "I: " first */
    struct kv slurm_opts[8];  /* what slurm_option_get answers */
    struct kv sets[8];        /* slurm_option_set calls */
    size_t n_sets;
    struct kv env[32];        /* spank_getenv */
    struct kv task_env[32];   /* spank_setenv */
    struct kv jc_env[32];     /* spank_job_control_setenv */
    uint32_t job_id, step_id, node_id; /* spank_get_item */
} fake;

char opt[64]; /* stands in for sbatch's slurm_opt_t (never read through) */

char *slurm_option_get(void *o, const char *name);
int slurm_option_set(void *o, const char *name, const char *value, bool early);
void slurm_xfree(void **p);

void slurm_xfree(void **p)
{
    free(*p);
    *p = NULL;
}

/* The controller: one default partition "gpu", nodes with their gres. */
static struct {
    int asked;                   /* RPCs made */
    const char *node_gres[2];    /* NULL: no such node */
} ctld;
static partition_info_t parts[2] = {{.name = "gpu", .flags = PART_FLAG_DEFAULT},
                                    {.name = "debug"}};
static node_info_t nodes[2];
static partition_info_msg_t parts_msg = {.record_count = 2, .partition_array = parts};
static node_info_msg_t nodes_msg = {.node_array = nodes};

int slurm_load_partitions(time_t t, partition_info_msg_t **resp, uint16_t flags)
{
    (void)t;
    (void)flags;
    ctld.asked++;
    *resp = &parts_msg;
    return 0;
}

int slurm_load_node(time_t t, node_info_msg_t **resp, uint16_t flags)
{
    (void)t;
    (void)flags;
    ctld.asked++;
    nodes_msg.record_count = 0;
    for (int i = 0; i < 2 && ctld.node_gres[i]; i++) {
        nodes[i].name = (char *)(i ? "n1" : "n0");
        nodes[i].partitions = (char *)"debug,gpu";
        nodes[i].gres = (char *)ctld.node_gres[i];
        nodes_msg.record_count++;
    }
    *resp = &nodes_msg;
    return 0;
}

void slurm_free_partition_info_msg(partition_info_msg_t *m)
{
    (void)m;
}

void slurm_free_node_info_msg(node_info_msg_t *m)
{
    (void)m;
}

char *slurm_option_get(void *o, const char *name)
{
    (void)o;
    for (size_t i = 0; i < 8; i++)
        if (fake.slurm_opts[i].name[0] && !strcmp(fake.slurm_opts[i].name, name))
            return strdup(fake.slurm_opts[i].value);
    return NULL;
}

int slurm_option_set(void *o, const char *name, const char *value, bool early)
{
    (void)o;
    (void)early;
    if (fake.n_sets < 8) {
        snprintf(fake.sets[fake.n_sets].name, 64, "%s", name);
        snprintf(fake.sets[fake.n_sets].value, 512, "%s", value);
        fake.n_sets++;
    }
    return 0;
}

static void record(const char *tag, const char *fmt, va_list ap)
{
    size_t l = strlen(fake.msgs);
    if (l + 4 >= sizeof fake.msgs)
        return;
    snprintf(fake.msgs + l, sizeof fake.msgs - l, "%s", tag);
    l = strlen(fake.msgs);
    vsnprintf(fake.msgs + l, sizeof fake.msgs - l, fmt, ap);
    l = strlen(fake.msgs);
    if (l + 1 < sizeof fake.msgs) {
        fake.msgs[l] = '\n';
        fake.msgs[l + 1] = '\0';
    }
}

void slurm_error(const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    record("E: ", format, ap);
    va_end(ap);
}

void slurm_info(const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    record("I: ", format, ap);
    va_end(ap);
}

void slurm_debug(const char *format, ...)
{
    (void)format;
}

static void put(struct kv *t, const char *name, const char *value)
{
    for (size_t i = 0; i < 32; i++) {
        if (!t[i].name[0] || !strcmp(t[i].name, name)) {
            snprintf(t[i].name, sizeof t[i].name, "%s", name);
            snprintf(t[i].value, sizeof t[i].value, "%s", value);
            return;
        }
    }
}

static const char *get(const struct kv *t, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (t[i].name[0] && !strcmp(t[i].name, name))
            return t[i].value;
    return NULL;
}

/* A field of the one job-control variable the submission sets (SLURM_SPANK_FITGATE_PLAN,
 * "TP=1;PP=2;..."), or NULL; and that it is the only one. */
static const char *plan_field(const char *key)
{
    static char buf[512];
    const char *plan = get(fake.jc_env, 32, "FITGATE_PLAN");
    size_t kl = strlen(key), others = 0;
    for (size_t i = 0; i < 32; i++)
        others += fake.jc_env[i].name[0] && strcmp(fake.jc_env[i].name, "FITGATE_PLAN");
    assert_int_equal(others, 0);
    for (const char *p = plan; p && *p;) {
        size_t n = strcspn(p, ";");
        if (n > kl && !strncmp(p, key, kl) && p[kl] == '=') {
            snprintf(buf, sizeof buf, "%.*s", (int)(n - kl - 1), p + kl + 1);
            return buf;
        }
        p += n + (p[n] == ';');
    }
    return NULL;
}

spank_err_t spank_getenv(spank_t sp, const char *var, char *buf, int len)
{
    (void)sp;
    const char *v = get(fake.env, 32, var);
    if (!v)
        return ESPANK_ENV_NOEXIST;
    snprintf(buf, (size_t)len, "%s", v);
    return ESPANK_SUCCESS;
}

spank_err_t spank_setenv(spank_t sp, const char *var, const char *val, int overwrite)
{
    (void)sp;
    (void)overwrite;
    put(fake.task_env, var, val);
    return ESPANK_SUCCESS;
}

spank_err_t spank_job_control_setenv(spank_t sp, const char *name, const char *value,
                                     int overwrite)
{
    (void)sp;
    (void)overwrite;
    put(fake.jc_env, name, value);
    return ESPANK_SUCCESS;
}

spank_err_t spank_get_item(spank_t sp, spank_item_t item, ...)
{
    (void)sp;
    va_list ap;
    va_start(ap, item);
    uint32_t *p = va_arg(ap, uint32_t *);
    va_end(ap);
    switch (item) {
    case S_JOB_ID: *p = fake.job_id; return ESPANK_SUCCESS;
    case S_JOB_STEPID: *p = fake.step_id; return ESPANK_SUCCESS;
    case S_JOB_NODEID: *p = fake.node_id; return ESPANK_SUCCESS;
    default: return ESPANK_BAD_ARG;
    }
}

/* ---- helpers ---------------------------------------------------------------------- */

static const char *values[FG_JOBOPT_COUNT];
static char topo_arg[4200]; /* "topology=/abs/path" (plugstack paths are absolute) */

static int setup(void **state)
{
    (void)state;
    memset(&fake, 0, sizeof fake);
    memset(&ctld, 0, sizeof ctld);
    memset(values, 0, sizeof values);
    unsetenv("FITGATE_GPUS");
    unsetenv("FITGATE_CARD");
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    snprintf(topo_arg, sizeof topo_arg, "topology=%s/%s", cwd, T4X8);
    return 0;
}

static void slurm_says(const char *name, const char *value)
{
    for (size_t i = 0; i < 8; i++) {
        if (!fake.slurm_opts[i].name[0]) {
            snprintf(fake.slurm_opts[i].name, 64, "%s", name);
            snprintf(fake.slurm_opts[i].value, 512, "%s", value);
            return;
        }
    }
}

static int submit(int ac, char **av)
{
    return fitgate_engine_alloc(NULL, ac, av, values, FG_JOBOPT_COUNT);
}

static bool said(const char *s)
{
    return strstr(fake.msgs, s) != NULL;
}

/* A policy file holding text: its name into path (a mkstemp template), "conf=NAME" into conf;
 * the caller unlinks path. */
static void policy_file(const char *text, char *path, char *conf, size_t cap)
{
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    snprintf(conf, cap, "conf=%s", path);
}

/* ---- submit time -------------------------------------------------------------------- */

static void alloc_should_reject_nemotron_lora_on_one_t4(void **state)
{
    (void)state;
    values[FG_JOBOPT_MODEL] = NEMO;
    values[FG_JOBOPT_MODE] = "lora";
    slurm_says("gres", "gres:gpu:t4:1");
    assert_int_equal(submit(0, NULL), -1);
    assert_true(said("E: fitgate: rejected: LoRA of nvidia--NVIDIA-Nemotron-Nano-9B-v2 does not "
                     "fit --gres=gpu:t4:1"));
    assert_true(said("one T4 16 GB has"));
    assert_true(said("(more GPUs): --ft-tp=")); /* a remedy, re-checked: its layout as */
    assert_true(said(" --gres=gpu:t4:4 ("));      /* options, then the request */
    assert_int_equal(fake.n_sets, 0);
    assert_null(get(fake.jc_env, 32, "FITGATE_PLAN"));
    assert_null(get(fake.jc_env, 32, "FITGATE_GPUS"));
}

static void alloc_should_resize_gres_and_export_the_plan(void **state)
{
    (void)state;
    values[FG_JOBOPT_MODEL] = NEMO;
    values[FG_JOBOPT_MODE] = "lora";
    slurm_says("gres", "gres:gpu:t4:1");
    slurm_says("nodes", "1-0");
    char *av[] = {"action=resize"};
    assert_int_equal(submit(1, av), 0);
    assert_true(said("I: fitgate: resized:"));
    assert_int_equal(fake.n_sets, 1);
    assert_string_equal(fake.sets[0].name, "gres");
    assert_memory_equal(fake.sets[0].value, "gpu:t4:", 7);
    const char *n = fake.sets[0].value + 7;
    assert_string_equal(plan_field("GPUS"), n);
    assert_string_equal(getenv("FITGATE_GPUS"), n); /* for --export=ALL */
    assert_string_equal(plan_field("CARD"), "t4");
    assert_non_null(plan_field("NEMO_OVERRIDES"));
    assert_string_equal(plan_field("NEMO_OVERRIDES"), getenv("FITGATE_NEMO_OVERRIDES"));
}

static void alloc_should_resize_in_the_option_the_job_used(void **state)
{
    (void)state;
    values[FG_JOBOPT_MODEL] = NEMO;
    values[FG_JOBOPT_MODE] = "lora";
    slurm_says("gpus-per-node", "t4:1");
    char *av[] = {"action=resize"};
    assert_int_equal(submit(1, av), 0);
    assert_int_equal(fake.n_sets, 1);
    assert_string_equal(fake.sets[0].name, "gpus-per-node");
    assert_memory_equal(fake.sets[0].value, "t4:", 3);
}

static void alloc_should_find_gpu_among_other_gres_and_stay_silent_when_it_fits(void **state)
{
    (void)state;
    values[FG_JOBOPT_MODEL] = QWEN;
    values[FG_JOBOPT_MODE] = "lora";
    slurm_says("gres", "gres:mps:100,gres:gpu:h100:1(S:0-1)");
    assert_int_equal(submit(0, NULL), 0);
    assert_string_equal(fake.msgs, "");
    assert_string_equal(plan_field("CARD"), "h100");
    assert_string_equal(plan_field("GPUS"), "1");
    assert_string_equal(plan_field("TP"), "1");
}

static void alloc_should_fall_back_to_ft_gpus_when_slurm_shows_no_request(void **state)
{
    (void)state;
    values[FG_JOBOPT_MODEL] = NEMO;
    values[FG_JOBOPT_MODE] = "lora";
    values[FG_JOBOPT_GPU] = "Tesla T4";
    values[FG_JOBOPT_GPUS] = "2";
    assert_int_equal(submit(0, NULL), -1);
    assert_true(said("does not fit --gres=gpu:t4:2"));
}

static void alloc_should_follow_on_error_for_an_unknown_card(void **state)
{
    (void)state;
    values[FG_JOBOPT_MODEL] = QWEN;
    values[FG_JOBOPT_MODE] = "lora";
    slurm_says("gres", "gres:gpu:quantumcard:1");
    assert_int_equal(submit(0, NULL), 0);
    assert_true(said("I: fitgate: warning: cannot check Qwen--Qwen3-0.6B: the GPU type "
                     "'quantumcard' is not in fitgate's GPU table"));
    char *av[] = {"onerror=reject"};
    fake.msgs[0] = '\0';
    assert_int_equal(submit(1, av), -1);
    assert_true(said("E: fitgate: rejected: cannot check"));
}

static void alloc_should_reject_a_bad_option_value_naming_it(void **state)
{
    (void)state;
    values[FG_JOBOPT_MODEL] = QWEN;
    values[FG_JOBOPT_BATCH] = "eight";
    slurm_says("gres", "gres:gpu:t4:1");
    assert_int_equal(submit(0, NULL), -1);
    assert_true(said("E: fitgate: rejected: --ft-batch=eight: expected a whole number"));
    values[FG_JOBOPT_BATCH] = NULL;
    values[FG_JOBOPT_MODE] = "pretrain";
    fake.msgs[0] = '\0';
    assert_int_equal(submit(0, NULL), -1);
    assert_true(said("--ft-mode"));
    values[FG_JOBOPT_MODE] = NULL;
    values[FG_JOBOPT_ATTENTION] = "flash";
    fake.msgs[0] = '\0';
    assert_int_equal(submit(0, NULL), -1);
    assert_true(said("--ft-attention: attention 'flash' is not one of sdpa|eager"));
}

static void alloc_should_apply_on_error_to_a_broken_policy(void **state)
{
    (void)state;
    values[FG_JOBOPT_MODEL] = QWEN;
    slurm_says("gres", "gres:gpu:t4:1");
    char *allow[] = {"conf=/nonexistent/fitgate.conf"};
    assert_int_equal(submit(1, allow), 0);
    assert_true(said("fitgate: warning: cannot check this job: /nonexistent/fitgate.conf"));
    assert_true(said("tell the admin"));
    char *reject[] = {"conf=/nonexistent/fitgate.conf", "onerror=reject"};
    fake.msgs[0] = '\0';
    assert_int_equal(submit(2, reject), -1);
    char *unknown[] = {"colour=blue"};
    fake.msgs[0] = '\0';
    assert_int_equal(submit(1, unknown), 0);
    assert_true(said("unknown argument 'colour'"));
}

static void alloc_should_do_nothing_under_action_off(void **state)
{
    (void)state;
    values[FG_JOBOPT_MODEL] = NEMO;
    values[FG_JOBOPT_MODE] = "lora";
    slurm_says("gres", "gres:gpu:t4:1");
    char *av[] = {"action=off"};
    assert_int_equal(submit(1, av), 0);
    assert_string_equal(fake.msgs, "");
    assert_null(get(fake.jc_env, 32, "FITGATE_PLAN"));
    assert_null(get(fake.jc_env, 32, "FITGATE_GPUS"));
}

static void alloc_should_take_the_partitions_card_for_an_untyped_request(void **state)
{
    (void)state;
    values[FG_JOBOPT_MODEL] = NEMO;
    values[FG_JOBOPT_MODE] = "lora";
    slurm_says("gres", "gres:gpu:1");
    ctld.node_gres[0] = "gpu:t4:8(S:0-1)";
    ctld.node_gres[1] = "gpu:t4:4,mps:400";
    assert_int_equal(submit(0, NULL), -1);
    assert_true(said("does not fit --gres=gpu:1"));
    assert_true(said("one T4 16 GB has"));
    assert_true(said("(more GPUs): --ft-"));
    assert_true(said(" --gres=gpu:4 (")); /* untyped, as the job wrote it */

    /* two types in the partition: judged on the smallest, which the message names */
    memset(&fake.msgs, 0, sizeof fake.msgs);
    ctld.node_gres[1] = "gpu:h100:8";
    assert_int_equal(submit(0, NULL), -1);
    assert_true(said("one T4 16 GB has"));
    assert_true(said("judged on the smallest card of partition gpu, T4 16 GB (its nodes have "
                     "t4,h100)"));
    /* whichever node lists it first */
    memset(&fake.msgs, 0, sizeof fake.msgs);
    ctld.node_gres[0] = "gpu:h100:8";
    ctld.node_gres[1] = "gpu:t4:4";
    assert_int_equal(submit(0, NULL), -1);
    assert_true(said("judged on the smallest card of partition gpu, T4 16 GB (its nodes have "
                     "h100,t4)"));
    /* the partition's DefaultGPU= decides before the controller is asked */
    char path[] = "/tmp/fitgate-test-plugin-XXXXXX", conf[64];
    policy_file("PartitionName=gpu DefaultGPU=h100\n", path, conf, sizeof conf);
    char *av[] = {conf};
    memset(&fake.msgs, 0, sizeof fake.msgs);
    ctld.asked = 0;
    assert_int_equal(submit(1, av), 0); /* one H100 holds the LoRA */
    assert_string_equal(fake.msgs, "");
    assert_int_equal(ctld.asked, 1);    /* the default partition's name only */
    unlink(path);
}

static void alloc_should_refuse_an_untagged_gpu_job_under_require_tag(void **state)
{
    (void)state;
    char path[] = "/tmp/fitgate-test-plugin-XXXXXX", conf[64];
    policy_file("PartitionName=debug RequireTag=no\n", path, conf, sizeof conf);
    char *av[] = {conf, "requiretag=yes"};
    slurm_says("gres", "gres:gpu:h100:1");
    assert_int_equal(submit(2, av), -1);
    assert_true(said("E: fitgate: rejected: GPU jobs in partition gpu must say what they run "
                     "(RequireTag=yes)"));
    assert_true(said("add --ft-model=ORG/NAME"));
    /* a partition that says no, and a job without GPUs, pass */
    setup(NULL);
    slurm_says("gres", "gres:gpu:h100:1");
    slurm_says("partition", "debug");
    assert_int_equal(submit(2, av), 0);
    assert_string_equal(fake.msgs, "");
    setup(NULL);
    assert_int_equal(submit(2, av), 0);
    assert_string_equal(fake.msgs, "");
    unlink(path);
}

/* An untagged job's verdict needs the request and the partition only: a GpuTable= file is not
 * read for it (here one that is missing, under OnError=reject), a tagged job still reads it. */
static void alloc_should_judge_an_untagged_job_without_the_gpu_table(void **state)
{
    (void)state;
    char path[] = "/tmp/fitgate-test-plugin-XXXXXX", conf[64];
    policy_file("GpuTable=/nonexistent/fitgate-gpus.conf OnError=reject\n", path, conf,
                sizeof conf);
    char *av[] = {conf, "requiretag=yes"};
    slurm_says("gres", "gres:gpu:h100:1");
    assert_int_equal(submit(2, av), -1);
    assert_true(said("must say what they run (RequireTag=yes)"));
    assert_false(said("cannot check"));
    setup(NULL); /* no GPUs: passes */
    assert_int_equal(submit(2, av), 0);
    assert_string_equal(fake.msgs, "");
    setup(NULL);
    values[FG_JOBOPT_MODEL] = QWEN;
    values[FG_JOBOPT_MODE] = "lora";
    slurm_says("gres", "gres:gpu:h100:1");
    assert_int_equal(submit(2, av), -1);
    assert_true(said("E: fitgate: rejected: cannot check this job: "));
    assert_true(said("/nonexistent/fitgate-gpus.conf"));
    unlink(path);
}

static void alloc_should_use_the_default_partitions_rules(void **state)
{
    (void)state;
    char path[] = "/tmp/fitgate-test-plugin-XXXXXX", conf[64];
    policy_file("Action=reject\nPartitionName=gpu Action=warn\n", path, conf, sizeof conf);
    char *av[] = {conf};
    values[FG_JOBOPT_MODEL] = NEMO;
    values[FG_JOBOPT_MODE] = "lora";
    slurm_says("gres", "gres:gpu:t4:1");
    assert_int_equal(submit(1, av), 0); /* no --partition: the default one, gpu, warns */
    assert_true(said("I: fitgate: warning:"));
    assert_true(ctld.asked >= 1);

    memset(&fake.msgs, 0, sizeof fake.msgs);
    slurm_says("partition", "debug");
    assert_int_equal(submit(1, av), -1);
    unlink(path);
}

static void alloc_should_not_ask_the_controller_when_the_job_says_it_all(void **state)
{
    (void)state;
    values[FG_JOBOPT_MODEL] = QWEN;
    values[FG_JOBOPT_MODE] = "lora";
    slurm_says("gres", "gres:gpu:t4:1");
    assert_int_equal(submit(0, NULL), 0);
    assert_int_equal(ctld.asked, 0);
}

/* ---- on the node ---------------------------------------------------------------------- */

static void stepd_should_fail_the_step_when_the_real_gpus_are_smaller(void **state)
{
    (void)state;
    values[FG_JOBOPT_MODEL] = NEMO;
    values[FG_JOBOPT_MODE] = "lora";
    put(fake.env, "SLURM_GPUS_ON_NODE", "1");
    put(fake.env, "SLURM_JOB_GPUS", "0");
    char *av[] = {topo_arg};
    assert_int_equal(fitgate_engine_stepd(NULL, 1, av, values, FG_JOBOPT_COUNT), 1);
    assert_true(said("E: fitgate: rejected on "));
    assert_true(said("does not fit the 1 x T4 16 GB allocated here"));
    assert_null(get(fake.task_env, 32, "FITGATE_GPUS"));
}

static void stepd_should_export_the_plan_when_the_gpus_hold_it(void **state)
{
    (void)state;
    values[FG_JOBOPT_MODEL] = NEMO;
    values[FG_JOBOPT_MODE] = "lora";
    put(fake.env, "SLURM_GPUS_ON_NODE", "8");
    put(fake.env, "SLURM_STEP_GPUS", "0-7");
    put(fake.env, "SLURM_JOB_PARTITION", "gpu");
    char *av[] = {topo_arg};
    assert_int_equal(fitgate_engine_stepd(NULL, 1, av, values, FG_JOBOPT_COUNT), 0);
    assert_string_equal(get(fake.task_env, 32, "FITGATE_GPUS"), "8");
    assert_string_equal(get(fake.task_env, 32, "FITGATE_CARD"), "t4");
    assert_non_null(get(fake.task_env, 32, "FITGATE_PP_SPLIT"));
}

static void stepd_should_judge_by_the_node_when_slurm_numbers_do_not_map(void **state)
{
    (void)state;
    values[FG_JOBOPT_MODEL] = QWEN;
    values[FG_JOBOPT_MODE] = "lora";
    put(fake.env, "SLURM_GPUS_ON_NODE", "1");
    put(fake.env, "SLURM_JOB_GPUS", "12"); /* gres.conf order beyond the topology's 8 GPUs */
    char *av[] = {topo_arg};
    assert_int_equal(fitgate_engine_stepd(NULL, 1, av, values, FG_JOBOPT_COUNT), 0);
    assert_string_equal(get(fake.task_env, 32, "FITGATE_CARD"), "t4");
}

static void stepd_should_pass_on_the_submitted_plan_when_the_model_is_unreadable(void **state)
{
    (void)state;
    values[FG_JOBOPT_MODEL] = "acme/not-in-any-cache";
    values[FG_JOBOPT_MODE] = "lora";
    put(fake.env, "SLURM_GPUS_ON_NODE", "2");
    put(fake.env, "SLURM_JOB_GPUS", "0,1");
    put(fake.env, "SLURM_SPANK_FITGATE_TP", "2");
    put(fake.env, "SLURM_SPANK_FITGATE_MICRO_BATCH", "1");
    char *av[] = {topo_arg, "onerror=reject", "hubendpoint=http://127.0.0.1:9"};
    assert_int_equal(fitgate_engine_stepd(NULL, 3, av, values, FG_JOBOPT_COUNT), 0); /* no hub from the node */
    assert_string_equal(get(fake.task_env, 32, "FITGATE_TP"), "2");
    assert_string_equal(get(fake.task_env, 32, "FITGATE_MICRO_BATCH"), "1");
    assert_false(said("E: "));
}

static void stepd_should_unpack_the_plan_submitted_as_one_variable(void **state)
{
    (void)state;
    values[FG_JOBOPT_MODEL] = "acme/not-in-any-cache";
    values[FG_JOBOPT_MODE] = "lora";
    put(fake.env, "SLURM_GPUS_ON_NODE", "2");
    put(fake.env, "SLURM_JOB_GPUS", "0,1");
    put(fake.env, "SLURM_SPANK_FITGATE_PLAN",
        "TP=2;PP=1;MICRO_BATCH=1;PP_SPLIT=0-27;NEMO_OVERRIDES=tensor_model_parallel_size=2 "
        "pipeline_model_parallel_size=1;CARD=t4");
    put(fake.env, "SLURM_SPANK_FITGATE_GPUS", "2"); /* a value sent alone: read too */
    char *av[] = {topo_arg, "onerror=reject", "hubendpoint=http://127.0.0.1:9"};
    assert_int_equal(fitgate_engine_stepd(NULL, 3, av, values, FG_JOBOPT_COUNT), 0);
    assert_string_equal(get(fake.task_env, 32, "FITGATE_TP"), "2");
    assert_string_equal(get(fake.task_env, 32, "FITGATE_PP_SPLIT"), "0-27");
    assert_string_equal(get(fake.task_env, 32, "FITGATE_NEMO_OVERRIDES"),
                        "tensor_model_parallel_size=2 pipeline_model_parallel_size=1");
    assert_string_equal(get(fake.task_env, 32, "FITGATE_CARD"), "t4");
    assert_string_equal(get(fake.task_env, 32, "FITGATE_GPUS"), "2");
    assert_null(get(fake.task_env, 32, "FITGATE_EP")); /* not in the plan */
}

static void stepd_should_not_check_a_step_without_gpus(void **state)
{
    (void)state;
    values[FG_JOBOPT_MODEL] = NEMO;
    char *av[] = {topo_arg};
    assert_int_equal(fitgate_engine_stepd(NULL, 1, av, values, FG_JOBOPT_COUNT), 0);
    assert_string_equal(fake.msgs, "");
}

/* Submission logs a line without job id and carries its submit_id in the plan; the node
 * logs a "stepd" line with the job id and the same submit_id (fitgate learn joins them). */
static void stepd_should_log_the_job_id_under_the_submissions_id(void **state)
{
    (void)state;
    char log[] = "/tmp/fitgate-test-learn-XXXXXX", arg[64], line[8192];
    int fd = mkstemp(log);
    assert_true(fd >= 0);
    close(fd);
    snprintf(arg, sizeof arg, "logfile=%s", log);
    values[FG_JOBOPT_MODEL] = NEMO;
    values[FG_JOBOPT_MODE] = "lora";
    slurm_says("gres", "gres:gpu:t4:8");
    char *av[] = {topo_arg, arg};
    assert_int_equal(submit(2, av), 0);
    const char *sid = plan_field("SUBMIT_ID");
    assert_non_null(sid);
    char id[128];
    snprintf(id, sizeof id, "%s", sid);
    assert_true(fitgate_submit_id_valid(id));

    /* on the node: the job-control variable, job 4242, the batch step on node 0 */
    put(fake.env, "SLURM_SPANK_FITGATE_PLAN", get(fake.jc_env, 32, "FITGATE_PLAN"));
    put(fake.env, "SLURM_GPUS_ON_NODE", "8");
    put(fake.env, "SLURM_STEP_GPUS", "0-7");
    fake.job_id = 4242;
    fake.step_id = 0xfffffffbu;
    assert_int_equal(fitgate_engine_stepd(NULL, 2, av, values, FG_JOBOPT_COUNT), 0);
    fake.step_id = 3; /* a later srun step: no second line */
    assert_int_equal(fitgate_engine_stepd(NULL, 2, av, values, FG_JOBOPT_COUNT), 0);

    FILE *f = fopen(log, "r");
    assert_non_null(f);
    struct fg_audit_rec r[2];
    struct fg_err err = {0};
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        assert_true(n < 2);
        assert_int_equal(fg_audit_parse(line, strlen(line), &r[n], &err), 0);
        n++;
    }
    fclose(f);
    unlink(log);
    assert_int_equal(n, 2);
    assert_int_equal(r[0].where, FG_AUDIT_AT_SBATCH);
    assert_int_equal(r[0].job_id, 0);
    /* the decision names the architecture (fitgate learn groups on it); the node's line
     * does not: learn takes it from the decision it joins */
    assert_string_equal(r[0].model_type, "nemotron_h");
    assert_string_equal(r[1].model_type, "");
    assert_int_equal(r[1].where, FG_AUDIT_AT_STEPD);
    assert_int_equal(r[1].job_id, 4242);
    assert_string_equal(r[1].submit_id, id);
    assert_string_equal(r[0].submit_id, id);
    assert_int_equal(r[1].estimate_bytes, strtoull(plan_field("ESTIMATE_BYTES"), NULL, 10));
}

/* GpuSampler=: the node samples the job's GPUs through NVML (here the fake library serving
 * scripted figures) and writes the largest at the end; the start line is unchanged. */
static void stepd_should_log_the_sampled_gpu_peak_at_the_end(void **state)
{
    (void)state;
    char log[] = "/tmp/fitgate-test-sampler-XXXXXX", arg[64], nvml[4200], line[8192];
    char cwd[4096];
    int fd = mkstemp(log);
    assert_true(fd >= 0);
    close(fd);
    assert_non_null(getcwd(cwd, sizeof cwd));
    snprintf(arg, sizeof arg, "logfile=%s", log);
#ifndef FG_FAKE_NVML
#define FG_FAKE_NVML "build/tests/fake-nvml/libnvidia-ml.so.1"
#endif
    snprintf(nvml, sizeof nvml, "nvml=%s/%s", cwd, FG_FAKE_NVML);
    setenv("FAKE_NVML_GPUS", "9", 1);
    setenv("FAKE_NVML_MIB", "0:20480,1:30720,8:70000", 1); /* GPU 8 is another job's */
    values[FG_JOBOPT_MODEL] = NEMO;
    values[FG_JOBOPT_MODE] = "lora";
    put(fake.env, "SLURM_SPANK_FITGATE_PLAN", "CARD=t4;GPUS=8;SUBMIT_ID=login1:7:1.000000002:0");
    put(fake.env, "SLURM_GPUS_ON_NODE", "8");
    put(fake.env, "SLURM_STEP_GPUS", "0-7");
    fake.job_id = 4343;
    fake.step_id = 0xfffffffbu;
    char *av[] = {topo_arg, arg, "gpusampler=0.01", nvml};
    assert_int_equal(fitgate_engine_stepd(NULL, 4, av, values, FG_JOBOPT_COUNT), 0);
    struct timespec t = {0, 50 * 1000000L};
    nanosleep(&t, NULL);
    fitgate_engine_stepd_exit();
    fitgate_engine_stepd_exit(); /* once only */
    unsetenv("FAKE_NVML_MIB");
    unsetenv("FAKE_NVML_GPUS");
    FILE *f = fopen(log, "r");
    assert_non_null(f);
    struct fg_audit_rec r[3];
    struct fg_err err = {0};
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        assert_true(n < 3);
        assert_int_equal(fg_audit_parse(line, strlen(line), &r[n], &err), 0);
        if (n == 0)
            assert_null(strstr(line, "gpu_peak_bytes")); /* written only when set */
        n++;
    }
    fclose(f);
    unlink(log);
    assert_int_equal(n, 2);
    assert_int_equal(r[0].gpu_peak_bytes, 0);
    assert_int_equal(r[1].where, FG_AUDIT_AT_STEPD);
    assert_int_equal(r[1].job_id, 4343);
    assert_string_equal(r[1].submit_id, "login1:7:1.000000002:0");
    assert_int_equal(r[1].gpu_peak_bytes, 30720ull << 20);
    assert_non_null(strstr(r[1].message, "peak 30720 MiB on one GPU"));
}

static void submit_id_valid_should_refuse_what_rec_init_never_writes(void **state)
{
    (void)state;
    assert_true(fitgate_submit_id_valid("login1:29716:1762166069.638875957:0"));
    assert_false(fitgate_submit_id_valid("login1:29716:1762166069.638875957"));
    assert_false(fitgate_submit_id_valid("a\"b:1:2:3"));
    assert_false(fitgate_submit_id_valid(""));
}

/* The one reader of what the submission decided, for the check and the record alike. */
static void submitted_should_read_the_plan_field_else_the_variable_alone(void **state)
{
    (void)state;
    char buf[16];
    put(fake.env, "SLURM_SPANK_FITGATE_PLAN",
        "CARDS=x;CARD=t4;NEMO_OVERRIDES=tensor_model_parallel_size=2;GPUS=8");
    put(fake.env, "SLURM_SPANK_FITGATE_GPUS", "16");
    put(fake.env, "SLURM_SPANK_FITGATE_EP", "4");
    assert_true(fitgate_submitted(NULL, "CARD", buf, sizeof buf)); /* not CARDS */
    assert_string_equal(buf, "t4");
    assert_true(fitgate_submitted(NULL, "GPUS", buf, sizeof buf)); /* the plan first */
    assert_string_equal(buf, "8");
    assert_true(fitgate_submitted(NULL, "EP", buf, sizeof buf)); /* not packed: alone */
    assert_string_equal(buf, "4");
    /* 28 characters do not fit in 16 bytes: not cut short, and no variable alone */
    assert_false(fitgate_submitted(NULL, "NEMO_OVERRIDES", buf, sizeof buf));
    assert_false(fitgate_submitted(NULL, "TP", buf, sizeof buf));
}

/* ---- messages ------------------------------------------------------------------------- */

static void model_label_should_name_paths_by_directory(void **state)
{
    (void)state;
    char b[160];
    fg_gate_model_label("/srv/models/org--name/", b, sizeof b);
    assert_string_equal(b, "org--name");
    fg_gate_model_label("./m/config.json", b, sizeof b);
    assert_string_equal(b, "m");
    fg_gate_model_label("Qwen/Qwen3-8B@refs/pr/1", b, sizeof b);
    assert_string_equal(b, "Qwen/Qwen3-8B@refs/pr/1");
    fg_gate_model_label("org/name", b, sizeof b);
    assert_string_equal(b, "org/name");
}

/* ---- one verdict: fitgate check and the plugin give the same answer -------------------- */

/* `fitgate check ARGV` in this process, its standard output into out; the exit status. */
static int cli_check(int argc, char **argv, char *out, size_t cap)
{
    fflush(stdout);
    int saved = dup(1);
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    assert_true(saved >= 0 && dup2(fileno(tmp), 1) >= 0);
    int rc = fg_cli_check(argc, argv);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    rewind(tmp);
    size_t n = fread(out, 1, cap - 1, tmp);
    out[n] = '\0';
    fclose(tmp);
    return rc;
}

/* The "fitgate: ..." lines of a text, one per line, without indentation or "E: "/"I: ". */
static void decision_lines(const char *text, char *out, size_t cap)
{
    size_t o = 0;
    out[0] = '\0';
    for (const char *l = text; *l;) {
        size_t n = strcspn(l, "\n");
        const char *f = l;
        while (f < l + n && *f == ' ')
            f++;
        if (!strncmp(f, "E: ", 3) || !strncmp(f, "I: ", 3))
            f += 3;
        if (!strncmp(f, "fitgate: ", 9) && o + (size_t)(l + n - f) + 2 < cap) {
            memcpy(out + o, f, (size_t)(l + n - f));
            o += (size_t)(l + n - f);
            out[o++] = '\n';
            out[o] = '\0';
        }
        l += n + (l[n] == '\n');
    }
}

static void agree_should_give_every_job_one_verdict_through_cli_and_plugin(void **state)
{
    (void)state;
    static const char *const models[] = {
        "Qwen--Qwen3-0.6B", "nvidia--NVIDIA-Nemotron-Nano-9B-v2", "meta-llama--Llama-3.1-8B",
        "HuggingFaceTB--SmolLM3-3B", "EleutherAI--gpt-j-6b", "mistralai--Mixtral-8x7B-v0.1",
        "Qwen--Qwen3-30B-A3B", "google--gemma-2-9b", "microsoft--Phi-3.5-mini-instruct",
        "tiiuae--falcon-7b", "google-bert--bert-base-uncased", "meta-llama--Llama-2-13b-hf",
        "openai--gpt-oss-20b", "allenai--OLMo-2-1124-7B"};
    static const char *const modes[] = {"full", "lora", "qlora"};
    static const char *const batches[] = {"1", "8"};
    static const char *const cards[] = {"a100_40g", "h100", "h200", "t4"};
    static const char *const counts[] = {"1", "2", "4"};
    static const char *const policies[] = {
        "",
        "Action=resize ShrinkOverRequest=yes MaxGPUs=16 AllowOverride=yes\n",
        "Action=warn Borderline=reject Headroom=1.3 Conservative=1.6 AllowedModes=full,lora\n"};
    char pol_path[3][64], pol_arg[3][80];
    for (int p = 0; p < 3; p++) {
        snprintf(pol_path[p], sizeof pol_path[p], "/tmp/fitgate-agree-%d-%d.conf", (int)getpid(),
                 p);
        FILE *f = fopen(pol_path[p], "w");
        assert_non_null(f);
        fputs(policies[p], f);
        fclose(f);
        snprintf(pol_arg[p], sizeof pol_arg[p], "conf=%s", pol_path[p]);
    }
    static char out[65536], cli_lines[8192], plug_lines[8192];
    unsigned cases = 0, differ = 0, kinds[4] = {0};
    const char *only = getenv("FITGATE_AGREE_MODELS"); /* a smaller run: "3" models */
    size_t nm = only ? (size_t)atoi(only) : sizeof models / sizeof models[0];
    for (size_t mi = 0; mi < nm && mi < sizeof models / sizeof models[0]; mi++)
    for (int mo = 0; mo < 3; mo++)
    for (int b = 0; b < 2; b++)
    for (int c = 0; c < 4; c++)
    for (int n = 0; n < 3; n++)
    for (int lay = 0; lay < 2; lay++)
    for (int p = 0; p < 3; p++) {
        char model[256], gres[64], cli_gres[64];
        snprintf(model, sizeof model, "tests/fixtures/models/%s", models[mi]);
        snprintf(gres, sizeof gres, "gres:gpu:%s:%s", cards[c], counts[n]);
        snprintf(cli_gres, sizeof cli_gres, "--gres=gpu:%s:%s", cards[c], counts[n]);
        /* the job's own layout: the framework's default, or a declared one */
        const char *fw = lay ? (n ? "nemo" : "lit-gpt") : NULL;
        const char *pp = lay && n ? counts[n] : NULL;
        /* the plugin */
        setup(NULL);
        values[FG_JOBOPT_MODEL] = model;
        values[FG_JOBOPT_MODE] = modes[mo];
        values[FG_JOBOPT_BATCH] = batches[b];
        values[FG_JOBOPT_FRAMEWORK] = fw;
        values[FG_JOBOPT_PP] = pp;
        values[FG_JOBOPT_OVERRIDE] = p == 1 && mi % 2 ? "a deadline" : NULL;
        slurm_says("gres", gres);
        char *av[] = {pol_arg[p]};
        int prc = submit(policies[p][0] ? 1 : 0, av);
        decision_lines(fake.msgs, plug_lines, sizeof plug_lines);
        /* the plugin's answer in check's exit status: refused 1, changed 3, as asked 0 */
        int pkind = prc ? 1 : strstr(plug_lines, "fitgate: resized:") ? 3 : 0;
        /* the CLI, as a user types it */
        char *argv[16];
        int argc = 0;
        char pol_opt[96];
        argv[argc++] = "check";
        argv[argc++] = model;
        argv[argc++] = "--mode";
        argv[argc++] = (char *)modes[mo];
        argv[argc++] = "--batch";
        argv[argc++] = (char *)batches[b];
        argv[argc++] = cli_gres;
        if (fw) {
            argv[argc++] = "--framework";
            argv[argc++] = (char *)fw;
        }
        if (pp) {
            argv[argc++] = "--pp";
            argv[argc++] = (char *)pp;
        }
        if (values[FG_JOBOPT_OVERRIDE])
            argv[argc++] = "--ft-override=a deadline";
        if (policies[p][0]) {
            snprintf(pol_opt, sizeof pol_opt, "--policy=%s", pol_path[p]);
            argv[argc++] = pol_opt;
        }
        argv[argc] = NULL;
        int crc = cli_check(argc, argv, out, sizeof out);
        decision_lines(out, cli_lines, sizeof cli_lines);
        cases++;
        kinds[crc == 3 ? 3 : crc == 1 ? 1 : crc == 0 ? (cli_lines[0] ? 2 : 0) : 0]++;
        if (crc != pkind || strcmp(cli_lines, plug_lines)) {
            if (differ++ < 5)
                print_message("differ: %s %s batch %s %s %s%s%s policy %d: cli %d, plugin %d\n"
                              "cli:\n%splugin:\n%s", models[mi], modes[mo], batches[b], gres,
                              fw ? fw : "", pp ? " pp " : "", pp ? pp : "", p, crc, pkind,
                              cli_lines, plug_lines);
        }
    }
    for (int p = 0; p < 3; p++)
        unlink(pol_path[p]);
    print_message("agree: %u cases (%u silent, %u rejected, %u with a message, %u resized), "
                  "%u differ\n", cases, kinds[0], kinds[1], kinds[2], kinds[3], differ);
    assert_true(nm < 14 || cases >= 5000);
    assert_int_equal(differ, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(alloc_should_reject_nemotron_lora_on_one_t4, setup),
        cmocka_unit_test_setup(alloc_should_resize_gres_and_export_the_plan, setup),
        cmocka_unit_test_setup(alloc_should_resize_in_the_option_the_job_used, setup),
        cmocka_unit_test_setup(alloc_should_find_gpu_among_other_gres_and_stay_silent_when_it_fits,
                               setup),
        cmocka_unit_test_setup(alloc_should_fall_back_to_ft_gpus_when_slurm_shows_no_request,
                               setup),
        cmocka_unit_test_setup(alloc_should_follow_on_error_for_an_unknown_card, setup),
        cmocka_unit_test_setup(alloc_should_reject_a_bad_option_value_naming_it, setup),
        cmocka_unit_test_setup(alloc_should_apply_on_error_to_a_broken_policy, setup),
        cmocka_unit_test_setup(alloc_should_do_nothing_under_action_off, setup),
        cmocka_unit_test_setup(alloc_should_take_the_partitions_card_for_an_untyped_request,
                               setup),
        cmocka_unit_test_setup(alloc_should_use_the_default_partitions_rules, setup),
        cmocka_unit_test_setup(alloc_should_refuse_an_untagged_gpu_job_under_require_tag, setup),
        cmocka_unit_test_setup(alloc_should_judge_an_untagged_job_without_the_gpu_table, setup),
        cmocka_unit_test_setup(alloc_should_not_ask_the_controller_when_the_job_says_it_all,
                               setup),
        cmocka_unit_test_setup(stepd_should_fail_the_step_when_the_real_gpus_are_smaller, setup),
        cmocka_unit_test_setup(stepd_should_export_the_plan_when_the_gpus_hold_it, setup),
        cmocka_unit_test_setup(stepd_should_judge_by_the_node_when_slurm_numbers_do_not_map,
                               setup),
        cmocka_unit_test_setup(stepd_should_unpack_the_plan_submitted_as_one_variable, setup),
        cmocka_unit_test_setup(stepd_should_pass_on_the_submitted_plan_when_the_model_is_unreadable,
                               setup),
        cmocka_unit_test_setup(stepd_should_not_check_a_step_without_gpus, setup),
        cmocka_unit_test_setup(stepd_should_log_the_job_id_under_the_submissions_id, setup),
        cmocka_unit_test_setup(submit_id_valid_should_refuse_what_rec_init_never_writes, setup),
        cmocka_unit_test_setup(submitted_should_read_the_plan_field_else_the_variable_alone,
                               setup),
        cmocka_unit_test_setup(stepd_should_log_the_sampled_gpu_peak_at_the_end, setup),
        cmocka_unit_test_setup(model_label_should_name_paths_by_directory, setup),
        cmocka_unit_test_setup(agree_should_give_every_job_one_verdict_through_cli_and_plugin,
                               setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
