/*
 * test_policy.c - policies/: fitgate.conf and plugstack arguments through
 * the key table (errors name file:line), and the admission decision (pure:
 * fed synthetic assessments, plus one real assessment on a fixture model).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/model_load.h"
#include "audit.h"
#include "decide.h"
#include "hw/gpu.h"
#include "model/model.h"
#include "policy.h"
#include "util/fileio.h"

static int parse(struct fg_policy *p, const char *text, struct fg_err *err)
{
    fg_policy_init(p);
    return fg_policy_parse(p, text, strlen(text), "/etc/slurm/fitgate.conf", err);
}

/* ---- policy file -------------------------------------------------------------- */

static void init_should_give_documented_defaults(void **state)
{
    (void)state;
    struct fg_policy p;
    fg_policy_init(&p);
    assert_int_equal(p.rules.action, FG_ACTION_REJECT);
    assert_int_equal(p.on_error, FG_ONERR_ALLOW);
    assert_true(p.rules.headroom == 1.15);
    assert_true(p.rules.conservative == 1.43);
    assert_int_equal(p.rules.borderline, FG_BORDER_WARN);
    assert_int_equal(p.rules.modes, 0xf);
    assert_int_equal(p.rules.min_gpus, 1);
    assert_int_equal(p.rules.max_gpus, 64);
    assert_int_equal(p.rules.max_gpus_node, 8);
    assert_false(p.rules.shrink);
    assert_int_equal(p.rules.on_unknown, FG_ONUNK_WARN);
    assert_string_equal(p.hub_endpoint, "https://huggingface.co");
    assert_int_equal(p.hub_timeout_ms, 5000);
    assert_string_equal(p.conf, "");
}

static void parse_should_read_site_keys_case_insensitively(void **state)
{
    (void)state;
    struct fg_policy p;
    struct fg_err err = {0};
    assert_int_equal(parse(&p,
                           "# site policy\n"
                           "action=WARN Headroom=1.2   conservative=1.5\n"
                           "\n"
                           "AllowedModes=lora,qlora  ShrinkOverRequest=yes\r\n"
                           "HubEndpoint=http://127.0.0.1:9/  HubTimeout=2.5 OnError=reject\n"
                           "ModelDirs=/srv/models:/opt/hf CacheDir=/var/cache/fitgate/%u\n",
                           &err),
                     0);
    assert_int_equal(p.rules.action, FG_ACTION_WARN);
    assert_true(p.rules.headroom == 1.2);
    assert_true(p.rules.conservative == 1.5);
    assert_int_equal(p.rules.modes, (1u << FG_MODE_LORA) | (1u << FG_MODE_QLORA));
    assert_true(p.rules.shrink);
    assert_string_equal(p.hub_endpoint, "http://127.0.0.1:9");
    assert_int_equal(p.hub_timeout_ms, 2500);
    assert_int_equal(p.on_error, FG_ONERR_REJECT);
    assert_string_equal(p.model_dirs, "/srv/models:/opt/hf");
    assert_string_equal(p.cache_dir, "/var/cache/fitgate/%u");
    assert_true(p.checkpoint_scan); /* the hub's headers are read unless the site says no */
    assert_int_equal(parse(&p, "checkpointscan=NO\n", &err), 0);
    assert_false(p.checkpoint_scan);
    assert_int_equal(parse(&p, "PartitionName=gpu CheckpointScan=no\n", &err), FG_E_PARSE);
}

static void parse_should_read_log_file_as_syslog_or_absolute_path(void **state)
{
    (void)state;
    struct fg_policy p;
    struct fg_err err = {0};
    fg_policy_init(&p);
    assert_string_equal(p.log_file, ""); /* off unless the site turns it on */
    assert_int_equal(parse(&p, "LogFile=SysLog\n", &err), 0);
    assert_string_equal(p.log_file, "syslog");
    assert_int_equal(parse(&p, "OnError=allow LogFile=/var/log/fitgate/%u.log\n", &err), 0);
    assert_string_equal(p.log_file, "/var/log/fitgate/%u.log");
    assert_int_equal(parse(&p, "LogFile=\"\"\n", &err), 0);
    assert_string_equal(p.log_file, "");

    assert_int_equal(parse(&p, "\nLogFile=fitgate.log\n", &err), FG_E_PARSE);
    assert_non_null(strstr(err.detail, "fitgate.conf:2: LogFile=fitgate.log"));
    assert_non_null(strstr(err.detail, "expected syslog, or an absolute path"));
    assert_string_equal(p.log_file, "");
    /* site-wide only: a partition cannot log elsewhere */
    assert_int_equal(parse(&p, "PartitionName=gpu LogFile=/tmp/x.log\n", &err), FG_E_PARSE);
    assert_non_null(strstr(err.detail, "LogFile applies to the whole site"));

    char arg[] = "logfile=/srv/audit/%U.jsonl";
    char *argv[] = {arg};
    fg_policy_init(&p);
    assert_int_equal(fg_policy_args(&p, 1, argv, "plugstack.conf", &err), 0);
    assert_string_equal(p.log_file, "/srv/audit/%U.jsonl");
}

static void parse_should_apply_partition_overrides_only_to_named_keys(void **state)
{
    (void)state;
    struct fg_policy p;
    struct fg_err err = {0};
    assert_int_equal(parse(&p,
                           "Action=reject MaxGPUs=16\n"
                           "PartitionName=gpu Action=resize MaxGPUs=8  # big jobs elsewhere\n"
                           "PartitionName=debug Action=off\n"
                           "Headroom=1.3\n",
                           &err),
                     0);
    struct fg_rules r;
    fg_policy_rules_for(&p, "gpu", &r);
    assert_int_equal(r.action, FG_ACTION_RESIZE);
    assert_int_equal(r.max_gpus, 8);
    assert_true(r.headroom == 1.3); /* site value, even when given after the partition line */
    fg_policy_rules_for(&p, "debug,gpu", &r);
    assert_int_equal(r.action, FG_ACTION_OFF);
    assert_int_equal(r.max_gpus, 16);
    fg_policy_rules_for(&p, "other", &r);
    assert_int_equal(r.action, FG_ACTION_REJECT);
    fg_policy_rules_for(&p, NULL, &r);
    assert_int_equal(r.action, FG_ACTION_REJECT);
    assert_true(fg_policy_has_partition(&p, "gpu"));
    assert_false(fg_policy_has_partition(&p, "gp"));
}

static void parse_should_reject_unknown_key_naming_file_and_line(void **state)
{
    (void)state;
    struct fg_policy p;
    struct fg_err err = {0};
    assert_int_equal(parse(&p, "Action=warn\nHeadRoomm=1.2\n", &err), FG_E_PARSE);
    assert_non_null(strstr(err.detail, "/etc/slurm/fitgate.conf:2:"));
    assert_non_null(strstr(err.detail, "unknown key 'HeadRoomm'"));
    assert_non_null(strstr(err.detail, "Headroom")); /* the known keys are listed */
}

