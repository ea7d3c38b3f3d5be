/*
 * fitgate plan / fitgate check: the whole answer for one model and job.
 * Output for people (tables, a breakdown with the source of each line) or
 * --json with the keys docs/cli.md lists ("JSON output").  The verdict is
 * the gate's (policies/gate.h), the plugin's own decision on the same job.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <pwd.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "source/wquant.h"
#include "plan/fit.h"
#include "format.h"
#include "stack/framework.h"
#include "gate.h"
#include "hw/gpu.h"
#include "job_line.h"
#include "jobopts.h"
#include "job/jobspec.h"
#include "memory/memory.h"
#include "model/model.h"
#include "plan/plan.h"
#include "plan_json.h"
#include "remedy_edits.h"
#include "policy.h"
#include "report_html.h"

static void print_structure(const struct fg_model *m, uint64_t seq)
{
    printf("\nStructure: %zu nodes; output shape per sample at %llu tokens\n", m->n_nodes,
           (unsigned long long)seq);
    printf("%5s  %-20s %-18s %-36s %-16s %s\n", "#", "Layer", "Type", "Detail", "Output shape",
           "Parameters");
    for (size_t i = 0; i < m->n_nodes; i++) {
        const struct fg_node *n = &m->nodes[i];
        char shape[48];
        snprintf(shape, sizeof shape, "%llu x %u", (unsigned long long)seq, n->width);
        printf("%5zu  %-20s %-18s %-36s %-16s ", i + 1, n->name, fg_node_kind_name(n->kind),
               n->desc, shape);
        char cnt[32];
        printf("%s\n", fg_cli_count(n->params, cnt, sizeof cnt));
    }
    for (size_t i = 0; i < m->n_rules; i++) {
        printf("%5s  rule: %s (%+lld)\n", "", m->rules[i].name, (long long)m->rules[i].scalars);
    }
}

struct card_row {
    const struct fg_gpu *gpu;
    uint64_t usable;
    const struct fg_estimate *est; /* full, lora, serve: one set for every card */
    struct fg_fit fit[3];
    struct fg_plan plan[3];      /* only when batch 1 does not fit */
};

static const enum fg_mode table_modes[3] = {FG_MODE_FULL, FG_MODE_LORA, FG_MODE_SERVE};

/* The table's three jobs, estimated once: an estimate does not depend on the card. */
static int table_estimates(const struct fg_model *m, const struct fg_cli_opts *o,
                           struct fg_estimate est[3], struct fg_err *err)
{
    for (int k = 0; k < 3; k++) {
        struct fg_job j = fg_cli_job_for_mode(o, table_modes[k]);
        /* the table reads totals only: no attributed lines to format */
        int rc = fg_memory_estimate_totals(m, &j, &est[k], err);
        if (rc)
            return rc;
    }
    return 0;
}

static int fill_card(const struct fg_model *m, const struct fg_cli_opts *o,
                     const struct fg_plan_opts *po, const struct fg_estimate est[3],
                     struct card_row *r, bool planned, struct fg_err *err)
{
    r->usable = fg_fit_usable(r->gpu->memory_gb, r->gpu->memory_bytes, &po->fit);
    r->est = est;
    for (int k = 0; k < 3; k++) {
        fg_fit_card(&r->est[k], r->usable, &po->fit, &r->fit[k]);
        memset(&r->plan[k], 0, sizeof r->plan[k]);
        if (planned && r->fit[k].verdict == FG_FIT_SPLIT) {
            struct fg_job j = fg_cli_job_for_mode(o, table_modes[k]);
            int rc = fg_plan_layouts(m, &j, r->usable, po, &r->plan[k], err);
            if (rc)
                return rc;
            if (r->plan[k].status == FG_PLAN_IMPOSSIBLE)
                r->fit[k].verdict = FG_FIT_NO;
        }
    }
    return 0;
}

static void cell(const struct card_row *r, int k, char *buf, size_t cap)
{
    const struct fg_fit *f = &r->fit[k];
    if (f->verdict == FG_FIT_FITS)
        snprintf(buf, cap, "batch %llu", (unsigned long long)f->max_batch);
    else if (f->verdict == FG_FIT_BORDERLINE)
        snprintf(buf, cap, "batch %llu (borderline)", (unsigned long long)f->max_batch);
    else if (f->verdict == FG_FIT_SPLIT && r->plan[k].n)
        snprintf(buf, cap, "split: %u cards", r->plan[k].options[0].gpus);
    else
        snprintf(buf, cap, "no");
}

static void print_layout(const struct fg_layout *l)
{
    char split[256], b[32];
    fg_layout_split_str(l, split, sizeof split);
    printf("  %2u GPU%s  TP=%u PP=%u EP=%u DP=%u%s%.0u  peak %s/GPU", l->gpus,
           l->gpus > 1 ? "s" : " ", l->tp, l->pp, l->ep, l->dp, l->zero ? " ZeRO-" : "",
           l->zero, fg_cli_gb(l->peak_bytes, b, sizeof b));
    if (l->pp > 1) {
        printf("  layers ");
        for (uint32_t s = 0; s < l->pp; s++)
            printf("%s%u-%u", s ? " | " : "", l->cut[s], l->cut[s + 1] - 1);
    }
    putchar('\n');
}

