/*
 * test_badinput.c - the inputs users and attackers produce, against every
 * parser an outside value reaches: model ids and repository file names,
 * config.json (text and files), the memory model's job, fitgate.conf lines
 * and files, plugstack arguments, GPU table rows and files, option values
 * (fg_mode_parse ... fg_gpu_find), the environment the CLI reads, safetensors
 * headers and indexes, fitgate's cache, and error details themselves.
 *
 * Each case names the exact FG_E_* code and a piece of the message a person
 * reads, checks that the detail holds no control character (it reaches
 * terminals and Slurm logs), and that nothing else changed: out-pointers
 * stay NULL or untouched, enum outputs keep their value, a job is not
 * half-edited, a policy keeps its defaults, no cache file is created.
 *
 * Cases that showed a bug in another module are grouped at the end as
 * "known gaps" (FIFO opens, duplicate keys, trailing text, the safetensors
 * length wrap, the quadratic index, control characters in notes and logs).
 * All are fixed and fail like any other test; FITGATE_STRICT=0 turns a
 * future gap back into a printed, skipped KNOWN BUG while its owner works.
 *
 * Run from the repository root (make unit).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arch/graph.h"
#include "model/model_int.h"
#include "source/config.h"
#include "util/error.h"
#include "hw/gpu.h"
#include "util/log.h"
#include "memory/memory.h"
#include "model/model.h"
#include "policy.h"
#include "source/safetensors.h"
#include "source/source.h"

/* ---- helpers ----------------------------------------------------------------------- */

static unsigned n_cases; /* bad inputs tried, printed by the last test */

struct bad {
    const char *in;     /* NULL: use big[] (built by the test) */
    int code;           /* expected FG_E_* */
    const char *sub;    /* expected piece of err.detail */
};

static bool strict(void)
{
    const char *v = getenv("FITGATE_STRICT");
    return !(v && *v == '0');
}

static bool has_controls(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
            return true;
    return false;
}

/* One failing call: the code, a piece of the detail, no control character, NUL-terminated.
 * Prints every mismatch and returns false, so a table reports all its bad rows at once. */
static bool check_err(const char *what, const char *input, int rc, const struct fg_err *err,
                      int code, const char *sub)
{
    n_cases++;
    bool ok = true;
    if (rc != code || err->code != code) {
        print_error("%s '%.60s': rc %d (err.code %d), expected %d (%s): %s\n", what, input, rc,
                    err->code, code, fg_strerror(code), err->detail);
        ok = false;
    }
    if (!memchr(err->detail, '\0', sizeof err->detail)) {
        print_error("%s '%.60s': detail not terminated\n", what, input);
        return false;
    }
    if (sub && !strstr(err->detail, sub)) {
        print_error("%s '%.60s': detail '%s' lacks '%s'\n", what, input, err->detail, sub);
        ok = false;
    }
    if (has_controls(err->detail)) {
        print_error("%s '%.60s': detail holds a control character\n", what, input);
        ok = false;
    }
    return ok;
}

/* A known gap in another module: skipped unless FITGATE_STRICT=1. */
#define KNOWN_GAP(ok, ...)                                                                     \
    do {                                                                                       \
        if (!(ok)) {                                                                           \
            print_message("KNOWN BUG (see the QA report): " __VA_ARGS__);                      \
            if (strict())                                                                      \
                fail();                                                                        \
            skip();                                                                            \
        }                                                                                      \
    } while (0)

static char *repeat(char c, size_t n)
{
    char *s = malloc(n + 1);
    assert_non_null(s);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

static char tmpdir[64];

static int setup_tmp(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/fitgate-badinput.XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_tmp(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* Entries of a directory tree (to prove that a failing call created nothing). */
static unsigned count_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    unsigned n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        n++;
        char sub[1024];
        snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
            n += count_tree(sub);
    }
    closedir(d);
    return n;
}

/* Run fn in a child that must finish within seconds; returns its exit status, or -1 when it
 * had to be killed (it hung). */
static int within(unsigned seconds, int (*fn)(const char *), const char *arg)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(seconds);
        _exit(fn(arg));
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ---- model ids and repository file names ---------------------------------------------- */

static void source_parse_id_should_refuse_traversal_and_garbage(void **state)
{
    (void)state;
    char *huge = repeat('a', 1u << 20);
    huge[10] = '/';
    const struct bad cases[] = {
        {"", FG_E_INVAL, "empty model id"},
        {"../../etc/shadow", FG_E_INVAL, "exactly one '/'"},
        {"/etc/passwd", FG_E_INVAL, "absolute path"},
        {"org/..", FG_E_INVAL, "may not start with '-' or '.'"},
        {"org/name/../../x", FG_E_INVAL, "exactly one '/'"},
        {"../name", FG_E_INVAL, "may not start"},
        {"org/.hidden", FG_E_INVAL, "may not start"},
        {"org/-rf", FG_E_INVAL, "may not start"},
        {"org", FG_E_INVAL, NULL},
        {"org//name", FG_E_INVAL, "exactly one '/'"},
        {"org/na--me", FG_E_INVAL, NULL},
        {"org/name%2e%2e", FG_E_INVAL, "found '%'"},
        {"org/name\n", FG_E_INVAL, "'org/name\\x0a'"},
        {"org/na\x1b[31mme", FG_E_INVAL, "found '\\x1b'"},
        {"org/n\xd0\xb0me", FG_E_INVAL, "may hold only"}, /* Cyrillic a */
        {"org/name;rm -rf ~", FG_E_INVAL, "may hold only"},
        {"org/name@", FG_E_INVAL, "1 to 128 characters"},
        {"org/name@../x", FG_E_INVAL, "may not start with '-', '.' or '/'"},
        {"org/name@/etc", FG_E_INVAL, "may not start with '-', '.' or '/'"},
        {"org/name@main/", FG_E_INVAL, "nor end with '/'"},
        {"org/name@a//b", FG_E_INVAL, "'..' or '//'"},
        {"org/name@a/../../b", FG_E_INVAL, "may not start with '.'"},
        {"org/name@-x", FG_E_INVAL, "may not start"},
        {"org/name@main@x", FG_E_INVAL, "found '@'"},
        {NULL, FG_E_INVAL, "longer than"},
    };
    bool ok = true;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *in = cases[i].in ? cases[i].in : huge;
        struct fg_model_id id;
        struct fg_err err = {0};
        int rc = fg_source_parse_id(in, &id, &err);
        ok &= check_err("model id", in, rc, &err, cases[i].code, cases[i].sub);
    }
    /* at the limits: 96 characters are a name, 97 are not */
    char name[200];
    struct fg_model_id id;
    struct fg_err err = {0};
    char *n96 = repeat('n', 96);
    snprintf(name, sizeof name, "org/%s", n96);
    assert_int_equal(fg_source_parse_id(name, &id, &err), 0);
    strcat(name, "x");
    ok &= check_err("model id", name, fg_source_parse_id(name, &id, &err), &err, FG_E_INVAL, NULL);
    free(n96);
    free(huge);
    assert_true(ok);
}

static void source_check_file_should_refuse_paths(void **state)
{
    (void)state;
    char *huge = repeat('a', 4096);
    const struct bad cases[] = {
        {"", FG_E_INVAL, "1 to 255 characters"},
        {".", FG_E_INVAL, "may not start with '.'"},
        {"..", FG_E_INVAL, "may not start with '.'"},
        {"../x.safetensors", FG_E_INVAL, "may not start"},
        {"/etc/passwd", FG_E_INVAL, "may hold only"},
        {"a/../../b", FG_E_INVAL, "may hold only"},
        {"shard\\..\\x", FG_E_INVAL, "may hold only"},
        {"x.safetensors\n", FG_E_INVAL, "'x.safetensors\\x0a'"},
        {"-rf", FG_E_INVAL, "may not start"},
        {"x..y", FG_E_INVAL, "no '..'"},
        {NULL, FG_E_INVAL, "1 to 255 characters"},
    };
    bool ok = true;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *in = cases[i].in ? cases[i].in : huge;
        struct fg_err err = {0};
        ok &= check_err("file", in, fg_source_check_file(in, &err), &err, cases[i].code,
                        cases[i].sub);
    }
    free(huge);
    assert_true(ok);
}