static void parse_should_reject_bad_value_naming_key_and_accepted_values(void **state)
{
    (void)state;
    struct fg_policy p;
    struct fg_err err = {0};
    assert_int_equal(parse(&p, "\n\nAction=deny\n", &err), FG_E_PARSE);
    assert_non_null(strstr(err.detail, "fitgate.conf:3: Action=deny"));
    assert_non_null(strstr(err.detail, "off|warn|reject|resize"));

    assert_int_equal(parse(&p, "Headroom=9\n", &err), FG_E_RANGE);
    assert_non_null(strstr(err.detail, ":1: Headroom=9: out of range 1..4"));
    assert_int_equal(parse(&p, "Headroom=1,15\n", &err), FG_E_PARSE);
    assert_int_equal(parse(&p, "MaxGPUs=2.5\n", &err), FG_E_PARSE);
    assert_int_equal(parse(&p, "MaxGPUs=-1\n", &err), FG_E_PARSE);
    assert_int_equal(parse(&p, "MaxGPUs=0\n", &err), FG_E_RANGE);
    assert_int_equal(parse(&p, "AllowedModes=lora,pretrain\n", &err), FG_E_PARSE);
    assert_non_null(strstr(err.detail, "'pretrain' is not a mode"));
    assert_int_equal(parse(&p, "ShrinkOverRequest=maybe\n", &err), FG_E_PARSE);
    assert_int_equal(parse(&p, "ModelDirs=models\n", &err), FG_E_PARSE);
    assert_int_equal(parse(&p, "HubEndpoint=ftp://x\n", &err), FG_E_PARSE);
    assert_int_equal(parse(&p, "HubTimeout=0\n", &err), FG_E_RANGE);
    assert_int_equal(parse(&p, "Action\n", &err), FG_E_PARSE);
    assert_non_null(strstr(err.detail, "expected Key=Value"));
    assert_int_equal(parse(&p, "Action=\"warn\n", &err), FG_E_PARSE);
    assert_non_null(strstr(err.detail, "unterminated quote"));
}

static void parse_should_keep_going_after_an_error_so_on_error_applies(void **state)
{
    (void)state;
    struct fg_policy p;
    struct fg_err err = {0};
    assert_int_equal(parse(&p, "Bogus=1\nOnError=reject\nAction=nope\nAction=warn\n", &err),
                     FG_E_PARSE);
    assert_non_null(strstr(err.detail, ":1: unknown key 'Bogus'")); /* the first error */
    assert_int_equal(p.on_error, FG_ONERR_REJECT);
    assert_int_equal(p.rules.action, FG_ACTION_WARN);
}

static void parse_should_refuse_site_key_on_partition_line(void **state)
{
    (void)state;
    struct fg_policy p;
    struct fg_err err = {0};
    assert_int_equal(parse(&p, "PartitionName=gpu HubEndpoint=none\n", &err), FG_E_PARSE);
    assert_non_null(strstr(err.detail, ":1: HubEndpoint applies to the whole site"));
    assert_int_equal(parse(&p, "Topology=/x.xml\n", &err), FG_E_PARSE);
    assert_non_null(strstr(err.detail, "plugstack.conf argument"));
    assert_int_equal(parse(&p, "Action=warn PartitionName=gpu\n", &err), FG_E_PARSE);
    assert_non_null(strstr(err.detail, "must start its line"));
    assert_int_equal(p.n_parts, 0);
}

static void parse_should_refuse_duplicate_partition(void **state)
{
    (void)state;
    struct fg_policy p;
    struct fg_err err = {0};
    assert_int_equal(parse(&p, "PartitionName=gpu Action=warn\nPartitionName=gpu Action=off\n",
                           &err),
                     FG_E_PARSE);
    assert_non_null(strstr(err.detail, ":2: PartitionName=gpu already given at line 1"));
    assert_int_equal(parse(&p, "PartitionName=g/pu Action=warn\n", &err), FG_E_PARSE);
}

static void parse_should_check_conservative_not_below_headroom(void **state)
{
    (void)state;
    struct fg_policy p;
    struct fg_err err = {0};
    assert_int_equal(parse(&p, "Conservative=1.3\n\nHeadroom=1.35\n", &err), FG_E_RANGE);
    assert_non_null(strstr(err.detail, ":3: Conservative=1.3 is below Headroom=1.35"));
    assert_int_equal(parse(&p, "MinGPUs=4\nPartitionName=small MaxGPUs=2\n", &err), FG_E_RANGE);
    assert_non_null(strstr(err.detail, ":2: PartitionName=small: MinGPUs=4 is above MaxGPUs=2"));
}

static void parse_should_read_quoted_values_and_comments(void **state)
{
    (void)state;
    struct fg_policy p;
    struct fg_err err = {0};
    assert_int_equal(parse(&p, "Action=\"warn\"# trailing comment\n  # only a comment\n"
                               "HubEndpoint=none\n",
                           &err),
                     0);
    assert_int_equal(p.rules.action, FG_ACTION_WARN);
    assert_string_equal(p.hub_endpoint, ""); /* offline */
    assert_int_equal(parse(&p, "Action=warn\0Action=off", &err), 0); /* strlen stops */
    char bin[] = "Action=warn\n\0Action=off\n";
    fg_policy_init(&p);
    assert_int_equal(fg_policy_parse(&p, bin, sizeof bin - 1, "f", &err), FG_E_PARSE);
    assert_non_null(strstr(err.detail, "NUL byte"));
}

static void args_should_override_file_and_reject_unknown_argument(void **state)
{
    (void)state;
    char path[] = "/tmp/fitgate-test-policy-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *text = "Action=warn\nHeadroom=1.2\nPartitionName=gpu Action=resize\n";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    char confarg[64];
    snprintf(confarg, sizeof confarg, "conf=%s", path);
    char *argv[] = {confarg, "headroom=1.25", "topology=/srv/t.xml"};
    struct fg_policy p;
    struct fg_err err = {0};
    assert_int_equal(fg_policy_setup(&p, 3, argv, "plugstack.conf", &err), 0);
    assert_int_equal(p.rules.action, FG_ACTION_WARN);
    assert_true(p.rules.headroom == 1.25);
    assert_string_equal(p.topology, "/srv/t.xml");
    assert_string_equal(p.conf, path);
    struct fg_rules r;
    fg_policy_rules_for(&p, "gpu", &r);
    assert_int_equal(r.action, FG_ACTION_RESIZE);

    char *bad[] = {confarg, "colour=blue", "action=warn"};
    assert_int_equal(fg_policy_setup(&p, 3, bad, "plugstack.conf", &err), FG_E_PARSE);
    assert_non_null(strstr(err.detail, "plugstack.conf: unknown argument 'colour'"));
    assert_int_equal(p.rules.action, FG_ACTION_WARN); /* the good ones still apply */
    unlink(path);
}

