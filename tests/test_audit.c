/*
 * test_audit.c - policies/audit.c: the audit line's format (round trip
 * through cJSON and through fg_audit_parse, hostile strings, control
 * characters, bytes that are not UTF-8), the reader's refusals, records
 * filled from real decisions, and the writer on real files, FIFOs and a
 * real datagram socket standing in for /dev/log.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model/model_load.h"
#include "audit.h"
#include "decide.h"
#include "util/fileio.h"
#include "hw/gpu.h"
#include "model/model.h"
#include "policy.h"

static char tmpdir[256];

static int make_tmpdir(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/fitgate-audit.XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    return 0;
}

static int remove_tmpdir(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* A record with every field set to something distinct. */
static void sample(struct fg_audit_rec *r)
{
    memset(r, 0, sizeof *r);
    r->time = 1764584410; /* 2025-12-01T10:20:10Z */
    snprintf(r->submit_id, sizeof r->submit_id, "login1:4242:1764584410.123456789:0");
    r->job_id = 918273;
    r->where = FG_AUDIT_AT_SBATCH;
    snprintf(r->user, sizeof r->user, "alice");
    r->uid = 1001;
    snprintf(r->partition, sizeof r->partition, "gpu");
    snprintf(r->model, sizeof r->model, "meta-llama/Llama-3.1-8B");
    snprintf(r->model_type, sizeof r->model_type, "llama");
    snprintf(r->revision, sizeof r->revision, "d04e592bb4f6aa9cfee91e2e20afa771667e1d4b");
    snprintf(r->request, sizeof r->request, "--gres=gpu:t4:1");
    snprintf(r->request_after, sizeof r->request_after, "--gres=gpu:t4:4");
    r->gpus_asked = 1;
    r->gpus_after = 4;
    r->nodes = 1;
    r->nodes_after = 1;
    r->time_limit_min = 720;
    snprintf(r->card, sizeof r->card, "NVIDIA T4 16GB");
    snprintf(r->framework, sizeof r->framework, "lightning");
    snprintf(r->mode, sizeof r->mode, "lora");
    snprintf(r->layout, sizeof r->layout, "TP=1 PP=4 DP=1");
    r->estimate_bytes = 29712345678ull;
    r->per_gpu_bytes = 8123456789ull;
    r->usable_bytes = 15294136320ull;
    r->verdict = FG_AUDIT_RESIZE;
    snprintf(r->message, sizeof r->message, "resized: LoRA of meta-llama/Llama-3.1-8B ...");
    snprintf(r->version, sizeof r->version, "0.1.0");
}

static const char *str_of(const cJSON *o, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsString(it))
        fail_msg("\"%s\" is not a string in the line", key);
    return it->valuestring;
}

static double num_of(const cJSON *o, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(it))
        fail_msg("\"%s\" is not a number in the line", key);
    return it->valuedouble;
}

static void assert_same_rec(const struct fg_audit_rec *a, const struct fg_audit_rec *b)
{
    assert_int_equal(a->time, b->time);
    assert_string_equal(a->submit_id, b->submit_id);
    assert_int_equal(a->job_id, b->job_id);
    assert_int_equal(a->where, b->where);
    assert_string_equal(a->user, b->user);
    assert_int_equal(a->uid, b->uid);
    assert_string_equal(a->partition, b->partition);
    assert_string_equal(a->model, b->model);
    assert_string_equal(a->model_type, b->model_type);
    assert_string_equal(a->revision, b->revision);
    assert_string_equal(a->request, b->request);
    assert_string_equal(a->request_after, b->request_after);
    assert_int_equal(a->gpus_asked, b->gpus_asked);
    assert_int_equal(a->gpus_after, b->gpus_after);
    assert_int_equal(a->nodes, b->nodes);
    assert_int_equal(a->nodes_after, b->nodes_after);
    assert_int_equal(a->time_limit_min, b->time_limit_min);
    assert_string_equal(a->card, b->card);
    assert_string_equal(a->framework, b->framework);
    assert_string_equal(a->mode, b->mode);
    assert_string_equal(a->layout, b->layout);
    assert_int_equal(a->estimate_bytes, b->estimate_bytes);
    assert_int_equal(a->per_gpu_bytes, b->per_gpu_bytes);
    assert_int_equal(a->usable_bytes, b->usable_bytes);
    assert_int_equal(a->verdict, b->verdict);
    assert_string_equal(a->message, b->message);
    assert_string_equal(a->override_reason, b->override_reason);
    assert_string_equal(a->version, b->version);
}

/* ---- the line --------------------------------------------------------------------- */

