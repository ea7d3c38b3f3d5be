/*
 * test_source.c - model ids, the source order (site dirs, the
 * huggingface_hub cache layout, fitgate's cache, the hub), the bounded HTTP
 * client against a canned server in a child process (errors, redirects,
 * tokens, ranges, deadlines), safetensors headers and verify's comparison
 * on the shipped fixtures, and the checkpoint inventory cached beside the
 * config (ckpt.h).  Runs from the repository root, no network.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "model/model_load.h"
#include "source/ckpt.h"
#include "util/fileio.h"
#include "source/hub.h"
#include "model/model.h"
#include "source/safetensors.h"
#include "source/source.h"
#include "source/st_layout.h"

#define MODELS "tests/fixtures/models"
#define HUBFIX "tests/fixtures/hub"

/* ---- helpers ------------------------------------------------------------- */

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

static void rm_rf(const char *dir)
{
    nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static char *tmpdir(char *buf, size_t cap)
{
    snprintf(buf, cap, "/tmp/fitgate-test-source.XXXXXX");
    assert_non_null(mkdtemp(buf));
    return buf;
}

static void write_file(const char *path, const char *text)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(dir, 0700);
            *p = '/';
        }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb");
    assert_non_null(in);
    write_file(to, "");
    FILE *out = fopen(to, "wb");
    assert_non_null(out);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    fclose(out);
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Options with nothing set but what a test adds: no dirs, no cache, no env. */
static struct fg_source_opts opts_bare(void)
{
    struct fg_source_opts o;
    fg_source_opts_init(&o);
    o.timeout_ms = 3000;
    return o;
}

/* ---- a canned HTTP server in a child process ------------------------------ */

/*
 * Routes match a request path by prefix.  response NULL: never answer.
 * "ECHO_AUTH" answers a config that says whether an Authorization header came.
 * "%PORT%" in a response is replaced by the server's port, "%OTHER%" by
 * other_port (a second server's, set before this one starts).
 */
struct route {
    const char *prefix;
    const char *response;
};

static int other_port;

struct server {
    pid_t pid;
    int port;
    char base[64];
};

static void serve_one(int c, const struct route *routes, int port)
{
    char req[8192];
    size_t n = 0;
    while (n < sizeof req - 1 && !memmem(req, n, "\r\n\r\n", 4)) {
        ssize_t k = read(c, req + n, sizeof req - 1 - n);
        if (k <= 0)
            return;
        n += (size_t)k;
    }
    req[n] = '\0';
    char path[1024] = "";
    sscanf(req, "GET %1023s", path);
    const struct route *r = routes;
    while (r->prefix && strncmp(path, r->prefix, strlen(r->prefix)) != 0)
        r++;
    if (!r->prefix) {
        const char *nf = "HTTP/1.1 404 Not Found\r\nX-Error-Code: EntryNotFound\r\n"
                         "Content-Length: 0\r\n\r\n";
        if (write(c, nf, strlen(nf)) < 0)
            return;
        return;
    }
    if (!r->response) {
        for (;;)
            pause();
    }
    char out[8192];
    if (!strcmp(r->response, "ECHO_AUTH")) {
        char body[128];
        snprintf(body, sizeof body, "{\"model_type\": \"llama\", \"auth\": \"%s\"}",
                 strcasestr(req, "\r\nAuthorization:") ? "present" : "absent");
        snprintf(out, sizeof out, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n%s",
                 strlen(body), body);
    } else {
        const char *p = r->response;
        size_t o = 0;
        while (*p && o < sizeof out - 16) {
            if (!strncmp(p, "%PORT%", 6)) {
                o += (size_t)snprintf(out + o, sizeof out - o, "%d", port);
                p += 6;
            } else if (!strncmp(p, "%OTHER%", 7)) {
                o += (size_t)snprintf(out + o, sizeof out - o, "%d", other_port);
                p += 7;
            } else {
                out[o++] = *p++;
            }
        }
        out[o] = '\0';
    }
    if (write(c, out, strlen(out)) < 0)
        return;
}

static struct server server_start(const struct route *routes)
{
    struct server s = {0};
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(fd, 16), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    s.port = ntohs(a.sin_port);
    snprintf(s.base, sizeof s.base, "http://127.0.0.1:%d", s.port);
    s.pid = fork();
    assert_true(s.pid >= 0);
    if (s.pid == 0) {
        setpgid(0, 0); /* server_stop takes the whole group, hung handlers included */
        alarm(30);     /* never outlive the test binary */
        signal(SIGCHLD, SIG_IGN);
        for (;;) {
            int c = accept(fd, NULL, NULL);
            if (c < 0)
                continue;
            if (fork() == 0) {
                alarm(20);
                serve_one(c, routes, s.port);
                _exit(0);
            }
            close(c);
        }
    }
    close(fd);
    return s;
}

static void server_stop(struct server *s)
{
    kill(-s->pid, SIGKILL);
    kill(s->pid, SIGKILL);
    waitpid(s->pid, NULL, 0);
}

/* ---- ids and options ------------------------------------------------------- */

static void parse_id_should_accept_org_name_and_revision(void **state)
{
    (void)state;
    struct fg_model_id id;
    assert_int_equal(fg_source_parse_id("nvidia/NVIDIA-Nemotron-Nano-9B-v2", &id, NULL), 0);
    assert_string_equal(id.org, "nvidia");
    assert_string_equal(id.name, "NVIDIA-Nemotron-Nano-9B-v2");
    assert_string_equal(id.rev, "main");
    assert_false(id.rev_given);
    assert_int_equal(fg_source_parse_id("Qwen/Qwen2.5-3B_Instruct@refs/pr/12", &id, NULL), 0);
    assert_string_equal(id.rev, "refs/pr/12");
    assert_true(id.rev_given);
    assert_int_equal(fg_source_parse_id("a/b@0123456789abcdef0123456789abcdef01234567", &id,
                                        NULL), 0);
    assert_true(fg_source_rev_is_commit(id.rev));
    assert_false(fg_source_rev_is_commit("main"));
}

static void parse_id_should_reject_what_could_escape_a_path_or_url(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "", "gpt2", "/models/org/name", "../etc/passwd", "org/../x", "org/name/extra",
        "-org/name", ".org/name", "org/.name", "org/-name", "a..b/c", "org/na--me", "org/na me",
        "org/name%2F", "org/name@", "org/name@../../x", "org/name@-x", "org/name@/abs",
        "org/name@a//b", "org/name@a/", "org/name@a/.b", "org/name@a b", "org/name@x\n",
        "ö/name", "org/",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct fg_model_id id;
        struct fg_err err = {0};
        if (fg_source_parse_id(bad[i], &id, &err) != FG_E_INVAL)
            fail_msg("accepted '%s'", bad[i]);
        assert_true(err.detail[0] != '\0');
    }
    char longname[300];
    memset(longname, 'a', sizeof longname);
    memcpy(longname, "org/", 4);
    longname[4 + FG_SOURCE_NAME_MAX + 1] = '\0';
    struct fg_model_id id;
    struct fg_err err = {0};
    assert_int_equal(fg_source_parse_id(longname, &id, &err), FG_E_INVAL);
    assert_non_null(strstr(err.detail, "longer than 96"));
}

static void check_file_should_refuse_paths_in_shard_names(void **state)
{
    (void)state;
    assert_int_equal(fg_source_check_file("model-00001-of-00002.safetensors", NULL), 0);
    assert_int_equal(fg_source_check_file("../config.json", NULL), FG_E_INVAL);
    assert_int_equal(fg_source_check_file("/etc/passwd", NULL), FG_E_INVAL);
    assert_int_equal(fg_source_check_file("sub/model.safetensors", NULL), FG_E_INVAL);
    assert_int_equal(fg_source_check_file(".hidden", NULL), FG_E_INVAL);
}

static void set_order_should_reject_unknown_repeated_and_empty(void **state)
{
    (void)state;
    struct fg_source_opts o = opts_bare();
    struct fg_err err = {0};
    assert_int_equal(fg_source_set_order(&o, "hub,site", &err), 0);
    assert_int_equal(o.n_order, 2);
    assert_int_equal(o.order[0], FG_SOURCE_HUB);
    assert_int_equal(fg_source_set_order(&o, "site,web", &err), FG_E_INVAL);
    assert_non_null(strstr(err.detail, "'web'"));
    assert_int_equal(fg_source_set_order(&o, "cache,cache", &err), FG_E_INVAL);
    assert_int_equal(fg_source_set_order(&o, " , ", &err), FG_E_INVAL);
    assert_int_equal(o.n_order, 2); /* unchanged by a failed call */
    assert_int_equal(fg_source_add_site_dirs(&o, "relative/dir", &err), FG_E_INVAL);
}