static cJSON *model_json(const struct fg_model *m)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", m->id);
    cJSON_AddStringToObject(o, "model_type", m->model_type);
    cJSON_AddStringToObject(o, "reader", m->reader);
    cJSON_AddBoolToObject(o, "generic", m->generic);
    cJSON_AddStringToObject(o, "certainty", fg_certainty_name(m->certainty));
    if (m->certainty == FG_CERT_UNSURE)
        cJSON_AddStringToObject(o, "unsure_key", m->unsure_key);
    cJSON *as = cJSON_AddArrayToObject(o, "assumptions");
    for (size_t i = 0; i < m->n_assumed; i++)
        cJSON_AddItemToArray(as, cJSON_CreateString(m->assumed[i]));
    cJSON *p = cJSON_AddObjectToObject(o, "params");
    cJSON_AddNumberToObject(p, "total", (double)m->params_total);
    cJSON_AddNumberToObject(p, "buffers", (double)m->params_buffers);
    if (m->params_checkpoint)
        cJSON_AddNumberToObject(p, "checkpoint", (double)m->params_checkpoint);
    cJSON_AddNumberToObject(p, "active", (double)fg_model_active_params(m));
    cJSON *r = cJSON_AddArrayToObject(p, "rules");
    for (size_t i = 0; i < m->n_rules; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", m->rules[i].name);
        cJSON_AddNumberToObject(e, "scalars", (double)m->rules[i].scalars);
        cJSON_AddItemToArray(r, e);
    }
    cJSON_AddNumberToObject(o, "layers", (double)m->layers);
    cJSON_AddNumberToObject(o, "hidden", (double)m->hidden);
    cJSON_AddNumberToObject(o, "vocab", (double)m->vocab);
    cJSON *notes = cJSON_AddArrayToObject(o, "notes");
    for (size_t i = 0; i < m->n_notes; i++)
        cJSON_AddItemToArray(notes, cJSON_CreateString(m->notes[i]));
    if (m->ckpt.where[0])
        cJSON_AddItemToObject(o, "checkpoint", fg_cli_ckpt_json(&m->ckpt));
    return o;
}

static cJSON *memory_json(const struct fg_estimate *e)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "total_bytes", (double)e->total_bytes);
    cJSON_AddNumberToObject(o, "static_bytes", (double)e->static_bytes);
    cJSON_AddNumberToObject(o, "per_sample_bytes", (double)e->per_sample_bytes);
    cJSON_AddNumberToObject(o, "step_bytes", (double)e->step_bytes);
    cJSON *b = cJSON_AddObjectToObject(o, "breakdown");
    cJSON_AddNumberToObject(b, "weights", (double)e->b.weights);
    cJSON_AddNumberToObject(b, "gradients", (double)e->b.gradients);
    cJSON_AddNumberToObject(b, "optimizer", (double)e->b.optimizer);
    cJSON_AddNumberToObject(b, "adapters", (double)e->b.adapters);
    cJSON_AddNumberToObject(b, "activations", (double)e->b.activations);
    cJSON_AddNumberToObject(b, "logits", (double)e->b.logits);
    cJSON_AddNumberToObject(b, "kv_cache", (double)e->b.kv_cache);
    cJSON_AddNumberToObject(b, "ssm_state", (double)e->b.ssm_state);
    cJSON_AddNumberToObject(b, "overhead", (double)e->b.overhead);
    cJSON *lines = cJSON_AddArrayToObject(o, "lines");
    for (size_t i = 0; i < e->n_lines; i++) {
        cJSON *l = cJSON_CreateObject();
        cJSON_AddStringToObject(l, "key", e->lines[i].key);
        cJSON_AddStringToObject(l, "what", e->lines[i].what);
        cJSON_AddStringToObject(l, "source", e->lines[i].source);
        cJSON_AddNumberToObject(l, "bytes", (double)e->lines[i].bytes);
        cJSON_AddBoolToObject(l, "per_sample", e->lines[i].per_sample);
        cJSON_AddItemToArray(lines, l);
    }
    return o;
}

static void print_breakdown(const struct fg_estimate *e)
{
    char a[32], b[32], c[32];
    printf("\nMemory at micro-batch %llu x %llu tokens: %s (static %s + %s per sample",
           (unsigned long long)e->batch, (unsigned long long)e->seq_len,
           fg_cli_gb(e->total_bytes, a, sizeof a), fg_cli_gb(e->static_bytes, b, sizeof b),
           fg_cli_gb(e->per_sample_bytes, c, sizeof c));
    if (e->step_bytes)
        printf("; the optimizer step needs %s with gradients and no activations",
               fg_cli_gb(e->step_bytes, a, sizeof a));
    printf(")\n");
    for (size_t i = 0; i < e->n_lines; i++) {
        const struct fg_line *l = &e->lines[i];
        printf("  %-12s %10s%s  %s  [%s]\n", l->key, fg_cli_gb(l->bytes, a, sizeof a),
               l->per_sample ? "/sample" : "        ", l->what, l->source);
    }
}

