/*
 * model_load.c - a model as every front end reads it (model_load.h): the
 * config from a path or through the sources, the graph from the family
 * readers (arch/graph.c), and its count weighed against the checkpoint
 * when one is at hand.
 */
#include "model/model_load.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "arch/tensors.h"
#include "arch/graph.h"
#include "model/model.h"
#include "model/model_int.h"
#include "source/ckpt.h"
#include "source/config.h"
#include "source/safetensors.h"
#include "source/st_layout.h"
#include "util/log.h"

int fg_model_load(const char *path, struct fg_model **out, struct fg_err *err)
{
    struct fg_config *doc;
    *out = NULL;
    int rc = fg_config_load(path, &doc, err);
    if (rc)
        return rc;
    rc = fg_model_from_config(doc, path, out, err);
    fg_config_free(doc);
    return rc;
}

/* Add a stored-count rule after finalize: what the checkpoint shows the graph counted
 * wrongly, named; memory follows the nodes (what transformers builds) and does not move. */
static void stored_rule(struct fg_model *m, const char *name, int64_t scalars)
{
    size_t n = m->n_rules;
    fg__model_rule(m, name, scalars);
    if (m->n_rules > n)
        m->params_total += (uint64_t)scalars; /* two's complement: a negative rule subtracts */
}

/*
 * Parts a config declares that not every checkpoint of it stores, decided by the checkpoint
 * at hand before its count is weighed (issue 25: config.json cannot tell them apart):
 *   - a tied lm_head that some releases write anyway (Qwen3-0.6B does; Qwen3-Embedding-0.6B,
 *     with the same config, does not), counted written by the reader (tied_head_open): no
 *     tensor named as a head means none;
 *   - a vision tower and projector a text-only or pruned release leaves out: no tensor
 *     named as one, confirmed by the exact total;
 *   - MTP layers (optional rules) a fine-tune or pruned release drops: the exact total.
 * Each is a rule on the stored count, named.  Returns whether the count changed.
 */
static bool stored_parts(struct fg_model *m, const struct fg_st_summary *s,
                         const struct fg_st_compare *cmp)
{
    uint64_t before = m->params_total, named = 0;
    for (int g = 0; g < FG_ST_GROUP_COUNT; g++)
        named += s->names[g];
    struct fg_node *head = NULL;
    for (size_t i = 0; i < m->n_nodes && !head; i++)
        if (m->nodes[i].kind == FG_NODE_HEAD)
            head = &m->nodes[i];
    if (named && head && m->tied_head_open && head->alias && !s->names[FG_ST_HEAD])
        stored_rule(m, "tied lm_head: the checkpoint's tensors hold none", -(int64_t)head->alias);
    /* the rest only where the exact total confirms it: a tower named in a way the groups
     * do not know must not be dropped on the names alone */
    int64_t vision = named && !s->names[FG_ST_VISION] ? (int64_t)cmp->graph_group[FG_ST_VISION]
                                                      : 0;
    int64_t optional = 0;
    for (size_t i = 0; i < m->n_rules; i++)
        optional += m->rules[i].optional ? m->rules[i].scalars : 0;
    if (!cmp->ckpt_known || !cmp->exact || m->params_total == cmp->ckpt_total)
        return m->params_total != before;
    for (int pick = 1; pick <= 3; pick++) {
        int64_t v = pick & 1 ? vision : 0, o = pick & 2 ? optional : 0;
        if ((pick & 1 && !v) || (pick & 2 && o <= 0) ||
            m->params_total - (uint64_t)(v + o) != cmp->ckpt_total)
            continue;
        if (v)
            stored_rule(m, "vision tower and projector: not in the checkpoint's tensors", -v);
        if (o)
            stored_rule(m, "MTP layers: not in the checkpoint (its total)", -o);
        break;
    }
    return m->params_total != before;
}

/*
 * Weigh the graph's count against what s says the checkpoint stores: an exact count goes to
 * m->params_checkpoint (said, when not NULL, noted first); within FG_MODEL_CKPT_TOLERANCE the
 * count is the checkpoint's, further off the model is unsure.  false when s gives no exact
 * count (nothing changes).
 */