static void format_should_round_trip_through_cjson(void **state)
{
    (void)state;
    struct fg_audit_rec r, back;
    char line[FG_AUDIT_LINE_MAX];
    struct fg_err err = {0};
    sample(&r);
    size_t n = fg_audit_format(&r, line, sizeof line);
    assert_true(n > 0);
    assert_int_equal(n, strlen(line));
    assert_int_equal(line[n - 1], '\n');
    assert_null(memchr(line, '\n', n - 1)); /* one line */
    assert_memory_equal(line, "{\"v\":1,\"time\":1764584410,\"time_utc\":\"2025-12-01T10:20:10Z\",",
                        59);
    /* the architecture follows the model it belongs to */
    assert_non_null(strstr(line, "\"model\":\"meta-llama/Llama-3.1-8B\",\"model_type\":\"llama\","
                                 "\"revision\""));

    cJSON *o = cJSON_ParseWithLength(line, n);
    assert_non_null(o);
    assert_true(num_of(o, "v") == 1);
    assert_true(num_of(o, "time") == 1764584410.0);
    assert_string_equal(str_of(o, "time_utc"), "2025-12-01T10:20:10Z");
    assert_string_equal(str_of(o, "submit_id"), "login1:4242:1764584410.123456789:0");
    assert_true(num_of(o, "job_id") == 918273.0);
    assert_string_equal(str_of(o, "where"), "sbatch");
    assert_string_equal(str_of(o, "user"), "alice");
    assert_true(num_of(o, "uid") == 1001.0);
    assert_string_equal(str_of(o, "model_type"), "llama");
    assert_string_equal(str_of(o, "request"), "--gres=gpu:t4:1");
    assert_string_equal(str_of(o, "request_after"), "--gres=gpu:t4:4");
    assert_true(num_of(o, "gpus_asked") == 1.0);
    assert_true(num_of(o, "gpus_after") == 4.0);
    assert_true(num_of(o, "time_limit_min") == 720.0);
    assert_string_equal(str_of(o, "layout"), "TP=1 PP=4 DP=1");
    assert_true(num_of(o, "estimate_bytes") == 29712345678.0);
    assert_true(num_of(o, "per_gpu_bytes") == 8123456789.0);
    assert_true(num_of(o, "usable_bytes") == 15294136320.0);
    assert_string_equal(str_of(o, "verdict"), "resize");
    assert_string_equal(str_of(o, "override_reason"), "");
    assert_string_equal(str_of(o, "version"), "0.1.0");
    cJSON_Delete(o);

    assert_int_equal(fg_audit_parse(line, n, &back, &err), 0);
    assert_same_rec(&r, &back);
}

static void format_should_escape_hostile_strings(void **state)
{
    (void)state;
    struct fg_audit_rec r, back;
    char line[FG_AUDIT_LINE_MAX];
    struct fg_err err = {0};
    sample(&r);
    /* a model id that tries to end the line and start a forged one */
    const char *forge = "x\"}\n{\"v\":1,\"verdict\":\"allow\",\"user\":\"root\"";
    snprintf(r.model, sizeof r.model, "%s", forge);
    snprintf(r.user, sizeof r.user, "a\\b\r\t\x01\x1b[31m\x7f");
    snprintf(r.partition, sizeof r.partition, "\xc3\xa9\xe6\x97\xa5\xe2\x80\xa8"); /* é日 U+2028 */
    snprintf(r.override_reason, sizeof r.override_reason, "\xff\xc0\x80|\xe0\x80\x80|\xed\xa0\x80|"
                                                          "\xf4\x90\x80\x80|\xc3");
    size_t n = fg_audit_format(&r, line, sizeof line);
    assert_true(n > 0);
    assert_null(memchr(line, '\n', n - 1));
    assert_non_null(strstr(line, "\"model\":\"x\\\"}\\n{\\\"v\\\":1,\\\"verdict\\\":\\\"allow\\\","
                                 "\\\"user\\\":\\\"root\\\"\""));
    assert_non_null(strstr(line, "\"user\":\"a\\\\b\\r\\t\\u0001\\u001b[31m\\u007f\""));
    assert_non_null(strstr(line, "\"partition\":\"\xc3\xa9\xe6\x97\xa5\\u2028\""));
    /* each byte of an ill-formed sequence is one U+FFFD (Unicode's "maximal subpart"
     * practice would merge some; one per byte is simpler and still valid UTF-8) */
    assert_non_null(strstr(line, "\"override_reason\":\"\\ufffd\\ufffd\\ufffd|"
                                 "\\ufffd\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd|"
                                 "\\ufffd\\ufffd\\ufffd\\ufffd|\\ufffd\""));
    for (size_t i = 0; i < n - 1; i++)
        if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
            fail_msg("raw control byte 0x%02x at %zu", (unsigned char)line[i], i);

    assert_int_equal(fg_audit_parse(line, n, &back, &err), 0);
    assert_string_equal(back.model, forge);
    assert_string_equal(back.user, r.user);
    assert_string_equal(back.partition, r.partition);
    assert_string_equal(back.override_reason, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd|"
                                              "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd|"
                                              "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd|"
                                              "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd|"
                                              "\xef\xbf\xbd");
    assert_int_equal(back.verdict, FG_AUDIT_RESIZE);
    /* what report and learn print of it: every field escaped (fg_audit_escape) */
    fg_audit_escape(&back);
    assert_string_equal(back.user, "a\\b\\x0d\\x09\\x01\\x1b[31m\\x7f");
    assert_string_equal(back.model, "x\"}\\x0a{\"v\":1,\"verdict\":\"allow\",\"user\":\"root\"");
    assert_string_equal(back.partition, "\xc3\xa9\xe6\x97\xa5\\xe2\\x80\\xa8");
    /* C1 controls and bidirectional overrides are escaped in the line itself (a trail read
     * with tail on a terminal) */
    snprintf(r.card, sizeof r.card, "x\xc2\x9b" "1m\xe2\x80\xae" "y");
    n = fg_audit_format(&r, line, sizeof line);
    assert_non_null(strstr(line, "\"card\":\"x\\u009b1m\\u202ey\""));
}