/* Roofline cost: tokens x FLOPs per token / (bf16 peak x utilisation). */
static double gpu_hours(const struct fg_model *m, const struct fg_job *job, const struct fg_gpu *g,
                        uint64_t seq, uint64_t samples, uint64_t epochs, double util)
{
    double tf = g->bf16_tflops > 0 ? g->bf16_tflops : g->fp16_tflops;
    if (tf <= 0)
        return -1;
    struct fg_job j = *job;
    j.seq_len = seq;
    double flops = fg_memory_flops_per_token(m, &j) * (double)seq * (double)samples *
                   (double)epochs;
    return flops / (tf * 1e12 * util) / 3600.0;
}

/* What plan and check were asked, resolved as the plugin resolves a submission. */
struct inputs {
    struct fg_policy pol;
    struct fg_rules rules;
    struct fg_gpu_table *own;          /* a site table, when one was named */
    const struct fg_gpu_table *table;
    struct fg_request q;
    struct fg_model *m;
    const struct fg_cli_opts *o;       /* the command line (borrowed) */
};

static void print_model(const struct fg_model *m)
{
    char a[32], b[32];
    printf("%s  (%s; read as %s; count %s)\n", m->id, m->model_type, m->reader,
           fg_certainty_name(m->certainty));
    /* "stored" only where it is known: the headers were read, or a family reader whose
     * releases store what the class builds; an unsure count says what it is instead */
    const char *what = m->certainty == FG_CERT_EXACT || m->certainty == FG_CERT_CHECKPOINT
                           ? "stored in the checkpoint"
                       : m->certainty == FG_CERT_GENERIC ? "counted by the generic reader"
                       : m->unsure_count_only
                           ? "as the class builds them (the checkpoint's count is unsure)"
                           : "counted from config.json (unsure)";
    printf("parameters: %s %s", fg_cli_count(m->params_total, a, sizeof a), what);
    if (m->params_checkpoint)
        printf(" (its safetensors headers: %s)", fg_cli_count(m->params_checkpoint, b, sizeof b));
    if (m->experts)
        printf(", %llu experts top-%llu (%s active)", (unsigned long long)m->experts,
               (unsigned long long)m->top_k, fg_cli_count(fg_model_active_params(m), b, sizeof b));
    printf("; %llu layers\n", (unsigned long long)m->layers);
    for (size_t i = 0; i < m->n_rules; i++)
        if (m->rules[i].scalars)
            printf("rule: %s (%+lld)\n", m->rules[i].name, (long long)m->rules[i].scalars);
    for (size_t i = 0; i < m->n_notes; i++)
        printf("note: %s\n", m->notes[i]);
    for (size_t i = 0; i < m->n_assumed; i++)
        printf("assumed: %s\n", m->assumed[i]);
    if (m->ckpt.where[0])
        printf("checkpoint: %s%llu tensors, %s as stored (%s), %s\n",
               m->ckpt.structure ? "the structure read from its " : "",
               (unsigned long long)m->ckpt.tensors, fg_cli_gb(m->ckpt.bytes, a, sizeof a),
               m->ckpt.dtypes, m->ckpt.where);
    if (m->ckpt.unused[0])
        printf("checkpoint: stored, not loaded: %s\n", m->ckpt.unused);
}

/* plan's card table, the cost line and the structure. */
static void print_tables(const struct fg_model *m, const struct fg_cli_opts *o,
                         const struct inputs *in, const struct fg_estimate *est,
                         const struct card_row *rows, size_t ncards,
                         const struct fg_plan_opts *po)
{
    if (!ncards)
        return;
    uint64_t serve_seq = rows[0].est[2].seq_len;
    printf("\nLargest micro-batch per card (training at %llu tokens, serving at %llu; %.2fx "
           "headroom, %llu MiB CUDA context per card)\n",
           (unsigned long long)rows[0].est[0].seq_len, (unsigned long long)serve_seq,
           o->headroom, (unsigned long long)(po->fit.context_bytes >> 20));
    printf("| %-18s | %-24s | %-24s | %-24s |\n", "Card", "Full fine-tune", "LoRA",
           "Serve bf16");
    printf("|--------------------|--------------------------|--------------------------|"
           "--------------------------|\n");
    for (size_t i = 0; i < ncards; i++) {
        char c0[48], c1[48], c2[48];
        cell(&rows[i], 0, c0, sizeof c0);
        cell(&rows[i], 1, c1, sizeof c1);
        cell(&rows[i], 2, c2, sizeof c2);
        printf("| %-18s | %-24s | %-24s | %-24s |\n", rows[i].gpu->label, c0, c1, c2);
    }
    const struct fg_gpu *want = in->q.gpu;
    if (want && (o->samples || o->epochs)) {
        uint64_t samples = o->samples ? o->samples : 50000, epochs = o->epochs ? o->epochs : 1;
        double h = gpu_hours(m, &o->job, want, est->seq_len, samples, epochs, o->utilisation);
        if (h >= 0)
            printf("\nCost: %.1f GPU-hours on %s for %llu samples x %llu epochs x %llu "
                   "tokens (roofline: %.3g FLOP/token at %.0f%% of %.0f bf16 TFLOP/s)\n",
                   h, want->label, (unsigned long long)samples, (unsigned long long)epochs,
                   (unsigned long long)est->seq_len, fg_memory_flops_per_token(m, &o->job),
                   o->utilisation * 100,
                   want->bf16_tflops > 0 ? want->bf16_tflops : want->fp16_tflops);
    }
    if (o->structure)
        print_structure(m, m->max_pos ? m->max_pos : est->seq_len);
}