/* ---- config.json ----------------------------------------------------------------------- */

#define LLAMA(extra)                                                                           \
    "{\"model_type\": \"llama\", \"hidden_size\": 64, \"intermediate_size\": 128, "            \
    "\"num_attention_heads\": 4, \"vocab_size\": 100, \"max_position_embeddings\": 64" extra "}"

/* Parse and build; returns the first failure. *out must stay NULL on failure. */
static int config_to_model(const char *text, size_t len, struct fg_err *err)
{
    struct fg_config *doc = (struct fg_config *)&doc;
    int rc = fg_config_parse(text, len, "bad/config.json", &doc, err);
    if (rc) {
        assert_null(doc);
        return rc;
    }
    struct fg_model *m = (struct fg_model *)&m;
    rc = fg_model_from_config(doc, "bad/model", &m, err);
    if (rc)
        assert_null(m);
    fg_model_free(rc ? NULL : m);
    fg_config_free(doc);
    return rc;
}

static void config_should_name_key_and_problem_for_bad_values(void **state)
{
    (void)state;
    const struct bad cases[] = {
        {"", FG_E_PARSE, "malformed JSON near line 1"},
        {"  \n\t\n ", FG_E_PARSE, "malformed JSON near line 3"},
        {"[]", FG_E_PARSE, "top level is not a JSON object"},
        {"null", FG_E_PARSE, "not a JSON object"},
        {"42", FG_E_PARSE, "not a JSON object"},
        {"\"config\"", FG_E_PARSE, "not a JSON object"},
        {"{\"model_type\": \"llama\",\n\"hidden_size\": 64", FG_E_PARSE, "near line 2"},
        {"{\"model_type\": \"llama\", \"num_hidden_layers\": NaN}", FG_E_PARSE, "malformed"},
        /* Python's json writes an infinite float as Infinity (a Mamba-2 time_step_limit):
         * read as the number it is, which a count then refuses as 1e400 is */
        {"{\"model_type\": \"llama\", \"num_hidden_layers\": Infinity}", FG_E_TYPE,
         "'num_hidden_layers' must be a whole number"},
        {"{\"model_type\": \"llama\", 'hidden_size': 4}", FG_E_PARSE, "malformed"},
        {LLAMA(", \"num_hidden_layers\": \"32\""), FG_E_TYPE, "'num_hidden_layers' must be a number, got a string"},
        {LLAMA(", \"num_hidden_layers\": 1e400"), FG_E_TYPE, "'num_hidden_layers' must be a whole number"},
        {LLAMA(", \"num_hidden_layers\": -1"), FG_E_RANGE, "'num_hidden_layers' is -1, outside"},
        {LLAMA(", \"num_hidden_layers\": 18446744073709551616"), FG_E_RANGE, "'num_hidden_layers' is 1.8446744073709552e+19, outside"},
        {LLAMA(", \"num_hidden_layers\": 1.5"), FG_E_TYPE, "must be a whole number"},
        {LLAMA(", \"num_hidden_layers\": 1000000"), FG_E_RANGE, "outside [1, 1024]"},
        {LLAMA(", \"num_hidden_layers\": [2]"), FG_E_TYPE, "must be a number"},
        {LLAMA(", \"num_hidden_layers\": {}"), FG_E_TYPE, "must be a number"},
        {LLAMA(", \"num_hidden_layers\": true"), FG_E_TYPE, "must be a number"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 0, \"num_attention_heads\": 4}", FG_E_RANGE, "'hidden_size' is 0, outside"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 9007199254740993}", FG_E_RANGE, "'hidden_size' is 9007199254740992, outside"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 64, \"num_attention_heads\": 3}", FG_E_RANGE, "is not a multiple of the number of attention heads (3)"},
        {"{\"model_type\": \"llama\", \"num_attention_heads\": 0}", FG_E_RANGE, "'num_attention_heads' is 0"},
        {"{\"model_type\": \"llama\", \"num_attention_heads\": 4, \"num_key_value_heads\": 8, \"hidden_size\": 64}", FG_E_RANGE, "not a multiple of 8 key/value heads"},
        {"{\"model_type\": \"llama\", \"vocab_size\": 1e15}", FG_E_RANGE, "'vocab_size' is 1000000000000000, outside"},
        {"{\"model_type\": \"llama\", \"intermediate_size\": -5}", FG_E_RANGE, "'intermediate_size' is -5"},
        {"{\"model_type\": \"llama\", \"max_position_embeddings\": 1e300}", FG_E_RANGE, "'max_position_embeddings'"},
        {"{\"model_type\": \"llama\", \"tie_word_embeddings\": \"yes\"}", FG_E_TYPE, "must be true or false"},
        {"{\"model_type\": 42}", FG_E_TYPE, "'model_type' must be a string"},
        {"{\"model_type\": \"llava\", \"text_config\": \"x\"}", FG_E_TYPE, "'text_config' must be an object"},
        {"{\"model_type\": \"mixtral\", \"num_local_experts\": -1}", FG_E_RANGE, "'num_local_experts' is -1"},
        {"{\"model_type\": \"mixtral\", \"num_local_experts\": 8, \"num_experts_per_tok\": 9}", FG_E_RANGE, "more than the 8 routed experts"},
        {"{}", FG_E_UNSUPPORTED, "model_type '(none)' is not supported"},
        {"{\"model_type\": \"mystery\\u001b[31m\\r\\n\"}", FG_E_UNSUPPORTED, "model_type 'mystery\\x1b[31m\\x0d\\x0a' is not supported"},
        {"{\"model_type\": \"../../etc/passwd\"}", FG_E_UNSUPPORTED, "not supported"},
    };
    bool ok = true;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct fg_err err = {0};
        int rc = config_to_model(cases[i].in, strlen(cases[i].in), &err);
        ok &= check_err("config", cases[i].in, rc, &err, cases[i].code, cases[i].sub);
    }
    assert_true(ok);
}

static void config_should_refuse_huge_and_deep_documents(void **state)
{
    (void)state;
    struct fg_err err = {0};
    bool ok = true;
    /* 5 MB: over the 4 MiB cap, refused before parsing */
    size_t n = 5u << 20;
    char *big = repeat(' ', n);
    big[0] = '{';
    big[n - 1] = '}';
    ok &= check_err("config", "5 MB", config_to_model(big, n, &err), &err, FG_E_LIMIT,
                    "larger than 4194304 bytes");
    free(big);
    /* 100000 nested arrays: cJSON's nesting limit, no stack overflow */
    n = 100000;
    char *deep = malloc(2 * n + 16);
    assert_non_null(deep);
    size_t o = (size_t)sprintf(deep, "{\"x\": ");
    memset(deep + o, '[', n);
    memset(deep + o + n, ']', n);
    strcpy(deep + o + 2 * n, "}");
    ok &= check_err("config", "100000 nested arrays", config_to_model(deep, strlen(deep), &err),
                    &err, FG_E_PARSE, "malformed JSON");
    /* 900 levels parse (under the limit); the model still needs its keys */
    o = (size_t)sprintf(deep, "{\"x\": ");
    memset(deep + o, '[', 900);
    memset(deep + o + 900, ']', 900);
    strcpy(deep + o + 1800, "}");
    ok &= check_err("config", "900 nested arrays", config_to_model(deep, strlen(deep), &err),
                    &err, FG_E_UNSUPPORTED, "not supported");
    free(deep);
    /* 200000 unknown keys (3.3 MB, under the cap): parsed and ignored; llama defaults apply */
    n = 200000;
    char *wide = malloc(n * 24 + 64);
    assert_non_null(wide);
    o = (size_t)sprintf(wide, "{\"model_type\": \"llama\"");
    for (size_t i = 0; i < n; i++)
        o += (size_t)sprintf(wide + o, ",\"k%zu\":%zu", i, i);
    strcpy(wide + o, "}");
    n_cases++;
    assert_true(o + 1 < FG_CONFIG_MAX_BYTES);
    assert_int_equal(config_to_model(wide, o + 1, &err), 0);
    free(wide);
    assert_true(ok);
}