/* The thin plugin decides from its plugstack requiretag= whether an untagged job loads the
 * engine part at all (fitgate_dispatch.c, require_tag_arg), with fg_yes_no: what it
 * reads as yes, no or neither is what the policy makes of the same argument. */
static void policy_bool_should_read_requiretag_as_the_policy_does(void **state)
{
    (void)state;
    static const char *const words[] = {"yes", "TRUE", "On", "1", "no", "False", "OFF", "0",
                                        "", "y", "n", "2", "enable", "yes ", "-1"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        char arg[64];
        snprintf(arg, sizeof arg, "requiretag=%s", words[i]);
        char *argv[] = {arg};
        struct fg_policy p;
        struct fg_err err = {0};
        fg_policy_init(&p);
        int rc = fg_policy_args(&p, 1, argv, "plugstack.conf", &err);
        int b = fg_yes_no(words[i]);
        if (b < 0) {
            assert_int_equal(rc, FG_E_PARSE);
            assert_non_null(strstr(err.detail, "expected yes|no"));
        } else {
            assert_int_equal(rc, 0);
            assert_int_equal(p.rules.require_tag, b == 1);
        }
        assert_int_equal(b, i < 4 ? 1 : i < 8 ? 0 : -1);
    }
}

static void setup_should_name_a_missing_policy_file(void **state)
{
    (void)state;
    char *argv[] = {"conf=/nonexistent/fitgate.conf", "onerror=reject"};
    struct fg_policy p;
    struct fg_err err = {0};
    assert_int_equal(fg_policy_setup(&p, 2, argv, "plugstack.conf", &err), FG_E_NOTFOUND);
    assert_non_null(strstr(err.detail, "/nonexistent/fitgate.conf"));
    assert_int_equal(p.on_error, FG_ONERR_REJECT);
    char *rel[] = {"conf=fitgate.conf"};
    assert_int_equal(fg_policy_setup(&p, 1, rel, "plugstack.conf", &err), FG_E_PARSE);
    assert_non_null(strstr(err.detail, "absolute path"));
    assert_int_equal(fg_policy_setup(&p, 0, NULL, "plugstack.conf", &err), 0);
    assert_int_equal(p.rules.action, FG_ACTION_REJECT);
}

/* A copy of text in a new file of mode `mode`, named in path (a mkstemp template). */
static void policy_file(char *path, const char *text, mode_t mode)
{
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    assert_int_equal(fchmod(fd, mode), 0);
    close(fd);
}

static void load_should_accept_the_shipped_example(void **state)
{
    (void)state;
    struct fg_policy p;
    struct fg_err err = {0};
    char *text = NULL;
    size_t len = 0;
    /* a copy, 0644: the checkout's own mode is the umask's of whoever cloned it */
    assert_int_equal(fg__read_file("conf/fitgate.conf", 1u << 20, &text, &len), 0);
    char path[] = "/tmp/fitgate-test-conf-XXXXXX";
    policy_file(path, text, 0644);
    free(text);
    usleep(120000); /* settled (policy_file.c) */
    fg_policy_init(&p);
    assert_int_equal(fg_policy_load(&p, path, &err), 0);
    assert_int_equal(p.rules.action, FG_ACTION_REJECT);
    assert_int_equal(p.on_error, FG_ONERR_ALLOW);
    unlink(path);
}

/* Which of two values a site meant is not fitgate's to guess. */
static void parse_should_refuse_a_key_given_twice(void **state)
{
    (void)state;
    struct fg_policy p;
    struct fg_err err = {0};
    assert_int_equal(parse(&p, "Headroom=1.2\nAction=warn\nheadroom=1.0\n", &err), FG_E_PARSE);
    assert_non_null(strstr(err.detail, "fitgate.conf:3: Headroom already given at line 1"));
    assert_int_equal(parse(&p, "PartitionName=gpu Action=warn Action=off\n", &err), FG_E_PARSE);
    assert_non_null(strstr(err.detail, ":1: Action given twice on the line of PartitionName=gpu"));
    /* a key of the site and of a partition are two keys */
    assert_int_equal(parse(&p, "Action=warn\nPartitionName=gpu Action=off\n", &err), 0);
}

/* A policy anyone but its owner may write is not the site's (as Slurm's plugstack). */
static void load_should_refuse_a_policy_others_may_write(void **state)
{
    (void)state;
    struct fg_policy p;
    struct fg_err err = {0};
    static const mode_t modes[] = {0666, 0660, 0644};
    static const char *const want[] = {"writable by every user", "writable by its group", NULL};
    for (int i = 0; i < 3; i++) {
        char path[] = "/tmp/fitgate-test-mode-XXXXXX";
        policy_file(path, "Action=warn\n", modes[i]);
        usleep(120000);
        fg_policy_init(&p);
        int rc = fg_policy_load(&p, path, &err);
        if (want[i]) {
            assert_int_equal(rc, FG_E_DENIED);
            assert_non_null(strstr(err.detail, want[i]));
            assert_non_null(strstr(err.detail, "chmod go-w"));
        } else {
            assert_int_equal(rc, 0);
        }
        unlink(path);
    }
}

/* GpuTable= that does not load is the policy's error, named with its line. */
static void gpu_table_should_fail_naming_the_key_and_its_line(void **state)
{
    (void)state;
    struct fg_policy p;
    struct fg_err err = {0};
    struct fg_gpu_table *t = NULL;
    assert_int_equal(parse(&p, "Action=warn\n", &err), 0);
    assert_int_equal(fg_policy_gpu_table(&p, &t, &err), 0);
    assert_null(t);
    assert_int_equal(parse(&p, "Action=warn\nGpuTable=/nonexistent/gpus.conf\n", &err), 0);
    assert_int_equal(fg_policy_gpu_table(&p, &t, &err), FG_E_NOTFOUND);
    assert_non_null(strstr(err.detail, "GpuTable=/nonexistent/gpus.conf (line 2): "));
    assert_int_equal(parse(&p, "GpuTable=/dev/zero\n", &err), 0);
    assert_int_not_equal(fg_policy_gpu_table(&p, &t, &err), 0);
    assert_non_null(strstr(err.detail, "not a regular file"));
    char path[] = "/tmp/fitgate-test-gpus-XXXXXX", conf[80];
    policy_file(path, "not a row\n", 0644);
    snprintf(conf, sizeof conf, "GpuTable=%s\n", path);
    assert_int_equal(parse(&p, conf, &err), 0);
    assert_int_not_equal(fg_policy_gpu_table(&p, &t, &err), 0);
    assert_null(t);
    assert_int_equal(chmod(path, 0666), 0);
    assert_int_equal(fg_policy_gpu_table(&p, &t, &err), FG_E_DENIED);
    assert_non_null(strstr(err.detail, "writable by every user"));
    unlink(path);
}