static void inputs_free(struct inputs *in)
{
    fg_model_free(in->m);
    fg_gpu_table_free(in->own);
}

/*
 * The policy (--policy FILE, else the built-in defaults), the GPU table (--gpus-conf, else
 * the policy's GpuTable=, else built in), the request in Slurm's spelling and the model.
 * 0; 4 when the job's own model is past a bound (FG_E_LIMIT, o->job_error says which); or 2
 * after a message on stderr.
 */
static int load_inputs(struct fg_cli_opts *o, bool check, struct inputs *in)
{
    struct fg_err err = {0};
    int rc = 0;
    fg_policy_init(&in->pol);
    if (o->policy && fg_policy_load(&in->pol, o->policy, &err))
        goto fail;
    fg_policy_rules_for(&in->pol, o->partition, &in->rules);
    if (o->headroom_set || !o->policy)
        in->rules.headroom = o->headroom;
    if (o->conservative_set || !o->policy)
        in->rules.conservative = o->conservative;
    /* one headroom in the whole output: the card table and the report read o's */
    o->headroom = in->rules.headroom;
    o->conservative = in->rules.conservative;
    /* --gpus-conf: the user's own rows, for plan and check outside Slurm (fitgate ctld never
     * passes it); else the policy's GpuTable=, read as a site file */
    if (o->gpus_conf ? fg_gpu_table_load(o->gpus_conf, &in->own, &err)
                     : fg_policy_gpu_table(&in->pol, &in->own, &err))
        goto fail;
    in->table = in->own ? in->own : fg_gpu_table_builtin();
    struct fg_request *q = &in->q;
    fg_request_init(q);
    uint32_t nodes = o->nodes ? o->nodes : 1;
    q->nodes = nodes;
    const char *opt = o->gres ? "gres" : o->gpus_opt ? "gpus" : o->gpus_per_node ? "gpus-per-node"
                                                                                 : NULL;
    const char *val = o->gres ? o->gres : o->gpus_opt ? o->gpus_opt : o->gpus_per_node;
    if (opt && !fg_request_from_option(q, opt, val, nodes, in->table)) {
        fg_err_set(&err, FG_E_INVAL, "--%s=%s names no GPU (Slurm's spelling: --gres=gpu:TYPE:N, "
                   "--gpus=[TYPE:]N, --gpus-per-node=[TYPE:]N)", opt, val);
        goto fail;
    }
    if (!opt)
        fg_request_from_plugin(q, o->spec.gpus);
    unsigned count = 0;
    /* the card once, as the plugin resolves it (no controller here: no partition's cards) */
    if (fg_request_card(q, in->table, o->gpu, in->rules.default_gpu, o->partition, NULL, &count,
                        &err))
        goto fail;
    if (q->via == FG_VIA_NONE && count && !check)
        /* plan takes a count from an alias ("gpu:h100:4"); check, as the plugin, only from
         * the request (--gres, --gpus, --gpus-per-node, --ft-gpus) */
        fg_request_from_plugin(q, count);
    if (o->partition)
        snprintf(q->partition, sizeof q->partition, "%s", o->partition);
    fg_gate_model_label(o->model, q->model, sizeof q->model);
    if (o->policy) {
        /* the user's name for CacheDir=%u from the password database, not $USER (in fitgate
         * ctld's child that would be slurmctld's) */
        struct passwd *pw = getpwuid(getuid());
        rc = fg_gate_load_model(&in->pol, o->model, o->base_dir, pw ? pw->pw_name : NULL,
                                (unsigned)getuid(), o->offline, &in->m, &err);
    } else {
        /* a relative path from the submission's directory (--base-dir), as the plugin reads */
        char joined[4096];
        struct stat st;
        const char *arg = o->model;
        if (o->base_dir && o->model[0] != '/' &&
            (size_t)snprintf(joined, sizeof joined, "%s/%s", o->base_dir, o->model) <
                sizeof joined &&
            stat(joined, &st) == 0)
            arg = joined;
        rc = fg_cli_load_model(arg, o->offline, &in->m, &err);
    }
    if (rc == FG_E_LIMIT) {
        /* the job's own directory past a bound (error.h): refused as its own error */
        snprintf(o->job_error, sizeof o->job_error, "%s", err.detail);
        return 4;
    }
    if (rc)
        goto fail;
    return 0;
fail:
    fprintf(stderr, "fitgate: error: %s\n", err.detail);
    return 2;
}

/* check's exit status: 0 the job goes on as asked, 1 rejected, 3 resized. */
static int decision_exit(const struct fg_decision *d)
{
    switch (d->kind) {
    case FG_DECIDE_REJECT: return 1;
    case FG_DECIDE_RESIZE: return 3;
    default: return 0;
    }
}