static bool weigh(struct fg_model *m, const struct fg_st_summary *s, const char *said,
                  uint64_t unused)
{
    struct fg_st_compare *cmp = calloc(1, sizeof *cmp);
    bool cmp_ok = cmp && !fg_safetensors_compare(s, m, cmp, NULL);
    if (cmp_ok && stored_parts(m, s, cmp))
        cmp_ok = !fg_safetensors_compare(s, m, cmp, NULL);
    bool exact = cmp_ok && cmp->ckpt_known && cmp->exact && cmp->ckpt_total;
    if (!exact)
        goto out;
    if (said)
        fg__model_note(m, "%s", said); /* where the count came from, before what it says */
    m->params_checkpoint = cmp->ckpt_total;
    bool quantized;
    uint64_t bytes = fg_safetensors_bytes(s, &quantized);
    if (quantized || m->wq.method != FG_WQ_NONE)
        m->stored_bytes = bytes; /* the headers' dtypes are what a serving engine loads */
    double off = ((double)m->params_total - (double)cmp->ckpt_total) / (double)cmp->ckpt_total;
    double off_loaded = ((double)m->params_total + (double)unused - (double)cmp->ckpt_total) /
                        (double)cmp->ckpt_total;
    if (off < 0)
        off = -off;
    if (off_loaded < 0)
        off_loaded = -off_loaded;
    if (unused && off > FG_MODEL_CKPT_TOLERANCE && off_loaded <= FG_MODEL_CKPT_TOLERANCE) {
        /* the difference is what the checkpoint stores and the class does not load */
        m->certainty = FG_CERT_CHECKPOINT;
        fg__model_note(m, "the checkpoint stores %llu parameters, the graph counts %llu: the "
                          "%llu more are stored but not loaded (%s)",
                       (unsigned long long)cmp->ckpt_total, (unsigned long long)m->params_total,
                       (unsigned long long)(cmp->ckpt_total > m->params_total
                                                ? cmp->ckpt_total - m->params_total : 0),
                       m->ckpt.unused);
    } else if (off <= FG_MODEL_CKPT_TOLERANCE) {
        m->certainty = FG_CERT_CHECKPOINT;
        if (m->params_total != cmp->ckpt_total)
            fg__model_note(m, "the checkpoint stores %llu parameters, the graph counts %llu "
                              "(%+lld, within %.0f%%)",
                           (unsigned long long)cmp->ckpt_total,
                           (unsigned long long)m->params_total,
                           (long long)(m->params_total - cmp->ckpt_total),
                           FG_MODEL_CKPT_TOLERANCE * 100);
    } else {
        char pct[32];
        snprintf(pct, sizeof pct, "%.1f%%", off * 100);
        fg__model_unsure(m, "checkpoint", "the checkpoint stores %llu parameters, the graph "
                                          "counts %llu (%s off): the structure was not "
                                          "understood", (unsigned long long)cmp->ckpt_total,
                         (unsigned long long)m->params_total, pct);
    }
out:
    free(cmp);
    return exact;
}

/* What the headers say, as the model keeps it (m->ckpt): where, tensors, bytes per dtype. */
static void seen(struct fg_model *m, const struct fg_st_summary *s, const char *where)
{
    struct fg_ckpt_seen *k = &m->ckpt;
    bool quantized;
    size_t o = 0;
    if (!s->headers)
        return; /* the index alone names no dtype */
    snprintf(k->where, sizeof k->where, "%s", where);
    k->tensors = s->tensors;
    k->elements = s->total;
    k->bytes = fg_safetensors_bytes(s, &quantized);
    k->dtypes[0] = '\0';
    for (int d = 0; d < FG_ST_DTYPE_COUNT && o < sizeof k->dtypes; d++)
        if (s->by_dtype[d])
            o += (size_t)snprintf(k->dtypes + o, sizeof k->dtypes - o, "%s%s %llu", o ? ", " : "",
                                  fg_safetensors_dtype_name((enum fg_st_dtype)d),
                                  (unsigned long long)s->by_dtype[d]);
}

/* Shards of a local checkpoint whose headers are read: past it the index alone stands (the
 * largest published checkpoints have under 200). */
#define LOCAL_MAX_SHARDS 4096

/* The checkpoint in a local directory (the model's own, a site directory, an HF cache
 * snapshot; never the network): its headers into sum and their rows into sum->layout.  0
 * when an index or a model.safetensors was read (sum->headers: every shard's header too);
 * otherwise nothing is to be trusted: FG_E_NOTFOUND there is none, FG_E_LIMIT it is past
 * safetensors.h's bounds (the job's to fix), another code a file fitgate cannot read, err
 * saying which. */