static void opts_from_env_should_read_what_huggingface_hub_reads(void **state)
{
    (void)state;
    char dir[64];
    tmpdir(dir, sizeof dir);
    char tok[128];
    snprintf(tok, sizeof tok, "%s/hf/token", dir);
    write_file(tok, "hf_from_file\n");
    static const char *const vars[] = {
        "HF_ENDPOINT", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH", "HF_HUB_OFFLINE",
        "HF_HOME", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "XDG_CACHE_HOME",
        "FITGATE_MODEL_DIRS", "FITGATE_SITE_CACHE", "FITGATE_SOURCE_ORDER", "FITGATE_CACHE_TTL",
        "FITGATE_HUB_TIMEOUT_MS", "FITGATE_ALLOW_HTTP"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
    char hf_home[128];
    snprintf(hf_home, sizeof hf_home, "%s/hf", dir);
    setenv("HF_HOME", hf_home, 1);
    setenv("XDG_CACHE_HOME", "/xdg", 1);
    setenv("HF_ENDPOINT", "https://mirror.example.org/", 1);
    setenv("HF_HUB_OFFLINE", "1", 1);
    setenv("FITGATE_MODEL_DIRS", "/models:/srv/models", 1);
    setenv("FITGATE_SOURCE_ORDER", "cache,hub", 1);
    setenv("FITGATE_HUB_TIMEOUT_MS", "2500", 1);

    struct fg_source_opts o = opts_bare();
    struct fg_err err = {0};
    assert_int_equal(fg_source_opts_from_env(&o, &err), 0);
    assert_string_equal(o.endpoint, "https://mirror.example.org");
    assert_string_equal(o.token, "hf_from_file");
    assert_true(o.offline);
    char want[160];
    snprintf(want, sizeof want, "%s/hub", hf_home);
    assert_string_equal(o.hf_cache, want);
    assert_string_equal(o.cache_dir, "/xdg/fitgate");
    assert_int_equal(o.n_site_dirs, 2);
    assert_string_equal(o.site_dirs[1], "/srv/models");
    assert_int_equal(o.n_order, 2);
    assert_int_equal(o.timeout_ms, 2500);

    setenv("HF_TOKEN", "hf_from_env", 1);
    setenv("HF_HUB_CACHE", "/hubcache", 1);
    o = opts_bare();
    assert_int_equal(fg_source_opts_from_env(&o, &err), 0);
    assert_string_equal(o.token, "hf_from_env");
    assert_string_equal(o.hf_cache, "/hubcache");

    setenv("HF_TOKEN", "hf_bad\r\nX-Injected: 1", 1);
    o = opts_bare();
    assert_int_equal(fg_source_opts_from_env(&o, &err), FG_E_INVAL);
    unsetenv("HF_TOKEN");
    setenv("FITGATE_HUB_TIMEOUT_MS", "soon", 1);
    o = opts_bare();
    assert_int_equal(fg_source_opts_from_env(&o, &err), FG_E_RANGE);
    assert_non_null(strstr(err.detail, "FITGATE_HUB_TIMEOUT_MS"));
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
    rm_rf(dir);
}

/* ---- local sources ------------------------------------------------------------ */

static void resolve_should_read_both_site_dir_layouts(void **state)
{
    (void)state;
    char dir[64], p[256];
    tmpdir(dir, sizeof dir);
    snprintf(p, sizeof p, "%s/a/org/name/config.json", dir);
    write_file(p, "{\"model_type\": \"llama\"}");
    snprintf(p, sizeof p, "%s/b/org--other/config.json", dir);
    write_file(p, "{\"model_type\": \"gpt2\"}");
    struct fg_source_opts o = opts_bare();
    snprintf(o.site_dirs[0], sizeof o.site_dirs[0], "%s/a", dir);
    snprintf(o.site_dirs[1], sizeof o.site_dirs[1], "%s/b", dir);
    o.n_site_dirs = 2;
    o.offline = true;
    struct fg_model_id id;
    struct fg_source_result *r = NULL;
    struct fg_err err = {0};
    assert_int_equal(fg_source_parse_id("org/name", &id, NULL), 0);
    assert_int_equal(fg_source_resolve(&o, &id, &r, &err), 0);
    assert_int_equal(r->kind, FG_SRC_SITE_DIR);
    assert_non_null(strstr(r->text, "llama"));
    fg_source_result_free(r);
    assert_int_equal(fg_source_parse_id("org/other", &id, NULL), 0);
    assert_int_equal(fg_source_resolve(&o, &id, &r, &err), 0);
    assert_non_null(strstr(r->where, "/b/org--other/config.json"));
    snprintf(p, sizeof p, "%s/b/org--other", dir);
    assert_string_equal(r->dir, p);
    fg_source_result_free(r);
    /* a site dir holds one version: @v2 must not get it silently */
    assert_int_equal(fg_source_parse_id("org/name@v2", &id, NULL), 0);
    assert_int_equal(fg_source_resolve(&o, &id, &r, &err), FG_E_NOTFOUND);
    assert_null(r);
    assert_non_null(strstr(err.detail, "HF_HUB_OFFLINE"));
    /* a broken site copy is reported, not skipped */
    snprintf(p, sizeof p, "%s/a/org/broken/config.json", dir);
    write_file(p, "{\"model_type\": ");
    assert_int_equal(fg_source_parse_id("org/broken", &id, NULL), 0);
    assert_int_equal(fg_source_resolve(&o, &id, &r, &err), FG_E_PARSE);
    assert_non_null(strstr(err.detail, "org/broken/config.json"));
    rm_rf(dir);
}

static void resolve_should_follow_hf_cache_refs_to_snapshot_blobs(void **state)
{
    (void)state;
    const char *sha = "1111111111111111111111111111111111111111";
    const char *sha_pr = "2222222222222222222222222222222222222222";
    char dir[64], p[512], link[512];
    tmpdir(dir, sizeof dir);
    /* huggingface_hub: refs/<rev> = sha; snapshots/<sha>/file -> ../../blobs/<etag> */
    snprintf(p, sizeof p, "%s/models--org--name/blobs/aaaa", dir);
    write_file(p, "{\"model_type\": \"qwen3\"}");
    snprintf(p, sizeof p, "%s/models--org--name/blobs/bbbb", dir);
    write_file(p, "{\"model_type\": \"qwen3\", \"pr\": 1}");
    snprintf(p, sizeof p, "%s/models--org--name/refs/main", dir);
    write_file(p, sha);
    snprintf(p, sizeof p, "%s/models--org--name/refs/refs/pr/1", dir);
    write_file(p, sha_pr);
    const char *shas[2] = {sha, sha_pr}, *blobs[2] = {"aaaa", "bbbb"};
    for (int i = 0; i < 2; i++) {
        snprintf(p, sizeof p, "%s/models--org--name/snapshots/%s/x", dir, shas[i]);
        write_file(p, "");
        snprintf(p, sizeof p, "%s/models--org--name/snapshots/%s/config.json", dir, shas[i]);
        snprintf(link, sizeof link, "../../blobs/%s", blobs[i]);
        assert_int_equal(symlink(link, p), 0);
    }
    struct fg_source_opts o = opts_bare();
    snprintf(o.hf_cache, sizeof o.hf_cache, "%s", dir);
    o.offline = true;
    struct fg_model_id id;
    struct fg_source_result *r = NULL;
    assert_int_equal(fg_source_parse_id("org/name", &id, NULL), 0);
    assert_int_equal(fg_source_resolve(&o, &id, &r, NULL), 0);
    assert_int_equal(r->kind, FG_SRC_HF_CACHE);
    assert_string_equal(r->commit, sha);
    assert_null(strstr(r->text, "pr"));
    fg_source_result_free(r);
    assert_int_equal(fg_source_parse_id("org/name@refs/pr/1", &id, NULL), 0);
    assert_int_equal(fg_source_resolve(&o, &id, &r, NULL), 0);
    assert_non_null(strstr(r->text, "\"pr\""));
    fg_source_result_free(r);
    char rev[128];
    snprintf(rev, sizeof rev, "org/name@%s", sha_pr);
    assert_int_equal(fg_source_parse_id(rev, &id, NULL), 0);
    assert_int_equal(fg_source_resolve(&o, &id, &r, NULL), 0);
    assert_string_equal(r->commit, sha_pr);
    fg_source_result_free(r);
    /* a ref that is not a sha is ignored, not followed */
    snprintf(p, sizeof p, "%s/models--org--name/refs/bad", dir);
    write_file(p, "../../../etc");
    assert_int_equal(fg_source_parse_id("org/name@bad", &id, NULL), 0);
    assert_int_equal(fg_source_resolve(&o, &id, &r, NULL), FG_E_NOTFOUND);
    rm_rf(dir);
}

/* ---- the hub, against canned answers ------------------------------------------- */

static const struct route hub_routes[] = {
    {"/org/tiny/resolve/main/config.json",
     "HTTP/1.1 200 OK\r\nX-Repo-Commit: 3333333333333333333333333333333333333333\r\n"
     "Content-Length: 24\r\n\r\n{\"model_type\": \"llama\"}\n"},
    {"/org/gated/", "HTTP/1.1 401 Unauthorized\r\nX-Error-Code: GatedRepo\r\n"
     "X-Error-Message: Access to model org/gated is restricted.\r\nContent-Length: 0\r\n\r\n"},
    {"/org/down/", "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n"},
    {"/org/loop/", "HTTP/1.1 302 Found\r\nLocation: /org/loop/again\r\nContent-Length: 0\r\n\r\n"},
    {"/org/plain/", "HTTP/1.1 302 Found\r\nLocation: http://cdn.example.invalid/x\r\n"
     "Content-Length: 0\r\n\r\n"},
    {"/org/cross/", "HTTP/1.1 302 Found\r\nLocation: http://localhost:%PORT%/echo\r\n"
     "Content-Length: 0\r\n\r\n"},
    {"/org/same/", "HTTP/1.1 302 Found\r\nLocation: /echo\r\nContent-Length: 0\r\n\r\n"},
    {"/org/otherport/", "HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:%OTHER%/echo\r\n"
     "Content-Length: 0\r\n\r\n"},
    {"/echo", "ECHO_AUTH"},
    {"/org/silent/", NULL},
    {"/org/norange/resolve/main/f.bin",
     "HTTP/1.1 200 OK\r\nContent-Length: 16\r\n\r\n0123456789abcdef"},
    {"/org/range/resolve/main/f.bin",
     "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 3-6/1000\r\nContent-Length: 4\r\n\r\n"
     "3456"},
    {"/org/notjson/", "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nnot json!"},
    {NULL, NULL},
};

static int resolve_at(const struct server *s, const char *id_text, const char *token,
                      struct fg_source_result **r, struct fg_err *err)
{
    struct fg_source_opts o = opts_bare();
    snprintf(o.endpoint, sizeof o.endpoint, "%s", s->base);
    snprintf(o.token, sizeof o.token, "%s", token ? token : "");
    o.timeout_ms = 1000;
    struct fg_model_id id;
    assert_int_equal(fg_source_parse_id(id_text, &id, NULL), 0);
    return fg_source_resolve(&o, &id, r, err);
}

static void hub_should_map_statuses_to_errors_that_say_what_to_do(void **state)
{
    (void)state;
    struct server s = server_start(hub_routes);
    struct fg_source_result *r = NULL;
    struct fg_err err = {0};
    assert_int_equal(resolve_at(&s, "org/tiny", NULL, &r, &err), 0);
    assert_int_equal(r->kind, FG_SRC_HUB);
    assert_string_equal(r->commit, "3333333333333333333333333333333333333333");
    fg_source_result_free(r);

    assert_int_equal(resolve_at(&s, "org/gated", NULL, &r, &err), FG_E_DENIED);
    assert_non_null(strstr(err.detail, "org/gated@main"));
    assert_non_null(strstr(err.detail, "HTTP 401"));
    assert_non_null(strstr(err.detail, "GatedRepo: Access to model org/gated is restricted"));
    assert_non_null(strstr(err.detail, "HF_TOKEN"));
    assert_non_null(strstr(err.detail, "licence"));

    assert_int_equal(resolve_at(&s, "org/missing", NULL, &r, &err), FG_E_NOTFOUND);
    assert_non_null(strstr(err.detail, "HTTP 404 (hub: EntryNotFound)"));
    assert_int_equal(resolve_at(&s, "org/down", NULL, &r, &err), FG_E_NET);
    assert_non_null(strstr(err.detail, "HTTP 503"));
    assert_int_equal(resolve_at(&s, "org/notjson", NULL, &r, &err), FG_E_PARSE);
    assert_non_null(strstr(err.detail, "starting 'not json!'"));
    server_stop(&s);
}

static void hub_should_follow_redirects_within_limits(void **state)
{
    (void)state;
    struct server s = server_start(hub_routes);
    struct fg_source_result *r = NULL;
    struct fg_err err = {0};
    assert_int_equal(resolve_at(&s, "org/loop", NULL, &r, &err), FG_E_NET);
    assert_non_null(strstr(err.detail, "more than 5 redirects"));
    assert_int_equal(resolve_at(&s, "org/plain", NULL, &r, &err), FG_E_INVAL);
    assert_non_null(strstr(err.detail, "plain http to a non-loopback host is refused"));
    /* same host: the token goes along; another host: it stays behind */
    assert_int_equal(resolve_at(&s, "org/same", "hf_secret", &r, &err), 0);
    assert_non_null(strstr(r->text, "\"present\""));
    fg_source_result_free(r);
    assert_int_equal(resolve_at(&s, "org/cross", "hf_secret", &r, &err), 0);
    assert_non_null(strstr(r->text, "\"absent\""));
    fg_source_result_free(r);
    server_stop(&s);
    /* same host, another port: another server (origin = scheme, host, port) */
    struct server other = server_start(hub_routes);
    other_port = other.port;
    s = server_start(hub_routes);
    assert_int_equal(resolve_at(&s, "org/otherport", "hf_secret", &r, &err), 0);
    assert_non_null(strstr(r->text, "\"absent\""));
    fg_source_result_free(r);
    server_stop(&s);
    server_stop(&other);
}

static void hub_should_return_by_the_deadline_from_a_silent_server(void **state)
{
    (void)state;
    struct server s = server_start(hub_routes);
    struct fg_source_opts o = opts_bare();
    snprintf(o.endpoint, sizeof o.endpoint, "%s", s.base);
    o.timeout_ms = 800;
    struct fg_model_id id;
    struct fg_source_result *r = NULL;
    struct fg_err err = {0};
    assert_int_equal(fg_source_parse_id("org/silent", &id, NULL), 0);
    uint64_t t0 = now_ms();
    assert_int_equal(fg_source_resolve(&o, &id, &r, &err), FG_E_TIMEDOUT);
    uint64_t ms = now_ms() - t0;
    print_message("silent server: %llu ms for an 800 ms deadline\n", (unsigned long long)ms);
    assert_true(ms < 2 * 800 + 3000); /* the deadline, with a loaded host's margin */
    assert_non_null(strstr(err.detail, "deadline"));
    assert_non_null(strstr(err.detail, "HF_HUB_OFFLINE=1"));
    server_stop(&s);
}

static void hub_check_url_should_allow_http_only_on_loopback_or_when_asked(void **state)
{
    (void)state;
    assert_int_equal(fg__hub_check_url("https://huggingface.co", false, NULL), 0);
    assert_int_equal(fg__hub_check_url("http://127.0.0.1:8080", false, NULL), 0);
    assert_int_equal(fg__hub_check_url("http://127.8.9.1", false, NULL), 0);
    assert_int_equal(fg__hub_check_url("http://[::1]:99/x", false, NULL), 0);
    assert_int_equal(fg__hub_check_url("http://localhost/", false, NULL), 0);
    assert_int_equal(fg__hub_check_url("http://mirror.internal", false, NULL), FG_E_INVAL);
    assert_int_equal(fg__hub_check_url("http://mirror.internal", true, NULL), 0);
    assert_int_equal(fg__hub_check_url("http://128.0.0.1", false, NULL), FG_E_INVAL);
    assert_int_equal(fg__hub_check_url("ftp://huggingface.co", true, NULL), FG_E_INVAL);
    assert_int_equal(fg__hub_check_url("file:///etc/passwd", true, NULL), FG_E_INVAL);
    assert_int_equal(fg__hub_check_url("not a url", false, NULL), FG_E_INVAL);
    /* the endpoint is checked before anything else, even when a cache would answer */
    struct fg_source_opts o = opts_bare();
    snprintf(o.endpoint, sizeof o.endpoint, "http://hub.example.invalid");
    struct fg_model_id id;
    struct fg_source_result *r = NULL;
    struct fg_err err = {0};
    assert_int_equal(fg_source_parse_id("org/name", &id, NULL), 0);
    assert_int_equal(fg_source_resolve(&o, &id, &r, &err), FG_E_INVAL);
    assert_non_null(strstr(err.detail, "HF_ENDPOINT"));
}

static void repo_read_should_serve_ranges_whether_or_not_the_server_honours_them(void **state)
{
    (void)state;
    struct server s = server_start(hub_routes);
    struct fg_source_opts o = opts_bare();
    snprintf(o.endpoint, sizeof o.endpoint, "%s", s.base);
    struct fg_model_id id;
    struct fg_source_repo *repo = NULL;
    char buf[8];
    size_t got = 0;
    uint64_t size = 0;
    bool remote = false;
    assert_int_equal(fg_source_parse_id("org/norange", &id, NULL), 0);
    assert_int_equal(fg_source_repo_open(&o, NULL, &id, &repo, NULL), 0);
    assert_int_equal(fg_source_repo_read(repo, "f.bin", 3, 4, buf, &got, &size, &remote, NULL), 0);
    assert_int_equal(got, 4);
    assert_memory_equal(buf, "3456", 4);
    assert_true(remote);
    fg_source_repo_free(repo);
    assert_int_equal(fg_source_parse_id("org/range", &id, NULL), 0);
    assert_int_equal(fg_source_repo_open(&o, NULL, &id, &repo, NULL), 0);
    assert_int_equal(fg_source_repo_read(repo, "f.bin", 3, 4, buf, &got, &size, NULL, NULL), 0);
    assert_memory_equal(buf, "3456", 4);
    assert_int_equal(size, 1000);
    assert_int_equal(fg_source_repo_read(repo, "../f.bin", 0, 4, buf, &got, NULL, NULL, NULL),
                     FG_E_INVAL);
    fg_source_repo_free(repo);
    o.offline = true;
    assert_int_equal(fg_source_repo_open(&o, NULL, &id, &repo, NULL), 0);
    assert_int_equal(fg_source_repo_read(repo, "f.bin", 0, 4, buf, &got, NULL, NULL, NULL),
                     FG_E_NOTFOUND);
    fg_source_repo_free(repo);
    server_stop(&s);
}

/* ---- fitgate's cache ----------------------------------------------------------- */

static void cache_should_store_safely_and_answer_by_ttl_and_offline(void **state)
{
    (void)state;
    struct server s = server_start(hub_routes);
    char dir[64], p[512];
    tmpdir(dir, sizeof dir);
    struct fg_source_opts o = opts_bare();
    snprintf(o.endpoint, sizeof o.endpoint, "%s", s.base);
    snprintf(o.cache_dir, sizeof o.cache_dir, "%s/cache/fitgate", dir);
    struct fg_model_id id;
    struct fg_source_result *r = NULL;
    struct fg_err err = {0};
    assert_int_equal(fg_source_parse_id("org/tiny", &id, NULL), 0);
    assert_int_equal(fg_source_resolve(&o, &id, &r, &err), 0);
    assert_int_equal(r->kind, FG_SRC_HUB);
    fg_source_result_free(r);

    struct stat st;
    snprintf(p, sizeof p, "%s/cache/fitgate/models--org--tiny/main/config.json", dir);
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    snprintf(p, sizeof p, "%s/cache/fitgate/models--org--tiny/main", dir);
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    snprintf(p, sizeof p, "%s/cache/fitgate/models--org--tiny/"
             "3333333333333333333333333333333333333333/config.json", dir);
    assert_int_equal(stat(p, &st), 0); /* also under the commit main pointed to */

    server_stop(&s); /* from here on the hub is gone */
    assert_int_equal(fg_source_resolve(&o, &id, &r, &err), 0);
    assert_int_equal(r->kind, FG_SRC_CACHE);
    fg_source_result_free(r);

    o.ttl_s = 0; /* main is now stale: the dead hub is tried, then the stale copy is used */
    assert_int_equal(fg_source_resolve(&o, &id, &r, &err), 0);
    assert_int_equal(r->kind, FG_SRC_CACHE_STALE);
    assert_non_null(strstr(r->note, "hub unreachable"));
    fg_source_result_free(r);
    o.offline = true;
    assert_int_equal(fg_source_resolve(&o, &id, &r, &err), 0);
    assert_int_equal(r->kind, FG_SRC_CACHE_STALE);
    assert_non_null(strstr(r->note, "offline"));
    fg_source_result_free(r);
    /* a commit never goes stale */
    assert_int_equal(fg_source_parse_id("org/tiny@3333333333333333333333333333333333333333",
                                        &id, NULL), 0);
    assert_int_equal(fg_source_resolve(&o, &id, &r, &err), 0);
    assert_int_equal(r->kind, FG_SRC_CACHE);
    fg_source_result_free(r);

    /* a cache others can write to is not read */
    snprintf(p, sizeof p, "%s/cache/fitgate", dir);
    chmod(p, 0777);
    assert_int_equal(fg_source_resolve(&o, &id, &r, &err), FG_E_NOTFOUND);
    chmod(p, 0700);
    snprintf(p, sizeof p, "%s/cache/fitgate/models--org--tiny/main/config.json", dir);
    chmod(p, 0666);
    assert_int_equal(fg_source_parse_id("org/tiny", &id, NULL), 0);
    assert_int_equal(fg_source_resolve(&o, &id, &r, &err), FG_E_NOTFOUND);
    rm_rf(dir);
}

/* A directory or a FIFO where a file should be is refused at once, and said so: never a
 * read that blocks sbatch on a FIFO with no writer, in a checkout or in the cache. */
static void reads_should_refuse_what_is_not_a_regular_file_without_blocking(void **state)
{
    (void)state;
    char dir[64], p[512];
    tmpdir(dir, sizeof dir);
    snprintf(p, sizeof p, "%s/model.safetensors", dir);
    assert_int_equal(mkdir(p, 0700), 0);
    snprintf(p, sizeof p, "%s/config.json", dir);
    assert_int_equal(mkfifo(p, 0600), 0);
    alarm(10); /* a blocking open fails the test instead of hanging it */
    struct fg_source_opts o = opts_bare();
    struct fg_source_repo *repo = NULL;
    struct fg_err err = {0};
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(fg_source_repo_open(&o, dir, NULL, &repo, &err), 0);
    const char *files[] = {"model.safetensors", "config.json"};
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(fg_source_repo_read_all(repo, files[i], 1 << 20, &text, &len, NULL,
                                                 &err), FG_E_IO);
        assert_non_null(strstr(err.detail, ": not a regular file"));
        assert_null(text);
    }
    fg_source_repo_free(repo);
    /* the per-user cache: its config.json a FIFO */
    snprintf(o.cache_dir, sizeof o.cache_dir, "%s/cache", dir);
    snprintf(p, sizeof p, "%s/cache", dir);
    assert_int_equal(mkdir(p, 0700), 0);
    snprintf(p, sizeof p, "%s/cache/models--org--tiny", dir);
    assert_int_equal(mkdir(p, 0700), 0);
    snprintf(p, sizeof p, "%s/cache/models--org--tiny/main", dir);
    assert_int_equal(mkdir(p, 0700), 0);
    snprintf(p, sizeof p, "%s/cache/models--org--tiny/main/config.json", dir);
    assert_int_equal(mkfifo(p, 0600), 0);
    o.offline = true;
    struct fg_model_id id;
    struct fg_source_result *r = NULL;
    assert_int_equal(fg_source_parse_id("org/tiny", &id, NULL), 0);
    assert_int_not_equal(fg_source_resolve(&o, &id, &r, &err), 0);
    assert_null(r);
    alarm(0);
    rm_rf(dir);
}