static cJSON *decision_json(const struct inputs *in, const struct fg_gate *g)
{
    const struct fg_decision *d = &g->d;
    cJSON *o = cJSON_CreateObject();
    char req[160];
    cJSON_AddStringToObject(o, "kind", g->d.overridden ? "override"
                                                       : fg_decide_kind_name(d->kind));
    cJSON_AddBoolToObject(o, "fits", d->fits);
    fg_request_spell(&in->q, in->q.count, in->q.nodes ? in->q.nodes : 1, req, sizeof req);
    cJSON_AddStringToObject(o, "asked", req);
    fg_request_spell(&in->q, d->count, d->nodes, req, sizeof req);
    cJSON_AddStringToObject(o, "request", req);
    cJSON_AddNumberToObject(o, "count", d->count);
    cJSON_AddNumberToObject(o, "nodes", d->nodes);
    cJSON_AddNumberToObject(o, "gpus_asked", fg_request_total(&in->q));
    cJSON_AddBoolToObject(o, "resize_gpus", d->resize_gpus);
    cJSON_AddBoolToObject(o, "resize_batch", d->resize_batch);
    if (d->has_layout)
        cJSON_AddItemToObject(o, "layout", fg_cli_layout_json(&d->layout));
    cJSON *lines = cJSON_AddArrayToObject(o, "lines");
    for (int i = 0; i < FG_DECIDE_LINES; i++)
        if (d->lines[i][0])
            cJSON_AddItemToArray(lines, cJSON_CreateString(d->lines[i]));
    if (d->enough)
        cJSON_AddNumberToObject(o, "enough_gpus", d->enough);
    if (d->n_remedies) { /* what would fit, cheapest first, each re-checked */
        cJSON *rem = fg_cli_remedies_json(&in->q, &g->rem, d);
        fg_cli_remedy_edits_json(in->o, &g->rem, rem);
        cJSON_AddItemToObject(o, "remedies", rem);
    }
    if (g->assessed && g->a.gpu_util > 0) {
        cJSON_AddNumberToObject(o, "gpu_util", g->a.gpu_util);
        cJSON_AddNumberToObject(o, "budget_bytes", (double)g->a.usable);
        cJSON_AddNumberToObject(o, "kv_sequences", (double)g->a.fit.max_batch);
        cJSON_AddNumberToObject(o, "profile_bytes", (double)g->a.serve_profile);
        cJSON_AddNumberToObject(o, "sampler_bytes", (double)g->a.serve_sampler);
        cJSON_AddNumberToObject(o, "cuda_graph_bytes", (double)g->a.serve_graphs);
        cJSON_AddNumberToObject(o, "kv_available_bytes", (double)g->a.serve_kv_avail);
        cJSON_AddBoolToObject(o, "engine_refuses", g->a.serve_refusal != FG_VLLM_STARTS);
    }
    return o;
}

static cJSON *job_json(const struct fg_cli_opts *o, const struct fg_assessment *a,
                       const struct fg_estimate *est)
{
    cJSON *j = cJSON_CreateObject();
    const struct fg_job *job = a ? &a->job : &o->job;
    cJSON_AddStringToObject(j, "mode", fg_mode_name(job->mode));
    cJSON_AddNumberToObject(j, "seq_len", (double)est->seq_len);
    cJSON_AddNumberToObject(j, "batch", (double)job->batch);
    cJSON_AddNumberToObject(j, "lora_rank", job->lora_rank);
    cJSON_AddStringToObject(j, "precision", fg_precision_name(job->precision));
    cJSON_AddStringToObject(j, "optimizer", fg_optimizer_name(job->optimizer));
    cJSON_AddBoolToObject(j, "grad_ckpt", job->grad_ckpt);
    if (job->unsharded_copy) /* only when set: the outputs without it stay as they were */
        cJSON_AddBoolToObject(j, "unsharded_copy", true);
    if (job->attention != FG_ATTN_SDPA) /* likewise */
        cJSON_AddStringToObject(j, "attention", fg_attention_name(job->attention));
    cJSON_AddStringToObject(j, "framework", o->spec.fw->name);
    if (a) {
        cJSON *l = cJSON_AddObjectToObject(j, "layout");
        cJSON_AddNumberToObject(l, "tp", job->tp);
        cJSON_AddNumberToObject(l, "pp", job->pp);
        cJSON_AddNumberToObject(l, "ep", job->ep);
        cJSON_AddNumberToObject(l, "cp", job->cp ? job->cp : 1);
        cJSON_AddNumberToObject(l, "dp", job->dp);
        cJSON_AddNumberToObject(l, "zero", job->zero);
        cJSON_AddBoolToObject(l, "declared", fg_jobspec_declares_layout(&o->spec));
    }
    if (job->offload != FG_OFFLOAD_NONE)
        cJSON_AddStringToObject(j, "offload", fg_offload_name(job->offload));
    if (o->spec.n_notes) {
        cJSON *n = cJSON_AddArrayToObject(j, "framework_notes");
        for (size_t i = 0; i < o->spec.n_notes; i++)
            cJSON_AddItemToArray(n, cJSON_CreateString(o->spec.notes[i]));
    }
    if (o->spec.n_configs) { /* only then: the outputs without a config stay as they were */
        char digest[24];
        cJSON *c = cJSON_AddObjectToObject(j, "config");
        snprintf(digest, sizeof digest, "%016llx", (unsigned long long)o->spec.config_digest);
        cJSON_AddStringToObject(c, "digest", digest);
        cJSON *keys = cJSON_AddArrayToObject(c, "keys");
        for (size_t i = 0; i < o->spec.n_from; i++) {
            cJSON *k = cJSON_CreateObject();
            cJSON_AddStringToObject(k, "from", o->spec.from[i].where);
            cJSON_AddStringToObject(k, "set", o->spec.from[i].set);
            cJSON_AddItemToArray(keys, k);
        }
        cJSON *u = cJSON_AddArrayToObject(c, "not_modelled");
        for (size_t i = 0; i < o->spec.n_unknown; i++)
            cJSON_AddItemToArray(u, cJSON_CreateString(o->spec.unknown[i]));
    }
    cJSON_AddNumberToObject(j, "headroom", o->headroom);
    cJSON_AddNumberToObject(j, "conservative", o->conservative);
    return j;
}