/* ---- decision (synthetic numbers) ------------------------------------------ */

static struct fg_gpu card_t4 = {.name = "NVIDIA T4", .label = "T4 16 GB", .memory_gb = 16,
                                .aliases = "t4,tesla_t4"};
static struct fg_gpu card_a100 = {.name = "NVIDIA A100 40GB", .label = "A100 40 GB",
                                  .memory_gb = 40, .aliases = "a100_40g"};
static struct fg_gpu card_h100 = {.name = "NVIDIA H100 SXM5 80GB", .label = "H100 80 GB",
                                  .memory_gb = 80, .aliases = "h100"};

static void rules_default(struct fg_rules *r)
{
    struct fg_policy p;
    fg_policy_init(&p);
    *r = p.rules;
}

static struct fg_request req(const struct fg_gpu *g, const char *type, uint32_t count)
{
    struct fg_request q;
    memset(&q, 0, sizeof q);
    q.gpu = g;
    snprintf(q.type, sizeof q.type, "%s", type);
    q.via = FG_VIA_GRES;
    q.count = count;
    q.nodes = 1;
    snprintf(q.model, sizeof q.model, "org/model");
    return q;
}

/* static s GB + b x p GB on a card of `usable` GB, verdict by the fit rules. */
static void assessment(struct fg_assessment *a, double s, double p, uint64_t batch, double usable,
                       const struct fg_rules *r)
{
    memset(a, 0, sizeof *a);
    fg_job_defaults(&a->job, FG_MODE_LORA);
    a->job.batch = batch;
    a->layers = 56;
    a->est.static_bytes = (uint64_t)(s * 1e9);
    a->est.per_sample_bytes = (uint64_t)(p * 1e9);
    a->est.batch = batch;
    a->est.seq_len = 2048;
    a->est.total_bytes = a->est.static_bytes + batch * a->est.per_sample_bytes;
    a->have_card = true;
    a->usable = (uint64_t)(usable * 1e9);
    a->headroom = r->headroom;
    a->fw = fg_framework_default();
    a->need_min = 1;
    a->layout = (struct fg_layout){.gpus = 1, .tp = 1, .pp = 1, .ep = 1, .dp = 1,
                                   .cut = {0, 56}, .micro_batch = batch, .grad_accum = 1};
    struct fg_fit_opts fo = {.headroom = r->headroom, .conservative = r->conservative};
    fg_fit_card(&a->est, a->usable, &fo, &a->fit);
}

/* A plan whose smallest layout is `gpus` GPUs in pipeline stages. */
static void plan_pp(struct fg_assessment *a, uint32_t gpus)
{
    a->planned = true;
    a->plan.status = FG_PLAN_FOUND;
    a->plan.n = 2;
    for (uint32_t k = 0; k < 2; k++) {
        struct fg_layout *l = &a->plan.options[k];
        memset(l, 0, sizeof *l);
        l->gpus = gpus + k;
        l->tp = l->ep = l->dp = 1;
        l->pp = gpus + k;
        for (uint32_t s = 0; s <= l->pp; s++)
            l->cut[s] = s * 56 / l->pp;
        l->peak_bytes = (uint64_t)(10e9);
        l->micro_batch = 1;
        l->grad_accum = 1;
    }
}

/* ---- OnUnknown ------------------------------------------------------------------ */

static void parse_should_read_on_unknown_per_partition(void **state)
{
    (void)state;
    struct fg_policy p;
    struct fg_err err = {0};
    assert_int_equal(parse(&p, "OnUnknown=reject\nPartitionName=debug onunknown=ALLOW\n", &err), 0);
    struct fg_rules r;
    fg_policy_rules_for(&p, "debug", &r);
    assert_int_equal(r.on_unknown, FG_ONUNK_ALLOW);
    fg_policy_rules_for(&p, "gpu", &r);
    assert_int_equal(r.on_unknown, FG_ONUNK_REJECT);
    assert_int_not_equal(parse(&p, "OnUnknown=maybe\n", &err), 0);
    assert_non_null(strstr(err.detail, "OnUnknown"));
    assert_non_null(strstr(err.detail, "allow|warn|reject"));
    assert_string_equal(fg_on_unknown_name(FG_ONUNK_WARN), "warn");
}

/* A model as the generic reader leaves one it is unsure of. */
static void unsure_model(struct fg_model *m)
{
    memset(m, 0, sizeof *m);
    snprintf(m->id, sizeof m->id, "org/novel-moe");
    snprintf(m->model_type, sizeof m->model_type, "novel_moe");
    m->generic = true;
    m->certainty = FG_CERT_UNSURE;
    snprintf(m->unsure_key, sizeof m->unsure_key, "moe_every_n_layers");
    m->params_total = 12400000000ull;
}

static void decide_unknown_should_reject_warn_or_pass_as_on_unknown_says(void **state)
{
    (void)state;
    struct fg_rules r;
    rules_default(&r);
    struct fg_model *m = calloc(1, sizeof *m);
    assert_non_null(m);
    unsure_model(m);
    struct fg_request q = req(&card_h100, "h100", 2);
    struct fg_decision d;

    r.on_unknown = FG_ONUNK_REJECT;
    assert_true(fg_decide_unknown(&q, m, &r, &d));
    assert_int_equal(d.kind, FG_DECIDE_REJECT);
    assert_string_equal(d.lines[0], "fitgate: rejected: cannot size org/model: model_type "
                                    "'novel_moe' is not known and key 'moe_every_n_layers' is "
                                    "structure the generic reader does not understand");
    assert_non_null(strstr(d.lines[1], "12.40 B parameters"));
    assert_non_null(strstr(d.lines[1], "OnUnknown=reject"));
    assert_non_null(strstr(d.lines[2], "local config directory"));
    assert_non_null(strstr(d.lines[2], "admin"));
    assert_int_equal(d.count, 2);

    r.on_unknown = FG_ONUNK_WARN;
    assert_true(fg_decide_unknown(&q, m, &r, &d));
    assert_int_equal(d.kind, FG_DECIDE_WARN);
    assert_non_null(strstr(d.lines[0], "fitgate: warning: cannot size"));
    assert_non_null(strstr(d.lines[1], "goes on unchecked (OnUnknown=warn)"));

    /* allow: no decision here, the caller decides on the count as for any model */
    r.on_unknown = FG_ONUNK_ALLOW;
    memset(&d, 0x5a, sizeof d);
    assert_false(fg_decide_unknown(&q, m, &r, &d));
    assert_int_equal(d.lines[0][0], 0x5a);

    /* a count the readers are sure of, or a generic one, never stops here */
    r.on_unknown = FG_ONUNK_REJECT;
    m->certainty = FG_CERT_GENERIC;
    assert_false(fg_decide_unknown(&q, m, &r, &d));
    m->certainty = FG_CERT_EXACT;
    assert_false(fg_decide_unknown(&q, m, &r, &d));
    free(m);
}