static void site_cache_should_be_read_when_trusted_and_refused_when_writable(void **state)
{
    (void)state;
    char dir[64], p[512];
    tmpdir(dir, sizeof dir);
    snprintf(p, sizeof p, "%s/site/models--org--name/main/config.json", dir);
    write_file(p, "{\"model_type\": \"llama\"}");
    snprintf(p, sizeof p, "%s/site/models--org--name/main/config.json", dir);
    chmod(p, 0644);
    struct fg_source_opts o = opts_bare();
    snprintf(o.site_cache_dir, sizeof o.site_cache_dir, "%s/site", dir);
    o.offline = true;
    struct fg_model_id id;
    struct fg_source_result *r = NULL;
    struct fg_err err = {0};
    assert_int_equal(fg_source_parse_id("org/name", &id, NULL), 0);
    assert_int_equal(fg_source_resolve(&o, &id, &r, &err), 0);
    assert_int_equal(r->kind, FG_SRC_CACHE);
    assert_non_null(strstr(r->where, "/site/models--org--name/main/config.json"));
    fg_source_result_free(r);
    snprintf(p, sizeof p, "%s/site/models--org--name", dir);
    chmod(p, 0775); /* group-writable: anyone in the group could plant a config */
    assert_int_equal(fg_source_resolve(&o, &id, &r, &err), FG_E_NOTFOUND);
    assert_null(r);
    rm_rf(dir);
}