static int scan_local(const char *dir, struct fg_st_summary *sum, struct fg_err *err)
{
    struct fg_source_opts o;
    struct fg_source_repo *repo = NULL;
    char d[FG_SOURCE_PATH_MAX];
    struct stat st;
    int rc = FG_E_NOTFOUND;
    if (!dir || !*dir)
        return rc;
    snprintf(d, sizeof d, "%s", dir);
    if (stat(d, &st) == 0 && !S_ISDIR(st.st_mode)) {
        char *slash = strrchr(d, '/');
        if (slash)
            *slash = '\0';
        else
            snprintf(d, sizeof d, ".");
    }
    if (stat(d, &st) || !S_ISDIR(st.st_mode))
        return rc;
    fg_source_opts_init(&o);
    o.offline = true;
    rc = fg_source_repo_open(&o, d, NULL, &repo, NULL);
    struct fg_st_scan_opts so = {.layout = sum->layout, .max_shards = LOCAL_MAX_SHARDS};
    if (!rc)
        rc = fg_safetensors_scan_with(repo, &so, sum, err);
    fg_source_repo_free(repo);
    return rc;
}

/* A local checkpoint that was there and could not be read: said in the model's notes (the
 * graph's count stands), so a header that is not one is not passed over in silence. */
static void unread_note(struct fg_model *m, int rc, const struct fg_err *e)
{
    if (m && rc && rc != FG_E_NOTFOUND && rc != FG_E_LIMIT)
        fg__model_note(m, "checkpoint not read, the graph's count stands: %.300s", e->detail);
}

/* Name what the checkpoint stores and m does not build (st rows beyond its blocks, towers a
 * text class does not load) and weigh m against s. */
static bool weigh_named(struct fg_model *m, const struct fg_st_summary *s, const char *said)
{
    uint64_t unused = 0;
    if (s->layout && s->layout->n)
        fg__tensors_unused(s->layout, m, m->ckpt.unused, sizeof m->ckpt.unused, &unused);
    return weigh(m, s, said, unused);
}

static int weigh_local(struct fg_model *m, const char *dir, struct fg_err *err)
{
    struct fg_st_summary *sum = calloc(1, sizeof *sum);
    struct fg_st_layout rows;
    struct fg_err e = {0};
    char where[200];
    int rc = 0;
    fg_st_layout_init(&rows);
    if (!m || !sum)
        goto out;
    sum->layout = &rows;
    /* no checkpoint here, or one fitgate cannot read (said in a note): the graph stands; one
     * past the bounds is the job's to fix */
    rc = scan_local(dir, sum, &e);
    if (!rc) {
        snprintf(where, sizeof where, "read at %.170s (local)", dir);
        seen(m, sum, where);
        weigh_named(m, sum, NULL);
    }
    unread_note(m, rc, &e);
    if (rc == FG_E_LIMIT && err)
        *err = e;
    rc = rc == FG_E_LIMIT ? rc : 0;
out:
    fg_st_layout_free(&rows);
    free(sum);
    return rc;
}

int fg_model_weigh_checkpoint(struct fg_model *m, const char *dir)
{
    return weigh_local(m, dir, NULL);
}

/* Where an inventory came from, for the model's notes. */
static void ckpt_origin(const struct fg_ckpt *c, const struct fg_source_opts *o, bool asked,
                        char *buf, size_t cap)
{
    switch (c->from) {
    case FG_CKPT_HUB:
        snprintf(buf, cap, "read from the hub now (%u requests, %u ms)", c->requests,
                 (unsigned)c->elapsed_ms);
        break;
    case FG_CKPT_CACHE:
        snprintf(buf, cap, "from fitgate's cache (%lld s old)", (long long)c->age_s);
        break;
    case FG_CKPT_CACHE_STALE:
        snprintf(buf, cap, "from fitgate's expired cache (%lld s old; %s)", (long long)c->age_s,
                 o->offline ? "offline" : asked ? "hub unreachable" : "the hub not asked");
        break;
    }
}

/* Why the checkpoint was not read, short enough for a note (the detail goes to the log). */
static const char *why_not(int rc, const struct fg_err *err, bool no_time, char *buf,
                           size_t cap)
{
    if (rc == FG_E_TIMEDOUT || no_time)
        snprintf(buf, cap, "the hub did not answer within the lookup's deadline");
    else if (rc == FG_E_NET)
        snprintf(buf, cap, "the hub is unreachable");
    else if (rc == FG_E_DENIED)
        snprintf(buf, cap, "the hub refused access to its files");
    else
        snprintf(buf, cap, "%.150s", err->detail);
    return buf;
}