static void decide_should_allow_silently_when_job_fits(void **state)
{
    (void)state;
    struct fg_rules r;
    rules_default(&r);
    struct fg_assessment a;
    assessment(&a, 5, 2, 1, 79.5, &r);
    struct fg_request q = req(&card_h100, "h100", 1);
    struct fg_decision d;
    fg_decide(&q, &a, &r, &d);
    assert_int_equal(d.kind, FG_DECIDE_ALLOW);
    assert_true(d.fits);
    assert_string_equal(d.lines[0], "");
    assert_true(d.has_layout);
    assert_int_equal(d.layout.gpus, 1);
    assert_int_equal(d.layout.micro_batch, 1);
    assert_int_equal(d.layout.cut[1], 56);
}

static void decide_should_reject_with_need_card_and_fitting_request(void **state)
{
    (void)state;
    struct fg_rules r;
    rules_default(&r);
    struct fg_assessment a;
    assessment(&a, 18.35, 15.27, 1, 15.46, &r);
    plan_pp(&a, 4);
    struct fg_request q = req(&card_t4, "t4", 1);
    struct fg_decision d;
    fg_decide(&q, &a, &r, &d);
    assert_int_equal(d.kind, FG_DECIDE_REJECT);
    assert_false(d.fits);
    assert_non_null(strstr(d.lines[0], "fitgate: rejected: LoRA of org/model does not fit "
                                        "--gres=gpu:t4:1"));
    assert_non_null(strstr(d.lines[1], "needs 38.7 GB per GPU"));
    assert_non_null(strstr(d.lines[1], "one T4 16 GB has 15.5 GB usable, so it takes 4"));
    assert_non_null(strstr(d.lines[2], "ask for --gres=gpu:t4:4 (PP=4 over layers 0-13|14-27|"));
    for (int i = 0; i < 3; i++)
        assert_memory_equal(d.lines[i], "fitgate: ", 9);
}

static void decide_should_resize_to_smallest_layout_when_action_is_resize(void **state)
{
    (void)state;
    struct fg_rules r;
    rules_default(&r);
    r.action = FG_ACTION_RESIZE;
    struct fg_assessment a;
    assessment(&a, 18.35, 15.27, 1, 15.46, &r);
    plan_pp(&a, 4);
    struct fg_request q = req(&card_t4, "t4", 1);
    struct fg_decision d;
    fg_decide(&q, &a, &r, &d);
    assert_int_equal(d.kind, FG_DECIDE_RESIZE);
    assert_true(d.resize_gpus);
    assert_int_equal(d.count, 4);
    assert_int_equal(d.nodes, 1);
    assert_true(d.has_layout);
    assert_int_equal(d.layout.pp, 4);
    assert_non_null(strstr(d.lines[0], "now asks for --gres=gpu:t4:4"));

    /* beyond MaxGPUs: rejected even under Action=resize */
    r.max_gpus = 2;
    fg_decide(&q, &a, &r, &d);
    assert_int_equal(d.kind, FG_DECIDE_REJECT);
    assert_non_null(strstr(d.lines[2], "above this partition's MaxGPUs=2"));

    /* MinGPUsPerNode raises the resized request */
    r.max_gpus = 64;
    r.min_gpus_node = 8;
    fg_decide(&q, &a, &r, &d);
    assert_int_equal(d.kind, FG_DECIDE_RESIZE);
    assert_int_equal(d.count, 8);
    /* a device_map split (the default framework's) runs no data parallel beside it: the
     * 4-stage layout once, the other GPUs idle */
    assert_true(a.fw->naive_pp);
    assert_int_equal(d.layout.gpus, 4);
    assert_int_equal(d.layout.dp, 1);
    /* a framework with pipeline parallel runs it twice */
    a.fw = fg_framework_find("megatron");
    fg_decide(&q, &a, &r, &d);
    assert_int_equal(d.count, 8);
    assert_int_equal(d.layout.gpus, 8);
    assert_int_equal(d.layout.dp, 2); /* the 4-stage layout twice */
}

static void decide_should_spread_large_requests_over_whole_nodes(void **state)
{
    (void)state;
    struct fg_rules r;
    rules_default(&r);
    r.action = FG_ACTION_RESIZE;
    struct fg_assessment a;
    assessment(&a, 500, 10, 1, 79.5, &r);
    plan_pp(&a, 16);
    struct fg_request q = req(&card_h100, "h100", 8);
    struct fg_decision d;
    fg_decide(&q, &a, &r, &d);
    assert_int_equal(d.kind, FG_DECIDE_RESIZE);
    assert_int_equal(d.nodes, 2);
    assert_int_equal(d.count, 8);
    assert_non_null(strstr(d.lines[0], "now asks for --nodes=2 --gres=gpu:h100:8"));

    q.via = FG_VIA_GPUS;
    fg_decide(&q, &a, &r, &d);
    assert_int_equal(d.count, 16); /* --gpus counts the whole job */
    assert_non_null(strstr(d.lines[0], "--nodes=2 --gpus=h100:16"));
}

static void decide_should_warn_over_request_or_shrink_when_policy_says_so(void **state)
{
    (void)state;
    struct fg_rules r;
    rules_default(&r);
    struct fg_assessment a;
    assessment(&a, 18.35, 15.27, 1, 79.46, &r);
    struct fg_request q = req(&card_h100, "h100", 8);
    struct fg_decision d;
    fg_decide(&q, &a, &r, &d);
    assert_int_equal(d.kind, FG_DECIDE_WARN);
    assert_true(d.fits);
    assert_non_null(strstr(d.lines[0], "warning: --gres=gpu:h100:8 is more than LoRA of "
                                        "org/model needs; the job continues as asked"));
    assert_non_null(strstr(d.lines[2], "--gres=gpu:h100:1 is enough"));
    assert_int_equal(d.layout.dp, 8);

    r.shrink = true;
    fg_decide(&q, &a, &r, &d);
    assert_int_equal(d.kind, FG_DECIDE_RESIZE);
    assert_int_equal(d.count, 1);
    assert_int_equal(d.layout.gpus, 1);
    assert_non_null(strstr(d.lines[0], "now asks for --gres=gpu:h100:1"));

    r.min_gpus = 2; /* never below the partition's floor */
    fg_decide(&q, &a, &r, &d);
    assert_int_equal(d.count, 2);

    q.count = 2; /* at the floor: nothing to say */
    fg_decide(&q, &a, &r, &d);
    assert_int_equal(d.kind, FG_DECIDE_ALLOW);
    assert_string_equal(d.lines[0], "");
}