static void cache_should_never_keep_what_the_hub_got_wrong(void **state)
{
    (void)state;
    struct server s = server_start(hub_routes);
    char dir[64], p[512];
    tmpdir(dir, sizeof dir);
    struct fg_source_opts o = opts_bare();
    snprintf(o.endpoint, sizeof o.endpoint, "%s", s.base);
    snprintf(o.cache_dir, sizeof o.cache_dir, "%s/c", dir);
    struct fg_model_id id;
    struct fg_source_result *r = NULL;
    assert_int_equal(fg_source_parse_id("org/notjson", &id, NULL), 0);
    assert_int_equal(fg_source_resolve(&o, &id, &r, NULL), FG_E_PARSE);
    snprintf(p, sizeof p, "%s/c/models--org--notjson", dir);
    struct stat st;
    assert_int_equal(stat(p, &st), -1);
    server_stop(&s);
    rm_rf(dir);
}

/* ---- safetensors ------------------------------------------------------------------ */

static void header_len_should_reject_nonsense_lengths(void **state)
{
    (void)state;
    unsigned char b[8] = {0};
    uint64_t len;
    struct fg_err err = {0};
    assert_int_equal(fg_safetensors_header_len(b, 0, 100 << 20, "x", &len, &err), FG_E_RANGE);
    b[0] = 0x40; /* 64 */
    assert_int_equal(fg_safetensors_header_len(b, 1000, 100 << 20, "x", &len, &err), 0);
    assert_int_equal(len, 64);
    assert_int_equal(fg_safetensors_header_len(b, 60, 100 << 20, "x", &len, &err), FG_E_RANGE);
    assert_non_null(strstr(err.detail, "past the end"));
    memset(b, 0xff, 8); /* 2^64 - 1 */
    assert_int_equal(fg_safetensors_header_len(b, 0, 100 << 20, "x", &len, &err), FG_E_RANGE);
    assert_non_null(strstr(err.detail, "cap"));
}

