/*
 * hub.c - one bounded HTTP GET over libcurl (see hub.h for the limits).
 *
 * libcurl is loaded on the first request (dlopen), not linked: with its TLS,
 * Kerberos, LDAP, SSH... dependencies it is ~30 shared objects, 4.5 ms of
 * dynamic loading for every CLI run and 6 ms + 6.5 MB for every tagged
 * sbatch, which a model found in a cache never needs (bench/RESULTS.md).
 * <curl/curl.h> still gives the types and constants; every call goes through
 * the table `cu` below.
 *
 * Redirects are followed here rather than by CURLOPT_FOLLOWLOCATION so
 * that each hop gets what is left of one deadline, each target is checked
 * against the scheme rule (a loopback http endpoint must not be able to
 * send us to plain http elsewhere), and the token never leaves the host
 * it was meant for.
 */
#include "source/hub.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <curl/curl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "util/log.h"

/* Bytes of an error page kept for nothing but a message: the hub's are tiny. */
#define ERROR_BODY_MAX 4096u
#define DEFAULT_TIMEOUT_MS 10000u
#define DEFAULT_MAX_BYTES (4u << 20)
/* Connecting should take a fraction of the budget; the rest is for the answer. */
#define CONNECT_MAX_MS 10000u

/* libcurl's soname since 7.16 (the ABI fitgate is built against) and the Debian package
 * that ships it, for the message when it is missing. */
#define CURL_SONAME "libcurl.so.4"
#define CURL_PACKAGE "libcurl4"

/* Every libcurl function hub.c calls, loaded by name: curl_<n>. */
#define CURL_FNS(X)                                                                    \
    X(global_init) X(easy_strerror) X(easy_init) X(easy_cleanup) X(easy_setopt)         \
    X(easy_perform) X(easy_getinfo) X(slist_append) X(slist_free_all) X(url) X(url_set) \
    X(url_get) X(url_cleanup) X(free)

/* Each pointer has the type of the header's declaration (__typeof__), so every call is
 * checked against libcurl's real prototype.  (curl_easy_setopt and curl_easy_getinfo are
 * also type-checking macros under gcc; naming them without "(" takes the functions.) */
static struct {
#define CURL_FIELD(n) __typeof__(curl_##n) *n;
    CURL_FNS(CURL_FIELD)
#undef CURL_FIELD
} cu;

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static char curl_load_error[256]; /* why libcurl cannot be used; "" once loaded */
static CURLcode curl_init_rc = CURLE_FAILED_INIT;

/*
 * Load libcurl and run curl_global_init, once per process: pthread_once makes the first
 * caller the only one (curl_global_init is not thread-safe in every libcurl the plugin
 * may meet, and the table must be complete before anyone reads it).  Neither is ever
 * undone: the handle stays open for the life of the process, so the pointers stay valid,
 * and another user of libcurl in the process may still need its global state.
 */