static int load_rc(const char *path, struct fg_err *err)
{
    struct fg_config *doc = (struct fg_config *)&doc;
    int rc = fg_config_load(path, &doc, err);
    if (rc)
        assert_null(doc);
    fg_config_free(rc ? NULL : doc);
    return rc;
}

static void config_load_should_name_missing_odd_and_oversized_files(void **state)
{
    (void)state;
    char path[320], dir[256];
    struct fg_err err = {0};
    bool ok = true;
    ok &= check_err("load", "", load_rc("", &err), &err, FG_E_INVAL, "empty model path");
    snprintf(path, sizeof path, "%s/none/config.json", tmpdir);
    ok &= check_err("load", path, load_rc(path, &err), &err, FG_E_NOTFOUND, "no such file");
    snprintf(dir, sizeof dir, "%s/empty-model", tmpdir);
    assert_int_equal(mkdir(dir, 0700), 0);
    ok &= check_err("load", dir, load_rc(dir, &err), &err, FG_E_NOTFOUND,
                    "directory has no config.json");
    /* config.json that is a directory */
    snprintf(dir, sizeof dir, "%s/dir-model", tmpdir);
    snprintf(path, sizeof path, "%s/config.json", dir);
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(mkdir(path, 0700), 0);
    /* a config.json that is a directory or a device is refused before any read */
    ok &= check_err("load", dir, load_rc(dir, &err), &err, FG_E_IO, "not a regular file");
    ok &= check_err("load", "/dev/null", load_rc("/dev/null", &err), &err, FG_E_IO,
                    "/dev/null: not a regular file");
    ok &= check_err("load", "/dev/zero", load_rc("/dev/zero", &err), &err, FG_E_IO,
                    "/dev/zero: not a regular file");
    char *longp = repeat('a', 5000);
    longp[0] = '/';
    ok &= check_err("load", "5000-byte path", load_rc(longp, &err), &err, FG_E_RANGE,
                    "path too long");
    free(longp);
    /* a config.json without read permission (skipped as root, who reads anything) */
    if (geteuid() != 0) {
        snprintf(path, sizeof path, "%s/secret.json", tmpdir);
        write_file(path, "{}", 2);
        assert_int_equal(chmod(path, 0), 0);
        ok &= check_err("load", path, load_rc(path, &err), &err, FG_E_IO, "cannot open");
    }
    assert_true(ok);
}

/* ---- the job the memory model gets -------------------------------------------------------- */

static void memory_estimate_should_refuse_absurd_jobs(void **state)
{
    (void)state;
    struct fg_err err = {0};
    struct fg_config *doc = NULL;
    struct fg_model *m = NULL;
    const char *cfg = LLAMA(", \"num_hidden_layers\": 2");
    assert_int_equal(fg_config_parse(cfg, strlen(cfg), "llama", &doc, &err), 0);
    assert_int_equal(fg_model_from_config(doc, "llama", &m, &err), 0);
    struct {
        const char *what;
        enum fg_mode mode;
        uint64_t batch, seq;
        uint32_t rank, zero;
        const char *targets;
        int code;
        const char *sub;
    } cases[] = {
        {"batch 0", FG_MODE_FULL, 0, 0, 16, 0, NULL, FG_E_INVAL, "micro-batch must be at least 1"},
        {"batch 2^40", FG_MODE_FULL, 1ull << 40, 0, 16, 0, NULL, FG_E_RANGE, "is absurd"},
        {"batch 2^64-1", FG_MODE_FULL, UINT64_MAX, 0, 16, 0, NULL, FG_E_RANGE, "is absurd"},
        {"seq max+1", FG_MODE_FULL, 1, FG_MAX_SEQ + 1ull, 16, 0, NULL, FG_E_RANGE, "beyond 16777216 tokens"},
        {"seq 2^63", FG_MODE_FULL, 1, 1ull << 63, 16, 0, NULL, FG_E_RANGE, "beyond"},
        {"rank 0", FG_MODE_LORA, 1, 0, 0, 0, NULL, FG_E_INVAL, "LoRA rank 0 is out of range"},
        {"rank 2^31", FG_MODE_LORA, 1, 0, 1u << 31, 0, NULL, FG_E_INVAL, "out of range 1..65536"},
        {"zero 4", FG_MODE_FULL, 1, 0, 16, 4, NULL, FG_E_INVAL, "ZeRO stage 4 is not 0..3"},
        {"targets zz", FG_MODE_LORA, 1, 0, 16, 0, "zz", FG_E_INVAL, "match no linear layer"},
    };
    bool ok = true;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct fg_job job;
        struct fg_estimate e;
        fg_job_defaults(&job, cases[i].mode);
        job.batch = cases[i].batch;
        if (cases[i].seq)
            job.seq_len = cases[i].seq;
        job.lora_rank = cases[i].rank;
        job.zero = cases[i].zero;
        if (cases[i].targets)
            assert_int_equal(fg_lora_targets_parse(cases[i].targets, &job, &err), 0);
        ok &= check_err("job", cases[i].what, fg_memory_estimate(m, &job, &e, &err), &err,
                        cases[i].code, cases[i].sub);
    }
    fg_model_free(m);
    fg_config_free(doc);
    assert_true(ok);
}

/* ---- option values (CLI --mode ..., plugin --ft-mode ...) ---------------------------------- */

static void option_parsers_should_refuse_bad_values_and_keep_outputs(void **state)
{
    (void)state;
    char *huge = repeat('x', 1u << 20);
    const char *bad[] = {"",      "LORA",       "lora ",         " full", "full\n",
                         "full;rm -rf /", "\x1b[2Jfull", "f\xc3\xbcll", "-1", "1e400",
                         "18446744073709551616", "NaN", NULL};
    bool ok = true;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *in = bad[i] ? bad[i] : huge;
        struct fg_err err = {0};
        enum fg_mode mo = (enum fg_mode)77;
        enum fg_precision pr = (enum fg_precision)77;
        enum fg_optimizer op = (enum fg_optimizer)77;
        enum fg_quant qu = (enum fg_quant)77;
        ok &= check_err("--mode", in, fg_mode_parse(in, &mo, &err), &err, FG_E_INVAL, "mode '");
        ok &= check_err("--precision", in, fg_precision_parse(in, &pr, &err), &err, FG_E_INVAL, NULL);
        ok &= check_err("--optimizer", in, fg_optimizer_parse(in, &op, &err), &err, FG_E_INVAL, NULL);
        ok &= check_err("--quant", in, fg_quant_parse(in, &qu, &err), &err, FG_E_INVAL, NULL);
        if ((int)mo != 77 || (int)pr != 77 || (int)op != 77 || (int)qu != 77) {
            print_error("a parser changed its output on '%.40s'\n", in);
            ok = false;
        }
        if (strlen(err.detail) > 300) {
            print_error("detail for a 1 MB value is %zu bytes: not bounded\n", strlen(err.detail));
            ok = false;
        }
    }
    /* LoRA target lists: the job is left as it was (distinct names: a name said twice is
     * one role) */
    char *longlist = repeat('q', 400);
    for (size_t i = 0, o = 0; o + 6 < 400; i++)
        o += (size_t)snprintf(longlist + o, 400 - o, "r%zu,", i);
    const struct bad lists[] = {
        {"", FG_E_INVAL, "empty LoRA target list"},
        {NULL, FG_E_RANGE, "longer than 127 characters"},
    };
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
        const char *in = lists[i].in ? lists[i].in : longlist;
        struct fg_job job, before;
        struct fg_err err = {0};
        fg_job_defaults(&job, FG_MODE_LORA);
        before = job;
        ok &= check_err("--lora-targets", in, fg_lora_targets_parse(in, &job, &err), &err,
                        lists[i].code, lists[i].sub);
        if (memcmp(&job, &before, sizeof job)) {
            print_error("--lora-targets '%.40s' changed the job although it failed\n", in);
            ok = false;
        }
    }
    free(longlist);
    free(huge);
    assert_true(ok);
}