static void decide_should_lower_micro_batch_with_accumulation(void **state)
{
    (void)state;
    struct fg_rules r;
    rules_default(&r);
    struct fg_assessment a;
    assessment(&a, 5, 5, 8, 39.46, &r); /* 45 GB at batch 8; (39.46 / 1.15 - 5) / 5 -> 5 */
    assert_int_equal(a.fit.max_batch, 5);
    struct fg_request q = req(&card_a100, "a100", 1);
    struct fg_decision d;
    fg_decide(&q, &a, &r, &d);
    assert_int_equal(d.kind, FG_DECIDE_REJECT);
    assert_non_null(strstr(d.lines[2], "use --ft-batch=5 with 2 gradient-accumulation steps"));

    r.action = FG_ACTION_RESIZE;
    fg_decide(&q, &a, &r, &d);
    assert_int_equal(d.kind, FG_DECIDE_RESIZE);
    assert_true(d.resize_batch);
    assert_false(d.resize_gpus);
    assert_int_equal(d.layout.micro_batch, 5);
    assert_int_equal(d.layout.grad_accum, 2);
    assert_non_null(strstr(d.lines[2], "FITGATE_MICRO_BATCH=5 and FITGATE_GRAD_ACCUM=2"));

    r.action = FG_ACTION_WARN;
    fg_decide(&q, &a, &r, &d);
    assert_int_equal(d.kind, FG_DECIDE_WARN);
    assert_non_null(strstr(d.lines[0], "the job continues as asked (Action=warn)"));
}

/* A full fine-tune's smaller micro-batch accumulates, so its gradients are alive beside the
 * activations (memory.h accum_bytes): the advice names only a micro-batch that fits so. */
static void decide_should_offer_accumulation_only_where_the_gradients_fit(void **state)
{
    (void)state;
    struct fg_rules r;
    rules_default(&r);
    struct fg_assessment a;
    struct fg_fit_opts fo = {.headroom = r.headroom, .conservative = r.conservative};
    assessment(&a, 5, 5, 8, 39.46, &r);
    a.est.accum_bytes = 20000000000ull; /* (39.46 / 1.15 - 5 - 20) / 5 -> 1 */
    fg_fit_card(&a.est, a.usable, &fo, &a.fit);
    assert_int_equal(a.fit.max_batch, 1);
    struct fg_request q = req(&card_a100, "a100", 1);
    struct fg_decision d;
    fg_decide(&q, &a, &r, &d);
    assert_non_null(strstr(d.lines[2], "use --ft-batch=1 with 8 gradient-accumulation steps"));
    assert_true((double)fg_estimate_accum_at(&a.est, 1) * r.headroom <= (double)a.usable);
    /* with the gradients no micro-batch fits: no accumulation advice */
    a.est.accum_bytes = 30000000000ull;
    fg_fit_card(&a.est, a.usable, &fo, &a.fit);
    assert_int_equal(a.fit.max_batch, 0);
    fg_decide(&q, &a, &r, &d);
    for (size_t i = 0; i < FG_DECIDE_LINES; i++)
        assert_null(strstr(d.lines[i], "gradient-accumulation"));
}

/* --global-batch 8 x the micro-batch: the job accumulates 8 micro-batches, and a full
 * fine-tune is judged higher by exactly its gradients (Llama-3.2-1B, activations dominate). */
static void assess_should_judge_a_global_batch_with_its_gradients(void **state)
{
    (void)state;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(fg_model_load("tests/fixtures/models/meta-llama--Llama-3.2-1B-Instruct", &m,
                                   &err), 0);
    const struct fg_gpu *h200 = fg_gpu_find(NULL, "h200", NULL);
    struct fg_rules r;
    rules_default(&r);
    struct fg_jobspec job;
    fg_jobspec_init(&job, NULL);
    assert_int_equal(fg_jobspec_set(&job, FG_JOBOPT_BATCH, "4", &err), 0);
    assert_int_equal(fg_jobspec_finish(&job, &err), 0);
    struct fg_assessment one, acc;
    assert_int_equal(fg_assess(m, &job, h200, 1, &r, &one, &err), 0);
    job.global_batch = 32;
    assert_int_equal(fg_assess(m, &job, h200, 1, &r, &acc, &err), 0);
    assert_int_equal(acc.job.grad_accum, 8);
    assert_int_equal(acc.layout.grad_accum, 8);
    assert_true(one.est.b.gradients > 0);
    assert_int_equal(acc.est.total_bytes, one.est.total_bytes + one.est.b.gradients);
    /* two ranks take half the micro-batches each */
    job.global_batch = 32;
    assert_int_equal(fg_assess(m, &job, h200, 2, &r, &acc, &err), 0);
    assert_int_equal(acc.job.grad_accum, 4);
    fg_model_free(m);
}

static void decide_should_follow_borderline_setting(void **state)
{
    (void)state;
    struct fg_rules r;
    rules_default(&r);
    struct fg_assessment a;
    assessment(&a, 18.35, 15.27, 1, 39.46, &r);
    assert_int_equal(a.fit.verdict, FG_FIT_BORDERLINE);
    struct fg_request q = req(&card_a100, "a100_40g", 1);
    struct fg_decision d;
    fg_decide(&q, &a, &r, &d);
    assert_int_equal(d.kind, FG_DECIDE_WARN);
    assert_non_null(strstr(d.lines[0], "borderline; the job continues as asked"));
    assert_non_null(strstr(d.lines[1], "x1.43 conservative peak = 48.1 GB does not"));

    r.borderline = FG_BORDER_ALLOW;
    fg_decide(&q, &a, &r, &d);
    assert_int_equal(d.kind, FG_DECIDE_ALLOW);

    r.borderline = FG_BORDER_REJECT;
    a.safe_planned = true;
    a.safe.status = FG_PLAN_FOUND;
    a.safe.n = 1;
    a.safe.options[0] = (struct fg_layout){.gpus = 2, .tp = 1, .pp = 2, .ep = 1, .dp = 1,
                                           .cut = {0, 28, 56}, .peak_bytes = 20000000000ull,
                                           .micro_batch = 1, .grad_accum = 1};
    fg_decide(&q, &a, &r, &d);
    assert_int_equal(d.kind, FG_DECIDE_REJECT);
    assert_non_null(strstr(d.lines[2], "ask for --gres=gpu:a100_40g:2"));

    r.action = FG_ACTION_RESIZE;
    fg_decide(&q, &a, &r, &d);
    assert_int_equal(d.kind, FG_DECIDE_RESIZE);
    assert_int_equal(d.count, 2);

    r.action = FG_ACTION_WARN; /* Action=warn never rejects */
    fg_decide(&q, &a, &r, &d);
    assert_int_equal(d.kind, FG_DECIDE_WARN);
}