static void print_json(const struct fg_cli_opts *o, const struct inputs *in,
                       const struct fg_gate *g, const struct card_row *rows, size_t ncards,
                       bool check)
{
    const struct fg_model *m = in->m;
    const struct fg_assessment *a = g->assessed ? &g->a : NULL;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddItemToObject(root, "model", model_json(m));
    if (a) {
        cJSON_AddItemToObject(root, "job", job_json(o, a, &a->est));
        cJSON_AddItemToObject(root, "memory", memory_json(&a->est));
    }
    cJSON *cards = cJSON_AddArrayToObject(root, "cards");
    for (size_t i = 0; a && i < ncards; i++) {
        int k = o->job.mode == FG_MODE_SERVE ? 2 : o->job.mode == FG_MODE_FULL ? 0 : 1;
        struct fg_fit f;
        struct fg_fit_opts fo;
        fg_fit_opts_default(&fo);
        fo.headroom = o->headroom;
        fo.conservative = o->conservative;
        fg_fit_card(&a->est, rows[i].usable, &fo, &f);
        const struct fg_plan *pl = &rows[i].plan[k];
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "name", rows[i].gpu->label);
        cJSON_AddNumberToObject(c, "memory_bytes", (double)rows[i].usable);
        cJSON_AddNumberToObject(c, "max_batch", (double)f.max_batch);
        enum fg_verdict v = f.verdict;
        if (v == FG_FIT_SPLIT && !(pl->n) && rows[i].fit[k].verdict == FG_FIT_NO)
            v = FG_FIT_NO;
        cJSON_AddStringToObject(c, "fit", fg_verdict_name(v));
        cJSON_AddNumberToObject(c, "gpus", f.max_batch ? 1 : pl->n ? pl->options[0].gpus : 0);
        cJSON *modes = cJSON_AddObjectToObject(c, "modes");
        for (int t = 0; t < 3; t++) {
            cJSON *mm = cJSON_AddObjectToObject(modes, fg_mode_name(table_modes[t]));
            cJSON_AddNumberToObject(mm, "max_batch", (double)rows[i].fit[t].max_batch);
            cJSON_AddStringToObject(mm, "fit", fg_verdict_name(rows[i].fit[t].verdict));
            cJSON_AddNumberToObject(mm, "total_bytes", (double)rows[i].est[t].total_bytes);
        }
        cJSON_AddItemToArray(cards, c);
    }
    if (a && in->q.gpu) {
        const struct fg_plan *plan = &a->plan;
        bool split = a->fit.verdict == FG_FIT_SPLIT;
        bool found = a->planned && plan->status == FG_PLAN_FOUND && plan->n;
        /* the job's own layout (declared, or its framework's default) and its peak; the
         * planner's layouts are the options, the re-checked ones decision.remedies */
        cJSON *p = fg_cli_layout_json(&a->layout);
        cJSON_AddStringToObject(p, "card", in->q.gpu->label);
        enum fg_verdict v = split && a->planned && !found ? FG_FIT_NO : a->fit.verdict;
        cJSON_AddStringToObject(p, "verdict", fg_verdict_name(v));
        cJSON_AddNumberToObject(p, "max_batch", (double)a->fit.max_batch);
        if (v == FG_FIT_NO)
            cJSON_AddStringToObject(p, "why", plan->why);
        cJSON *alts = cJSON_AddArrayToObject(p, "options");
        for (size_t i = 0; a->planned && i < plan->n; i++)
            cJSON_AddItemToArray(alts, fg_cli_layout_json(&plan->options[i]));
        cJSON *sug = cJSON_AddArrayToObject(p, "suggestions");
        for (size_t i = 0; a->alt_planned && i < a->alt.n; i++) {
            const struct fg_layout *l = &a->alt.options[i];
            char who[160];
            cJSON *e = fg_cli_layout_json(l);
            fg_framework_who_runs(fg_framework_needs(l->tp, l->pp, l->ep, 1, l->zero), who,
                                  sizeof who);
            cJSON_AddStringToObject(e, "frameworks", who);
            cJSON_AddItemToArray(sug, e);
        }
        cJSON_AddItemToObject(root, "plan", p);
    }
    if (check || in->q.gpu)
        cJSON_AddItemToObject(root, "decision", decision_json(in, g));
    char *s = fg_cli_json_print(root);
    puts(s);
    free(s);
    cJSON_Delete(root);
}