static void gpu_find_should_return_null_for_bad_specs(void **state)
{
    (void)state;
    char *huge = repeat('h', 1u << 20);
    const char *bad[] = {"",  "gpu:h100:0", "gpu:h100:-1", "gpu:h100:65536",
                         "gpu:h100:18446744073709551616", "h100:1e400", "gpu:h100:4:5:6",
                         "gpu:h100:4x", "gpu:h100: 4", "h\x1b[2J100", "gpu:",
                         ":::::::", NULL};
    bool ok = true;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *in = bad[i] ? bad[i] : huge;
        unsigned count = 12345;
        n_cases++;
        if (fg_gpu_find(NULL, in, &count)) {
            print_error("--gpu '%.40s' found a card\n", in);
            ok = false;
        }
        if (count != 0) {
            print_error("--gpu '%.40s' reported %u GPUs\n", in, count);
            ok = false;
        }
    }
    /* an unknown type keeps its count (the caller says "unknown GPU"), never a path */
    unsigned count = 0;
    n_cases++;
    assert_null(fg_gpu_find(NULL, "gpu:../../etc/passwd:4", &count));
    assert_int_equal(count, 4);
    free(huge);
    assert_true(ok);
}

/* ---- the environment the CLI reads --------------------------------------------------------- */

static const char *const env_vars[] = {
    "HF_ENDPOINT", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH", "HF_HUB_OFFLINE",
    "HF_HOME", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "XDG_CACHE_HOME", "FITGATE_MODEL_DIRS",
    "FITGATE_SITE_CACHE", "FITGATE_SOURCE_ORDER", "FITGATE_CACHE_TTL", "FITGATE_HUB_TIMEOUT_MS",
    "FITGATE_ALLOW_HTTP"};

static void clear_env(void)
{
    for (size_t i = 0; i < sizeof env_vars / sizeof env_vars[0]; i++)
        unsetenv(env_vars[i]);
}

static void source_opts_from_env_should_refuse_bad_values(void **state)
{
    (void)state;
    char tokfile[256], ctlfile[256], home[300];
    snprintf(tokfile, sizeof tokfile, "%s/token-crlf", tmpdir);
    write_file(tokfile, "hf_abc\r\nX-Injected: 1\n", 23);
    snprintf(ctlfile, sizeof ctlfile, "%s/token-long", tmpdir);
    char *longtok = repeat('t', 4000);
    write_file(ctlfile, longtok, 4000);
    snprintf(home, sizeof home, "HOME=%s", tmpdir);
    char *longpath = repeat('p', 2000);
    longpath[0] = '/';
    struct {
        const char *var, *value;
        int code;
        const char *sub;
    } cases[] = {
        {"FITGATE_HUB_TIMEOUT_MS", "-1", FG_E_RANGE, "FITGATE_HUB_TIMEOUT_MS='-1': want a whole number in [100, 600000]"},
        {"FITGATE_HUB_TIMEOUT_MS", "abc", FG_E_RANGE, "FITGATE_HUB_TIMEOUT_MS='abc'"},
        {"FITGATE_HUB_TIMEOUT_MS", "18446744073709551616", FG_E_RANGE, "want a whole number"},
        {"FITGATE_HUB_TIMEOUT_MS", "1e400", FG_E_RANGE, "want a whole number"},
        {"FITGATE_HUB_TIMEOUT_MS", " 5000", FG_E_RANGE, "want a whole number"},
        {"FITGATE_CACHE_TTL", "+60", FG_E_RANGE, "want a whole number"},
        {"FITGATE_HUB_TIMEOUT_MS", "NaN", FG_E_RANGE, "want a whole number"},
        {"FITGATE_HUB_TIMEOUT_MS", "99", FG_E_RANGE, "[100, 600000]"},
        {"FITGATE_HUB_TIMEOUT_MS", "600001", FG_E_RANGE, "[100, 600000]"},
        {"FITGATE_HUB_TIMEOUT_MS", "5000ms", FG_E_RANGE, "want a whole number"},
        {"FITGATE_CACHE_TTL", "-5", FG_E_RANGE, "FITGATE_CACHE_TTL='-5'"},
        {"FITGATE_CACHE_TTL", "99999999999", FG_E_RANGE, "[0, 31536000]"},
        {"HF_TOKEN", "hf_x\r\nX-Injected: 1", FG_E_INVAL, "HF_TOKEN: the token holds a space or control character"},
        {"HF_TOKEN", "hf x", FG_E_INVAL, "space or control"},
        {"HF_TOKEN", "hf_\xc3\xa9", FG_E_INVAL, "space or control"},
        {"HF_TOKEN", longtok, FG_E_RANGE, "HF_TOKEN longer than 511 bytes"},
        {"HF_TOKEN_PATH", tokfile, FG_E_INVAL, "space or control character"},
        {"HF_TOKEN_PATH", ctlfile, FG_E_RANGE, "token file larger than 511 bytes"},
        {"HF_TOKEN_PATH", "/dev/zero", FG_E_IO, "not a regular file"},
        {"HF_TOKEN_PATH", longpath, FG_E_RANGE, "HF_TOKEN_PATH: path longer than 1024 bytes"},
        {"HF_HOME", longpath, FG_E_RANGE, "HF_HOME: path longer than 1024 bytes"},
        {"HF_HUB_CACHE", longpath, FG_E_RANGE, "HF_HUB_CACHE: path longer"},
        {"XDG_CACHE_HOME", longpath, FG_E_RANGE, "path longer"},
        {"HF_ENDPOINT", longpath, FG_E_RANGE, "HF_ENDPOINT longer than 511 bytes"},
        {"FITGATE_SITE_CACHE", longpath, FG_E_RANGE, "FITGATE_SITE_CACHE: path longer"},
        {"FITGATE_SOURCE_ORDER", "hub,hub", FG_E_INVAL, "'hub' given twice"},
        {"FITGATE_SOURCE_ORDER", "nope", FG_E_INVAL, "unknown step 'nope'"},
        {"FITGATE_SOURCE_ORDER", ",", FG_E_INVAL, "source order is empty"},
        {"FITGATE_SOURCE_ORDER", "hub;rm -rf ~", FG_E_INVAL, "FITGATE_SOURCE_ORDER"},
        {"FITGATE_MODEL_DIRS", "relative/dir", FG_E_INVAL, "'relative/dir' must be an absolute path"},
        {"FITGATE_MODEL_DIRS", "/a:/b:/c:/d:/e:/f:/g:/h:/i", FG_E_RANGE, "more than 8 site model directories"},
        {"FITGATE_MODEL_DIRS", longpath, FG_E_INVAL, "absolute path under 1024 bytes"},
    };
    bool ok = true;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        clear_env();
        setenv("HOME", tmpdir, 1);
        assert_int_equal(setenv(cases[i].var, cases[i].value, 1), 0);
        struct fg_source_opts o;
        struct fg_err err = {0};
        fg_source_opts_init(&o);
        char what[64];
        snprintf(what, sizeof what, "env %s", cases[i].var);
        ok &= check_err(what, cases[i].value, fg_source_opts_from_env(&o, &err), &err,
                        cases[i].code, cases[i].sub);
        if (strstr(err.detail, "hf_x") || strstr(err.detail, "hf_abc")) {
            print_error("the detail for %s shows the token\n", cases[i].var);
            ok = false;
        }
    }
    clear_env();
    free(longtok);
    free(longpath);
    assert_true(ok);
}

/* ---- fitgate.conf and plugstack arguments --------------------------------------------------- */

