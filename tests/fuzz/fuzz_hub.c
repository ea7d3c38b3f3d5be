/*
 * fuzz_hub.c - libFuzzer target: what a hub (or a mirror, a proxy, a captive
 * portal) sends back, through the real client: libcurl, engine/source/hub.c's header
 * and body handling (status, Content-Length / Content-Range, X-Repo-Commit,
 * X-Error-Code / X-Error-Message, redirects, the byte caps) and what
 * engine/source/source.c and engine/source/safetensors.c do with the body.
 *
 * Input: one mode byte, then raw HTTP responses separated by "\n--NEXT--\n".
 * A server thread on 127.0.0.1 answers the k-th connection of a run with the
 * k-th response (the last one again after that) and closes it.
 *   mode % 4 == 0   fg_source_resolve(acme/tiny) from the hub only (config.json)
 *   mode % 4 == 1   fg_source_repo_read of model.safetensors by range, then
 *                   fg_source_repo_read_all of model.safetensors.index.json
 *   mode % 4 == 2   fg_safetensors_scan of the hub repository (index, then headers)
 *   mode % 4 == 3   as 0 for a commit revision, with a token
 *
 * Hermetic: connect() and getaddrinfo() are replaced in this program so that
 * whatever host a redirect names, the connection lands on the loopback server
 * (https ones fail their TLS handshake there); nothing leaves the machine.
 *
 * Seeds: HTTP responses made from tests/fixtures/hub (tests/fuzz/seeds.sh).
 * Checks: the sanitizers, fuzz.h's error contract, the caps on what is kept.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include "fuzz.h"
#include "source/safetensors.h"
#include "source/source.h"

#define MAX_RESP 16
static const char NEXT[] = "\n--NEXT--\n";

static int listen_fd = -1;
static uint16_t port;

/* The responses of the current run; replaced only while no connection is being served. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle = PTHREAD_COND_INITIALIZER;
static char *resp_buf;
static size_t resp_off[MAX_RESP], resp_len[MAX_RESP], n_resp, next_resp;
static int busy;

/* ---- every connection goes to the loopback server ------------------------------ */

int connect(int fd, const struct sockaddr *sa, socklen_t len)
{
    if (sa && sa->sa_family == AF_INET && port) {
        struct sockaddr_in a;
        memcpy(&a, sa, sizeof a);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons(port);
        return (int)syscall(SYS_connect, fd, &a, (socklen_t)sizeof a);
    }
    if (sa && sa->sa_family == AF_INET6) {
        errno = ENETUNREACH;
        return -1;
    }
    return (int)syscall(SYS_connect, fd, sa, len);
}

int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
                struct addrinfo **res)
{
    static int (*real)(const char *, const char *, const struct addrinfo *, struct addrinfo **);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "getaddrinfo");
    (void)node;
    struct addrinfo h = {0};
    if (hints)
        h = *hints;
    h.ai_family = AF_INET;
    h.ai_flags |= AI_NUMERICHOST;
    return real("127.0.0.1", service, &h, res);
}

/* ---- the server ------------------------------------------------------------------ */

static void *serve(void *arg)
{
    (void)arg;
    for (;;) {
        int c = accept(listen_fd, NULL, NULL);
        if (c < 0)
            continue;
        struct timeval tv = {0, 200000};
        setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        struct timeval stv = {1, 0};
        setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &stv, sizeof stv);
        /* the request: up to its blank line, or whatever came within 200 ms */
        char req[8192];
        size_t got = 0;
        while (got < sizeof req - 1) {
            ssize_t r = recv(c, req + got, sizeof req - 1 - got, 0);
            if (r <= 0)
                break;
            got += (size_t)r;
            req[got] = '\0';
            if (strstr(req, "\r\n\r\n"))
                break;
        }
        pthread_mutex_lock(&mu);
        busy = 1;
        size_t k = next_resp < n_resp ? next_resp : (n_resp ? n_resp - 1 : 0);
        next_resp++;
        const char *p = n_resp ? resp_buf + resp_off[k] : "";
        size_t left = n_resp ? resp_len[k] : 0;
        pthread_mutex_unlock(&mu);
        while (left) {
            ssize_t w = send(c, p, left, MSG_NOSIGNAL);
            if (w <= 0)
                break;
            p += w;
            left -= (size_t)w;
        }
        shutdown(c, SHUT_WR);
        close(c);
        pthread_mutex_lock(&mu);
        busy = 0;
        pthread_cond_broadcast(&idle);
        pthread_mutex_unlock(&mu);
    }
    return NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_log_init();
    static const char *const proxies[] = {"http_proxy", "https_proxy", "HTTP_PROXY",
                                          "HTTPS_PROXY", "ALL_PROXY", "all_proxy"};
    for (size_t i = 0; i < sizeof proxies / sizeof proxies[0]; i++)
        unsetenv(proxies[i]);
    listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&a, sizeof a) ||
        listen(listen_fd, 64) || getsockname(listen_fd, (struct sockaddr *)&a, &al))
        fuzz_fail("cannot listen on 127.0.0.1", strerror(errno));
    port = ntohs(a.sin_port);
    pthread_t t;
    if (pthread_create(&t, NULL, serve, NULL))
        fuzz_fail("cannot start the server thread", "");
    pthread_detach(t);
    return 0;
}

