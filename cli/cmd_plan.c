/*
 * fitgate plan / fitgate check: the whole answer for one model and job.
 * Output for people (tables, a breakdown with the source of each line) or
 * --json with the keys docs/cli.md lists ("JSON output").
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fit.h"
#include "gpu.h"
#include "jobopts.h"
#include "memory.h"
#include "model.h"
#include "format.h"
#include "plan.h"
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

static cJSON *layout_json(const struct fg_layout *l)
{
    cJSON *p = cJSON_CreateObject();
    char split[256];
    fg_layout_split_str(l, split, sizeof split);
    cJSON_AddNumberToObject(p, "gpus", l->gpus);
    cJSON_AddNumberToObject(p, "tp", l->tp);
    cJSON_AddNumberToObject(p, "pp", l->pp);
    cJSON_AddNumberToObject(p, "ep", l->ep);
    cJSON_AddNumberToObject(p, "dp", l->dp);
    cJSON_AddNumberToObject(p, "zero", l->zero);
    cJSON_AddStringToObject(p, "pp_split", split);
    cJSON_AddNumberToObject(p, "peak_bytes", (double)l->peak_bytes);
    cJSON_AddNumberToObject(p, "micro_batch", (double)l->micro_batch);
    cJSON_AddNumberToObject(p, "grad_accum", (double)l->grad_accum);
    return p;
}

static cJSON *model_json(const struct fg_model *m)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", m->id);
    cJSON_AddStringToObject(o, "model_type", m->model_type);
    cJSON_AddStringToObject(o, "reader", m->reader);
    cJSON_AddBoolToObject(o, "generic", m->generic);
    cJSON *p = cJSON_AddObjectToObject(o, "params");
    cJSON_AddNumberToObject(p, "total", (double)m->params_total);
    cJSON_AddNumberToObject(p, "buffers", (double)m->params_buffers);
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

static int run(int argc, char **argv, bool check)
{
    struct fg_cli_opts o;
    if (fg_cli_parse_opts(argc, argv, &o))
        return 2;
    struct fg_err err = {0};
    struct fg_model *m = NULL;
    if (fg_cli_load_model(o.model, &m, &err)) {
        fprintf(stderr, "fitgate: error: %s\n", err.detail);
        return 2;
    }
    const struct fg_gpu_table *table = fg_gpu_table_builtin();
    const struct fg_gpu *want = NULL;
    if (o.gpu) {
        unsigned count = 0;
        want = fg_gpu_find(table, o.gpu, &count);
        if (!want) {
            /* through fg_err_set, which shows the user's control characters as '?' */
            fg_err_set(&err, FG_E_NOTFOUND, "unknown GPU '%s'; 'fitgate gpus --table' lists the "
                                            "known cards and aliases", o.gpu);
            fprintf(stderr, "fitgate: error: %s\n", err.detail);
            fg_model_free(m);
            return 2;
        }
        if (count && !o.gpus)
            o.gpus = count;
    }
    if (check && (!want || !o.gpus)) {
        fprintf(stderr, "fitgate check: --gpu NAME and --gpus N are required\n");
        fg_model_free(m);
        return 2;
    }
    /* every GPU asked for is a data-parallel rank, as the plugin assesses a submission */
    fg_job_on_gpus(&o.job, o.gpus * (o.nodes ? o.nodes : 1));
    struct fg_plan_opts po;
    fg_plan_opts_default(&po);
    po.fit.headroom = o.headroom;
    po.fit.conservative = o.conservative;
    po.global_batch = o.global_batch;

    struct fg_estimate est;
    int rc = fg_memory_estimate(m, &o.job, &est, &err);
    if (!rc && o.html)
        rc = fg_report_html_file(o.html, m, &o, &err);
    if (rc) {
        fprintf(stderr, "fitgate: error: %s\n", err.detail);
        fg_model_free(m);
        return 2;
    }

    /* The requested card: verdict on the requested count, and layouts. */
    struct fg_fit fit = {0};
    struct fg_plan plan = {0};
    const struct fg_layout *chosen = NULL;
    uint64_t usable = 0;
    if (want) {
        usable = fg_fit_usable(want->memory_gb, want->memory_bytes, &po.fit);
        fg_fit_card(&est, usable, &po.fit, &fit);
        uint32_t have = o.gpus ? o.gpus * (o.nodes ? o.nodes : 1) : 0;
        if (fit.verdict != FG_FIT_SPLIT && (!have || have >= 1)) {
            /* one card is enough */
        } else {
            if (have)
                po.max_gpus = have > po.max_gpus ? have : po.max_gpus;
            rc = fg_plan_layouts(m, &o.job, usable, &po, &plan, &err);
            if (rc) {
                fprintf(stderr, "fitgate: error: %s\n", err.detail);
                fg_model_free(m);
                return 2;
            }
            if (plan.status == FG_PLAN_IMPOSSIBLE)
                fit.verdict = FG_FIT_NO;
            else
                chosen = &plan.options[0];
        }
    }
    int exit_code = 0;
    if (check) {
        uint32_t have = o.gpus * (o.nodes ? o.nodes : 1);
        bool ok = fit.verdict == FG_FIT_FITS || fit.verdict == FG_FIT_BORDERLINE ||
                  (chosen && chosen->gpus <= have);
        exit_code = ok ? 0 : 1;
    }

    size_t ncards = 0;
    struct card_row rows[8];
    static struct fg_estimate table_est[3]; /* 15 KB: keep it off the stack */
    if (!check) {
        rc = table_estimates(m, &o, table_est, &err);
        for (int i = 0; !rc && fg_cli_default_cards[i] && ncards < 8; i++) {
            rows[ncards].gpu = fg_gpu_find(table, fg_cli_default_cards[i], NULL);
            if (rows[ncards].gpu &&
                !(rc = fill_card(m, &o, &po, table_est, &rows[ncards], true, &err)))
                ncards++;
        }
        if (rc) {
            fprintf(stderr, "fitgate: error: %s\n", err.detail);
            fg_model_free(m);
            return 2;
        }
    }

    if (o.json) {
        cJSON *root = cJSON_CreateObject();
        cJSON_AddItemToObject(root, "model", model_json(m));
        cJSON *j = cJSON_AddObjectToObject(root, "job");
        cJSON_AddStringToObject(j, "mode", fg_mode_name(o.job.mode));
        cJSON_AddNumberToObject(j, "seq_len", (double)est.seq_len);
        cJSON_AddNumberToObject(j, "batch", (double)o.job.batch);
        cJSON_AddNumberToObject(j, "lora_rank", o.job.lora_rank);
        cJSON_AddStringToObject(j, "precision", fg_precision_name(o.job.precision));
        cJSON_AddStringToObject(j, "optimizer", fg_optimizer_name(o.job.optimizer));
        cJSON_AddBoolToObject(j, "grad_ckpt", o.job.grad_ckpt);
        if (o.job.unsharded_copy) /* only when asked: the outputs without it stay as they were */
            cJSON_AddBoolToObject(j, "unsharded_copy", true);
        if (o.job.attention != FG_ATTN_SDPA) /* likewise */
            cJSON_AddStringToObject(j, "attention", fg_attention_name(o.job.attention));
        cJSON_AddNumberToObject(j, "headroom", o.headroom);
        cJSON_AddNumberToObject(j, "conservative", o.conservative);
        cJSON_AddItemToObject(root, "memory", memory_json(&est));
        cJSON *cards = cJSON_AddArrayToObject(root, "cards");
        for (size_t i = 0; i < ncards; i++) {
            int k = o.job.mode == FG_MODE_SERVE ? 2 : o.job.mode == FG_MODE_FULL ? 0 : 1;
            struct fg_fit f;
            fg_fit_card(&est, rows[i].usable, &po.fit, &f);
            struct fg_plan *pl = &rows[i].plan[k];
            cJSON *c = cJSON_CreateObject();
            cJSON_AddStringToObject(c, "name", rows[i].gpu->label);
            cJSON_AddNumberToObject(c, "memory_bytes", (double)rows[i].usable);
            cJSON_AddNumberToObject(c, "max_batch", (double)f.max_batch);
            enum fg_verdict v = f.verdict;
            if (v == FG_FIT_SPLIT && k == (o.job.mode == FG_MODE_SERVE ? 2 : o.job.mode ==
                                           FG_MODE_FULL ? 0 : 1) && !(pl->n) &&
                rows[i].fit[k].verdict == FG_FIT_NO)
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
        if (want) {
            cJSON *p = chosen ? layout_json(chosen) : cJSON_CreateObject();
            if (!chosen) {
                struct fg_layout one = {.gpus = 1, .tp = 1, .pp = 1, .ep = 1, .dp = 1,
                                        .cut = {0, fg_model_main_layers(m)},
                                        .peak_bytes = est.total_bytes,
                                        .micro_batch = o.job.batch, .grad_accum = 1};
                cJSON_Delete(p);
                p = layout_json(&one);
            }
            cJSON_AddStringToObject(p, "card", want->label);
            cJSON_AddStringToObject(p, "verdict", fg_verdict_name(fit.verdict));
            cJSON_AddNumberToObject(p, "max_batch", (double)fit.max_batch);
            if (plan.status == FG_PLAN_IMPOSSIBLE && fit.verdict == FG_FIT_NO)
                cJSON_AddStringToObject(p, "why", plan.why);
            cJSON *alts = cJSON_AddArrayToObject(p, "options");
            for (size_t i = 0; i < plan.n; i++)
                cJSON_AddItemToArray(alts, layout_json(&plan.options[i]));
            cJSON_AddItemToObject(root, "plan", p);
        }
        char *s = cJSON_Print(root);
        puts(s);
        free(s);
        cJSON_Delete(root);
        fg_model_free(m);
        return exit_code;
    }

    char a[32], b[32];
    printf("%s  (%s; read as %s)\n", m->id, m->model_type, m->reader);
    printf("parameters: %s stored in the checkpoint", fg_cli_count(m->params_total, a, sizeof a));
    if (m->experts)
        printf(", %llu experts top-%llu (%s active)", (unsigned long long)m->experts,
               (unsigned long long)m->top_k, fg_cli_count(fg_model_active_params(m), b, sizeof b));
    printf("; %llu layers\n", (unsigned long long)m->layers);
    for (size_t i = 0; i < m->n_rules; i++)
        if (m->rules[i].scalars)
            printf("rule: %s (%+lld)\n", m->rules[i].name, (long long)m->rules[i].scalars);
    for (size_t i = 0; i < m->n_notes; i++)
        printf("note: %s\n", m->notes[i]);
    printf("job: %s, %s, %s", fg_mode_name(o.job.mode), fg_precision_name(o.job.precision),
           fg_optimizer_name(o.job.optimizer));
    if (o.job.mode == FG_MODE_LORA || o.job.mode == FG_MODE_QLORA)
        printf(", LoRA r=%u", o.job.lora_rank);
    printf("%s%s%s\n", o.job.grad_ckpt ? ", gradient checkpointing" : "",
           o.job.unsharded_copy ? ", unsharded weight copy beside ZeRO-3 shards" : "",
           o.job.attention == FG_ATTN_EAGER ? ", eager attention" : "");
    print_breakdown(&est);

    if (want) {
        printf("\n%s on %s (usable %s per card after the CUDA context, %.2fx headroom):\n",
               check ? "Check" : "Verdict", want->label, fg_cli_gb(usable, a, sizeof a), o.headroom);
        if (fit.verdict == FG_FIT_FITS || fit.verdict == FG_FIT_BORDERLINE) {
            printf("  %s: needs %s with headroom; largest micro-batch %llu%s\n",
                   fg_verdict_name(fit.verdict), fg_cli_gb(fit.need_bytes, b, sizeof b),
                   (unsigned long long)fit.max_batch,
                   fit.verdict == FG_FIT_BORDERLINE
                       ? "; above the card on the conservative peak: measure one step first"
                       : "");
        } else if (fit.verdict == FG_FIT_NO) {
            printf("  no: %s\n", plan.why);
        } else {
            printf("  split: one card cannot hold micro-batch %llu; layouts that fit:\n",
                   (unsigned long long)o.job.batch);
            for (size_t i = 0; i < plan.n; i++)
                print_layout(&plan.options[i]);
        }
        if (check)
            printf("  => %s with %u x %s\n", exit_code == 0 ? "fits" : "does not fit",
                   o.gpus * (o.nodes ? o.nodes : 1), want->label);
    }
    if (!check) {
        uint64_t serve_seq = rows[0].est[2].seq_len;
        printf("\nLargest micro-batch per card (training at %llu tokens, serving at %llu; %.2fx "
               "headroom, %llu MiB CUDA context per card)\n",
               (unsigned long long)rows[0].est[0].seq_len, (unsigned long long)serve_seq,
               o.headroom, (unsigned long long)(po.fit.context_bytes >> 20));
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
        if (want && (o.samples || o.epochs)) {
            uint64_t samples = o.samples ? o.samples : 50000, epochs = o.epochs ? o.epochs : 1;
            double h = gpu_hours(m, &o.job, want, est.seq_len, samples, epochs, o.utilisation);
            if (h >= 0)
                printf("\nCost: %.1f GPU-hours on %s for %llu samples x %llu epochs x %llu "
                       "tokens (roofline: %.3g FLOP/token at %.0f%% of %.0f bf16 TFLOP/s)\n",
                       h, want->label, (unsigned long long)samples, (unsigned long long)epochs,
                       (unsigned long long)est.seq_len, fg_memory_flops_per_token(m, &o.job),
                       o.utilisation * 100,
                       want->bf16_tflops > 0 ? want->bf16_tflops : want->fp16_tflops);
        }
        if (o.structure)
            print_structure(m, m->max_pos ? m->max_pos : est.seq_len);
    }
    fg_model_free(m);
    return exit_code;
}

int fg_cli_plan(int argc, char **argv)
{
    return run(argc, argv, false);
}

int fg_cli_check(int argc, char **argv)
{
    return run(argc, argv, true);
}
