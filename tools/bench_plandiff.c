/*
 * bench_plandiff.c - the planner against a reference planner, in-process, over many jobs:
 * every fixture model x a deterministic pseudo-random sample of (card, mode, sequence,
 * micro-batch, ZeRO, gradient checkpointing, chunked CE, global batch), including absurd
 * sizes that overflow the planner's sums.  tools/bench_golden.sh `planner REV` builds it
 * with REV's engine/plan/plan.c compiled in under ref_* names (ref_plan_layouts) next to the
 * working tree's library; the two must agree on everything a plan reports: status, why,
 * and every option's shape, cut, stage bytes, peak, micro-batch and accumulation.
 *
 * It also compares the estimator with REV's (ref_memory_estimate) on as many sampled
 * estimates per model, with every field a layout sets drawn at random (TP, EP, DP, ZeRO,
 * pipeline stage and its sides, in-flight micro-batches, LoRA targets, quantization,
 * precision, optimizer): every number and every attributed line must agree, and the
 * planner's path (fg__memory_estimate_parts, its block parts kept across all of a model's
 * jobs) must give the same numbers.
 *
 * usage: bench_plandiff [--models DIR] [--jobs N per model] [--seed S]
 * Exit 0 when every plan agrees, 1 on the first difference (printed), 2 on misuse.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_load.h"
#include "memory/memory_int.h"
#include "hw/gpu.h"
#include "memory/memory.h"
#include "model/model.h"
#include "plan/plan.h"

int ref_plan_layouts(const struct fg_model *m, const struct fg_job *job, uint64_t usable,
                     const struct fg_plan_opts *o, struct fg_plan *out, struct fg_err *err);
int ref_memory_estimate(const struct fg_model *m, const struct fg_job *job,
                        struct fg_estimate *out, struct fg_err *err);

static uint64_t rng_state;
static uint64_t rnd(void)
{
    /* xorshift64*: reproducible across runs and machines */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}
#define PICK(a) ((a)[rnd() % (sizeof(a) / sizeof((a)[0]))])

static int same_plan(const struct fg_plan *x, const struct fg_plan *y, char *why, size_t cap)
{
    if (x->status != y->status || x->n != y->n || x->usable_bytes != y->usable_bytes)
        return snprintf(why, cap, "status %d/%d n %zu/%zu", x->status, y->status, x->n, y->n), 0;
    if (x->status == FG_PLAN_IMPOSSIBLE && strcmp(x->why, y->why))
        return snprintf(why, cap, "why differs"), 0;
    for (size_t i = 0; i < x->n; i++) {
        const struct fg_layout *a = &x->options[i], *b = &y->options[i];
        if (a->gpus != b->gpus || a->tp != b->tp || a->pp != b->pp || a->ep != b->ep ||
            a->dp != b->dp || a->zero != b->zero || a->peak_bytes != b->peak_bytes ||
            a->micro_batch != b->micro_batch || a->grad_accum != b->grad_accum)
            return snprintf(why, cap, "option %zu shape/peak", i), 0;
        for (uint32_t s = 0; s <= a->pp; s++)
            if (a->cut[s] != b->cut[s])
                return snprintf(why, cap, "option %zu cut[%u] %u/%u", i, s, a->cut[s], b->cut[s]), 0;
        for (uint32_t s = 0; s < a->pp; s++)
            if (a->stage_bytes[s] != b->stage_bytes[s])
                return snprintf(why, cap, "option %zu stage %u bytes", i, s), 0;
    }
    return 1;
}

/* Everything an estimate reports, lines included. */
static int same_estimate(const struct fg_estimate *x, const struct fg_estimate *y)
{
    if (memcmp(&x->b, &y->b, sizeof x->b) || x->static_bytes != y->static_bytes ||
        x->per_sample_bytes != y->per_sample_bytes || x->total_bytes != y->total_bytes ||
        x->step_bytes != y->step_bytes || x->seq_len != y->seq_len || x->batch != y->batch ||
        x->trainable_params != y->trainable_params || x->adapter_params != y->adapter_params ||
        x->act_per_token_layer_max != y->act_per_token_layer_max || x->n_lines != y->n_lines)
        return 0;
    for (size_t i = 0; i < x->n_lines; i++) {
        const struct fg_line *a = &x->lines[i], *b = &y->lines[i];
        if (strcmp(a->key, b->key) || strcmp(a->what, b->what) ||
            strcmp(a->source, b->source) || a->bytes != b->bytes ||
            a->per_sample != b->per_sample)
            return 0;
    }
    return 1;
}