static void set_responses(const uint8_t *data, size_t size)
{
    pthread_mutex_lock(&mu);
    while (busy)
        pthread_cond_wait(&idle, &mu);
    free(resp_buf);
    resp_buf = fuzz_text(data, size);
    n_resp = next_resp = 0;
    if (resp_buf) {
        size_t off = 0;
        while (n_resp < MAX_RESP) {
            const char *nx = memmem(resp_buf + off, size - off, NEXT, sizeof NEXT - 1);
            size_t end = nx && n_resp < MAX_RESP - 1 ? (size_t)(nx - resp_buf) : size;
            resp_off[n_resp] = off;
            resp_len[n_resp] = end - off;
            n_resp++;
            if (end == size)
                break;
            off = end + sizeof NEXT - 1;
        }
    }
    pthread_mutex_unlock(&mu);
}

static void opts(struct fg_source_opts *o, bool token)
{
    fg_source_opts_init(o);
    snprintf(o->endpoint, sizeof o->endpoint, "http://127.0.0.1:%u", (unsigned)port);
    o->order[0] = FG_SOURCE_HUB;
    o->n_order = 1;
    o->timeout_ms = 2000;
    o->max_bytes = 65536;
    o->max_header_bytes = 1u << 20;
    if (token)
        snprintf(o->token, sizeof o->token, "hf_fuzz_token");
}

static void resolve(bool commit)
{
    struct fg_source_opts o;
    struct fg_model_id id;
    struct fg_err err = {0};
    opts(&o, commit);
    if (fg_source_parse_id(commit ? "acme/tiny@0123456789abcdef0123456789abcdef01234567"
                                  : "acme/tiny", &id, &err))
        fuzz_fail("fixed id refused", err.detail);
    struct fg_source_result *r = (struct fg_source_result *)1;
    int rc = fg_source_resolve(&o, &id, &r, &err);
    fuzz_check_rc(rc, &err);
    if (rc) {
        if (r && r != (struct fg_source_result *)1)
            fuzz_fail("fg_source_resolve failed but set *out", err.detail);
        return;
    }
    if (!r || !r->text || r->len > o.max_bytes || strlen(r->text) > r->len)
        fuzz_fail("resolved text missing or over the cap", "");
    fuzz_check_text("source note", r->note, sizeof r->note);
    fg_source_result_free(r);
}

static int open_repo(struct fg_source_repo **repo)
{
    struct fg_source_opts o;
    struct fg_model_id id;
    struct fg_err err = {0};
    opts(&o, false);
    if (fg_source_parse_id("acme/tiny", &id, &err))
        fuzz_fail("fixed id refused", err.detail);
    int rc = fg_source_repo_open(&o, NULL, &id, repo, &err);
    fuzz_check_rc(rc, &err);
    return rc;
}

static void read_files(void)
{
    struct fg_source_repo *repo = NULL;
    if (open_repo(&repo))
        return;
    char buf[4096];
    size_t got = 0;
    uint64_t fsize = 0;
    bool remote = false;
    struct fg_err err = {0};
    int rc = fg_source_repo_read(repo, "model.safetensors", 8, sizeof buf, buf, &got, &fsize,
                                 &remote, &err);
    fuzz_check_rc(rc, &err);
    if (!rc && got > sizeof buf)
        fuzz_fail("range read returned more than asked", "");
    char *text = NULL;
    size_t len = 0;
    rc = fg_source_repo_read_all(repo, "model.safetensors.index.json", 65536, &text, &len,
                                 &remote, &err);
    fuzz_check_rc(rc, &err);
    if (!rc && (!text || len > 65536))
        fuzz_fail("read_all text missing or over its cap", "");
    free(text);
    fg_source_repo_free(repo);
}

static void scan(void)
{
    struct fg_source_repo *repo = NULL;
    if (open_repo(&repo))
        return;
    struct fg_st_summary s;
    struct fg_err err = {0};
    int rc = fg_safetensors_scan(repo, 1u << 20, &s, &err);
    fuzz_check_rc(rc, &err);
    if (!rc)
        fuzz_check_text("no_headers", s.no_headers, sizeof s.no_headers);
    fg_source_repo_free(repo);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    set_responses(data + 1, size - 1);
    switch (data[0] % 4) {
    case 0: resolve(false); break;
    case 1: read_files(); break;
    case 2: scan(); break;
    default: resolve(true); break;
    }
    return 0;
}