static void parse_header_should_sum_elements_by_dtype_and_group(void **state)
{
    (void)state;
    const char *h =
        "{\"__metadata__\": {\"format\": \"pt\"},"
        "\"model.embed_tokens.weight\": {\"dtype\": \"BF16\", \"shape\": [10, 4], "
        "\"data_offsets\": [0, 80]},"
        "\"model.layers.0.self_attn.q_proj.weight\": {\"dtype\": \"BF16\", \"shape\": [4, 4], "
        "\"data_offsets\": [80, 112]},"
        "\"model.layers.0.self_attn.rotary_emb.inv_freq\": {\"dtype\": \"F32\", \"shape\": [2], "
        "\"data_offsets\": [112, 120]},"
        "\"model.layers.0.mlp.experts.0.down_proj.qweight\": {\"dtype\": \"I32\", "
        "\"shape\": [1, 4], \"data_offsets\": [120, 136]},"
        "\"model.norm.weight\": {\"dtype\": \"F4\", \"shape\": [3], \"data_offsets\": [136, 138]},"
        "\"scalar\": {\"dtype\": \"F64\", \"shape\": [], \"data_offsets\": [138, 146]}}";
    struct fg_st_summary s;
    memset(&s, 0, sizeof s);
    struct fg_err err = {0};
    assert_int_equal(fg_safetensors_parse_header(h, strlen(h), 146, "t", &s, &err), 0);
    assert_int_equal(s.tensors, 6);
    assert_int_equal(s.total, 40 + 16 + 2 + 4 + 3 + 1);
    assert_int_equal(s.by_dtype[FG_ST_BF16], 56);
    assert_int_equal(s.by_dtype[FG_ST_I32], 4); /* packed ints reported as stored */
    assert_int_equal(s.by_dtype[FG_ST_F4], 3);
    assert_int_equal(s.by_group[FG_ST_EMBED], 40);
    assert_int_equal(s.by_group[FG_ST_ATTN], 16);
    assert_int_equal(s.by_group[FG_ST_BUFFER], 2);
    assert_int_equal(s.by_group[FG_ST_MLP], 4);
    assert_int_equal(s.by_group[FG_ST_NORM], 3);
    assert_int_equal(s.by_group[FG_ST_OTHER], 1);
    /* the bytes as stored, packed formats as packed: 56 x 2 + 2 x 4 + 4 x 4 + 3 / 2 + 8 (the
     * headers' data_offsets end at 146 with the F4 nibbles in two bytes) */
    bool quantized;
    s.headers = true;
    assert_int_equal(fg_safetensors_bytes(&s, &quantized), 112 + 8 + 16 + 1 + 8);
    assert_true(quantized); /* I32 and F4 */
    s.headers = false;
    assert_int_equal(fg_safetensors_bytes(&s, &quantized), 0);
    assert_false(quantized);
    /* the data part must hold every tensor */
    memset(&s, 0, sizeof s);
    assert_int_equal(fg_safetensors_parse_header(h, strlen(h), 100, "t", &s, &err), FG_E_PARSE);
    assert_non_null(strstr(err.detail, "truncated"));
}

static void parse_header_should_reject_what_does_not_add_up(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        int rc;
        const char *says;
    } bad[] = {
        {"[1, 2]", FG_E_PARSE, "not a JSON object"},
        {"{\"w\": {\"dtype\": \"Q4\", \"shape\": [2], \"data_offsets\": [0, 1]}}", FG_E_PARSE,
         "unknown dtype 'Q4'"},
        {"{\"w\": {\"dtype\": \"F16\", \"shape\": [2, 3], \"data_offsets\": [0, 10]}}", FG_E_PARSE,
         "needs 12 bytes"},
        {"{\"w\": {\"dtype\": \"F16\", \"shape\": [-2], \"data_offsets\": [0, 4]}}", FG_E_PARSE,
         "bad shape"},
        {"{\"w\": {\"dtype\": \"F16\", \"shape\": [2], \"data_offsets\": [8, 4]}}", FG_E_PARSE,
         "bad data_offsets"},
        {"{\"w\": {\"dtype\": \"F16\", \"shape\": [2]}}", FG_E_PARSE, "lacks"},
        {"{\"w\": {\"dtype\": \"U8\", \"shape\": [4294967296, 4294967296, 4294967296], "
         "\"data_offsets\": [0, 4]}}", FG_E_OVERFLOW, "overflows"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct fg_st_summary s;
        memset(&s, 0, sizeof s);
        struct fg_err err = {0};
        int rc = fg_safetensors_parse_header(bad[i].json, strlen(bad[i].json), 0, "f", &s, &err);
        if (rc != bad[i].rc || !strstr(err.detail, bad[i].says))
            fail_msg("case %zu: rc %d, detail '%s'", i, rc, err.detail);
    }
}

static void group_should_sort_tensor_names_as_transformers_names_them(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        enum fg_st_group g;
    } cases[] = {
        {"model.embed_tokens.weight", FG_ST_EMBED},
        {"transformer.wte.weight", FG_ST_EMBED},
        {"transformer.word_embeddings.weight", FG_ST_EMBED},
        {"transformer.wpe.weight", FG_ST_POS_EMBED},
        {"bert.embeddings.position_embeddings.weight", FG_ST_POS_EMBED},
        {"lm_head.weight", FG_ST_HEAD},
        {"output.weight", FG_ST_HEAD},
        {"embed_out.weight", FG_ST_HEAD},
        {"model.layers.3.self_attn.q_proj.weight", FG_ST_ATTN},
        {"model.layers.3.self_attn.q_norm.weight", FG_ST_ATTN},
        {"model.layers.3.self_attn.kv_a_layernorm.weight", FG_ST_ATTN},
        {"transformer.h.0.attn.c_attn.weight", FG_ST_ATTN},
        {"transformer.h.0.self_attention.query_key_value.weight", FG_ST_ATTN},
        {"model.layers.3.mlp.gate_proj.weight", FG_ST_MLP},
        {"model.layers.3.block_sparse_moe.experts.7.w1.weight", FG_ST_MLP},
        {"model.layers.3.mlp.gate.weight", FG_ST_MLP},
        {"model.encoder.layers.0.fc1.weight", FG_ST_MLP},
        {"backbone.layers.0.mixer.in_proj.weight", FG_ST_MIXER},
        {"backbone.layers.0.mixer.A_log", FG_ST_MIXER},
        {"backbone.layers.2.mixer.q_proj.weight", FG_ST_ATTN},
        {"backbone.layers.1.mixer.up_proj.weight", FG_ST_MLP},
        {"model.layers.0.conv.in_proj.weight", FG_ST_MIXER},
        {"model.layers.3.input_layernorm.weight", FG_ST_NORM},
        {"transformer.ln_f.bias", FG_ST_NORM},
        {"transformer.h.0.ln_attn.weight", FG_ST_NORM},
        {"model.norm.weight", FG_ST_NORM},
        {"model.layers.0.self_attn.rotary_emb.inv_freq", FG_ST_BUFFER},
        {"transformer.h.0.attn.bias", FG_ST_BUFFER},
        {"transformer.h.0.attn.masked_bias", FG_ST_BUFFER},
        {"bert.embeddings.position_ids", FG_ST_BUFFER},
        {"vision_tower.vision_model.encoder.layers.0.mlp.fc1.weight", FG_ST_VISION},
        {"visual.blocks.0.attn.qkv.weight", FG_ST_VISION},
        {"multi_modal_projector.mm_input_projection_weight", FG_ST_VISION},
        {"model.encoder.conv1.weight", FG_ST_OTHER},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (fg_safetensors_group(cases[i].name) != cases[i].g)
            fail_msg("%s: group %s, want %s", cases[i].name,
                     fg_safetensors_group_name(fg_safetensors_group(cases[i].name)),
                     fg_safetensors_group_name(cases[i].g));
}