static void curl_load_once(void)
{
    void *h = dlopen(CURL_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(curl_load_error, sizeof curl_load_error, "%s", dlerror());
        return;
    }
    const char *missing = NULL;
#define CURL_LOAD(n)                                                       \
    if (!missing && !(cu.n = (__typeof__(cu.n))dlsym(h, "curl_" #n))) \
        missing = "curl_" #n;
    CURL_FNS(CURL_LOAD)
#undef CURL_LOAD
    if (missing) {
        /* an older or foreign library under that name: refuse it whole */
        snprintf(curl_load_error, sizeof curl_load_error, "%s has no %s", CURL_SONAME, missing);
        memset(&cu, 0, sizeof cu);
        dlclose(h);
        return;
    }
    curl_init_rc = cu.global_init(CURL_GLOBAL_DEFAULT);
}

/* libcurl loaded and initialised, or FG_E_UNSUPPORTED saying what to install. */
static int curl_ready(struct fg_err *err)
{
    pthread_once(&curl_once, curl_load_once);
    if (curl_load_error[0])
        return fg_err_set(err, FG_E_UNSUPPORTED,
                          "cannot load libcurl (%s), which fitgate needs to fetch from the hub; "
                          "install the %s package (RPM: libcurl), or use a model directory, "
                          "a site dir or cached config with HF_HUB_OFFLINE=1",
                          curl_load_error, CURL_PACKAGE);
    if (curl_init_rc != CURLE_OK)
        return fg_err_set(err, FG_E_NET, "libcurl failed to initialise: %s",
                          cu.easy_strerror(curl_init_rc));
    return 0;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

struct xfer {
    char *buf;
    size_t len, alloc;
    uint64_t keep;        /* body bytes wanted at most */
    bool range;           /* a Range was asked for */
    uint64_t skip;        /* server ignored the Range (200): bytes to drop first */
    uint64_t skipped;
    bool over;            /* body longer than keep on a plain GET */
    bool enough;          /* range satisfied from a 200 body: stop is success */
    long status;          /* from the status line, known before the body */
    /* headers of the current response */
    char commit[72];
    char err_code[64];
    char err_msg[200];
    uint64_t range_total; /* Content-Range: bytes a-b/N */
    uint64_t length;      /* Content-Length */
};

static void xfer_reset(struct xfer *x)
{
    x->len = 0;
    x->skipped = 0;
    x->over = x->enough = false;
    x->status = 0;
    x->commit[0] = x->err_code[0] = x->err_msg[0] = '\0';
    x->range_total = x->length = 0;
}

static int xfer_append(struct xfer *x, const char *p, size_t n)
{
    if (x->len + n + 1 > x->alloc) {
        size_t want = x->alloc ? x->alloc : 4096;
        while (want < x->len + n + 1)
            want *= 2;
        char *b = realloc(x->buf, want);
        if (!b)
            return -1;
        x->buf = b;
        x->alloc = want;
    }
    memcpy(x->buf + x->len, p, n);
    x->len += n;
    x->buf[x->len] = '\0';
    return 0;
}

static size_t on_body(char *p, size_t size, size_t nmemb, void *ud)
{
    struct xfer *x = ud;
    size_t total = size * nmemb, in = total;
    if (x->status < 200 || x->status >= 300) {
        /* an error page or a redirect: keep a little for the message only */
        size_t room = x->len < ERROR_BODY_MAX ? ERROR_BODY_MAX - x->len : 0;
        if (in > room)
            in = room;
        return xfer_append(x, p, in) ? 0 : total;
    }
    /* skip holds range_off: a 206 starts at it, a 200 (Range ignored) at byte 0 */
    if (x->status == 206)
        x->skip = 0;
    if (x->skip > x->skipped) {
        uint64_t s = x->skip - x->skipped;
        if (s > in)
            s = in;
        x->skipped += s;
        p += s;
        in -= (size_t)s;
    }
    if (!in)
        return total;
    uint64_t room = x->keep > x->len ? x->keep - x->len : 0;
    if (in > room) {
        if (x->range) {
            if (xfer_append(x, p, (size_t)room))
                return 0;
            x->enough = true; /* aborting now is how we stop reading */
        } else {
            x->over = true;
        }
        return 0;
    }
    return xfer_append(x, p, in) ? 0 : total;
}

static void header_value(const char *line, size_t n, size_t name_len, char *out, size_t cap)
{
    const char *v = line + name_len;
    const char *end = line + n;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
        end--;
    size_t len = (size_t)(end - v);
    if (len >= cap)
        len = cap - 1;
    memcpy(out, v, len);
    out[len] = '\0';
}

static bool header_is(const char *line, size_t n, const char *name)
{
    size_t l = strlen(name);
    return n > l && strncasecmp(line, name, l) == 0;
}

static size_t on_header(char *line, size_t size, size_t nmemb, void *ud)
{
    struct xfer *x = ud;
    size_t n = size * nmemb;
    char v[256];
    if (n > 5 && strncmp(line, "HTTP/", 5) == 0) {
        /* a new response (a 100 Continue, or the one that counts) */
        const char *sp = memchr(line, ' ', n);
        x->status = sp ? strtol(sp + 1, NULL, 10) : 0;
        x->commit[0] = x->err_code[0] = x->err_msg[0] = '\0';
        x->range_total = x->length = 0;
    } else if (header_is(line, n, "x-repo-commit:")) {
        header_value(line, n, 14, x->commit, sizeof x->commit);
    } else if (header_is(line, n, "x-error-code:")) {
        header_value(line, n, 13, x->err_code, sizeof x->err_code);
    } else if (header_is(line, n, "x-error-message:")) {
        header_value(line, n, 16, x->err_msg, sizeof x->err_msg);
    } else if (header_is(line, n, "content-range:")) {
        header_value(line, n, 14, v, sizeof v);
        const char *slash = strrchr(v, '/');
        if (slash && slash[1] != '*')
            x->range_total = strtoull(slash + 1, NULL, 10);
    } else if (header_is(line, n, "content-length:")) {
        header_value(line, n, 15, v, sizeof v);
        x->length = strtoull(v, NULL, 10);
    }
    return n;
}

static bool host_is_loopback(const char *host)
{
    char h[256];
    size_t n = strlen(host);
    if (n >= sizeof h)
        return false;
    memcpy(h, host, n + 1);
    if (h[0] == '[' && n > 2 && h[n - 1] == ']') {
        memmove(h, h + 1, n - 2);
        h[n - 2] = '\0';
    }
    if (strcasecmp(h, "localhost") == 0)
        return true;
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, h, &a4) == 1)
        return (ntohl(a4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, h, &a6) == 1)
        return IN6_IS_ADDR_LOOPBACK(&a6);
    return false;
}

static int bad_url(const char *url, struct fg_err *err)
{
    return fg_err_set(err, FG_E_INVAL, "'%.200s' is not a valid URL; set HF_ENDPOINT to "
                      "https://host[:port]", url);
}

/*
 * Scheme and host of url by libcurl's parser, the one the connection uses (libcurl is
 * loaded; FG_E_INVAL when it does not parse); origin (may be NULL) gets
 * "scheme://host:port" with the scheme's default port filled in, which is
 * what the token is scoped to (RFC 6454 origin: another port is another server).
 */
static int url_parts_origin(const char *url, char *scheme, size_t scap, char *host, size_t hcap,
                            char *origin, size_t ocap, struct fg_err *err)
{
    CURLU *u = cu.url();
    if (!u)
        return fg_err_set(err, FG_E_NOMEM, "out of memory");
    char *s = NULL, *h = NULL, *port = NULL;
    int rc = 0;
    if (cu.url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
        cu.url_get(u, CURLUPART_SCHEME, &s, 0) != CURLUE_OK ||
        cu.url_get(u, CURLUPART_HOST, &h, 0) != CURLUE_OK ||
        (origin && cu.url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK)) {
        rc = bad_url(url, err);
    } else {
        snprintf(scheme, scap, "%s", s);
        snprintf(host, hcap, "%s", h);
        if (origin)
            snprintf(origin, ocap, "%s://%s:%s", s, h, port);
    }
    cu.free(s);
    cu.free(h);
    cu.free(port);
    cu.url_cleanup(u);
    return rc;
}

static int url_parts(const char *url, char *scheme, size_t scap, char *host, size_t hcap,
                     struct fg_err *err)
{
    return url_parts_origin(url, scheme, scap, host, hcap, NULL, 0, err);
}

/*
 * Scheme and host of url without libcurl: fg__hub_check_url runs on every resolution of a
 * hub id (engine/source/source.c checks the endpoint before it looks in the caches), and a model
 * found in a cache must not pay for loading libcurl.  Takes only
 * scheme "://" [userinfo "@"] host [":" port] ["/" | "?" | "#" ...] (RFC 3986), with no
 * control character or space anywhere.  This is the early check of a configured endpoint,
 * not the one that guards a connection: fg__hub_get applies the scheme rule again with
 * libcurl's own parser (url_parts) to the URL it requests and to every redirect target,
 * so a difference between the two parsers can refuse a request, never let one through.
 */
static int split_url(const char *url, char *scheme, size_t scap, char *host, size_t hcap)
{
    for (const unsigned char *c = (const unsigned char *)url; *c; c++)
        if (*c <= 0x20 || *c == 0x7f)
            return -1;
    const char *p = url;
    if (!isalpha((unsigned char)*p))
        return -1;
    while (isalnum((unsigned char)*p) || *p == '+' || *p == '-' || *p == '.')
        p++;
    size_t sl = (size_t)(p - url);
    if (strncmp(p, "://", 3) != 0 || sl >= scap)
        return -1;
    const char *a = p + 3;                    /* authority: up to the path, query or fragment */
    const char *end = a + strcspn(a, "/?#");
    const char *h = a;
    for (const char *q = a; q < end; q++)     /* userinfo ends at the last '@' */
        if (*q == '@')
            h = q + 1;
    const char *he = h;
    if (*h == '[') {                          /* IPv6 literal, kept with its brackets */
        while (he < end && *he != ']')
            he++;
        if (he == end)
            return -1;
        he++;
    } else {
        while (he < end && *he != ':')
            he++;
    }
    if (he == h || (size_t)(he - h) >= hcap)
        return -1;
    if (he < end) {                           /* the port: digits only */
        if (*he != ':')
            return -1;
        for (const char *q = he + 1; q < end; q++)
            if (!isdigit((unsigned char)*q))
                return -1;
    }
    for (const char *q = h; q < he; q++)
        if (strchr("\\\"<>^`{|}", *q))
            return -1;
    memcpy(scheme, url, sl);
    scheme[sl] = '\0';
    memcpy(host, h, (size_t)(he - h));
    host[he - h] = '\0';
    return 0;
}

/* The scheme rule on a parsed URL. */
static int scheme_rule(const char *url, const char *scheme, const char *host, bool allow_http,
                       struct fg_err *err)
{
    if (strcasecmp(scheme, "https") == 0)
        return 0;
    if (strcasecmp(scheme, "http") == 0) {
        if (allow_http || host_is_loopback(host))
            return 0;
        return fg_err_set(err, FG_E_INVAL,
                          "'%.200s': plain http to a non-loopback host is refused (no TLS); "
                          "use https, or allow http explicitly (FITGATE_ALLOW_HTTP=1 / "
                          "HubAllowHttp=yes) for a trusted mirror", url);
    }
    return fg_err_set(err, FG_E_INVAL, "'%.200s': scheme '%s' is not supported; use https", url,
                      scheme);
}

int fg__hub_check_url(const char *url, bool allow_http, struct fg_err *err)
{
    char scheme[16], host[256];
    if (!url || !*url)
        return fg_err_set(err, FG_E_INVAL, "empty hub URL");
    if (split_url(url, scheme, sizeof scheme, host, sizeof host))
        return bad_url(url, err);
    return scheme_rule(url, scheme, host, allow_http, err);
}

/* The scheme rule by libcurl's parser, for a URL about to be requested (libcurl loaded). */
static int check_url_curl(const char *url, bool allow_http, struct fg_err *err)
{
    char scheme[16], host[256];
    if (!url || !*url)
        return fg_err_set(err, FG_E_INVAL, "empty hub URL");
    int rc = url_parts(url, scheme, sizeof scheme, host, sizeof host, err);
    return rc ? rc : scheme_rule(url, scheme, host, allow_http, err);
}

int fg__hub_quote(const char *s, char *out, size_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        bool plain = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
                     (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' || *p == '_' || *p == '~';
        if (o + (plain ? 1 : 3) >= cap)
            return FG_E_RANGE;
        if (plain) {
            out[o++] = (char)*p;
        } else {
            out[o++] = '%';
            out[o++] = hex[*p >> 4];
            out[o++] = hex[*p & 15];
        }
    }
    if (o >= cap)
        return FG_E_RANGE;
    out[o] = '\0';
    return 0;
}

void fg__hub_resp_clear(struct fg__hub_resp *resp)
{
    if (!resp)
        return;
    free(resp->body);
    memset(resp, 0, sizeof *resp);
}

static int map_status(const struct xfer *x, const char *url, struct fg_err *err)
{
    char hub[300] = "";
    if (x->err_code[0] || x->err_msg[0])
        snprintf(hub, sizeof hub, " (hub: %s%s%s)", x->err_code, x->err_code[0] && x->err_msg[0]
                 ? ": " : "", x->err_msg);
    switch (x->status) {
    case 401:
        return fg_err_set(err, FG_E_DENIED,
                          "%.200s: HTTP 401%s: the model is gated or private (or does not exist); "
                          "set HF_TOKEN to a token that has access and accept the model's licence "
                          "on its page", url, hub);
    case 403:
        return fg_err_set(err, FG_E_DENIED,
                          "%.200s: HTTP 403%s: the token has no access to this gated model; accept "
                          "its licence on the model page (and wait for approval) or use a token "
                          "that has access", url, hub);
    case 404:
        return fg_err_set(err, FG_E_NOTFOUND, "%.200s: HTTP 404%s: no such model, revision or "
                          "file; check the id and @revision", url, hub);
    case 416:
        return fg_err_set(err, FG_E_RANGE, "%.200s: HTTP 416: byte range not satisfiable (file "
                          "shorter than its header claims)", url);
    case 429:
        return fg_err_set(err, FG_E_NET, "%.200s: HTTP 429%s: rate limited; retry later or set "
                          "HF_TOKEN", url, hub);
    default:
        return fg_err_set(err, FG_E_NET, "%.200s: HTTP %ld%s", url, x->status, hub);
    }
}

static int map_curl(CURLcode c, const char *errbuf, const struct xfer *x,
                    const struct fg__hub_req *req, uint32_t timeout_ms, const char *url,
                    struct fg_err *err)
{
    const char *why = errbuf[0] ? errbuf : cu.easy_strerror(c);
    if (x->over || c == CURLE_FILESIZE_EXCEEDED)
        return fg_err_set(err, FG_E_RANGE, "%.200s: response larger than %llu bytes; refused "
                          "(not a config or header a model repository would hold)", url,
                          (unsigned long long)(req->max_bytes ? req->max_bytes : DEFAULT_MAX_BYTES));
    switch (c) {
    case CURLE_OPERATION_TIMEDOUT:
        return fg_err_set(err, FG_E_TIMEDOUT,
                          "%.200s: no complete answer within the %u ms deadline (%s); the hub or "
                          "mirror is unreachable or stalled: check HF_ENDPOINT and the network, or "
                          "set HF_HUB_OFFLINE=1 to use cached configs", url, timeout_ms, why);
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        return fg_err_set(err, FG_E_NET, "%.200s: cannot resolve the host (%s); check HF_ENDPOINT "
                          "or set HF_HUB_OFFLINE=1", url, why);
    case CURLE_COULDNT_CONNECT:
        return fg_err_set(err, FG_E_NET, "%.200s: cannot connect (%s); check HF_ENDPOINT or set "
                          "HF_HUB_OFFLINE=1", url, why);
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_CERTPROBLEM:
        return fg_err_set(err, FG_E_NET, "%.200s: TLS verification failed (%s); fitgate only "
                          "talks to hubs with a certificate the system trusts", url, why);
    case CURLE_UNSUPPORTED_PROTOCOL:
        return fg_err_set(err, FG_E_INVAL, "%.200s: protocol refused (%s)", url, why);
    case CURLE_PARTIAL_FILE:
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_WEIRD_SERVER_REPLY:
        return fg_err_set(err, FG_E_NET, "%.200s: malformed or truncated response (%s)", url, why);
    default:
        return fg_err_set(err, FG_E_NET, "%.200s: %s", url, why);
    }
}

/* The "Authorization: Bearer" header of req's token in *auth (NULL without a token; the
 * caller frees it with cu.slist_free_all): FG_E_RANGE for a token too long, FG_E_NOMEM. */
static int auth_header(const struct fg__hub_req *req, struct curl_slist **auth,
                       struct fg_err *err)
{
    char authline[600];
    *auth = NULL;
    if (!req->token || !*req->token)
        return 0;
    if (snprintf(authline, sizeof authline, "Authorization: Bearer %s", req->token) >=
        (int)sizeof authline)
        return fg_err_set(err, FG_E_RANGE, "token longer than %zu bytes", sizeof authline - 40);
    *auth = cu.slist_append(NULL, authline);
    return *auth ? 0 : fg_err_set(err, FG_E_NOMEM, "out of memory");
}

/* One hop's options on handle h: the URL, the time left of the deadline, the protocols,
 * TLS verification, the callbacks into x, and the token only for the origin it was given
 * for (auth NULL elsewhere). */
static void hop_options(CURL *h, const char *url, uint64_t left, uint32_t timeout,
                        char *errbuf, struct xfer *x, const char *host,
                        struct curl_slist *auth, const struct fg__hub_req *req,
                        const char *range)
{
    cu.easy_setopt(h, CURLOPT_URL, url);
    cu.easy_setopt(h, CURLOPT_NOSIGNAL, 1L); /* threads in slurmctld/sbatch: no SIGALRM */
    cu.easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
    cu.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    cu.easy_setopt(h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    cu.easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)left);
    cu.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                   (long)(left < CONNECT_MAX_MS ? left : CONNECT_MAX_MS));
    /* A server that trickles (under 1 byte/s for the budget, at least 1 s) is dead. */
    cu.easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    cu.easy_setopt(h, CURLOPT_LOW_SPEED_TIME, (long)(timeout / 2000 ? timeout / 2000 : 1));
    cu.easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
    cu.easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
    cu.easy_setopt(h, CURLOPT_USERAGENT, "fitgate/0.1 (+libcurl)");
    cu.easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    cu.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    cu.easy_setopt(h, CURLOPT_WRITEDATA, x);
    cu.easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    cu.easy_setopt(h, CURLOPT_HEADERDATA, x);
    if (host_is_loopback(host))
        cu.easy_setopt(h, CURLOPT_NOPROXY, "*"); /* a site proxy cannot reach our loopback */
    if (auth)
        cu.easy_setopt(h, CURLOPT_HTTPHEADER, auth);
    if (req->range)
        cu.easy_setopt(h, CURLOPT_RANGE, range);
    else
        cu.easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)x->keep);
}