static void decide_should_reject_disallowed_mode_and_missing_gpu(void **state)
{
    (void)state;
    struct fg_rules r;
    rules_default(&r);
    r.modes = 1u << FG_MODE_QLORA;
    struct fg_assessment a;
    assessment(&a, 5, 2, 1, 79.5, &r);
    struct fg_request q = req(&card_h100, "h100", 1);
    snprintf(q.partition, sizeof q.partition, "small");
    struct fg_decision d;
    fg_decide(&q, &a, &r, &d);
    assert_int_equal(d.kind, FG_DECIDE_REJECT);
    assert_non_null(strstr(d.lines[0], "--ft-mode=lora is not allowed in partition small"));
    assert_non_null(strstr(d.lines[2], "use --ft-mode=qlora"));

    rules_default(&r);
    q.via = FG_VIA_NONE;
    q.count = 0;
    fg_decide(&q, &a, &r, &d);
    assert_int_equal(d.kind, FG_DECIDE_REJECT);
    assert_non_null(strstr(d.lines[0], "asks for no GPU"));
    assert_non_null(strstr(d.lines[2], "--gres=gpu:TYPE:N"));
}

static void decide_should_reject_when_no_layout_fits(void **state)
{
    (void)state;
    struct fg_rules r;
    rules_default(&r);
    r.action = FG_ACTION_RESIZE;
    struct fg_assessment a;
    assessment(&a, 5000, 10, 1, 15.46, &r);
    a.planned = true;
    a.plan.status = FG_PLAN_IMPOSSIBLE;
    snprintf(a.plan.why, sizeof a.plan.why, "no layout of up to 64 GPUs holds this job");
    struct fg_request q = req(&card_t4, "t4", 1);
    struct fg_decision d;
    fg_decide(&q, &a, &r, &d);
    assert_int_equal(d.kind, FG_DECIDE_REJECT);
    assert_false(d.has_layout);
    assert_non_null(strstr(d.lines[2], "no layout of up to 64 GPUs"));
}

static void decide_should_do_nothing_when_action_off(void **state)
{
    (void)state;
    struct fg_rules r;
    rules_default(&r);
    r.action = FG_ACTION_OFF;
    struct fg_assessment a;
    assessment(&a, 5000, 10, 1, 15.46, &r);
    struct fg_request q = req(&card_t4, "t4", 1);
    struct fg_decision d;
    fg_decide(&q, &a, &r, &d);
    assert_int_equal(d.kind, FG_DECIDE_ALLOW);
    assert_string_equal(d.lines[0], "");
}

static void decide_error_should_follow_on_error(void **state)
{
    (void)state;
    struct fg_decision d;
    fg_decide_error("org/model", "hub timed out after 2 s", NULL, FG_ONERR_ALLOW, &d);
    assert_int_equal(d.kind, FG_DECIDE_WARN);
    assert_non_null(strstr(d.lines[0], "fitgate: warning: cannot check org/model: hub timed out"));
    assert_non_null(strstr(d.lines[1], "OnError=allow"));
    assert_non_null(strstr(d.lines[2], "check --ft-model"));
    fg_decide_error("this job", "fitgate.conf:3: unknown key 'Foo'", "ask the admin", FG_ONERR_REJECT,
                    &d);
    assert_int_equal(d.kind, FG_DECIDE_REJECT);
    assert_non_null(strstr(d.lines[1], "OnError=reject"));
    assert_string_equal(d.lines[2], "fitgate: ask the admin");
}

static void request_spell_should_keep_the_job_syntax(void **state)
{
    (void)state;
    char buf[128];
    struct fg_request q = req(&card_t4, "", 1);
    fg_request_spell(&q, 4, 1, buf, sizeof buf);
    assert_string_equal(buf, "--gres=gpu:4");
    q.via = FG_VIA_GPUS_PER_NODE;
    snprintf(q.type, sizeof q.type, "t4");
    fg_request_spell(&q, 4, 2, buf, sizeof buf);
    assert_string_equal(buf, "--nodes=2 --gpus-per-node=t4:4");
    q.via = FG_VIA_PLUGIN;
    q.type[0] = '\0';
    fg_request_spell(&q, 3, 1, buf, sizeof buf);
    assert_string_equal(buf, "--gres=gpu:t4:3"); /* the card's first alias */
    q.nodes = 2;
    q.count = 4;
    assert_int_equal(fg_request_total(&q), 8);
    q.via = FG_VIA_GPUS;
    assert_int_equal(fg_request_total(&q), 4);
}

/* ---- a real assessment: Nemotron-Nano-9B-v2 LoRA on T4 --------------------------- */

static void assess_should_plan_nemotron_lora_on_four_t4(void **state)
{
    (void)state;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(fg_model_load("tests/fixtures/models/nvidia--NVIDIA-Nemotron-Nano-9B-v2",
                                   &m, &err),
                     0);
    const struct fg_gpu *t4 = fg_gpu_find(NULL, "t4", NULL);
    assert_non_null(t4);
    struct fg_rules r;
    rules_default(&r);
    struct fg_jobspec job;
    fg_jobspec_init(&job, NULL);
    assert_int_equal(fg_jobspec_set(&job, FG_JOBOPT_MODE, "lora", &err), 0);
    assert_int_equal(fg_jobspec_finish(&job, &err), 0);
    struct fg_assessment a;
    assert_int_equal(fg_assess(m, &job, t4, 1, &r, &a, &err), 0);
    assert_int_equal(a.fit.verdict, FG_FIT_SPLIT);
    assert_true(a.planned);
    assert_int_equal(a.plan.status, FG_PLAN_FOUND);
    struct fg_request q = req(t4, "t4", 1);
    snprintf(q.model, sizeof q.model, "%.150s", m->id);
    struct fg_decision d;
    r.action = FG_ACTION_RESIZE;
    fg_decide(&q, &a, &r, &d);
    assert_int_equal(d.kind, FG_DECIDE_RESIZE);
    assert_true(d.count >= 2 && d.count <= 8);
    assert_int_equal(d.layout.gpus, d.count);
    assert_true((double)d.layout.peak_bytes * r.headroom <= (double)a.usable);

    /* the same job on one H100 fits with nothing to say */
    const struct fg_gpu *h100 = fg_gpu_find(NULL, "h100", NULL);
    assert_non_null(h100);
    assert_int_equal(fg_assess(m, &job, h100, 1, &r, &a, &err), 0);
    q = req(h100, "h100", 1);
    fg_decide(&q, &a, &r, &d);
    assert_int_equal(d.kind, FG_DECIDE_ALLOW);
    fg_model_free(m);
}


