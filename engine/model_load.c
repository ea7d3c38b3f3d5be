/*
 * model_load.c - a model as every front end reads it (model_load.h): the
 * config from a path or through the sources, the graph from the family
 * readers (arch/graph.c), and its count weighed against the checkpoint
 * when one is at hand.
 */
#include "model_load.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "arch/graph.h"
#include "model.h"
#include "model_int.h"
#include "source/ckpt.h"
#include "source/config.h"
#include "source/safetensors.h"
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
static bool weigh(struct fg_model *m, const struct fg_st_summary *s, const char *said)
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
    if (off < 0)
        off = -off;
    if (off <= FG_MODEL_CKPT_TOLERANCE) {
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

int fg_model_weigh_checkpoint(struct fg_model *m, const char *dir)
{
    struct fg_source_opts o;
    struct fg_source_repo *repo = NULL;
    struct fg_st_summary *sum = calloc(1, sizeof *sum);
    char d[FG_SOURCE_PATH_MAX];
    struct stat st;
    if (!m || !dir || !*dir || !sum)
        goto out;
    snprintf(d, sizeof d, "%s", dir);
    if (stat(d, &st) == 0 && !S_ISDIR(st.st_mode)) {
        char *slash = strrchr(d, '/');
        if (slash)
            *slash = '\0';
        else
            snprintf(d, sizeof d, ".");
    }
    if (stat(d, &st) || !S_ISDIR(st.st_mode))
        goto out;
    fg_source_opts_init(&o);
    o.offline = true;
    /* no checkpoint here, or one fitgate cannot read: the graph stands */
    if (!fg_source_repo_open(&o, d, NULL, &repo, NULL) &&
        !fg_safetensors_scan(repo, 0, sum, NULL))
        weigh(m, sum, NULL);
out:
    fg_source_repo_free(repo);
    free(sum);
    return 0;
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
 * The checkpoint of a model the hub or fitgate's cache gave (no local directory): its
 * inventory (ckpt.h), from the cache, else from the hub within left_ms when scan, weighed
 * as fg_model_weigh_checkpoint weighs a local one.  Never fails: what was not read is noted.
 */
static void hub_checkpoint(struct fg_model *m, const struct fg_source_opts *o,
                           const struct fg_model_id *id, const char *commit, bool scan,
                           uint32_t left_ms)
{
    struct fg_ckpt *c = calloc(1, sizeof *c);
    struct fg_ckpt_opts co = {.budget_ms = left_ms, .max_shards = FG_MODEL_CKPT_MAX_SHARDS,
                              .scan = scan && left_ms > 0};
    struct fg_err err = {0};
    char from[96], why[160], said[160];
    if (!c) {
        fg__model_note(m, "checkpoint not read, the graph's count stands: out of memory");
        goto out;
    }
    int rc = fg_ckpt_get(o, id, commit, &co, c, &err);
    ckpt_origin(c, o, co.scan, from, sizeof from);
    if (rc)
        fg__log(FG_LOG_DEBUG, "%s/%s: checkpoint not read: %s", id->org, id->name, err.detail);
    if (rc == FG_E_NOTFOUND && !scan && !o->offline)
        ; /* CheckpointScan=no and nothing cached: as the site asked, nothing to say */
    else if (rc)
        fg__model_note(m, "checkpoint not read, the graph's count stands: %s",
                       why_not(rc, &err, scan && !left_ms, why, sizeof why));
    else if (!c->safetensors)
        fg__model_note(m, "checkpoint: the repository stores no safetensors, %s; the graph's "
                          "count stands", from);
    else {
        snprintf(said, sizeof said, "checkpoint: %s, %s", c->sum.headers ? "safetensors headers"
                 : "index metadata (headers not read)", from);
        if (!weigh(m, &c->sum, said))
            fg__model_note(m, "checkpoint gives no exact count, %s; the graph's count stands%s%s",
                           from, c->sum.headers ? "" : ": ", c->sum.no_headers);
    }
    if (!rc && c->note[0])
        fg__model_note(m, "checkpoint inventory %s", c->note);
out:
    free(c);
}

int fg_model_load_path(const char *path, struct fg_model **out, struct fg_err *err)
{
    int rc = fg_model_load(path, out, err);
    if (!rc)
        fg_model_weigh_checkpoint(*out, path);
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
        rc = fg_model_from_config(doc, arg, out, err);
    fg_config_free(doc);
    if (rc)
        return rc;
    if ((*res)->dir[0]) {
        fg_model_weigh_checkpoint(*out, (*res)->dir);
        return 0;
    }
    /* the config and the headers share one deadline: HubTimeout bounds the whole lookup */
    uint32_t whole = o->timeout_ms ? o->timeout_ms : FG_SOURCE_DEFAULT_TIMEOUT_MS;
    uint32_t spent = (*res)->elapsed_ms;
    uint32_t left = spent < whole ? whole - spent : 0;
    hub_checkpoint(*out, o, id, (*res)->commit, scan, left);
    return 0;
}