static void policy_should_name_file_line_key_and_value(void **state)
{
    (void)state;
    char *hugeline = repeat('x', 1u << 20);
    memcpy(hugeline, "Action=", 7);
    char *hugepart = repeat('p', 300);
    memcpy(hugepart, "PartitionName=", 14);
    const struct bad cases[] = {
        {"Action=explode", FG_E_PARSE, "fitgate.conf:1: Action=explode: expected one of off|warn|reject|resize"},
        {"Action=re\x1bject", FG_E_PARSE, "Action=re\\x1bject"},
        {"Action", FG_E_PARSE, "expected Key=Value, got 'Action'"},
        {"=reject", FG_E_PARSE, "unknown key ''"},
        {"Foo=1", FG_E_PARSE, "unknown key 'Foo'"},
        {"Action=\"reject", FG_E_PARSE, "unterminated quote"},
        {"Headroom=NaN", FG_E_PARSE, "Headroom=NaN: expected a number in 1..4"},
        {"Headroom=inf", FG_E_PARSE, "expected a number in 1..4"},
        {"Headroom=1e400", FG_E_PARSE, "expected a number in 1..4"},
        {"Headroom=-1", FG_E_PARSE, "expected a number in 1..4"},
        {"Headroom=0x2", FG_E_PARSE, "expected a number in 1..4"},
        {"Headroom=", FG_E_PARSE, "Headroom"},
        {"MaxGPUs=18446744073709551616", FG_E_PARSE, "expected a whole number in 1..65535"},
        {"MaxGPUs=-1", FG_E_PARSE, "expected a whole number in 1..65535"},
        {"MaxGPUs=1.5", FG_E_PARSE, "expected a whole number"},
        {"MaxGPUs=0", FG_E_RANGE, "MaxGPUs=0: out of range 1..65535"},
        {"HubTimeout=0", FG_E_RANGE, "HubTimeout=0: out of range 0.1..600"},
        {"HubTimeout=1e400", FG_E_PARSE, "HubTimeout"},
        {"HubTimeout=-5", FG_E_PARSE, "HubTimeout"},
        {"HubEndpoint=ftp://x", FG_E_PARSE, "expected an http(s):// URL"},
        {"ModelDirs=rel/path", FG_E_PARSE, "'rel/path' is not an absolute directory"},
        {"Conf=/etc/shadow", FG_E_PARSE, "Conf is a plugstack.conf argument"},
        {"Topology=/etc/shadow", FG_E_PARSE, "plugstack.conf argument"},
        {"PartitionName= Action=warn", FG_E_PARSE, "PartitionName='' is not a partition name"},
        {"PartitionName=gpu ModelDirs=/srv", FG_E_PARSE, "ModelDirs"},
        {"AllowedModes=full,bogus", FG_E_PARSE, "AllowedModes"},
        {"ShrinkOverRequest=maybe", FG_E_PARSE, "ShrinkOverRequest"},
        {NULL, FG_E_PARSE, "fitgate.conf:1: Action="},
    };
    struct fg_policy defaults, p;
    fg_policy_init(&defaults);
    bool ok = true;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *in = cases[i].in ? cases[i].in : hugeline;
        struct fg_err err = {0};
        fg_policy_init(&p);
        ok &= check_err("policy", in, fg_policy_parse(&p, in, strlen(in), "fitgate.conf", &err),
                        &err, cases[i].code, cases[i].sub);
        /* a bad line sets nothing: the rules are still the defaults */
        if (memcmp(&p.rules, &defaults.rules, sizeof p.rules) || p.n_parts > 1 ||
            strcmp(p.hub_endpoint, defaults.hub_endpoint) || p.on_error != defaults.on_error) {
            print_error("policy line '%.40s' changed the rules although it failed\n", in);
            ok = false;
        }
    }
    /* the line number is the bad line's; OnError after a bad line still applies */
    struct fg_err err = {0};
    const char *text = "Action=warn\n# comment\n\nHeadroom=9\nOnError=reject\n";
    fg_policy_init(&p);
    ok &= check_err("policy", "line 4", fg_policy_parse(&p, text, strlen(text), "site.conf", &err),
                    &err, FG_E_RANGE, "site.conf:4: Headroom=9");
    assert_int_equal(p.on_error, FG_ONERR_REJECT);
    assert_int_equal(p.rules.action, FG_ACTION_WARN);
    /* 65 partitions: one more than fits */
    size_t cap = 65 * 40;
    char *parts = malloc(cap);
    assert_non_null(parts);
    size_t o = 0;
    for (int i = 0; i < 65; i++)
        o += (size_t)snprintf(parts + o, cap - o, "PartitionName=p%d Action=warn\n", i);
    fg_policy_init(&p);
    int rc = fg_policy_parse(&p, parts, o, "site.conf", &err);
    n_cases++;
    assert_true(rc == FG_E_RANGE || rc == FG_E_PARSE);
    assert_non_null(strstr(err.detail, "site.conf:65"));
    assert_int_equal(p.n_parts, FG_POLICY_MAX_PARTS);
    free(parts);
    /* a partition name too long for its field */
    fg_policy_init(&p);
    rc = fg_policy_parse(&p, hugepart, strlen(hugepart), "site.conf", &err);
    ok &= check_err("policy", "300-char partition", rc, &err, rc ? rc : FG_E_PARSE, "site.conf:1");
    /* NUL bytes inside the text */
    const char nul[] = "Action=warn\0Action=off\nHeadroom=1.2\n";
    fg_policy_init(&p);
    rc = fg_policy_parse(&p, nul, sizeof nul - 1, "site.conf", &err);
    n_cases++;
    assert_true(rc == 0 || (rc < 0 && !has_controls(err.detail)));
    /* plugstack arguments: the same keys, and the same errors, named as arguments */
    char *args[] = {"action=explode", "headroom=1e400", "nokey", "engine=relative.so",
                    "OnError=maybe", "maxgpus=-3", NULL};
    for (int i = 0; args[i]; i++) {
        fg_policy_init(&p);
        fg_err_clear(&err);
        rc = fg_policy_args(&p, 1, &args[i], "plugstack.conf", &err);
        n_cases++;
        if (rc >= 0 || has_controls(err.detail) || !strstr(err.detail, "plugstack.conf")) {
            print_error("plugstack '%s': rc %d '%s'\n", args[i], rc, err.detail);
            ok = false;
        }
    }
    free(hugeline);
    free(hugepart);
    assert_true(ok);
}

static void policy_load_should_name_missing_odd_and_oversized_files(void **state)
{
    (void)state;
    struct fg_policy p;
    struct fg_err err = {0};
    char path[256];
    bool ok = true;
    snprintf(path, sizeof path, "%s/no-such.conf", tmpdir);
    fg_policy_init(&p);
    ok &= check_err("policy file", path, fg_policy_load(&p, path, &err), &err, FG_E_NOTFOUND,
                    "no-such.conf");
    ok &= check_err("policy file", tmpdir, fg_policy_load(&p, tmpdir, &err), &err, FG_E_IO,
                    "not a regular file");
    ok &= check_err("policy file", "/dev/zero", fg_policy_load(&p, "/dev/zero", &err), &err,
                    FG_E_IO, "not a regular file");
    snprintf(path, sizeof path, "%s/huge.conf", tmpdir);
    char *huge = repeat('#', (1u << 20) + 10);
    write_file(path, huge, strlen(huge));
    free(huge);
    int rc = fg_policy_load(&p, path, &err);
    ok &= check_err("policy file", "1 MiB + 10", rc, &err, FG_E_RANGE, "huge.conf");
    assert_true(ok);
}

/* ---- GPU table rows and files ---------------------------------------------------------------- */

#define ROWV(vendor, devices, gb, extra)                                                       \
    "Name=\"Test Card\" Label=\"Test 80 GB\" Vendor=" vendor " Devices=" devices " MemoryGB=" gb \
    " MemBWTBps=3.35 LinkGBps=900" extra
#define ROW(extra) ROWV("10de", "2330", "80", " BF16TFLOPS=989" extra)