/* Calibration= is off by default; on, the policy reads the table at once (its errors are the
 * policy's, naming the table's file:line), every partition's rules carry it, and an assessed
 * job is scaled and says so in the verdict it gets. */
static void calibration_should_load_with_the_policy_and_reach_the_answer(void **state)
{
    (void)state;
    struct fg_policy p;
    struct fg_err err = {0};
    struct fg_rules r;
    assert_int_equal(parse(&p, "Action=warn\n", &err), 0);
    fg_policy_rules_for(&p, "", &r);
    assert_null(r.calib);

    char path[] = "/tmp/fitgate-test-calib-XXXXXX", conf[128];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *bad = "Framework=hf Mode=lora Factor=1.25 Jobs=40\nFramework=hf Mode=full Jobs=2\n";
    assert_int_equal(write(fd, bad, strlen(bad)), (ssize_t)strlen(bad));
    snprintf(conf, sizeof conf, "Calibration=%s\n", path);
    assert_int_not_equal(parse(&p, conf, &err), 0);
    assert_non_null(strstr(err.detail, "/etc/slurm/fitgate.conf:1"));
    char where[160];
    snprintf(where, sizeof where, "%s:2: Factor is missing", path);
    assert_non_null(strstr(err.detail, where));

    assert_int_equal(ftruncate(fd, 0), 0);
    size_t first = strcspn(bad, "\n") + 1; /* the good first line only */
    assert_int_equal(pwrite(fd, bad, first, 0), (ssize_t)first);
    close(fd);
    snprintf(conf, sizeof conf, "Calibration=%s\nPartitionName=gpu Action=reject\n", path);
    assert_int_equal(parse(&p, conf, &err), 0);
    unlink(path);
    fg_policy_rules_for(&p, "gpu", &r);
    assert_non_null(r.calib);
    assert_int_equal(r.calib->n, 1);

    struct fg_model *m = NULL;
    assert_int_equal(fg_model_load("tests/fixtures/models/Qwen--Qwen3-0.6B", &m, &err), 0);
    const struct fg_gpu *t4 = fg_gpu_find(NULL, "t4", NULL);
    struct fg_jobspec job;
    fg_jobspec_init(&job, NULL);
    assert_int_equal(fg_jobspec_set(&job, FG_JOBOPT_MODE, "lora", &err), 0);
    assert_int_equal(fg_jobspec_set(&job, FG_JOBOPT_FRAMEWORK, "hf", &err), 0);
    assert_int_equal(fg_jobspec_finish(&job, &err), 0);
    struct fg_assessment a, plain;
    assert_int_equal(fg_assess(m, &job, t4, 1, &r, &a, &err), 0);
    struct fg_rules off = r;
    off.calib = NULL;
    assert_int_equal(fg_assess(m, &job, t4, 1, &off, &plain, &err), 0);
    assert_non_null(a.calib);
    assert_null(plain.calib);
    assert_int_equal(a.est.total_bytes, (uint64_t)(plain.est.total_bytes * 1.25 + 0.5));
    assert_int_equal(a.layout.peak_bytes, a.est.total_bytes); /* what FITGATE_* and the audit quote */
    struct fg_audit_rec rec;
    fg_audit_rec_init(&rec, FG_AUDIT_AT_SBATCH);
    fg_audit_from_assessment(&rec, &a);
    assert_int_equal(rec.calibration_milli, 1250);
    fg_audit_from_assessment(&rec, &plain);
    assert_int_equal(rec.calibration_milli, 0);
    struct fg_request q = req(t4, "t4", 1);
    snprintf(q.model, sizeof q.model, "Qwen3-0.6B");
    struct fg_decision d;
    fg_decide(&q, &a, &r, &d);
    assert_non_null(strstr(d.lines[0], "site calibration: x1.25 from 40 jobs"));
    fg_decide(&q, &plain, &off, &d);
    assert_null(strstr(d.lines[0], "calibration"));
    fg_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(init_should_give_documented_defaults),
        cmocka_unit_test(parse_should_read_site_keys_case_insensitively),
        cmocka_unit_test(parse_should_read_log_file_as_syslog_or_absolute_path),
        cmocka_unit_test(parse_should_apply_partition_overrides_only_to_named_keys),
        cmocka_unit_test(parse_should_reject_unknown_key_naming_file_and_line),
        cmocka_unit_test(parse_should_reject_bad_value_naming_key_and_accepted_values),
        cmocka_unit_test(parse_should_keep_going_after_an_error_so_on_error_applies),
        cmocka_unit_test(parse_should_refuse_site_key_on_partition_line),
        cmocka_unit_test(parse_should_refuse_duplicate_partition),
        cmocka_unit_test(parse_should_check_conservative_not_below_headroom),
        cmocka_unit_test(parse_should_read_quoted_values_and_comments),
        cmocka_unit_test(args_should_override_file_and_reject_unknown_argument),
        cmocka_unit_test(policy_bool_should_read_requiretag_as_the_policy_does),
        cmocka_unit_test(setup_should_name_a_missing_policy_file),
        cmocka_unit_test(load_should_accept_the_shipped_example),
        cmocka_unit_test(decide_should_allow_silently_when_job_fits),
        cmocka_unit_test(decide_should_reject_with_need_card_and_fitting_request),
        cmocka_unit_test(decide_should_resize_to_smallest_layout_when_action_is_resize),
        cmocka_unit_test(decide_should_spread_large_requests_over_whole_nodes),
        cmocka_unit_test(decide_should_warn_over_request_or_shrink_when_policy_says_so),
        cmocka_unit_test(decide_should_lower_micro_batch_with_accumulation),
        cmocka_unit_test(decide_should_offer_accumulation_only_where_the_gradients_fit),
        cmocka_unit_test(assess_should_judge_a_global_batch_with_its_gradients),
        cmocka_unit_test(decide_should_follow_borderline_setting),
        cmocka_unit_test(decide_should_reject_disallowed_mode_and_missing_gpu),
        cmocka_unit_test(decide_should_reject_when_no_layout_fits),
        cmocka_unit_test(decide_should_do_nothing_when_action_off),
        cmocka_unit_test(decide_error_should_follow_on_error),
        cmocka_unit_test(request_spell_should_keep_the_job_syntax),
        cmocka_unit_test(assess_should_plan_nemotron_lora_on_four_t4),
        cmocka_unit_test(parse_should_read_on_unknown_per_partition),
        cmocka_unit_test(decide_unknown_should_reject_warn_or_pass_as_on_unknown_says),
        cmocka_unit_test(calibration_should_load_with_the_policy_and_reach_the_answer),
        cmocka_unit_test(parse_should_refuse_a_key_given_twice),
        cmocka_unit_test(load_should_refuse_a_policy_others_may_write),
        cmocka_unit_test(gpu_table_should_fail_naming_the_key_and_its_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