/* plan's verdict on the --gpu card: the job's own layout, then what else fits. */
static void print_verdict(const struct inputs *in, const struct fg_gate *g, bool check)
{
    const struct fg_assessment *a = &g->a;
    const struct fg_fit *fit = &a->fit;
    char b[32];
    printf("\n%s on %s (usable %s per card after the CUDA context, %.2fx headroom):\n",
           check ? "Check" : "Verdict", in->q.gpu->label, fg_cli_gb(a->usable, b, sizeof b),
           a->headroom);
    if (!check) {
        if (fit->verdict == FG_FIT_FITS || fit->verdict == FG_FIT_BORDERLINE) {
            printf("  %s: needs %s with headroom; largest micro-batch %llu%s\n",
                   fg_verdict_name(fit->verdict), fg_cli_gb(fit->need_bytes, b, sizeof b),
                   (unsigned long long)fit->max_batch,
                   fit->verdict == FG_FIT_BORDERLINE
                       ? "; above the card on the conservative peak: measure one step first"
                       : "");
        } else if (a->planned && a->plan.status == FG_PLAN_FOUND) {
            printf("  split: one card cannot hold micro-batch %llu; layouts %s runs that fit:\n",
                   (unsigned long long)a->job.batch, a->fw->name);
            for (size_t i = 0; i < a->plan.n; i++)
                print_layout(&a->plan.options[i]);
        } else {
            printf("  no: %s\n", a->planned ? a->plan.why : "one card cannot hold it");
        }
        bool head = false;
        for (size_t i = 0; a->alt_planned && i < a->alt.n; i++) {
            const struct fg_layout *l = &a->alt.options[i];
            unsigned need = fg_framework_needs(l->tp, l->pp, l->ep, 1, l->zero);
            char who[160];
            if (!(need & ~a->fw->layouts))
                continue; /* listed above */
            if (!head)
                printf("  on other frameworks (--framework), layouts that fit:\n");
            head = true;
            fg_framework_who_runs(need, who, sizeof who);
            print_layout(l);
            printf("        runs on: %s\n", who[0] ? who : "none fitgate knows");
        }
        return;
    }
    if (in->q.nodes > 1) {
        /* --gpus is the job's, --gpus-per-node and --gres each node's: say the total */
        char req[256];
        fg_request_describe(&in->q, req, sizeof req);
        printf("  request %s\n", req);
    }
    const char *lines[FG_DECIDE_LINES + FG_REMEDY_MAX];
    size_t n = fg_decide_lines(&g->d, lines, sizeof lines / sizeof lines[0]);
    for (size_t i = 0; i < n; i++)
        printf("  %s\n", lines[i]);
    fg_cli_remedy_edits_print(in->o, &g->rem, g->d.n_remedies);
    bool unchecked = fg_model_unsure_of_memory(in->m) && in->rules.on_unknown != FG_ONUNK_ALLOW;
    printf("  => %s with %u x %s (decision: %s)\n",
           unchecked        ? "not judged (the count is unsure)"
           : g->d.by_rule   ? "refused by the site's rules"
           : g->d.fits      ? "fits"
                            : "does not fit",
           fg_request_total(&in->q), in->q.gpu->label,
           g->d.overridden ? "override" : fg_decide_kind_name(g->d.kind));
}

/*
 * check answers a job whose own options are wrong (a bad value, a combination its framework
 * refuses) as the plugin does: a rejection whatever OnError says (exit 1), in the audit trail
 * when asked.
 */
/* --log-as: the decision into the policy's audit trail, as the user running the CLI. */
static void log_decision(const struct fg_policy *pol, const struct fg_cli_opts *o,
                         const struct fg_request *q, const struct fg_gate *g)
{
    struct passwd *pw = getpwuid(getuid());
    struct fg_gate_audit_of what = {.spec = &o->spec, .q = q, .g = g,
                                     .user = pw ? pw->pw_name : NULL};
    struct fg_err err = {0};
    if (fg_gate_audit(pol, !strcmp(o->log_as, "job_submit") ? FG_AUDIT_AT_JOB_SUBMIT
                                                             : FG_AUDIT_AT_CLI, &what, &err))
        fprintf(stderr, "fitgate: warning: the decision could not be logged: %s\n", err.detail);
}

