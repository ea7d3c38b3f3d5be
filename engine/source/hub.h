/*
 * hub.h - internal: one HTTP GET against a Hugging Face hub (or a mirror)
 * over libcurl, with every limit a job gate needs so it never hangs sbatch:
 *
 *   - one hard deadline for the whole exchange, redirects included
 *     (CURLOPT_TIMEOUT_MS per hop set to what is left, a connect timeout,
 *     and a low-speed limit so a trickling server is cut off early);
 *   - a cap on the bytes kept (Content-Length over the cap is refused
 *     before the body; a body without a length is cut at the cap);
 *   - TLS verification on; plain http only to a loopback host or when the
 *     caller says so explicitly (allow_http);
 *   - redirects followed by hand (at most FG_HUB_MAX_REDIRS), each target
 *     checked against the same scheme rule, and the token dropped when the
 *     host changes (the hub sends LFS files to a CDN with signed URLs).
 *
 * Error contract: see error.h.  FG_E_DENIED (401/403), FG_E_NOTFOUND (404),
 * FG_E_TIMEDOUT (deadline), FG_E_RANGE (response over the cap, 416),
 * FG_E_NET (connection, TLS, 5xx, other statuses), FG_E_INVAL (URL refused),
 * FG_E_UNSUPPORTED (libcurl.so.4 cannot be loaded: it is dlopen'ed on the
 * first request, not linked; the detail names the package to install).
 * err->detail names the URL (never the token) and, where the hub sent one,
 * its X-Error-Message.  fg__hub_check_url and fg__hub_quote never load libcurl.
 *
 * Not part of the public API: callers are engine/source/source.c and the tests.
 */
#ifndef FG_HUB_H
#define FG_HUB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

#define FG_HUB_MAX_REDIRS 5

struct fg__hub_req {
    const char *url;          /* borrowed */
    const char *token;        /* borrowed; NULL or "" for none; sent as a Bearer header */
    bool allow_http;          /* plain http to non-loopback hosts */
    uint32_t timeout_ms;      /* whole exchange; 0 means 10 s */
    uint64_t max_bytes;       /* bytes of body kept at most; 0 means 4 MiB */
    bool range;               /* send Range: bytes=off-(off+len-1) */
    uint64_t range_off, range_len;
};

struct fg__hub_resp {
    long status;              /* final HTTP status */
    char *body;               /* owned, NUL-terminated; free with fg__hub_resp_clear */
    size_t len;
    uint64_t file_size;       /* from Content-Range "/N" or Content-Length of a 200; 0 unknown */
    char commit[72];          /* X-Repo-Commit when the hub sent one */
    char final_url[2048];     /* after redirects */
    unsigned redirects;
};

/* Perform the GET.  On success (2xx) resp holds the body; on failure resp is cleared. */
int fg__hub_get(const struct fg__hub_req *req, struct fg__hub_resp *resp, struct fg_err *err);

/* Free the body and zero resp.  NULL-safe. */
void fg__hub_resp_clear(struct fg__hub_resp *resp);

/*
 * Check a URL against the scheme rule: https always; http only when the
 * host is loopback (127.0.0.0/8, ::1, localhost) or allow_http.  Fails with
 * FG_E_INVAL naming the URL and what to do.
 */
int fg__hub_check_url(const char *url, bool allow_http, struct fg_err *err);

/* Quote s for a URL path segment (RFC 3986 unreserved kept, rest %XX) into out. */
int fg__hub_quote(const char *s, char *out, size_t cap);

#endif
