/*
 * cache.h - internal to the engine: fitgate's own cache of what it fetched from the hub:
 * config.json (source.c reads it as the "cache" step and writes it after a hub answer) and
 * checkpoint.json, the inventory of a checkpoint's safetensors headers (ckpt.c).  An entry
 * is ROOT/models--ORG--NAME/<rev, '/' as %2F>/<file>, one JSON object, written atomically
 * (temporary file, fsync, rename).  Trust rule: every directory and file of a
 * cache is ours (a site cache may also be root's) and writable by nobody else, so no other
 * user can plant a config that gates our job; a cache that breaks it is refused with
 * FG_E_DENIED.
 *
 * Ownership: an entry's text is malloc'ed and belongs to the caller, who frees it with
 * free(); the key's strings are borrowed for the call.
 *
 * Error contract: see error.h.  FG_E_NOTFOUND without a detail when there is no entry.
 */
#ifndef FG_CACHE_H
#define FG_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* The sizes of source.h's (FG_SOURCE_PATH_MAX, _REV_MAX, _WHERE_MAX): source.c checks. */
#define FG__CACHE_DIR_MAX 1024
#define FG__CACHE_REV_MAX 128
#define FG__CACHE_PATH_MAX 2048

/* Which entry: file ("config.json", "checkpoint.json": a plain name) of org/name at rev;
 * pinned when rev is a commit (it never changes, so its entry never expires). */
struct fg__cache_key {
    const char *org, *name, *rev;
    bool pinned;
    const char *file;
};

struct fg__cache_entry {
    char *text;                      /* NUL-terminated; the caller frees it */
    size_t len;
    int64_t age_s;                   /* since written */
    bool fresh;                      /* pinned, or younger than the ttl */
    char path[FG__CACHE_PATH_MAX];   /* the entry's file, for messages */
};

/*
 * Read k's entry under root (site: a shared cache, which root may own), at most max_bytes.
 * FG_E_NOTFOUND when absent; FG_E_DENIED by the trust rule; FG_E_IO, FG_E_RANGE; FG_E_PARSE
 * when the entry is not a JSON object.  e->text is set only on success.
 */
int fg__cache_read(const struct fg__cache_key *k, const char *root, bool site, uint64_t max_bytes,
                   uint64_t ttl_s, struct fg__cache_entry *e, struct fg_err *err);

/*
 * Store text as k's entry where we may: cache_dir, else a site_cache_dir we own (either ""
 * for none); also under the commit `also` (NULL or "" for none) that a moving ref pointed
 * to.  Never fails: a write that fails is logged and said in note ("not cached: ...").
 */
void fg__cache_store(const struct fg__cache_key *k, const char *cache_dir,
                     const char *site_cache_dir, const char *also, const char *text, size_t len,
                     char *note, size_t note_cap);

#endif