static void gpu_table_should_refuse_bad_rows_naming_line(void **state)
{
    (void)state;
    char *hugerow = repeat('x', 1u << 20);
    memcpy(hugerow, "Name=", 5);
    const struct bad cases[] = {
        {"Name=X", FG_E_MISSING, "fuzz.conf:1: X: Label is missing"},
        {"Name=\"unterminated", FG_E_PARSE, "the quoted value has no closing"},
        {"Name=X\x1b Label=x", FG_E_PARSE, "Name=X\\x1b is not valid"},
        {ROWV("zz", "2330", "80", ""), FG_E_PARSE, "Vendor=zz is not valid"},
        {ROWV("10000", "2330", "80", ""), FG_E_PARSE, "Vendor=10000"},
        {ROWV("10de", "1", "80", ""), FG_E_PARSE, "Devices=1 is not valid"},
        {ROWV("10de", "1,2,3,4,5,6,7,8,9", "80", ""), FG_E_PARSE, "Devices="},
        {ROWV("10de", "23301", "80", ""), FG_E_PARSE, "Devices="},
        {ROWV("10de", "2330", "-1", ""), FG_E_RANGE, "MemoryGB"},
        {ROWV("10de", "2330", "1e400", ""), FG_E_RANGE, "MemoryGB"},
        {ROWV("10de", "2330", "18446744073709551616", ""), FG_E_RANGE, "MemoryGB"},
        {ROWV("10de", "2330", "NaN", ""), FG_E_RANGE, "MemoryGB"},
        {ROWV("10de", "2330", "0", ""), FG_E_RANGE, "MemoryGB"},
        {ROW(" MemoryBytes=-1"), FG_E_RANGE, "MemoryBytes"},
        {ROW(" MemoryBytes=80"), FG_E_RANGE, "MemoryBytes"},
        {ROWV("10de", "2330", "80", " BF16TFLOPS=inf"), FG_E_RANGE, "BF16TFLOPS"},
        {ROW(" Vendor=10de"), FG_E_PARSE, "Vendor is given twice"},
        {ROW(" Bogus=1"), FG_E_PARSE, "Bogus"},
        {ROW("\n" ROWV("10de", "2331", "80", " BF16TFLOPS=989")), FG_E_PARSE, "fuzz.conf:2"},
        {"\n\n" ROW(" Label=\"" "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\""), FG_E_PARSE, "fuzz.conf:3"},
        {NULL, FG_E_PARSE, "fuzz.conf:1"},
    };
    bool ok = true;
    struct fg_gpu_table *good = NULL;
    struct fg_err gerr = {0};
    assert_int_equal(fg_gpu_table_load_text(ROW(""), "fuzz.conf", &good, &gerr), 0);
    fg_gpu_table_free(good);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *in = cases[i].in ? cases[i].in : hugerow;
        struct fg_gpu_table *t = (struct fg_gpu_table *)&t;
        struct fg_err err = {0};
        int rc = fg_gpu_table_load_text(in, "fuzz.conf", &t, &err);
        /* the code may be PARSE or RANGE for a number; the line and the key must be named */
        int want = cases[i].code;
        if (rc != want && (rc == FG_E_PARSE || rc == FG_E_RANGE) &&
            (want == FG_E_PARSE || want == FG_E_RANGE))
            want = rc;
        ok &= check_err("gpu row", in, rc, &err, want, cases[i].sub);
        if (t != (struct fg_gpu_table *)&t) {
            print_error("gpu row '%.40s' set *out although it failed\n", in);
            ok = false;
        }
    }
    free(hugerow);
    assert_true(ok);
}

static void gpu_table_load_should_name_missing_and_odd_files(void **state)
{
    (void)state;
    struct fg_gpu_table *t = NULL;
    struct fg_err err = {0};
    char path[256];
    bool ok = true;
    snprintf(path, sizeof path, "%s/no-gpus.conf", tmpdir);
    ok &= check_err("gpu file", path, fg_gpu_table_load(path, &t, &err), &err, FG_E_NOTFOUND,
                    "no-gpus.conf: cannot open the site GPU table");
    assert_null(t);
    ok &= check_err("gpu file", tmpdir, fg_gpu_table_load(tmpdir, &t, &err), &err, FG_E_IO,
                    "not a regular file");
    ok &= check_err("gpu file", "/dev/zero", fg_gpu_table_load("/dev/zero", &t, &err), &err,
                    FG_E_IO, "not a regular file");
    assert_null(t);
    assert_true(ok);
}

/* ---- safetensors headers and indexes (what a hub or a checkout hands verify) ---------------- */

static void safetensors_should_refuse_bad_headers(void **state)
{
    (void)state;
    struct fg_err err = {0};
    uint64_t len = 77;
    unsigned char pre[8] = {0};
    bool ok = true;
    ok &= check_err("header length", "0", fg_safetensors_header_len(pre, 100, 1000, "m.st", &len, &err),
                    &err, FG_E_RANGE, "m.st: header length 0; not a safetensors file");
    memset(pre, 0xff, 8);
    ok &= check_err("header length", "2^64-1", fg_safetensors_header_len(pre, 100, 1000, "m.st", &len, &err),
                    &err, FG_E_RANGE, "over the 1000-byte cap");
    memset(pre, 0, 8);
    pre[0] = 200;
    ok &= check_err("header length", "past the file", fg_safetensors_header_len(pre, 100, 1000, "m.st", &len, &err),
                    &err, FG_E_RANGE, "past the end of the 100-byte file");
    assert_int_equal(len, 0);

    struct fg_st_summary s, zero;
    memset(&zero, 0, sizeof zero);
    const struct bad cases[] = {
        {"", FG_E_PARSE, "header is not a JSON object"},
        {"[]", FG_E_PARSE, "header is not a JSON object"},
        {"{\"a\": \"x\"}", FG_E_PARSE, "tensor 'a' lacks dtype, shape or data_offsets"},
        {"{\"a\": {\"dtype\": \"F128\", \"shape\": [1], \"data_offsets\": [0, 16]}}", FG_E_PARSE, "unknown dtype 'F128'"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [-1], \"data_offsets\": [0, 4]}}", FG_E_PARSE, "tensor 'a' has a bad shape"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [1e400], \"data_offsets\": [0, 4]}}", FG_E_PARSE, "bad shape"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [\"1\"], \"data_offsets\": [0, 4]}}", FG_E_PARSE, "bad shape"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [4, 0]}}", FG_E_PARSE, "bad data_offsets"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4, 8]}}", FG_E_PARSE, "lacks dtype, shape or data_offsets"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [4294967296, 4294967296, 4294967296], \"data_offsets\": [0, 4]}}", FG_E_OVERFLOW, "shape product overflows"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 4]}}", FG_E_PARSE, "shape needs 8 bytes of F32 but data_offsets span 4"},
        {"{\"a\\u001b[2J\": {\"dtype\": \"X\", \"shape\": [1], \"data_offsets\": [0, 4]}}", FG_E_PARSE, "tensor 'a\\x1b[2J'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memset(&s, 0, sizeof s);
        ok &= check_err("safetensors header", cases[i].in,
                        fg_safetensors_parse_header(cases[i].in, strlen(cases[i].in), 0, "m.st",
                                                    &s, &err),
                        &err, cases[i].code, cases[i].sub);
        if (memcmp(&s, &zero, sizeof s)) {
            print_error("header '%.40s' changed the summary although it failed\n", cases[i].in);
            ok = false;
        }
    }
    /* data_offsets past the data part */
    const char *past = "{\"a\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [0, 16]}}";
    memset(&s, 0, sizeof s);
    ok &= check_err("safetensors header", "past data",
                    fg_safetensors_parse_header(past, strlen(past), 8, "m.st", &s, &err), &err,
                    FG_E_PARSE, "ends at byte 16 of a 8-byte data part");
    assert_true(ok);
}

static int scan_dir(const char *index, struct fg_err *err)
{
    char dir[256], path[300];
    static unsigned k;
    snprintf(dir, sizeof dir, "%s/repo%u", tmpdir, k++);
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
    write_file(path, index, strlen(index));
    struct fg_source_opts o;
    fg_source_opts_init(&o);
    o.offline = true;
    struct fg_source_repo *repo = NULL;
    assert_int_equal(fg_source_repo_open(&o, dir, NULL, &repo, err), 0);
    struct fg_st_summary s;
    int rc = fg_safetensors_scan(repo, 0, &s, err);
    fg_source_repo_free(repo);
    return rc;
}