/* Copy a header-only fixture repository and give its files their real (sparse) length. */
static void sparse_repo(const char *repo, const char *dst)
{
    FILE *m = fopen(HUBFIX "/manifest.tsv", "r");
    assert_non_null(m);
    char line[1024], from[1024], to[1024];
    snprintf(from, sizeof from, HUBFIX "/repos/%s/config.json", repo);
    snprintf(to, sizeof to, "%s/config.json", dst);
    copy_file(from, to);
    snprintf(from, sizeof from, HUBFIX "/repos/%s/model.safetensors.index.json", repo);
    snprintf(to, sizeof to, "%s/model.safetensors.index.json", dst);
    if (access(from, R_OK) == 0)
        copy_file(from, to);
    while (fgets(line, sizeof line, m)) {
        char path[900];
        unsigned long long size;
        if (line[0] == '#' || sscanf(line, "%899[^\t]\t%llu", path, &size) != 2)
            continue;
        if (strncmp(path, repo, strlen(repo)) != 0 || path[strlen(repo)] != '/')
            continue;
        snprintf(from, sizeof from, HUBFIX "/repos/%s", path);
        snprintf(to, sizeof to, "%s/%s", dst, path + strlen(repo) + 1);
        copy_file(from, to);
        assert_int_equal(truncate(to, (off_t)size), 0);
    }
    fclose(m);
}

static int verify_dir(const char *dir, struct fg_st_summary *s, struct fg_st_compare *c,
                      struct fg_model **m)
{
    struct fg_source_opts o = opts_bare();
    struct fg_source_repo *repo = NULL;
    struct fg_err err = {0};
    assert_int_equal(fg_model_load(dir, m, &err), 0);
    assert_int_equal(fg_source_repo_open(&o, dir, NULL, &repo, &err), 0);
    int rc = fg_safetensors_scan(repo, 0, s, &err);
    if (!rc)
        rc = fg_safetensors_compare(s, *m, c, &err);
    if (rc)
        print_message("%s: %s\n", dir, err.detail);
    fg_source_repo_free(repo);
    return rc;
}

static void scan_should_read_local_checkouts_and_agree_with_the_graph(void **state)
{
    (void)state;
    struct fg_st_summary s;
    struct fg_st_compare c;
    struct fg_model *m = NULL;
    /* a real, complete file */
    assert_int_equal(verify_dir(HUBFIX "/repos/acme/tiny", &s, &c, &m), 0);
    assert_true(s.headers);
    assert_int_equal(s.headers_remote, 0);
    assert_int_equal(s.total, 6736);
    assert_true(c.agree);
    assert_int_equal(c.n_findings, 0);
    fg_model_free(m);
    /* without a graph the checkpoint side still comes out */
    assert_int_equal(fg_safetensors_compare(&s, NULL, &c, NULL), 0);
    assert_true(c.ckpt_known);
    assert_int_equal(c.ckpt_total, 6736);
    assert_false(c.agree);

    /* sharded, header-only files made sparse to their real size */
    char dir[64], repo[128];
    tmpdir(dir, sizeof dir);
    snprintf(repo, sizeof repo, "%s/gemma", dir);
    sparse_repo("google/gemma-2b-it", repo);
    assert_int_equal(verify_dir(repo, &s, &c, &m), 0);
    assert_true(s.headers);
    assert_int_equal(s.files, 2);
    assert_int_equal(s.total, 2506172416ull);
    assert_int_equal(s.by_dtype[FG_ST_BF16], 2506172416ull);
    assert_true(c.agree);
    fg_model_free(m);

    /* the same files cut short are refused, not summed */
    char shard[256];
    snprintf(shard, sizeof shard, "%s/model-00002-of-00002.safetensors", repo);
    assert_int_equal(truncate(shard, 4096), 0);
    struct fg_source_opts o = opts_bare();
    struct fg_source_repo *r = NULL;
    struct fg_err err = {0};
    assert_int_equal(fg_source_repo_open(&o, repo, NULL, &r, NULL), 0);
    assert_int_equal(fg_safetensors_scan(r, 0, &s, &err), FG_E_PARSE);
    assert_non_null(strstr(err.detail, "model-00002-of-00002.safetensors"));
    fg_source_repo_free(r);
    rm_rf(dir);
}

static void compare_should_name_stored_heads_and_buffers(void **state)
{
    (void)state;
    char dir[64], repo[128];
    tmpdir(dir, sizeof dir);
    snprintf(repo, sizeof repo, "%s/buffers", dir);
    sparse_repo("acme/llama-buffers", repo);
    struct fg_st_summary s;
    struct fg_st_compare c;
    struct fg_model *m = NULL;
    assert_int_equal(verify_dir(repo, &s, &c, &m), 0);
    assert_false(c.agree);
    assert_int_equal(c.ckpt_total - c.graph_total, 49152ull * 576 + 30 * 32);
    bool head = false, buffers = false;
    for (size_t i = 0; i < c.n_findings; i++) {
        print_message("  %s\n", c.findings[i]);
        head |= strstr(c.findings[i], "lm_head: +28311552") != NULL &&
                strstr(c.findings[i], "tied but stored") != NULL;
        buffers |= strstr(c.findings[i], "buffers: +960") != NULL &&
                   strstr(c.findings[i], "inv_freq") != NULL;
    }
    assert_true(head);
    assert_true(buffers);
    fg_model_free(m);
    rm_rf(dir);
}

/* truth.tsv total for an hf id, 0 when it has none. */
static uint64_t truth_of(const char *hf_id)
{
    FILE *f = fopen(MODELS "/truth.tsv", "r");
    assert_non_null(f);
    char line[8192];
    uint64_t v = 0;
    while (fgets(line, sizeof line, f)) {
        char *tab = strchr(line, '\t');
        if (!tab || (size_t)(tab - line) != strlen(hf_id) || strncmp(line, hf_id, strlen(hf_id)))
            continue;
        char *tab2 = strchr(tab + 1, '\t');
        if (tab2)
            v = strtoull(tab2 + 1, NULL, 10);
        break;
    }
    fclose(f);
    return v;
}

static void verify_should_agree_on_every_shipped_index_where_the_graph_is_right(void **state)
{
    (void)state;
    static const char *const dirs[] = {
        "HuggingFaceTB--SmolLM3-3B", "Qwen--Qwen-72B", "allenai--olmOCR-7B-0225-preview",
        "google--gemma-2b-it", "google--medgemma-27b-it",
        "ibm-granite--granite-3b-code-instruct-128k", "instructlab--granite-7b-lab",
        "meta-llama--Llama-3.2-3B", "microsoft--WizardLM-2-8x22B", "mistralai--Devstral-Small-2507",
        "tiiuae--falcon-180B-chat"};
    int agreed = 0;
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        char dir[256], id[256];
        snprintf(dir, sizeof dir, MODELS "/%s", dirs[i]);
        snprintf(id, sizeof id, "%s", dirs[i]);
        char *dd = strstr(id, "--");
        *dd = '/';
        memmove(dd + 1, dd + 2, strlen(dd + 2) + 1);
        struct fg_st_summary s;
        struct fg_st_compare c;
        struct fg_model *m = NULL;
        assert_int_equal(verify_dir(dir, &s, &c, &m), 0);
        assert_true(s.has_index);
        assert_false(s.headers);
        assert_true(c.ckpt_known);
        uint64_t truth = truth_of(id);
        /* verify's side must be the truth; agreement then depends on the graph only */
        if (truth && c.ckpt_total != truth)
            fail_msg("%s: verify reads %llu from the index, truth.tsv says %llu", id,
                     (unsigned long long)c.ckpt_total, (unsigned long long)truth);
        assert_int_equal(c.agree, m->params_total == c.ckpt_total);
        if (!c.agree)
            print_message("%s: graph %llu, checkpoint %llu (a reader still in progress)\n", id,
                          (unsigned long long)m->params_total,
                          (unsigned long long)c.ckpt_total);
        agreed += c.agree;
        fg_model_free(m);
    }
    print_message("verify agrees on %d of %zu shipped indexes\n", agreed,
                  sizeof dirs / sizeof dirs[0]);
}