/* A redirect's Location into url (cap bytes), checked as the first URL was; the error when
 * it has none, is one hop too many, or is refused. */
static int redirect(CURL *h, long status, char *url, size_t cap, unsigned hop,
                    const struct fg__hub_req *req, struct fg_err *err)
{
    char *loc = NULL;
    cu.easy_getinfo(h, CURLINFO_REDIRECT_URL, &loc);
    if (!loc || !*loc)
        return fg_err_set(err, FG_E_NET, "%.200s: HTTP %ld without a Location", url, status);
    if (hop + 1 > FG_HUB_MAX_REDIRS)
        return fg_err_set(err, FG_E_NET, "%.200s: more than %d redirects; refusing to follow",
                          req->url, FG_HUB_MAX_REDIRS);
    int rc = check_url_curl(loc, req->allow_http, err);
    if (rc) {
        fg_err_prefix(err, "redirect from %.200s", url);
        return rc;
    }
    fg__log(FG_LOG_DEBUG, "hub: %ld %.200s -> %.200s", status, url, loc);
    if (snprintf(url, cap, "%s", loc) >= (int)cap)
        return fg_err_set(err, FG_E_RANGE, "redirect URL too long");
    return 0;
}

/* A final answer into resp: its status, the file size, the commit, and the body (x's,
 * taken; "" when none came). */