static void format_should_fit_the_worst_record_in_line_max_and_refuse_small_buffers(void **state)
{
    (void)state;
    static struct fg_audit_rec r;
    static char line[FG_AUDIT_LINE_MAX];
    sample(&r);
    /* every string full of control bytes: each becomes a 6-byte \u00XX */
#define FILL(f) (memset(r.f, 0x01, sizeof r.f - 1), r.f[sizeof r.f - 1] = '\0')
    FILL(submit_id), FILL(user), FILL(partition), FILL(model), FILL(revision), FILL(request);
    FILL(request_after), FILL(card), FILL(framework), FILL(layout), FILL(mode), FILL(message);
    FILL(override_reason), FILL(version), FILL(model_type);
#undef FILL
    r.job_id = UINT64_MAX;
    r.estimate_bytes = r.per_gpu_bytes = r.usable_bytes = UINT64_MAX;
    r.time = INT64_MIN;
    size_t n = fg_audit_format(&r, line, sizeof line);
    assert_true(n > 6 * 1700);
    assert_int_equal(n, strlen(line));
    assert_int_equal(fg_audit_format(&r, line, n), 0); /* no room for the NUL */
    assert_string_equal(line, "");
    assert_int_equal(fg_audit_format(&r, line, n + 1), n);
    assert_int_equal(fg_audit_format(&r, line, 0), 0);
}

/* The fixture's lines (gen.py, in Python) are in the writer's exact byte form. */
static void format_should_reproduce_the_fixture_lines_byte_for_byte(void **state)
{
    (void)state;
    FILE *f = fopen("tests/fixtures/audit/site.log", "r");
    assert_non_null(f);
    char *line = NULL, out[FG_AUDIT_LINE_MAX];
    size_t cap = 0, lines = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) > 0) {
        struct fg_audit_rec r;
        struct fg_err err = {0};
        lines++;
        if (fg_audit_parse(line, (size_t)n, &r, &err))
            fail_msg("site.log:%zu: %s", lines, err.detail);
        size_t m = fg_audit_format(&r, out, sizeof out);
        if (m != (size_t)n || memcmp(out, line, m))
            fail_msg("site.log:%zu re-formats differently:\n%s%s", lines, line, out);
    }
    free(line);
    fclose(f);
    assert_int_equal(lines, 96);
}

/* model_type came after the first lines were written: a line without it is read with "",
 * and a record without one (a job not assessed) is written without the key, as they were. */
static void format_should_leave_out_an_unknown_model_type_as_older_lines_did(void **state)
{
    (void)state;
    static struct fg_audit_rec r;
    static char line[FG_AUDIT_LINE_MAX];
    struct fg_err err = {0};
    FILE *f = fopen("tests/fixtures/audit/site.log", "r");
    assert_non_null(f);
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    assert_null(strstr(line, "model_type"));
    memset(&r, 0x55, sizeof r);
    assert_int_equal(fg_audit_parse(line, strlen(line), &r, &err), 0);
    assert_string_equal(r.model_type, "");
    assert_string_equal(r.model, "Qwen/Qwen3-8B");
    sample(&r);
    r.model_type[0] = '\0';
    assert_true(fg_audit_format(&r, line, sizeof line) > 0);
    assert_null(strstr(line, "model_type"));
    assert_non_null(strstr(line, "\"model\":\"meta-llama/Llama-3.1-8B\",\"revision\""));
}