/* A random job as a planner's layout (or a user) could set it. */
static void random_job(struct fg_job *job, uint32_t layers)
{
    static const enum fg_mode modes[] = {FG_MODE_FULL, FG_MODE_LORA, FG_MODE_QLORA, FG_MODE_SERVE};
    static const uint64_t seqs[] = {0, 1, 128, 2048, 8192, 1u << 24};
    static const uint64_t batches[] = {1, 1, 2, 8, 1u << 20};
    static const uint32_t par[] = {1, 1, 1, 2, 4, 8, 16, 3};
    static const char *const lists[] = {"q,v", "gate,up,down", "qkv,o", "in_proj", "nothing"};
    fg_job_defaults(job, PICK(modes));
    job->seq_len = PICK(seqs);
    job->batch = PICK(batches);
    job->precision = (enum fg_precision)(rnd() % 4);
    job->optimizer = (enum fg_optimizer)(rnd() % 3);
    if (job->mode == FG_MODE_QLORA || (job->mode == FG_MODE_SERVE && rnd() % 4 == 0))
        job->quant = (enum fg_quant)(1 + rnd() % 3);
    job->lora_targets = (enum fg_lora_targets)(rnd() % 4);
    if (job->lora_targets == FG_LORA_LIST)
        snprintf(job->lora_list, sizeof job->lora_list, "%s", PICK(lists));
    job->lora_rank = rnd() % 8 ? 16 : 256;
    job->grad_ckpt = rnd() % 2;
    job->chunked_ce = rnd() % 4 == 0;
    job->zero = (uint32_t)(rnd() % 4);
    job->dp = PICK(par);
    job->tp = PICK(par);
    job->ep = PICK(par);
    job->pp = PICK(par);
    if (rnd() % 2 && layers) {
        job->layer_first = (uint32_t)(rnd() % layers);
        job->layer_last = job->layer_first + 1 + (uint32_t)(rnd() % (layers - job->layer_first));
        job->stage_embed = rnd() % 2;
        job->stage_head = rnd() % 2;
        job->inflight = 1 + (uint32_t)(rnd() % 8);
    }
}