/* ---- the checkpoint inventory (ckpt.h) ------------------------------------------- */

static void ckpt_json_should_round_trip_and_refuse_what_fitgate_did_not_write(void **state)
{
    (void)state;
    char dir[64], repo[128];
    tmpdir(dir, sizeof dir);
    snprintf(repo, sizeof repo, "%s/gemma", dir);
    sparse_repo("google/gemma-2b-it", repo);
    struct fg_ckpt c = {0}, back;
    struct fg_st_compare a, b;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(verify_dir(repo, &c.sum, &a, &m), 0);
    c.safetensors = true;
    snprintf(c.commit, sizeof c.commit, "0123456789abcdef0123456789abcdef01234567");
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(fg_ckpt_to_json(&c, &text, &len, &err), 0);
    assert_int_equal(fg_ckpt_from_json(text, len, "t", &back, &err), 0);
    assert_true(back.safetensors);
    assert_string_equal(back.commit, c.commit);
    /* what the comparison reads comes back as it was */
    assert_true(back.sum.headers && back.sum.has_index);
    assert_int_equal(back.sum.total, 2506172416ull);
    assert_int_equal(back.sum.files, 2);
    assert_memory_equal(back.sum.by_dtype, c.sum.by_dtype, sizeof c.sum.by_dtype);
    assert_memory_equal(back.sum.by_group, c.sum.by_group, sizeof c.sum.by_group);
    assert_memory_equal(back.sum.names, c.sum.names, sizeof c.sum.names);
    assert_memory_equal(back.sum.example, c.sum.example, sizeof c.sum.example);
    assert_int_equal(fg_safetensors_compare(&back.sum, m, &b, NULL), 0);
    assert_int_equal(a.ckpt_total, b.ckpt_total);
    assert_true(b.agree && b.exact);
    fg_model_free(m);
    free(text);

    /* a repository without safetensors is an answer too */
    struct fg_ckpt none = {0};
    assert_int_equal(fg_ckpt_to_json(&none, &text, &len, &err), 0);
    assert_int_equal(fg_ckpt_from_json(text, len, "t", &back, &err), 0);
    assert_false(back.safetensors);
    free(text);

    static const char *const bad[] = {
        "{\"format\": \"fitgate-checkpoint/0\", \"safetensors\": false}",
        "{\"safetensors\": false}",
        "{\"format\": \"fitgate-checkpoint/1\", \"safetensors\": \"yes\"}",
        "{\"format\": \"fitgate-checkpoint/1\", \"commit\": \"../x\", \"safetensors\": false}",
        "{\"format\": \"fitgate-checkpoint/1\", \"safetensors\": true, \"headers\": true, "
        "\"files\": 1, \"headers_read\": 1, \"total\": 10, \"by_dtype\": {\"BF16\": 9}, "
        "\"by_group\": {\"embed\": 10}}",
        "{\"format\": \"fitgate-checkpoint/1\", \"safetensors\": true, \"total\": 1.5}",
        "{\"format\": \"fitgate-checkpoint/1\", \"safetensors\": true, "
        "\"by_dtype\": {\"Q3\": 1}}",
        "[1, 2]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (fg_ckpt_from_json(bad[i], strlen(bad[i]), "entry", &back, &err) != FG_E_PARSE)
            fail_msg("accepted: %s", bad[i]);
        assert_non_null(strstr(err.detail, "entry"));
        assert_non_null(strstr(err.detail, "delete it"));
    }
    rm_rf(dir);
}

static void ckpt_json_should_keep_the_tensor_rows_and_refuse_rows_that_do_not_add_up(
    void **state)
{
    (void)state;
    char dir[64], repo[128];
    tmpdir(dir, sizeof dir);
    snprintf(repo, sizeof repo, "%s/gemma", dir);
    sparse_repo("google/gemma-2b-it", repo);
    struct fg_st_layout rows, back_rows;
    fg_st_layout_init(&rows);
    fg_st_layout_init(&back_rows);
    struct fg_ckpt c = {0}, back;
    struct fg_source_opts o = opts_bare();
    struct fg_source_repo *r = NULL;
    struct fg_st_scan_opts so = {.layout = &rows};
    struct fg_err err = {0};
    assert_int_equal(fg_source_repo_open(&o, repo, NULL, &r, &err), 0);
    assert_int_equal(fg_safetensors_scan_with(r, &so, &c.sum, &err), 0);
    fg_source_repo_free(r);
    assert_int_equal(rows.tensors, 164); /* gemma-2b-it's two shards */
    c.safetensors = true;
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(fg_ckpt_to_json(&c, &text, &len, &err), 0);
    assert_non_null(strstr(text, "\"layout\":[["));
    assert_int_equal(fg_ckpt_from_json_rows(text, len, "t", &back, &back_rows, &err), 0);
    assert_ptr_equal(back.sum.layout, &back_rows);
    assert_int_equal(back_rows.n, rows.n);
    assert_int_equal(fg_st_layout_elements(&back_rows), 2506172416ull);
    /* the plain reader takes the same entry and leaves the rows alone */
    assert_int_equal(fg_ckpt_from_json(text, len, "t", &back, &err), 0);
    assert_null(back.sum.layout);
    free(text);
    /* rows that do not add up to the counts: the entry is refused */
    rows.rows[0].count = 2;
    assert_int_equal(fg_ckpt_to_json(&c, &text, &len, &err), 0);
    assert_int_equal(fg_ckpt_from_json_rows(text, len, "entry", &back, &back_rows, &err),
                     FG_E_PARSE);
    assert_non_null(strstr(err.detail, "do not add up"));
    assert_int_equal(back_rows.n, 0);
    free(text);
    fg_st_layout_free(&rows);
    rm_rf(dir);
}

/* "HTTP/1.1 200 OK" with body and a Content-Length that matches, into buf. */
static const char *http_ok(char *buf, size_t cap, const char *headers, const char *body)
{
    snprintf(buf, cap, "HTTP/1.1 200 OK\r\n%sContent-Length: %zu\r\n\r\n%s", headers,
             strlen(body), body);
    return buf;
}

/* Options for a test hub s with the user cache at dir/c. */
static struct fg_source_opts opts_hub_cache(const struct server *s, const char *dir)
{
    struct fg_source_opts o = opts_bare();
    snprintf(o.endpoint, sizeof o.endpoint, "%s", s->base);
    snprintf(o.cache_dir, sizeof o.cache_dir, "%s/c", dir);
    return o;
}

#define INDEX_2 "{\"metadata\": {\"total_size\": 200, \"total_parameters\": 100}, \"weight_map\": " \
    "{\"a.weight\": \"model-00001-of-00002.safetensors\", " \
    "\"b.weight\": \"model-00002-of-00002.safetensors\"}}"
#define SHA3 "3333333333333333333333333333333333333333"