static int take_answer(struct xfer *x, long status, const char *url,
                       const struct fg__hub_req *req, struct fg__hub_resp *resp,
                       struct fg_err *err)
{
    if (status < 200 || status >= 300)
        return map_status(x, url, err);
    if (req->range && status == 206 && x->len > req->range_len)
        return fg_err_set(err, FG_E_NET, "%.200s: 206 with more bytes than asked", url);
    resp->status = status;
    resp->file_size = x->range_total ? x->range_total : (status == 200 ? x->length : 0);
    snprintf(resp->commit, sizeof resp->commit, "%s", x->commit);
    snprintf(resp->final_url, sizeof resp->final_url, "%s", url);
    if (!x->buf && xfer_append(x, "", 0))
        return fg_err_set(err, FG_E_NOMEM, "out of memory");
    resp->body = x->buf;
    resp->len = x->len;
    x->buf = NULL;
    return 0;
}

int fg__hub_get(const struct fg__hub_req *req, struct fg__hub_resp *resp, struct fg_err *err)
{
    memset(resp, 0, sizeof *resp);
    if (!req || !req->url)
        return fg_err_set(err, FG_E_INVAL, "no URL");
    int rc = curl_ready(err);
    if (rc)
        return rc;
    rc = check_url_curl(req->url, req->allow_http, err);
    if (rc)
        return rc;
    if (req->range && req->range_len == 0)
        return fg_err_set(err, FG_E_INVAL, "empty byte range for %.200s", req->url);

    const uint32_t timeout = req->timeout_ms ? req->timeout_ms : DEFAULT_TIMEOUT_MS;
    const uint64_t deadline = now_ms() + timeout;
    char url[2048], scheme[16], host[256], first_origin[300], origin[300];
    if (snprintf(url, sizeof url, "%s", req->url) >= (int)sizeof url)
        return fg_err_set(err, FG_E_RANGE, "URL too long: %.200s", req->url);
    if ((rc = url_parts_origin(url, scheme, sizeof scheme, host, sizeof host, first_origin,
                               sizeof first_origin, err)))
        return rc;

    CURL *h = cu.easy_init();
    if (!h)
        return fg_err_set(err, FG_E_NOMEM, "libcurl: cannot create a handle");
    struct curl_slist *auth = NULL;
    struct xfer x = {0};
    if ((rc = auth_header(req, &auth, err)))
        goto out;
    char range[64] = "";
    if (req->range)
        snprintf(range, sizeof range, "%llu-%llu", (unsigned long long)req->range_off,
                 (unsigned long long)(req->range_off + req->range_len - 1));
    x.keep = req->range ? req->range_len : (req->max_bytes ? req->max_bytes : DEFAULT_MAX_BYTES);
    x.range = req->range;
    char errbuf[CURL_ERROR_SIZE];

    for (unsigned hop = 0;; hop++) {
        uint64_t now = now_ms();
        if (now >= deadline) {
            rc = fg_err_set(err, FG_E_TIMEDOUT, "%.200s: deadline of %u ms passed after %u "
                            "redirects", url, timeout, hop);
            break;
        }
        if ((rc = url_parts_origin(url, scheme, sizeof scheme, host, sizeof host, origin,
                                   sizeof origin, err)))
            break;
        xfer_reset(&x);
        /* A 200 to a Range request carries the file from byte 0. */
        x.skip = req->range ? req->range_off : 0;
        errbuf[0] = '\0';
        /* A fresh handle per hop, not curl_easy_reset: libcurl 7.88.1 (Debian 12) keeps a
         * pointer to the previous transfer's freed headers and reads it when the next response
         * folds a header line (heap-use-after-free; tests/fuzz/regress/hub). */
        if (hop) {
            cu.easy_cleanup(h);
            h = cu.easy_init(); /* NULL: every call below fails cleanly, perform gives an error */
        }
        /* the token goes to the origin it was given for only (scheme, host
         * and port), never to a CDN or another service on the same host */
        hop_options(h, url, deadline - now, timeout, errbuf, &x, host,
                    strcasecmp(origin, first_origin) == 0 ? auth : NULL, req, range);
        CURLcode c = cu.easy_perform(h);
        if (c != CURLE_OK && !(c == CURLE_WRITE_ERROR && x.enough)) {
            rc = map_curl(c, errbuf, &x, req, timeout, url, err);
            break;
        }
        long status = 0;
        cu.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
        x.status = status;
        if (status == 301 || status == 302 || status == 303 || status == 307 || status == 308) {
            if ((rc = redirect(h, status, url, sizeof url, hop, req, err)))
                break;
            resp->redirects = hop + 1;
            continue;
        }
        rc = take_answer(&x, status, url, req, resp, err);
        break;
    }
out:
    free(x.buf);
    cu.slist_free_all(auth);
    cu.easy_cleanup(h);
    if (rc) {
        unsigned r = resp->redirects;
        fg__hub_resp_clear(resp);
        resp->redirects = r;
    }
    return rc;
}