int main(int argc, char **argv)
{
    const char *dir = "tests/fixtures/models";
    long jobs = 40;
    rng_state = 0x9e3779b97f4a7c15ull;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--models") && i + 1 < argc)
            dir = argv[++i];
        else if (!strcmp(argv[i], "--jobs") && i + 1 < argc)
            jobs = atol(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            rng_state = strtoull(argv[++i], NULL, 0) | 1;
        else
            return fprintf(stderr, "usage: bench_plandiff [--models DIR] [--jobs N] [--seed S]\n"), 2;
    }
    static const char *const cards[] = {"t4", "l4", "a100_40g", "h100", "h200", "mi300x"};
    static const enum fg_mode modes[] = {FG_MODE_FULL, FG_MODE_LORA, FG_MODE_QLORA, FG_MODE_SERVE};
    static const uint64_t seqs[] = {0, 128, 512, 2048, 8192, 32768, 1u << 24};
    static const uint64_t batches[] = {1, 1, 2, 4, 16, 64, 1u << 20};
    static const uint64_t gbatches[] = {0, 0, 8, 256};
    static const uint32_t gpns[] = {8, 8, 4, 2};
    DIR *d = opendir(dir);
    if (!d)
        return fprintf(stderr, "bench_plandiff: %s: cannot open\n", dir), 2;
    char names[256][256];
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n < 256)
        if (de->d_name[0] != '.')
            snprintf(names[n++], sizeof names[0], "%s", de->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], (int (*)(const void *, const void *))strcmp);
    static struct fg_plan a, b;
    long plans = 0, found = 0, impossible = 0, errors = 0, estimates = 0;
    for (int i = 0; i < n; i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        struct fg_model *m = NULL;
        struct fg_err err = {0};
        if (fg_model_load(path, &m, &err))
            continue; /* not a model directory (truth.tsv, ...) */
        for (long k = 0; k < jobs; k++) {
            struct fg_job job;
            fg_job_defaults(&job, PICK(modes));
            job.seq_len = PICK(seqs);
            job.batch = PICK(batches);
            job.zero = job.mode == FG_MODE_FULL ? (uint32_t)(rnd() % 4) : 0;
            job.grad_ckpt = rnd() % 2;
            job.chunked_ce = rnd() % 4 == 0;
            if (job.mode == FG_MODE_QLORA)
                job.quant = rnd() % 2 ? FG_QUANT_NF4 : FG_QUANT_NF4_DQ;
            const struct fg_gpu *g = fg_gpu_find(NULL, PICK(cards), NULL);
            if (!g)
                g = fg_gpu_find(NULL, "h100", NULL);
            struct fg_plan_opts po;
            fg_plan_opts_default(&po);
            po.global_batch = PICK(gbatches);
            po.gpus_per_node = PICK(gpns);
            po.max_gpus = rnd() % 3 ? 64 : 256;
            uint64_t usable = fg_fit_usable(g->memory_gb, g->memory_bytes, &po.fit);
            struct fg_err ea = {0}, eb = {0};
            int ra = fg_plan_layouts(m, &job, usable, &po, &a, &ea);
            int rb = ref_plan_layouts(m, &job, usable, &po, &b, &eb);
            char why[128] = "";
            if (ra != rb || (ra && strcmp(ea.detail, eb.detail)) ||
                (!ra && !same_plan(&a, &b, why, sizeof why))) {
                printf("bench_plandiff: DIFFERENT: %s, job %ld: mode %s seq %llu batch %llu "
                       "zero %u ckpt %d card %s: rc %d/%d %s\n", names[i], k,
                       fg_mode_name(job.mode), (unsigned long long)job.seq_len,
                       (unsigned long long)job.batch, job.zero, job.grad_ckpt, g->label, ra, rb,
                       why);
                fg_model_free(m);
                return 1;
            }
            plans++;
            errors += ra != 0;
            found += !ra && a.status == FG_PLAN_FOUND;
            impossible += !ra && a.status == FG_PLAN_IMPOSSIBLE;
        }
        static struct fg_estimate ea, eb, ec;
        struct fg__parts *parts = fg__parts_new(); /* kept across the model's jobs */
        for (long k = 0; k < jobs; k++) {
            struct fg_job job;
            random_job(&job, fg_model_main_layers(m));
            struct fg_err xa = {0}, xb = {0}, xc = {0};
            int ra = fg_memory_estimate(m, &job, &ea, &xa);
            int rb = ref_memory_estimate(m, &job, &eb, &xb);
            int rc = parts ? fg__memory_estimate_parts(m, &job, &ec, parts, &xc) : ra;
            if (!rc && !ra) { /* the planner's path: the same bytes, no lines */
                ec.n_lines = ea.n_lines;
                memcpy(ec.lines, ea.lines, sizeof ec.lines);
            }
            if (ra != rb || ra != rc || (ra && strcmp(xa.detail, xb.detail)) ||
                (!ra && (!same_estimate(&ea, &eb) || (parts && !same_estimate(&ea, &ec))))) {
                printf("bench_plandiff: DIFFERENT estimate: %s, job %ld: mode %s %s seq %llu "
                       "batch %llu tp %u ep %u dp %u zero %u layers [%u, %u) embed %d head %d "
                       "inflight %u ckpt %d: rc %d/%d, total %llu/%llu, static %llu/%llu, "
                       "per sample %llu/%llu\n", names[i], k, fg_mode_name(job.mode),
                       fg_precision_name(job.precision), (unsigned long long)job.seq_len,
                       (unsigned long long)job.batch, job.tp, job.ep, job.dp, job.zero,
                       job.layer_first, job.layer_last, job.stage_embed, job.stage_head,
                       job.inflight, job.grad_ckpt, ra, rb, (unsigned long long)ea.total_bytes,
                       (unsigned long long)eb.total_bytes, (unsigned long long)ea.static_bytes,
                       (unsigned long long)eb.static_bytes,
                       (unsigned long long)ea.per_sample_bytes,
                       (unsigned long long)eb.per_sample_bytes);
                for (size_t l = 0; !ra && l < ea.n_lines && l < eb.n_lines; l++)
                    if (strcmp(ea.lines[l].what, eb.lines[l].what))
                        printf("  line %zu: '%s' / '%s'\n", l, ea.lines[l].what, eb.lines[l].what);
                fg__parts_free(parts);
                fg_model_free(m);
                return 1;
            }
            estimates++;
        }
        fg__parts_free(parts);
        fg_model_free(m);
    }
    printf("bench_plandiff: %ld estimates identical to the reference\n", estimates);
    printf("bench_plandiff: %ld plans identical to the reference (%ld found, %ld impossible, "
           "%ld estimator errors, the same on both sides)\n", plans, found, impossible, errors);
    return 0;
}