static void safetensors_scan_should_refuse_unsafe_or_broken_indexes(void **state)
{
    (void)state;
    const struct bad cases[] = {
        {"", FG_E_PARSE, "not JSON with a weight_map object"},
        {"{\"weight_map\": []}", FG_E_PARSE, "weight_map object"},
        {"{\"weight_map\": {}}", FG_E_PARSE, "weight_map is empty"},
        {"{\"weight_map\": {\"a\": 7}}", FG_E_PARSE, "weight_map['a'] is not a file name"},
        {"{\"weight_map\": {\"a\": \"../../etc/passwd\"}}", FG_E_INVAL, "weight_map['a']: file name '../../etc/passwd'"},
        {"{\"weight_map\": {\"a\": \"/etc/passwd\"}}", FG_E_INVAL, "file name '/etc/passwd'"},
        {"{\"weight_map\": {\"a\": \"sub/x.safetensors\"}}", FG_E_INVAL, "may hold only"},
        {"{\"weight_map\": {\"a\": \"x.safetensors\"}, \"metadata\": {\"total_size\": -1}}", FG_E_PARSE, "metadata.total_size is not a whole number"},
        {"{\"weight_map\": {\"a\": \"x.safetensors\"}, \"metadata\": {\"total_size\": 1e400}}", FG_E_PARSE, "total_size"},
        {"{\"weight_map\": {\"a\": \"x.safetensors\"}, \"metadata\": {\"total_parameters\": \"7B\"}}", FG_E_PARSE, "total_parameters is not a whole number"},
    };
    bool ok = true;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct fg_err err = {0};
        ok &= check_err("index", cases[i].in, scan_dir(cases[i].in, &err), &err, cases[i].code,
                        cases[i].sub);
    }
    assert_true(ok);
}

/* ---- fitgate's cache: corrupted, planted and unsafe entries -------------------------------- */

static int resolve_offline(const char *cache, struct fg_source_result **r, struct fg_err *err)
{
    struct fg_source_opts o;
    struct fg_model_id id;
    fg_source_opts_init(&o);
    o.offline = true;
    snprintf(o.cache_dir, sizeof o.cache_dir, "%s", cache);
    assert_int_equal(fg_source_parse_id("acme/tiny", &id, err), 0);
    *r = (struct fg_source_result *)r;
    int rc = fg_source_resolve(&o, &id, r, err);
    if (rc)
        assert_null(*r);
    return rc;
}

static void source_resolve_should_skip_corrupted_cache_entries(void **state)
{
    (void)state;
    char cache[256], entry[300], file[400];
    snprintf(cache, sizeof cache, "%s/cache", tmpdir);
    snprintf(entry, sizeof entry, "%s/models--acme--tiny/main", cache);
    snprintf(file, sizeof file, "%s/config.json", entry);
    assert_int_equal(mkdir(cache, 0700), 0);
    char sub[300];
    snprintf(sub, sizeof sub, "%s/models--acme--tiny", cache);
    assert_int_equal(mkdir(sub, 0700), 0);
    assert_int_equal(mkdir(entry, 0700), 0);
    struct {
        const char *what, *text;
        size_t len;
    } corrupt[] = {
        {"empty", "", 0},
        {"truncated", "{\"model_type\": \"llama\", \"hidd", 29},
        {"binary", "\x00\x01\x02\xff\xfe", 5},
        {"an array", "[1, 2]", 6},
        {"an HTML page", "<html><body>captive portal</body></html>", 40},
    };
    bool ok = true;
    for (size_t i = 0; i < sizeof corrupt / sizeof corrupt[0]; i++) {
        write_file(file, corrupt[i].text, corrupt[i].len);
        unsigned before = count_tree(cache);
        struct fg_source_result *r;
        struct fg_err err = {0};
        ok &= check_err("cache entry", corrupt[i].what, resolve_offline(cache, &r, &err), &err,
                        FG_E_NOTFOUND, "HF_HUB_OFFLINE=1");
        if (count_tree(cache) != before) {
            print_error("a failed resolve changed the cache (%s)\n", corrupt[i].what);
            ok = false;
        }
    }
    /* a symlink planted as the entry is not followed */
    unlink(file);
    assert_int_equal(symlink("/etc/passwd", file), 0);
    struct fg_source_result *r;
    struct fg_err err = {0};
    ok &= check_err("cache entry", "symlink to /etc/passwd", resolve_offline(cache, &r, &err),
                    &err, FG_E_NOTFOUND, "no config.json in");
    unlink(file);
    /* a world-writable cache is not trusted */
    write_file(file, "{\"model_type\": \"llama\"}", 23);
    assert_int_equal(chmod(cache, 0777), 0);
    ok &= check_err("cache", "mode 0777", resolve_offline(cache, &r, &err), &err, FG_E_NOTFOUND,
                    "HF_HUB_OFFLINE");
    assert_int_equal(chmod(cache, 0700), 0);
    /* and the good entry is served once the directory is safe again */
    n_cases++;
    assert_int_equal(resolve_offline(cache, &r, &err), 0);
    assert_int_equal(r->kind, FG_SRC_CACHE);
    fg_source_result_free(r);
    assert_true(ok);
}

/* ---- error details themselves -------------------------------------------------------------- */

static void err_set_should_scrub_every_control_character(void **state)
{
    (void)state;
    char all[160];
    size_t n = 0;
    for (int c = 1; c < 0x20; c++)
        all[n++] = (char)c;
    all[n++] = 0x7f;
    all[n] = '\0';
    struct fg_err err = {0};
    assert_int_equal(fg_err_set(&err, FG_E_PARSE, "value '%s'", all), FG_E_PARSE);
    n_cases++;
    assert_false(has_controls(err.detail));
    fg_err_prefix(&err, "file\r\n%s", all);
    n_cases++;
    assert_false(has_controls(err.detail));
    char *huge = repeat('z', 5000);
    fg_err_set(&err, FG_E_RANGE, "%s", huge);
    fg_err_prefix(&err, "%s", huge);
    n_cases++;
    assert_non_null(memchr(err.detail, '\0', sizeof err.detail));
    assert_int_equal(err.code, FG_E_RANGE);
    free(huge);
    assert_int_equal(fg_err_set(NULL, FG_E_IO, "x"), FG_E_IO);
    fg_err_prefix(NULL, "x");
    assert_string_equal(fg_strerror(12345), "unknown error");
}

/* ---- known gaps in other modules (skipped unless FITGATE_STRICT=1) ------------------------- */

static int fifo_config(const char *path)
{
    struct fg_config *doc = NULL;
    struct fg_err err = {0};
    return fg_config_load(path, &doc, &err) != 0 ? 0 : 1;
}

static int fifo_gpu(const char *path)
{
    struct fg_gpu_table *t = NULL;
    struct fg_err err = {0};
    return fg_gpu_table_load(path, &t, &err) != 0 ? 0 : 1;
}

static int fifo_policy(const char *path)
{
    static struct fg_policy p;
    struct fg_err err = {0};
    fg_policy_init(&p);
    return fg_policy_load(&p, path, &err) != 0 ? 0 : 1;
}

static int fifo_token(const char *path)
{
    struct fg_source_opts o;
    struct fg_err err = {0};
    clear_env();
    setenv("HF_TOKEN_PATH", path, 1);
    fg_source_opts_init(&o);
    (void)fg_source_opts_from_env(&o, &err); /* any answer is fine, as long as there is one */
    return 0;
}