static void parse_should_refuse_what_is_not_a_v1_line(void **state)
{
    (void)state;
    static const struct {
        const char *line;
        int rc;
        const char *detail;
    } cases[] = {
        {"{\"v\":1,\"time\":1,\"verdict\":\"allow\"", FG_E_PARSE, "not JSON"},
        {"[1,2]", FG_E_PARSE, "not a JSON object"},
        {"{\"time\":1,\"verdict\":\"allow\"}", FG_E_PARSE, "no \"v\""},
        {"{\"v\":2,\"time\":1,\"verdict\":\"allow\"}", FG_E_UNSUPPORTED, "format version 2"},
        {"{\"v\":1,\"verdict\":\"allow\"}", FG_E_PARSE, "no \"time\""},
        {"{\"v\":1,\"time\":1}", FG_E_PARSE, "no \"verdict\""},
        {"{\"v\":1,\"time\":1,\"verdict\":\"maybe\"}", FG_E_PARSE, "\"verdict\" is not one of"},
        {"{\"v\":1,\"time\":1,\"verdict\":\"allow\",\"where\":\"pam\"}", FG_E_PARSE,
         "\"where\" is not one of"},
        {"{\"v\":1,\"time\":\"now\",\"verdict\":\"allow\"}", FG_E_PARSE,
         "\"time\" is not a number"},
        {"{\"v\":1,\"time\":1,\"verdict\":\"allow\",\"gpus_asked\":-1}", FG_E_RANGE,
         "\"gpus_asked\": -1"},
        {"{\"v\":1,\"time\":1,\"verdict\":\"allow\",\"gpus_asked\":1.5}", FG_E_RANGE,
         "\"gpus_asked\": 1.5"},
        {"{\"v\":1,\"time\":1,\"verdict\":\"allow\",\"uid\":4294967296}", FG_E_RANGE, "\"uid\""},
        {"{\"v\":1,\"time\":1,\"verdict\":\"allow\",\"mode\":\"a-mode-name-too-long\"}",
         FG_E_RANGE, "\"mode\" is longer than 15 bytes"},
        {"{\"v\":1,\"time\":1,\"verdict\":\"allow\",\"user\":7}", FG_E_PARSE,
         "\"user\" is not a string"},
        {"{\"v\":1,\"time\":1,\"verdict\":\"allow\"} {\"v\":1}", FG_E_PARSE, "text after"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct fg_audit_rec r;
        struct fg_err err = {0};
        int rc = fg_audit_parse(cases[i].line, strlen(cases[i].line), &r, &err);
        if (rc != cases[i].rc || !strstr(err.detail, cases[i].detail))
            fail_msg("%s: rc %d '%s', want %d '%s'", cases[i].line, rc, err.detail, cases[i].rc,
                     cases[i].detail);
    }
    /* the smallest good line; unknown fields are ignored (a later field is no new version) */
    struct fg_audit_rec r;
    struct fg_err err = {0};
    const char *ok = "{\"v\":1,\"time\":7,\"verdict\":\"override\",\"future\":[1],\"job_id\":null}\n";
    assert_int_equal(fg_audit_parse(ok, strlen(ok), &r, &err), 0);
    assert_int_equal(r.time, 7);
    assert_int_equal(r.verdict, FG_AUDIT_OVERRIDE);
    assert_int_equal(r.job_id, 0);
}

static void rec_init_should_give_a_unique_submit_id_per_decision(void **state)
{
    (void)state;
    struct fg_audit_rec a, b;
    fg_audit_rec_init(&a, FG_AUDIT_AT_SRUN);
    fg_audit_rec_init(&b, FG_AUDIT_AT_SRUN);
    assert_string_not_equal(a.submit_id, b.submit_id);
    char pid[32];
    snprintf(pid, sizeof pid, ":%ld:", (long)getpid());
    assert_non_null(strstr(a.submit_id, pid));
    assert_int_equal(a.uid, getuid());
    assert_int_equal(a.where, FG_AUDIT_AT_SRUN);
    assert_string_equal(a.version, FITGATE_VERSION);
    assert_true(a.time > 1700000000);
    assert_int_equal(a.job_id, 0);
}

/* ---- filled from real decisions ---------------------------------------------------- */

static void from_decision_should_record_a_real_resize_and_an_error(void **state)
{
    (void)state;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(fg_model_load("tests/fixtures/models/nvidia--NVIDIA-Nemotron-Nano-9B-v2",
                                   &m, &err),
                     0);
    const struct fg_gpu *t4 = fg_gpu_find(NULL, "t4", NULL);
    assert_non_null(t4);
    struct fg_policy p;
    fg_policy_init(&p);
    p.rules.action = FG_ACTION_RESIZE;
    struct fg_jobspec job;
    fg_jobspec_init(&job, NULL);
    assert_int_equal(fg_jobspec_set(&job, FG_JOBOPT_MODE, "lora", &err), 0);
    assert_int_equal(fg_jobspec_finish(&job, &err), 0);
    static struct fg_assessment a;
    assert_int_equal(fg_assess(m, &job, t4, 1, &p.rules, &a, &err), 0);
    struct fg_request q;
    memset(&q, 0, sizeof q);
    q.gpu = t4;
    snprintf(q.type, sizeof q.type, "t4");
    q.via = FG_VIA_GRES;
    q.count = 1;
    q.nodes = 1;
    snprintf(q.partition, sizeof q.partition, "gpu");
    snprintf(q.model, sizeof q.model, "nvidia/NVIDIA-Nemotron-Nano-9B-v2");
    struct fg_decision d;
    fg_decide(&q, &a, &p.rules, &d);
    assert_int_equal(d.kind, FG_DECIDE_RESIZE);

    struct fg_audit_rec r;
    fg_audit_rec_init(&r, FG_AUDIT_AT_SBATCH);
    fg_audit_from_decision(&r, &q, &d);
    fg_audit_from_assessment(&r, &a);
    assert_int_equal(r.verdict, FG_AUDIT_RESIZE);
    assert_string_equal(r.request, "--gres=gpu:t4:1");
    char want[64];
    snprintf(want, sizeof want, "--gres=gpu:t4:%u", d.count);
    assert_string_equal(r.request_after, want);
    assert_int_equal(r.gpus_asked, 1);
    assert_int_equal(r.gpus_after, d.count);
    assert_true(r.gpus_after >= 2);
    assert_int_equal(r.nodes_after, 1);
    snprintf(want, sizeof want, "TP=%u PP=%u DP=%u", d.layout.tp, d.layout.pp, d.layout.dp);
    assert_memory_equal(r.layout, want, strlen(want));
    assert_int_equal(r.per_gpu_bytes, d.layout.peak_bytes);
    assert_true(r.per_gpu_bytes > 0 && r.per_gpu_bytes < r.estimate_bytes);
    assert_int_equal(r.estimate_bytes, a.est.total_bytes);
    assert_int_equal(r.usable_bytes, a.usable);
    assert_string_equal(r.mode, "lora");
    /* the architecture as the engine read it, for fitgate learn's groups */
    assert_string_equal(r.model_type, "nemotron_h");
    assert_string_equal(r.model_type, m->model_type);
    assert_string_equal(r.card, t4->name);
    assert_string_equal(r.partition, "gpu");
    assert_string_equal(r.message, d.lines[0]);
    assert_non_null(strstr(r.message, "resized"));

    /* a job that could not be checked: verdict error, the request left as asked */
    fg_decide_error("--ft-model=org/x", "HTTP 404", NULL, FG_ONERR_ALLOW, &d);
    fg_audit_rec_init(&r, FG_AUDIT_AT_SBATCH);
    fg_audit_from_decision(&r, &q, &d);
    assert_int_equal(r.verdict, FG_AUDIT_ERROR);
    assert_int_equal(r.gpus_after, 1);
    assert_string_equal(r.request_after, "--gres=gpu:t4:1");
    assert_non_null(strstr(r.message, "HTTP 404"));
    assert_string_equal(r.layout, "");
    fg_model_free(m);
}

/* ---- writing ----------------------------------------------------------------------- */

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n >= 0);
    rewind(f);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static void write_should_append_whole_lines_from_two_processes(void **state)
{
    (void)state;
    enum { N = 2000 };
    char path[400];
    snprintf(path, sizeof path, "%s/concurrent.log", tmpdir);
    pid_t kids[2];
    for (int k = 0; k < 2; k++) {
        kids[k] = fork();
        assert_true(kids[k] >= 0);
        if (kids[k] == 0) {
            struct fg_audit_rec r;
            sample(&r);
            /* long lines (~1.4 kB): more than one page-cache chunk apart */
            memset(r.message, 'a' + k, sizeof r.message - 1);
            r.message[sizeof r.message - 1] = '\0';
            memset(r.override_reason, 'A' + k, sizeof r.override_reason - 1);
            r.override_reason[sizeof r.override_reason - 1] = '\0';
            for (int i = 0; i < N; i++) {
                struct fg_err err = {0};
                r.job_id = (uint64_t)(k * 1000000 + i);
                if (fg_audit_write(path, &r, &err))
                    _exit(1);
            }
            _exit(0);
        }
    }
    for (int k = 0; k < 2; k++) {
        int st;
        assert_int_equal(waitpid(kids[k], &st, 0), kids[k]);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    size_t len;
    char *text = slurp(path, &len);
    size_t lines = 0, seen[2] = {0, 0};
    uint64_t next[2] = {0, 1000000};
    for (char *s = text; s < text + len;) {
        char *nl = memchr(s, '\n', (size_t)(text + len - s));
        assert_non_null(nl);
        struct fg_audit_rec r;
        struct fg_err err = {0};
        if (fg_audit_parse(s, (size_t)(nl - s + 1), &r, &err))
            fail_msg("line %zu is not whole: %s", lines + 1, err.detail);
        int k = r.message[0] == 'a' ? 0 : 1;
        /* the line is one writer's: message and reason agree, and its lines stay in order */
        assert_int_equal(r.override_reason[0], 'A' + k);
        assert_int_equal(r.override_reason[254], 'A' + k);
        assert_int_equal(r.job_id, next[k]);
        next[k]++;
        seen[k]++;
        lines++;
        s = nl + 1;
    }
    assert_int_equal(lines, 2 * N);
    assert_int_equal(seen[0], N);
    assert_int_equal(seen[1], N);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    mode_t mask = umask(0);
    umask(mask);
    assert_int_equal(st.st_mode & 0777, 0640 & ~mask); /* created 0640 */
    free(text);
}

/* A full disk, for real: RLIMIT_FSIZE stops the file a few bytes into the third line, so
 * write(2) returns short (the kernel's generic_write_check_limits). */
static void write_should_leave_no_fragment_after_a_short_write(void **state)
{
    (void)state;
    char path[400];
    snprintf(path, sizeof path, "%s/full.log", tmpdir);
    pid_t kid = fork();
    assert_true(kid >= 0);
    if (kid == 0) {
        struct fg_audit_rec r;
        struct fg_err err = {0};
        sample(&r);
        signal(SIGXFSZ, SIG_IGN);
        if (fg_audit_write(path, &r, &err) || fg_audit_write(path, &r, &err))
            _exit(1);
        struct stat st;
        if (stat(path, &st))
            _exit(1);
        struct rlimit rl = {(rlim_t)st.st_size + 40, (rlim_t)st.st_size + 40};
        if (setrlimit(RLIMIT_FSIZE, &rl))
            _exit(1);
        if (!fg_audit_write(path, &r, &err) || !strstr(err.detail, "short write") ||
            !strstr(err.detail, "cut back"))
            _exit(2);
        _exit(0);
    }
    int st;
    assert_int_equal(waitpid(kid, &st, 0), kid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    size_t len;
    char *text = slurp(path, &len);
    assert_true(len > 0 && text[len - 1] == '\n'); /* no fragment at the end */
    size_t lines = 0;
    for (char *p = text, *nl; (nl = memchr(p, '\n', (size_t)(text + len - p))); p = nl + 1) {
        struct fg_audit_rec r;
        struct fg_err err = {0};
        assert_int_equal(fg_audit_parse(p, (size_t)(nl - p + 1), &r, &err), 0);
        lines++;
    }
    assert_int_equal(lines, 2);
    free(text);
}

/* The join key is written only when it is not the line's own submit id, and read back;
 * Slurm's NO_VAL is no time limit, INFINITE "unlimited". */
static void format_should_carry_the_key_and_the_time_limit_kinds(void **state)
{
    (void)state;
    struct fg_audit_rec r, back;
    struct fg_err err = {0};
    char line[FG_AUDIT_LINE_MAX];
    sample(&r);
    snprintf(r.key, sizeof r.key, "%s", r.submit_id);
    fg_audit_set_time_limit(&r, FG_TIME_NO_VAL);
    assert_int_equal(r.time_limit_min, 0);
    size_t n = fg_audit_format(&r, line, sizeof line);
    assert_null(strstr(line, "\"key\""));
    assert_null(strstr(line, "\"time_limit\""));
    assert_int_equal(fg_audit_parse(line, n, &back, &err), 0);
    assert_string_equal(back.key, r.submit_id);
    snprintf(r.key, sizeof r.key, "login1:4242:1764583200.000000001:0");
    fg_audit_set_time_limit(&r, FG_TIME_UNLIMITED);
    n = fg_audit_format(&r, line, sizeof line);
    assert_non_null(strstr(line, "\"key\":\"login1:4242:1764583200.000000001:0\""));
    assert_non_null(strstr(line, "\"time_limit_min\":0,\"time_limit\":\"unlimited\""));
    assert_int_equal(fg_audit_parse(line, n, &back, &err), 0);
    assert_string_equal(back.key, "login1:4242:1764583200.000000001:0");
    assert_string_equal(back.time_limit, "unlimited");
    fg_audit_set_time_limit(&r, 90);
    assert_int_equal(r.time_limit_min, 90);
    assert_string_equal(r.time_limit, "");
}

/* Root (the controller's check) creates a per-user file for the line's user, and may append
 * to that user's file; never to another user's. */
static void write_should_create_per_user_files_for_their_user_as_root(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip();
    char target[400], path[400], other[400];
    struct fg_audit_rec r;
    struct fg_err err = {0};
    struct stat st;
    sample(&r);
    snprintf(r.user, sizeof r.user, "nobody");
    r.uid = 65534;
    snprintf(target, sizeof target, "%s/peruser-%%u.log", tmpdir);
    snprintf(path, sizeof path, "%s/peruser-nobody.log", tmpdir);
    assert_int_equal(fg_audit_write(target, &r, &err), 0);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_uid, 65534);
    assert_int_equal(fg_audit_write(target, &r, &err), 0); /* the user's own: appended */
    /* a file of another user under this user's name (pre-created) is refused */
    snprintf(other, sizeof other, "%s/peruser-eve.log", tmpdir);
    int fd = open(other, O_WRONLY | O_CREAT, 0640);
    assert_true(fd >= 0);
    assert_int_equal(fchown(fd, 65534, (gid_t)-1), 0);
    close(fd);
    snprintf(r.user, sizeof r.user, "eve");
    r.uid = 1005;
    assert_int_equal(fg_audit_write(target, &r, &err), FG_E_DENIED);
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "test_audit: fg_audit_write blocked on a FIFO\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(3);
}

static void write_should_not_block_on_a_fifo(void **state)
{
    (void)state;
    char path[400];
    struct fg_audit_rec r;
    struct fg_err err = {0};
    snprintf(path, sizeof path, "%s/fifo", tmpdir);
    assert_int_equal(mkfifo(path, 0600), 0);
    sample(&r);
    signal(SIGALRM, on_alarm);
    alarm(20); /* a blocking write would hang the test: end it with a message instead */

    /* no reader */
    assert_int_equal(fg_audit_write(path, &r, &err), FG_E_IO);
    assert_non_null(strstr(err.detail, "FIFO with no reader"));

    /* a reader that never reads: the pipe fills, then writes fail instead of waiting */
    int rd = open(path, O_RDONLY | O_NONBLOCK);
    assert_true(rd >= 0);
    int rc = 0, written = 0;
    for (int i = 0; i < 100000 && !rc; i++) {
        rc = fg_audit_write(path, &r, &err);
        written += rc == 0;
    }
    assert_int_equal(rc, FG_E_IO);
    assert_non_null(strstr(err.detail, "would block"));
    assert_true(written > 10); /* 64 KiB of pipe took lines before */
    /* and every line that went in is whole */
    char buf[FG_AUDIT_LINE_MAX];
    ssize_t n = read(rd, buf, sizeof buf - 1);
    assert_true(n > 0);
    buf[n] = '\0';
    char *nl = strchr(buf, '\n');
    assert_non_null(nl);
    struct fg_audit_rec back;
    assert_int_equal(fg_audit_parse(buf, (size_t)(nl - buf + 1), &back, &err), 0);
    close(rd);
    alarm(0);
    signal(SIGALRM, SIG_DFL);
}

static void write_should_return_an_error_for_targets_it_cannot_use(void **state)
{
    (void)state;
    struct fg_audit_rec r;
    struct fg_err err = {0};
    char path[400], link[400];
    sample(&r);

    assert_int_equal(fg_audit_write(NULL, &r, &err), 0); /* off */
    assert_int_equal(fg_audit_write("", &r, &err), 0);

    assert_int_equal(fg_audit_write("audit.log", &r, &err), FG_E_INVAL);
    assert_non_null(strstr(err.detail, "not an absolute path"));

    assert_int_equal(fg_audit_write("/etc/passwd/audit.log", &r, &err), FG_E_IO);
    assert_non_null(strstr(err.detail, "/etc/passwd/audit.log: Not a directory"));

    snprintf(path, sizeof path, "%s/no/such/dir/a.log", tmpdir);
    assert_int_equal(fg_audit_write(path, &r, &err), FG_E_IO);
    assert_non_null(strstr(err.detail, "No such file or directory"));

    assert_int_equal(fg_audit_write(tmpdir, &r, &err), FG_E_IO); /* a directory */

    /* a symbolic link is not followed (someone else's file behind it) */
    snprintf(path, sizeof path, "%s/target.log", tmpdir);
    snprintf(link, sizeof link, "%s/link.log", tmpdir);
    assert_int_equal(fg_audit_write(path, &r, &err), 0);
    assert_int_equal(symlink(path, link), 0);
    assert_int_equal(fg_audit_write(link, &r, &err), FG_E_DENIED);
    assert_non_null(strstr(err.detail, "symbolic link"));

    /* a user name that would climb out of the directory */
    snprintf(path, sizeof path, "%s/%%u.log", tmpdir);
    snprintf(r.user, sizeof r.user, "..");
    assert_int_equal(fg_audit_write(path, &r, &err), FG_E_INVAL);
    snprintf(r.user, sizeof r.user, "../etc");
    assert_int_equal(fg_audit_write(path, &r, &err), FG_E_INVAL);

    /* another user's file (as root: give it away; a user cannot) */
    if (geteuid() == 0) {
        snprintf(path, sizeof path, "%s/mallory.log", tmpdir);
        int fd = open(path, O_WRONLY | O_CREAT, 0666);
        assert_true(fd >= 0);
        close(fd);
        assert_int_equal(chown(path, 12345, 12345), 0);
        snprintf(r.user, sizeof r.user, "alice");
        assert_int_equal(fg_audit_write(path, &r, &err), FG_E_DENIED);
        assert_non_null(strstr(err.detail, "owned by uid 12345"));
    } else {
        print_message("not root: the other-owner case is not run\n");
    }
}

static void write_should_expand_user_and_uid_in_the_path(void **state)
{
    (void)state;
    struct fg_audit_rec r;
    struct fg_err err = {0};
    char tmpl[400], path[400];
    sample(&r);
    snprintf(tmpl, sizeof tmpl, "%s/%%u-%%U.jsonl", tmpdir);
    assert_int_equal(fg_audit_write(tmpl, &r, &err), 0);
    assert_int_equal(fg_audit_write(tmpl, &r, &err), 0);
    snprintf(path, sizeof path, "%s/alice-1001.jsonl", tmpdir);
    size_t len;
    char *text = slurp(path, &len);
    char line[FG_AUDIT_LINE_MAX];
    size_t n = fg_audit_format(&r, line, sizeof line);
    assert_int_equal(len, 2 * n);
    assert_memory_equal(text, line, n);
    assert_memory_equal(text + n, line, n);
    free(text);

    /* the user name only matters where the path uses it */
    snprintf(r.user, sizeof r.user, "../x");
    snprintf(tmpl, sizeof tmpl, "%s/%%U.jsonl", tmpdir);
    assert_int_equal(fg_audit_write(tmpl, &r, &err), 0);
    snprintf(tmpl, sizeof tmpl, "%s/%%u.jsonl", tmpdir);
    assert_int_equal(fg_audit_write(tmpl, &r, &err), FG_E_INVAL);
    assert_non_null(strstr(err.detail, "user name '../x' cannot be part of a path"));
}

/* The one expansion both CacheDir (gate.c) and LogFile (audit.c) use. */
static void path_expand_should_name_the_setting_and_refuse_names_that_climb(void **state)
{
    (void)state;
    struct fg_err err = {0};
    char out[32];
    assert_int_equal(fg__path_expand("CacheDir", "/c/%u/%U%", "bob", 42, out, sizeof out, &err),
                     0);
    assert_string_equal(out, "/c/bob/42%");
    assert_int_equal(fg__path_expand("CacheDir", "/c/%u", "", 0, out, sizeof out, &err), 0);
    assert_string_equal(out, "/c/unknown");
    assert_int_equal(fg__path_expand("CacheDir", "/c/%u", "..", 0, out, sizeof out, &err),
                     FG_E_INVAL);
    assert_string_equal(err.detail, "CacheDir=/c/%u: user name '..' cannot be part of a path");
    /* 31 characters fit in 32 bytes, 32 do not */
    assert_int_equal(fg__path_expand("LogFile", "/0123456789/0123456789/0123456%U", "x", 7, out,
                                     sizeof out, &err),
                     0);
    assert_int_equal(fg__path_expand("LogFile", "/0123456789/0123456789/0123456%U", "x", 17, out,
                                     sizeof out, &err),
                     FG_E_RANGE);
    assert_string_equal(err.detail,
                        "LogFile=/0123456789/0123456789/0123456%U: too long once expanded");
}

static void write_syslog_should_send_one_rfc3164_datagram(void **state)
{
    (void)state;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    struct fg_audit_rec r, back;
    struct fg_err err = {0};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%.90s/log", tmpdir);
    int s = socket(AF_UNIX, SOCK_DGRAM, 0);
    assert_true(s >= 0);
    assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof sa), 0);
    sample(&r);
    assert_int_equal(fg__audit_write_syslog(sa.sun_path, &r, &err), 0);
    char buf[FG_AUDIT_LINE_MAX + 256];
    ssize_t n = recv(s, buf, sizeof buf - 1, MSG_DONTWAIT);
    assert_true(n > 0);
    buf[n] = '\0';
    /* "<14>Dec  1 11:20:10 fitgate[PID]: {...}": user.info, local time, no newline */
    assert_memory_equal(buf, "<14>", 4);
    assert_true(buf[7] == ' ' && buf[10] == ' ' && buf[13] == ':' && buf[16] == ':');
    char tag[48];
    snprintf(tag, sizeof tag, " fitgate[%ld]: {\"v\":1,", (long)getpid());
    char *json = strstr(buf, tag);
    assert_non_null(json);
    assert_int_equal(json - buf, 19);
    json = strchr(json, '{');
    assert_int_equal(buf[n - 1], '}');
    assert_int_equal(fg_audit_parse(json, strlen(json), &back, &err), 0);
    assert_same_rec(&r, &back);
    close(s);

    /* no daemon listening: an error, at once */
    assert_int_equal(fg__audit_write_syslog(sa.sun_path, &r, &err), FG_E_IO);
    assert_non_null(strstr(err.detail, "Connection refused"));
    snprintf(buf, sizeof buf, "%s/nolog", tmpdir);
    assert_int_equal(fg__audit_write_syslog(buf, &r, &err), FG_E_IO);
    assert_non_null(strstr(err.detail, "No such file or directory"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(format_should_round_trip_through_cjson),
        cmocka_unit_test(format_should_escape_hostile_strings),
        cmocka_unit_test(format_should_fit_the_worst_record_in_line_max_and_refuse_small_buffers),
        cmocka_unit_test(format_should_reproduce_the_fixture_lines_byte_for_byte),
        cmocka_unit_test(format_should_leave_out_an_unknown_model_type_as_older_lines_did),
        cmocka_unit_test(parse_should_refuse_what_is_not_a_v1_line),
        cmocka_unit_test(rec_init_should_give_a_unique_submit_id_per_decision),
        cmocka_unit_test(from_decision_should_record_a_real_resize_and_an_error),
        cmocka_unit_test(write_should_append_whole_lines_from_two_processes),
        cmocka_unit_test(write_should_not_block_on_a_fifo),
        cmocka_unit_test(write_should_return_an_error_for_targets_it_cannot_use),
        cmocka_unit_test(write_should_expand_user_and_uid_in_the_path),
        cmocka_unit_test(path_expand_should_name_the_setting_and_refuse_names_that_climb),
        cmocka_unit_test(write_syslog_should_send_one_rfc3164_datagram),
        cmocka_unit_test(write_should_leave_no_fragment_after_a_short_write),
        cmocka_unit_test(format_should_carry_the_key_and_the_time_limit_kinds),
        cmocka_unit_test(write_should_create_per_user_files_for_their_user_as_root),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
