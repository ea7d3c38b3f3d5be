/*
 * ckpt.h - what the checkpoint of a model named by hub id stores (safetensors.h's summary),
 * kept like its config: fitgate's cache (cache.h) holds it as checkpoint.json beside the
 * cached config.json (ROOT/models--ORG--NAME/<rev>/checkpoint.json: same trust rule, same
 * atomic write, a commit's entry never expires, a moving ref's lives ttl_s and is also
 * stored under the commit it pointed to).  Without a usable entry the hub is asked: the
 * index and every shard's header by HTTP range requests, all within one budget, then the
 * answer is cached.  A repository with no safetensors is remembered as such, so the hub is
 * not asked again within the ttl; an answer cut short by the deadline or the network is
 * used but not cached (the next job asks again).
 *
 * Error contract: see error.h.  fg_ckpt_get fails with FG_E_NOTFOUND when nothing is
 * cached and the hub may not be asked (offline, or scan off), with the hub's errors
 * (FG_E_TIMEDOUT, FG_E_NET, FG_E_DENIED ...) when it was asked and did not answer and no
 * expired entry stands in, and with FG_E_PARSE for a malformed index or header.  Entries
 * that break the trust rule or do not parse are skipped and said in the note.
 *
 * Ownership: struct fg_ckpt is plain data the caller owns (about 5 KB); the options and
 * the id are borrowed for the call.  fg_ckpt_to_json's text is the caller's to free().
 */
#ifndef FG_CKPT_H
#define FG_CKPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "source/safetensors.h"
#include "source/source.h"

/* The cache entry's file name, beside config.json. */
#define FG_CKPT_FILE "checkpoint.json"

enum fg_ckpt_from {
    FG_CKPT_HUB,          /* read from the hub now */
    FG_CKPT_CACHE,        /* fitgate's cache, fresh (or a commit's) */
    FG_CKPT_CACHE_STALE,  /* fitgate's cache, expired: offline, or the hub did not answer */
};

struct fg_ckpt_opts {
    uint32_t budget_ms;   /* the whole scan, every request within it; 0: o->timeout_ms */
    size_t max_shards;    /* an index naming more shards: no header is read, its metadata
                             stands (0: no cap) */
    bool scan;            /* the hub may be asked (false: the cache only) */
    struct fg_st_layout *layout; /* borrowed, may be NULL: filled with the checkpoint's tensor
                                    rows (st_layout.h) from the entry or the headers */
    bool need_layout;     /* an entry without the rows does not answer: the hub is asked,
                             the entry standing in when it does not answer */
};

struct fg_ckpt {
    bool safetensors;                    /* false: the repository has no safetensors (no
                                            index, no model.safetensors); sum is empty */
    struct fg_st_summary sum;
    char commit[FG_SOURCE_REV_MAX + 1];  /* the commit it describes; "" unknown */
    enum fg_ckpt_from from;
    int64_t age_s;                       /* of a cache entry */
    unsigned requests;                   /* hub requests made now (0 from the cache) */
    uint32_t elapsed_ms;                 /* time the hub took now */
    char where[FG_SOURCE_WHERE_MAX];     /* the cache entry, or the hub repository's URL */
    char note[300];                      /* an entry skipped, "not cached: ...", or "" */
};

/*
 * The inventory of id's checkpoint.  commit (NULL or "" unknown) is the commit the config
 * came from: its entry is looked up first and a scan reads the shards at it.  Looked up
 * in o->cache_dir then o->site_cache_dir; asked of the hub (when co->scan and o is not
 * offline) when no fresh entry is there, and stored where o says (cache.h).
 */
int fg_ckpt_get(const struct fg_source_opts *o, const struct fg_model_id *id, const char *commit,
                const struct fg_ckpt_opts *co, struct fg_ckpt *out, struct fg_err *err);

/* c as its cache entry: a JSON object (safetensors, commit, the summary's counts, and the
 * tensor rows when c->sum.layout holds them). */
int fg_ckpt_to_json(const struct fg_ckpt *c, char **text, size_t *len, struct fg_err *err);

/*
 * Parse a cache entry (origin names it) into c (safetensors, commit, sum; the rest zero).
 * FG_E_PARSE when it is not one fitgate wrote: another format, a count that is not a whole
 * number, an unknown dtype or group, sums that do not add up.
 */
int fg_ckpt_from_json(const char *text, size_t len, const char *origin, struct fg_ckpt *c,
                      struct fg_err *err);

/* fg_ckpt_from_json, the entry's tensor rows into layout too (may be NULL; emptied first,
 * and when the entry has none), c->sum.layout set to it.  FG_E_PARSE also for rows that do
 * not add up to the entry's tensors and total. */
int fg_ckpt_from_json_rows(const char *text, size_t len, const char *origin, struct fg_ckpt *c,
                           struct fg_st_layout *layout, struct fg_err *err);

#endif