static void loaders_should_not_block_on_a_fifo(void **state)
{
    (void)state;
    char fifo[256];
    snprintf(fifo, sizeof fifo, "%s/fifo", tmpdir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    /* a user's --ft-model / MODEL path, the site GPU table, the policy file, HF_TOKEN_PATH:
     * open() on a FIFO waits for a writer; a loader must refuse it (O_NONBLOCK + S_ISREG) */
    const char *names[] = {"fg_config_load (engine/source/config.c:18)", "fg_gpu_table_load (engine/hw/gpu.c:696)",
                           "fg_policy_load (policies/policy.c:604)",
                           "fg_source_opts_from_env HF_TOKEN_PATH (engine/source/source.c:149)"};
    int (*fns[])(const char *) = {fifo_config, fifo_gpu, fifo_policy, fifo_token};
    bool hung = false;
    for (size_t i = 0; i < 4; i++) {
        n_cases++;
        int st = within(1, fns[i], fifo);
        if (st != 0) {
            print_message("%s on a FIFO: %s\n", names[i], st < 0 ? "blocked (killed after 1 s)"
                                                                  : "accepted it");
            hung = true;
        }
    }
    KNOWN_GAP(!hung, "loaders open a FIFO and wait for a writer forever\n");
}

static void config_should_read_duplicate_keys_as_transformers_does(void **state)
{
    (void)state;
    /* Python's json keeps the last of duplicate keys; transformers builds 4 layers here */
    const char *cfg = LLAMA(", \"num_hidden_layers\": 2, \"num_hidden_layers\": 4");
    struct fg_config *doc = NULL;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    n_cases++;
    assert_int_equal(fg_config_parse(cfg, strlen(cfg), "dup.json", &doc, &err), 0);
    int rc = fg_model_from_config(doc, "dup", &m, &err);
    bool ok = rc != 0 || m->layers == 4;
    fg_model_free(m);
    fg_config_free(doc);
    KNOWN_GAP(ok, "duplicate keys: cJSON keeps the first, transformers the last "
              "(engine/source/config.c lookup: take the last match, or refuse duplicates)\n");
}

static void config_should_refuse_text_after_the_object(void **state)
{
    (void)state;
    const char *cfg = LLAMA(", \"num_hidden_layers\": 2") " {\"num_hidden_layers\": 40}";
    struct fg_config *doc = NULL;
    struct fg_err err = {0};
    n_cases++;
    int rc = fg_config_parse(cfg, strlen(cfg), "two.json", &doc, &err);
    fg_config_free(doc);
    KNOWN_GAP(rc == FG_E_PARSE, "text after the JSON object is ignored (engine/source/config.c "
              "fg_config_parse: pass require_null_terminated=1 or check end == text + len "
              "after trailing blanks); json.loads says 'Extra data'\n");
}

static void safetensors_header_len_should_refuse_a_file_shorter_than_its_prefix(void **state)
{
    (void)state;
    unsigned char pre[8] = {5, 0, 0, 0, 0, 0, 0, 0};
    uint64_t len = 0;
    struct fg_err err = {0};
    n_cases++;
    int rc = fg_safetensors_header_len(pre, 4, 1000, "short.safetensors", &len, &err);
    KNOWN_GAP(rc == FG_E_RANGE, "file_size 4 < 8: 'n > file_size - 8' wraps and a 5-byte header "
              "is accepted (engine/source/safetensors.c:180: test file_size < 8 || n > file_size - 8)\n");
}

/* An index naming 100000 distinct shard files (3 MB, far under the 64 MiB cap) in a local
 * checkout with no shard present: verify must answer (index-only) within seconds. */
static int big_index(const char *dir)
{
    char path[300];
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return 3;
    fputs("{\"metadata\": {\"total_size\": 1}, \"weight_map\": {", f);
    for (int i = 0; i < 100000; i++)
        fprintf(f, "%s\"t%d\": \"s%d.safetensors\"", i ? ", " : "", i, i);
    fputs("}}", f);
    fclose(f);
    struct fg_source_opts o;
    struct fg_err err = {0};
    struct fg_source_repo *repo = NULL;
    struct fg_st_summary s;
    fg_source_opts_init(&o);
    o.offline = true;
    if (fg_source_repo_open(&o, dir, NULL, &repo, &err))
        return 4;
    alarm(3); /* the index is written; from here on the parse must be quick */
    int rc = fg_safetensors_scan(repo, 0, &s, &err);
    fg_source_repo_free(repo);
    return rc == 0 && !s.headers ? 0 : 5;
}

static void safetensors_scan_should_read_a_huge_index_quickly(void **state)
{
    (void)state;
    char dir[256];
    snprintf(dir, sizeof dir, "%s/bigindex", tmpdir);
    assert_int_equal(mkdir(dir, 0700), 0);
    n_cases++;
    int st = within(60, big_index, dir);
    KNOWN_GAP(st == 0, "an index of 100000 distinct shard names took over 3 s (%d): parse_index "
              "checks each new name against all earlier ones, O(n^2); a 64 MiB index takes hours "
              "(engine/source/safetensors.c parse_index: sort and dedupe, or cap the shard count)\n", st);
}

static int seen_controls;
static void log_sink(enum fg_log_level level, const char *msg, void *ctx)
{
    (void)level;
    (void)ctx;
    seen_controls |= has_controls(msg);
}

static void messages_should_hold_no_control_characters_from_configs(void **state)
{
    (void)state;
    /* an unknown model_type with control characters reaches a model note (printed by the CLI
     * and the plugin) and the debug log, which fg_err_set would have scrubbed */
    const char *cfg = "{\"model_type\": \"evil\\u001b]0;owned\\u0007\\u001b[2J\", \"hidden_size\": 64,"
                      " \"intermediate_size\": 128, \"num_attention_heads\": 4, \"vocab_size\": 100,"
                      " \"num_hidden_layers\": 2, \"hidden_act\": \"gelu\\u001b[2J\","
                      " \"expert\\u001b]0;x\\u0007\": 1}";
    struct fg_config *doc = NULL;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    seen_controls = 0;
    fg_log_set_sink(log_sink, NULL, FG_LOG_DEBUG);
    n_cases++;
    assert_int_equal(fg_config_parse(cfg, strlen(cfg), "evil.json", &doc, &err), 0);
    assert_int_equal(fg_model_from_config(doc, "evil\x1b[2Jid", &m, &err), 0);
    fg_log_set_sink(NULL, NULL, FG_LOG_INFO);
    bool notes_ok = true;
    for (size_t i = 0; i < m->n_notes; i++)
        notes_ok &= !has_controls(m->notes[i]);
    /* the generic reader quotes the key and the value it is unsure of */
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    notes_ok &= !has_controls(m->unsure_key);
    for (size_t i = 0; i < m->n_assumed; i++)
        notes_ok &= !has_controls(m->assumed[i]);
    fg_model_free(m);
    fg_config_free(doc);
    KNOWN_GAP(notes_ok && !seen_controls,
              "control characters from config.json reach %s (scrub in fg__model_note, "
              "engine/model/model.c, and in fg__log, engine/util/log.c, as fg_err_set does)\n",
              !notes_ok ? "a model note" : "a log line");
}

static void z_report_should_count_the_cases(void **state)
{
    (void)state;
    print_message("test_badinput: %u bad inputs tried\n", n_cases);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(source_parse_id_should_refuse_traversal_and_garbage),
        cmocka_unit_test(source_check_file_should_refuse_paths),
        cmocka_unit_test(config_should_name_key_and_problem_for_bad_values),
        cmocka_unit_test(config_should_refuse_huge_and_deep_documents),
        cmocka_unit_test(config_load_should_name_missing_odd_and_oversized_files),
        cmocka_unit_test(memory_estimate_should_refuse_absurd_jobs),
        cmocka_unit_test(option_parsers_should_refuse_bad_values_and_keep_outputs),
        cmocka_unit_test(gpu_find_should_return_null_for_bad_specs),
        cmocka_unit_test(source_opts_from_env_should_refuse_bad_values),
        cmocka_unit_test(policy_should_name_file_line_key_and_value),
        cmocka_unit_test(policy_load_should_name_missing_odd_and_oversized_files),
        cmocka_unit_test(gpu_table_should_refuse_bad_rows_naming_line),
        cmocka_unit_test(gpu_table_load_should_name_missing_and_odd_files),
        cmocka_unit_test(safetensors_should_refuse_bad_headers),
        cmocka_unit_test(safetensors_scan_should_refuse_unsafe_or_broken_indexes),
        cmocka_unit_test(source_resolve_should_skip_corrupted_cache_entries),
        cmocka_unit_test(err_set_should_scrub_every_control_character),
        cmocka_unit_test(loaders_should_not_block_on_a_fifo),
        cmocka_unit_test(config_should_read_duplicate_keys_as_transformers_does),
        cmocka_unit_test(config_should_refuse_text_after_the_object),
        cmocka_unit_test(safetensors_header_len_should_refuse_a_file_shorter_than_its_prefix),
        cmocka_unit_test(safetensors_scan_should_read_a_huge_index_quickly),
        cmocka_unit_test(messages_should_hold_no_control_characters_from_configs),
        cmocka_unit_test(z_report_should_count_the_cases),
    };
    return cmocka_run_group_tests(tests, setup_tmp, teardown_tmp);
}