/*
 * The checkpoint of a model named by hub id: its inventory (ckpt.h) from fitgate's cache,
 * else from the hub within left_ms when scan, its tensor rows into rows when not NULL
 * (need: an entry without them is asked again).  Returns the inventory (the caller frees
 * it) when one with safetensors was read, else NULL.  from gets where it came from; note
 * (note_cap bytes) what the model's notes are to say of it ("" nothing): why it was not
 * read, or the inventory's own note.
 */
static struct fg_ckpt *hub_get(const struct fg_source_opts *o, const struct fg_model_id *id,
                               const char *commit, bool scan, uint32_t left_ms,
                               struct fg_st_layout *rows, bool need, char *from, size_t cap,
                               char *note, size_t note_cap)
{
    struct fg_ckpt *c = calloc(1, sizeof *c);
    struct fg_ckpt_opts co = {.budget_ms = left_ms, .max_shards = FG_MODEL_CKPT_MAX_SHARDS,
                              .scan = scan && left_ms > 0, .layout = rows, .need_layout = need};
    struct fg_err err = {0};
    char why[160];
    note[0] = '\0';
    from[0] = '\0';
    if (!c) {
        snprintf(note, note_cap, "checkpoint not read, the graph's count stands: out of memory");
        return NULL;
    }
    int rc = fg_ckpt_get(o, id, commit, &co, c, &err);
    ckpt_origin(c, o, co.scan, from, cap);
    if (rc)
        fg__log(FG_LOG_DEBUG, "%s/%s: checkpoint not read: %s", id->org, id->name, err.detail);
    if (rc == FG_E_NOTFOUND && !scan && !o->offline)
        ; /* CheckpointScan=no and nothing cached: as the site asked, nothing to say */
    else if (rc)
        snprintf(note, note_cap, "checkpoint not read, the graph's count stands: %s",
                 why_not(rc, &err, scan && !left_ms, why, sizeof why));
    else if (!c->safetensors)
        snprintf(note, note_cap, "checkpoint: the repository stores no safetensors, %s; the "
                 "graph's count stands", from);
    else if (c->note[0])
        snprintf(note, note_cap, "checkpoint inventory %.250s", c->note);
    if (rc || !c->safetensors) {
        free(c);
        return NULL;
    }
    return c;
}

/* Weigh m against the inventory c (hub_get's), noting where it came from. */
static void hub_weigh(struct fg_model *m, const struct fg_ckpt *c, const char *from)
{
    char said[240];
    snprintf(said, sizeof said, "checkpoint: %s, %.190s", c->sum.headers ? "safetensors headers"
             : "index metadata (headers not read)", from);
    if (c->sum.headers)
        seen(m, &c->sum, from);
    if (!weigh_named(m, &c->sum, said))
        fg__model_note(m, "checkpoint gives no exact count, %s; the graph's count stands%s%s",
                       from, c->sum.headers ? "" : ": ", c->sum.no_headers);
}

/* The model_type of doc when no family reader knows it and none refuses it, else NULL. */
static const char *unread_type(const struct fg_config *doc)
{
    struct fg_cfg root = fg_config_root(doc);
    const char *mt = NULL;
    if (fg_cfg_str(&root, "model_type", NULL, &mt, NULL) || !mt || fg_model_type_known(mt))
        return NULL;
    return mt;
}

/* A model no family reader knows, built from the tensors sum's rows hold (read at where). */
static int from_tensors(const struct fg_config *doc, const char *arg,
                        const struct fg_st_summary *sum, const char *where,
                        struct fg_model **out, struct fg_err *err)
{
    int rc = fg_model_from_tensors(doc, arg, sum->layout, out, err);
    if (rc)
        return rc;
    struct fg_model *m = *out;
    seen(m, sum, where);
    m->ckpt.structure = true;
    m->params_checkpoint = sum->total; /* where: the CLI's "checkpoint:" line */
    bool quantized;
    uint64_t bytes = fg_safetensors_bytes(sum, &quantized);
    if (quantized || m->wq.method != FG_WQ_NONE)
        m->stored_bytes = bytes; /* as weigh() keeps them: what a serving engine loads */
    return 0;
}