static void ckpt_should_be_cached_beside_the_config_and_answer_by_ttl_and_offline(void **state)
{
    (void)state;
    static char index_ok[1024];
    struct route routes[] = {
        {"/org/inv/resolve/main/model.safetensors.index.json",
         http_ok(index_ok, sizeof index_ok, "X-Repo-Commit: " SHA3 "\r\n", INDEX_2)},
        {NULL, NULL},
    };
    struct server s = server_start(routes);
    char dir[64], p[512];
    tmpdir(dir, sizeof dir);
    struct fg_source_opts o = opts_hub_cache(&s, dir);
    struct fg_model_id id;
    assert_int_equal(fg_source_parse_id("org/inv", &id, NULL), 0);
    struct fg_ckpt_opts co = {.budget_ms = 2000, .max_shards = 1, .scan = true};
    struct fg_ckpt c;
    struct fg_err err = {0};
    /* two shards over a cap of one: no header read, the index stands, and that is kept */
    assert_int_equal(fg_ckpt_get(&o, &id, NULL, &co, &c, &err), 0);
    assert_int_equal(c.from, FG_CKPT_HUB);
    assert_true(c.safetensors && c.sum.has_index && !c.sum.headers);
    assert_int_equal(c.sum.no_headers_code, FG_E_RANGE);
    assert_int_equal(c.sum.index_total_params, 100);
    assert_int_equal(c.requests, 1);
    assert_string_equal(c.commit, SHA3);
    assert_string_equal(c.note, "");

    struct stat st;
    snprintf(p, sizeof p, "%s/c/models--org--inv/main/" FG_CKPT_FILE, dir);
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    snprintf(p, sizeof p, "%s/c/models--org--inv/" SHA3 "/" FG_CKPT_FILE, dir);
    assert_int_equal(stat(p, &st), 0); /* also under the commit main pointed to */

    server_stop(&s); /* from here on the hub is gone */
    assert_int_equal(fg_ckpt_get(&o, &id, NULL, &co, &c, &err), 0);
    assert_int_equal(c.from, FG_CKPT_CACHE);
    assert_int_equal(c.requests, 0);
    assert_int_equal(c.sum.index_total_params, 100);
    assert_non_null(strstr(c.where, "/c/models--org--inv/main/" FG_CKPT_FILE));

    o.ttl_s = 0; /* main is stale: the dead hub is tried, then the expired entry stands in */
    assert_int_equal(fg_ckpt_get(&o, &id, NULL, &co, &c, &err), 0);
    assert_int_equal(c.from, FG_CKPT_CACHE_STALE);
    /* the commit's entry never expires, and is looked up first */
    assert_int_equal(fg_ckpt_get(&o, &id, SHA3, &co, &c, &err), 0);
    assert_int_equal(c.from, FG_CKPT_CACHE);
    assert_non_null(strstr(c.where, SHA3));
    o.offline = true;
    assert_int_equal(fg_ckpt_get(&o, &id, NULL, &co, &c, &err), 0);
    assert_int_equal(c.from, FG_CKPT_CACHE_STALE);
    co.scan = false; /* the cache still answers when the hub may not be asked */
    o.offline = false;
    assert_int_equal(fg_ckpt_get(&o, &id, NULL, &co, &c, &err), 0);
    assert_int_equal(c.from, FG_CKPT_CACHE_STALE);

    /* an entry others could have written is skipped and said so */
    o.offline = true;
    snprintf(p, sizeof p, "%s/c/models--org--inv/main/" FG_CKPT_FILE, dir);
    chmod(p, 0666);
    assert_int_equal(fg_ckpt_get(&o, &id, NULL, &co, &c, &err), FG_E_NOTFOUND);
    assert_non_null(strstr(c.note, "world-writable"));
    assert_non_null(strstr(err.detail, "offline"));
    /* so is one that is not an inventory */
    chmod(p, 0600);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs("{\"model_type\": \"llama\"}", f);
    fclose(f);
    assert_int_equal(fg_ckpt_get(&o, &id, NULL, &co, &c, &err), FG_E_NOTFOUND);
    assert_non_null(strstr(c.note, "not a checkpoint inventory"));
    rm_rf(dir);
}

static void ckpt_should_remember_a_repository_without_safetensors(void **state)
{
    (void)state;
    static const struct route routes[] = {{NULL, NULL}}; /* every file is a 404 */
    struct server s = server_start(routes);
    char dir[64], p[512];
    tmpdir(dir, sizeof dir);
    struct fg_source_opts o = opts_hub_cache(&s, dir);
    struct fg_model_id id;
    assert_int_equal(fg_source_parse_id("org/bin-only", &id, NULL), 0);
    struct fg_ckpt_opts co = {.budget_ms = 2000, .scan = true};
    struct fg_ckpt c;
    assert_int_equal(fg_ckpt_get(&o, &id, SHA3, &co, &c, NULL), 0);
    assert_false(c.safetensors);
    assert_int_equal(c.requests, 2); /* the index, then model.safetensors */
    assert_string_equal(c.commit, SHA3); /* read at the config's commit */
    snprintf(p, sizeof p, "%s/c/models--org--bin-only/main/" FG_CKPT_FILE, dir);
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(fg__read_file(p, 4096, &text, &len), 0);
    assert_non_null(strstr(text, "\"safetensors\":false"));
    free(text);
    server_stop(&s);
    assert_int_equal(fg_ckpt_get(&o, &id, NULL, &co, &c, NULL), 0);
    assert_int_equal(c.from, FG_CKPT_CACHE);
    assert_false(c.safetensors);
    rm_rf(dir);
}

static void ckpt_should_keep_one_deadline_for_the_whole_scan(void **state)
{
    (void)state;
    static char index_ok[1024];
    struct route routes[] = {
        {"/org/slowshard/resolve/main/model.safetensors.index.json",
         http_ok(index_ok, sizeof index_ok, "", INDEX_2)},
        {"/org/slowshard/", NULL}, /* the shards never come */
        {"/org/silent/", NULL},
        {NULL, NULL},
    };
    struct server s = server_start(routes);
    char dir[64], p[512];
    tmpdir(dir, sizeof dir);
    struct fg_source_opts o = opts_hub_cache(&s, dir);
    o.timeout_ms = 5000; /* each request alone could wait this long; the scan may not */
    struct fg_model_id id;
    struct fg_ckpt_opts co = {.budget_ms = 700, .scan = true};
    struct fg_ckpt c;
    struct fg_err err = {0};
    /* the index came, the shards did not: the index's view, not cached */
    assert_int_equal(fg_source_parse_id("org/slowshard", &id, NULL), 0);
    uint64_t t0 = now_ms();
    assert_int_equal(fg_ckpt_get(&o, &id, NULL, &co, &c, &err), 0);
    uint64_t ms = now_ms() - t0;
    print_message("silent shards: %llu ms for a 700 ms scan budget\n", (unsigned long long)ms);
    /* the scan's budget, with a loaded host's margin, and still under one request's 5 s */
    assert_true(ms < 2 * 700 + 3000);
    assert_true(c.safetensors && !c.sum.headers);
    assert_int_equal(c.sum.no_headers_code, FG_E_TIMEDOUT);
    assert_non_null(strstr(c.note, "not cached"));
    snprintf(p, sizeof p, "%s/c/models--org--slowshard", dir);
    struct stat st;
    assert_int_equal(stat(p, &st), -1);
    /* nothing came at all: the deadline's error, nothing cached */
    assert_int_equal(fg_source_parse_id("org/silent", &id, NULL), 0);
    t0 = now_ms();
    assert_int_equal(fg_ckpt_get(&o, &id, NULL, &co, &c, &err), FG_E_TIMEDOUT);
    assert_true(now_ms() - t0 < 2 * 700 + 3000);
    snprintf(p, sizeof p, "%s/c/models--org--silent", dir);
    assert_int_equal(stat(p, &st), -1);
    server_stop(&s);
    rm_rf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_id_should_accept_org_name_and_revision),
        cmocka_unit_test(parse_id_should_reject_what_could_escape_a_path_or_url),
        cmocka_unit_test(check_file_should_refuse_paths_in_shard_names),
        cmocka_unit_test(set_order_should_reject_unknown_repeated_and_empty),
        cmocka_unit_test(opts_from_env_should_read_what_huggingface_hub_reads),
        cmocka_unit_test(resolve_should_read_both_site_dir_layouts),
        cmocka_unit_test(resolve_should_follow_hf_cache_refs_to_snapshot_blobs),
        cmocka_unit_test(hub_should_map_statuses_to_errors_that_say_what_to_do),
        cmocka_unit_test(hub_should_follow_redirects_within_limits),
        cmocka_unit_test(hub_should_return_by_the_deadline_from_a_silent_server),
        cmocka_unit_test(hub_check_url_should_allow_http_only_on_loopback_or_when_asked),
        cmocka_unit_test(repo_read_should_serve_ranges_whether_or_not_the_server_honours_them),
        cmocka_unit_test(cache_should_store_safely_and_answer_by_ttl_and_offline),
        cmocka_unit_test(reads_should_refuse_what_is_not_a_regular_file_without_blocking),
        cmocka_unit_test(site_cache_should_be_read_when_trusted_and_refused_when_writable),
        cmocka_unit_test(cache_should_never_keep_what_the_hub_got_wrong),
        cmocka_unit_test(header_len_should_reject_nonsense_lengths),
        cmocka_unit_test(parse_header_should_sum_elements_by_dtype_and_group),
        cmocka_unit_test(parse_header_should_reject_what_does_not_add_up),
        cmocka_unit_test(group_should_sort_tensor_names_as_transformers_names_them),
        cmocka_unit_test(scan_should_read_local_checkouts_and_agree_with_the_graph),
        cmocka_unit_test(compare_should_name_stored_heads_and_buffers),
        cmocka_unit_test(verify_should_agree_on_every_shipped_index_where_the_graph_is_right),
        cmocka_unit_test(ckpt_json_should_round_trip_and_refuse_what_fitgate_did_not_write),
        cmocka_unit_test(
            ckpt_json_should_keep_the_tensor_rows_and_refuse_rows_that_do_not_add_up),
        cmocka_unit_test(ckpt_should_be_cached_beside_the_config_and_answer_by_ttl_and_offline),
        cmocka_unit_test(ckpt_should_remember_a_repository_without_safetensors),
        cmocka_unit_test(ckpt_should_keep_one_deadline_for_the_whole_scan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
