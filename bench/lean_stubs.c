/*
 * lean_stubs.c - an experiment, not a product: the hub client (libcurl) and GPU detection
 * (hwloc) replaced by stubs, linked with the rest of fitgate_engine.so into
 * build/bench/fitgate_engine_lean.so.  tools/bench_slurm.sh times sbatch with it (variant
 * "lean") next to the real engine part, to show what a tagged job with a cached model would
 * cost if libcurl and hwloc were loaded only when needed (a cache miss; the node side):
 * loading fitgate_engine.so pulls ~35 shared libraries through libcurl, most of a tagged
 * submission's overhead (bench/RESULTS.md).  Every stub but the URL check fails; nothing
 * else calls them on the cached submit path.
 */
#include <stdbool.h>
#include <stddef.h>

#include "hw/detect.h"
#include "util/error.h"
#include "source/hub.h"

int fg__hub_get(const struct fg__hub_req *req, struct fg__hub_resp *resp, struct fg_err *err)
{
    (void)req;
    (void)resp;
    return fg_err_set(err, FG_E_NET, "lean benchmark engine: no hub client");
}

void fg__hub_resp_clear(struct fg__hub_resp *resp)
{
    (void)resp;
}

/* The policy checks HubEndpoint= with this when it is read: accept, as the real one does
 * for a loopback http URL. */
int fg__hub_check_url(const char *url, bool allow_http, struct fg_err *err)
{
    (void)url;
    (void)allow_http;
    (void)err;
    return 0;
}

int fg__hub_quote(const char *s, char *out, size_t cap)
{
    (void)s;
    if (cap)
        out[0] = '\0';
    return -1;
}

int fg_detect_gpus(const struct fg_detect_opts *o, struct fg_detect_result **out,
                   struct fg_err *err)
{
    (void)o;
    (void)out;
    return fg_err_set(err, FG_E_IO, "lean benchmark engine: no GPU detection");
}

void fg_detect_result_free(struct fg_detect_result *r)
{
    (void)r;
}