static int job_error(const struct fg_cli_opts *o)
{
    struct fg_policy pol;
    struct fg_err err = {0};
    struct fg_gate *g = calloc(1, sizeof *g);
    if (!g)
        return 2;
    fg_policy_init(&pol);
    if (o->policy)
        (void)fg_policy_load(&pol, o->policy, &err);
    g->rc = FG_E_INVAL;
    g->d.kind = FG_DECIDE_REJECT;
    snprintf(g->d.lines[0], FG_DECIDE_LINE, "fitgate: rejected: %.370s", o->job_error);
    struct fg_request q;
    memset(&q, 0, sizeof q);
    q.nodes = 1;
    fg_gate_model_label(o->model ? o->model : "", q.model, sizeof q.model);
    if (o->log_as)
        log_decision(&pol, o, &q, g);
    if (o->json) {
        cJSON *root = cJSON_CreateObject(), *d = cJSON_AddObjectToObject(root, "decision");
        cJSON_AddStringToObject(d, "kind", "reject");
        cJSON_AddBoolToObject(d, "fits", false);
        cJSON *lines = cJSON_AddArrayToObject(d, "lines");
        cJSON_AddItemToArray(lines, cJSON_CreateString(g->d.lines[0]));
        char *text = fg_cli_json_print(root);
        if (text)
            puts(text);
        free(text);
        cJSON_Delete(root);
    } else {
        printf("%s\n", g->d.lines[0]);
    }
    free(g);
    return 1;
}

static int run(int argc, char **argv, bool check)
{
    struct fg_cli_opts *o = calloc(1, sizeof *o);
    struct fg_gate *g = calloc(1, sizeof *g);
    static struct fg_estimate table_est[3]; /* 15 KB: keep it off the stack */
    struct inputs in = {0};
    struct fg_err err = {0};
    int exit_code = 2;
    if (!o || !g) {
        fprintf(stderr, "fitgate: error: out of memory\n");
        goto out;
    }
    int prc = fg_cli_parse_opts(argc, argv, o);
    if (prc == 4 && check) { /* the model too may be the one its bad config did not name */
        exit_code = job_error(o);
        goto out;
    }
    if (prc == 4)
        fprintf(stderr, "fitgate: %s\n", o->job_error);
    in.o = o;
    if (prc)
        goto out;
    int lrc = load_inputs(o, check, &in);
    if (lrc == 4 && check) {
        exit_code = job_error(o);
        goto out;
    }
    if (lrc == 4)
        fprintf(stderr, "fitgate: error: %s\n", o->job_error);
    if (lrc)
        goto out;
    /* the one assess path: the plugin's decision on this request under this policy */
    fg_gate_run(in.m, &o->spec, &in.q, &in.rules, in.pol.on_error, g);
    if (!g->assessed && g->rc != FG_E_INVAL) {
        fprintf(stderr, "fitgate: error: %s\n", g->detail);
        goto out;
    }
    if (!g->assessed && !check) {
        fprintf(stderr, "fitgate: error: %s\n", g->detail);
        goto out;
    }
    if (o->log_as)
        log_decision(&in.pol, o, &in.q, g);
    const struct fg_estimate *est = g->assessed ? &g->a.est : NULL;
    bool card = in.q.gpu != NULL;
    exit_code = check ? decision_exit(&g->d) : 0;
    const struct fg_report_gate rg = {.a = est ? &g->a : NULL, .card = in.q.gpu,
                                      .gpus = fg_request_total(&in.q), .rules = &in.rules,
                                      .table = in.table};
    if (o->html && est && fg_report_html_file(o->html, in.m, o, &rg, &err)) {
        fprintf(stderr, "fitgate: error: %s\n", err.detail);
        exit_code = 2;
        goto out;
    }
    struct fg_plan_opts po;
    fg_plan_opts_default(&po);
    po.fit.headroom = o->headroom;
    po.fit.conservative = o->conservative;
    po.global_batch = o->global_batch;
    size_t ncards = 0;
    struct card_row rows[8];
    if (!check) {
        int rc = table_estimates(in.m, o, table_est, &err);
        for (int i = 0; !rc && fg_cli_default_cards[i] && ncards < 8; i++) {
            rows[ncards].gpu = fg_gpu_find(in.table, fg_cli_default_cards[i], NULL);
            if (rows[ncards].gpu &&
                !(rc = fill_card(in.m, o, &po, table_est, &rows[ncards], true, &err)))
                ncards++;
        }
        if (rc) {
            fprintf(stderr, "fitgate: error: %s\n", err.detail);
            exit_code = 2;
            goto out;
        }
    }
    if (o->write_fit && est) {
        int wrc = fg_cli_write_fit(o, g);
        if (wrc)
            exit_code = wrc;
    }
    if (o->json) {
        print_json(o, &in, g, rows, ncards, check);
        goto out;
    }
    print_model(in.m);
    if (!est) { /* the job's own options contradict each other */
        for (int i = 0; i < FG_DECIDE_LINES; i++)
            if (g->d.lines[i][0])
                printf("%s\n", g->d.lines[i]);
        goto out;
    }
    fg_cli_print_job(o, &g->a.job);
    print_breakdown(est);
    if (card)
        print_verdict(&in, g, check);
    if (!check)
        print_tables(in.m, o, &in, est, rows, ncards, &po);
out:
    inputs_free(&in);
    free(g);
    free(o);
    return exit_code;
}

int fg_cli_plan(int argc, char **argv)
{
    return run(argc, argv, false);
}

int fg_cli_check(int argc, char **argv)
{
    int lint = fg_cli_lint(argc, argv);
    return lint >= 0 ? lint : run(argc, argv, true);
}