int fg_model_load_path(const char *path, struct fg_model **out, struct fg_err *err)
{
    struct fg_config *doc = NULL;
    struct fg_st_summary *sum = NULL;
    struct fg_st_layout rows;
    char where[200];
    fg_st_layout_init(&rows);
    *out = NULL;
    int rc = fg_config_load(path, &doc, err);
    if (rc)
        return rc;
    if (unread_type(doc) && (sum = calloc(1, sizeof *sum))) {
        sum->layout = &rows;
        snprintf(where, sizeof where, "read at %.170s (local)", path);
        rc = scan_local(path, sum, err);
        if (rc == FG_E_LIMIT)
            goto out;
        if (!rc && sum->headers && rows.n) {
            rc = from_tensors(doc, path, sum, where, out, err);
            goto out;
        }
    }
    rc = fg_model_from_config(doc, path, out, err);
    if (!rc && (rc = weigh_local(*out, path, err))) {
        fg_model_free(*out);
        *out = NULL;
    }
out:
    fg_config_free(doc);
    fg_st_layout_free(&rows);
    free(sum);
    return rc;
}

/* fg_model_load_id once the config is parsed: the checkpoint first where no reader knows
 * the type, the graph first otherwise. */
static int load_doc(const struct fg_source_opts *o, const struct fg_model_id *id,
                    const char *arg, bool scan, const struct fg_config *doc,
                    const struct fg_source_result *res, struct fg_model **out,
                    struct fg_err *err)
{
    struct fg_st_summary *sum = calloc(1, sizeof *sum);
    struct fg_ckpt *c = NULL;
    struct fg_st_layout rows;
    char where[200];
    bool local = false;
    fg_st_layout_init(&rows);
    if (!sum)
        return fg_err_set(err, FG_E_NOMEM, "out of memory");
    sum->layout = &rows;
    /* the config and the headers share one deadline: HubTimeout bounds the whole lookup */
    uint32_t whole = o->timeout_ms ? o->timeout_ms : FG_SOURCE_DEFAULT_TIMEOUT_MS;
    uint32_t spent = res->elapsed_ms;
    uint32_t left = spent < whole ? whole - spent : 0;
    const char *mt = unread_type(doc);
    /* a local directory first (site directory, HF cache snapshot); the hub's inventory when
     * it holds no safetensors (a snapshot with config.json alone) */
    struct fg_err le = {0};
    int lrc = res->dir[0] ? scan_local(res->dir, sum, &le) : FG_E_NOTFOUND;
    if (lrc == FG_E_LIMIT) {
        if (err)
            *err = le;
        free(sum);
        fg_st_layout_free(&rows);
        return lrc;
    }
    if (!lrc) {
        local = true;
        snprintf(where, sizeof where, "read at %.170s (local)", res->dir);
    }
    int rc = 0;
    bool asked = false;
    char note[300] = "", from[200] = "";
    if (mt && !(local && sum->headers && rows.n)) {
        /* the hub's headers when the local files do not name every tensor */
        c = hub_get(o, id, res->commit, scan, left, &rows, true, from, sizeof from, note,
                    sizeof note);
        asked = true;
        if (c && c->sum.headers && rows.n) {
            rc = from_tensors(doc, arg, &c->sum, from, out, err);
            goto out;
        }
    }
    if (mt && local && sum->headers && rows.n) {
        rc = from_tensors(doc, arg, sum, where, out, err);
        goto out;
    }
    rc = fg_model_from_config(doc, arg, out, err);
    if (rc)
        goto out;
    unread_note(*out, lrc, &le);
    if (!c && local) {
        seen(*out, sum, where);
        weigh_named(*out, sum, NULL);
    } else if (!c && !asked) {
        c = hub_get(o, id, res->commit, scan, left, &rows, false, from, sizeof from, note,
                    sizeof note);
    }
    if (c)
        hub_weigh(*out, c, from);
    if (note[0])
        fg__model_note(*out, "%s", note);
out:
    free(c);
    free(sum);
    fg_st_layout_free(&rows);
    return rc;
}

int fg_model_load_id(const struct fg_source_opts *o, const struct fg_model_id *id,
                     const char *arg, bool scan, struct fg_model **out,
                     struct fg_source_result **res, struct fg_err *err)
{
    *out = NULL;
    struct fg_config *doc = NULL;
    int rc = fg_source_resolve(o, id, res, err);
    if (!rc)
        rc = fg_config_parse((*res)->text, (*res)->len, (*res)->where, &doc, err);
    if (!rc)
        rc = load_doc(o, id, arg, scan, doc, *res, out, err);
    fg_config_free(doc);
    return rc;
}
