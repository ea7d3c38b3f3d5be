/*
 * test_remedy_sweep.c - the remedies as a user meets them (policies/remedy.c, the words
 * of policies/decide_remedy.c): generated jobs (a fixed seed) over every framework row and
 * every mode it runs, fixture models of tests/fixtures/models, cards, counts and nodes.
 * For each job:
 *
 *   - every remedy's printed options (fg_remedy_flags: the string its line and the JSON
 *     carry) pasted after the job's own options, as the CLI and sbatch read them, pass the
 *     same check, on a layout the framework runs on the pasted request's nodes;
 *   - no "more GPUs" or other remedy is offered when a switch of the row's table alone fits
 *     the GPUs asked for;
 *   - the layout the check admits, the job's own or a remedy's, is one its framework runs
 *     (framework.h fg_framework_runs);
 *   - serving jobs get serving remedies only, a trainer's (DPO, GRPO) keep their trainer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate.h"
#include "job/jobspec.h"
#include "stack/framework.h"
#include "support.h"

#define M "tests/fixtures/models/"
#define KV 12

/* A job as the user typed it: "name=value" options, and the GPU request. */
struct job {
    char kv[KV][64];
    size_t n_kv;
    char card[24];
    const char *via; /* "gres" or "gpus" */
    uint32_t per, nodes;
    uint32_t max_gpus; /* the partition's MaxGPUs= (0: the default) */
};

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint32_t pick(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static void put(struct job *j, const char *fmt, const char *v)
{
    char b[48];
    snprintf(b, sizeof b, "%.47s", v);
    if (j->n_kv < KV)
        snprintf(j->kv[j->n_kv++], sizeof j->kv[0], fmt, b);
}

/* The job's options applied to s (fresh), then the pasted ones; false when refused. */
static bool spec_of(const struct job *j, char *const *paste, size_t n_paste,
                    struct fg_jobspec *s)
{
    struct fg_err err = {0};
    fg_jobspec_init(s, "--ft-");
    for (size_t i = 0; i < j->n_kv; i++) {
        char name[64];
        const char *eq = strchr(j->kv[i], '=');
        snprintf(name, sizeof name, "%.*s", (int)(eq ? eq - j->kv[i] : (long)strlen(j->kv[i])),
                 j->kv[i]);
        int id = fg_jobopt_find(name);
        assert_true(id >= 0);
        if (fg_jobspec_set(s, (unsigned)id, eq ? eq + 1 : "", &err))
            return false;
    }
    for (size_t i = 0; i < n_paste; i++) {
        const char *t = paste[i];
        if (strncmp(t, "--ft-", 5))
            continue; /* the request: request_of */
        char name[64];
        const char *eq = strchr(t, '=');
        snprintf(name, sizeof name, "%.*s", (int)(eq ? eq - t - 2 : (long)strlen(t) - 2), t + 2);
        int id = fg_jobopt_find(name);
        if (id < 0) {
            print_message("pasted an unknown option: %s\n", t);
            return false;
        }
        if (fg_jobspec_set(s, (unsigned)id, eq ? eq + 1 : "", &err)) {
            print_message("pasted %s: %s\n", t, err.detail);
            return false;
        }
    }
    return fg_jobspec_finish(s, &err) == 0;
}

/* The job's request, then the pasted --nodes / --gres / --gpus after it. */
static void request_of(const struct job *j, char *const *paste, size_t n_paste,
                       struct fg_request *q)
{
    char v[64];
    const char *via = j->via;
    uint32_t nodes = j->nodes;
    snprintf(v, sizeof v, !strcmp(via, "gres") ? "gpu:%s:%u" : "%s:%u", j->card,
             !strcmp(via, "gres") ? j->per : j->per * j->nodes);
    for (size_t i = 0; i < n_paste; i++) {
        if (!strncmp(paste[i], "--nodes=", 8))
            nodes = (uint32_t)strtoul(paste[i] + 8, NULL, 10);
        else if (!strncmp(paste[i], "--gres=", 7))
            via = "gres", snprintf(v, sizeof v, "%s", paste[i] + 7);
        else if (!strncmp(paste[i], "--gpus=", 7))
            via = "gpus", snprintf(v, sizeof v, "%s", paste[i] + 7);
    }
    fg_request_init(q);
    assert_true(fg_request_from_option(q, via, v, nodes, fg_gpu_table_builtin()));
    assert_non_null(q->gpu);
    snprintf(q->model, sizeof q->model, "m");
}

/* Whether the layout admitted for request q runs on spec's framework. */
static bool runs(const struct fg_jobspec *s, const struct fg_model *m,
                 const struct fg_request *q, const struct fg_layout *l)
{
    uint32_t per = fg_request_per_node(q), nodes = q->nodes ? q->nodes : 1;
    if (per && l->gpus < fg_request_total(q)) /* a layout on fewer GPUs: as few nodes */
        nodes = (l->gpus + per - 1) / per;
    struct fg_run_shape rs = {.tp = l->tp, .pp = l->pp, .ep = l->ep, .cp = l->cp, .dp = l->dp,
                              .zero = l->zero, .per_node = per, .nodes = nodes,
                              .experts = m->experts, .seq_len = s->job.seq_len,
                              .serve = s->job.mode == FG_MODE_SERVE && s->fw->gpu_util > 0};
    if (l->gen_gpus) /* a trainer's vLLM server beside: the training ranks' nodes unknown */
        rs.per_node = rs.nodes = 0;
    char why[200];
    bool ok = fg_framework_runs(s->fw, &rs, why, sizeof why);
    if (!ok)
        print_message("not runnable: %s\n", why);
    return ok;
}

struct tally {
    unsigned jobs, rejected, remedies, pasted, kinds[4], fails;
    unsigned serve_rej, serve_rem, dpo_rej, dpo_rem, grpo_rej, grpo_rem;
    unsigned rows_modes[64][8];
};

static void note(struct tally *t, const struct job *j, const char *what, const char *line)
{
    if (t->fails++ < 12) {
        char all[800] = "";
        for (size_t i = 0; i < j->n_kv; i++)
            strcat(strcat(all, " "), j->kv[i]);
        print_message("FAIL %s:%s on %u x %s x %u nodes (%s)\n  %s\n", what, all, j->per,
                      j->card, j->nodes, j->via, line ? line : "");
    }
}

/* Options serving remedies may set: the engine's, the layout, the framework. */
static bool serve_opt(unsigned opt)
{
    return opt == FG_JOBOPT_GPU_UTIL || opt == FG_JOBOPT_KV_DTYPE || opt == FG_JOBOPT_BATCH ||
           opt == FG_JOBOPT_SEQ_LEN || opt == FG_JOBOPT_TP || opt == FG_JOBOPT_PP ||
           opt == FG_JOBOPT_DP || opt == FG_JOBOPT_EP || opt == FG_JOBOPT_CP ||
           opt == FG_JOBOPT_FRAMEWORK;
}

static void check_job(const struct fg_model *m, const struct job *j, struct fg_gate *g,
                      struct fg_gate *h, struct tally *t)
{
    struct fg_jobspec s, p;
    struct fg_request q, qp;
    struct fg_rules r;
    struct fg_policy pol;
    fg_policy_init(&pol);
    r = pol.rules;
    if (j->max_gpus)
        r.max_gpus = j->max_gpus;
    if (!spec_of(j, NULL, 0, &s))
        return;
    request_of(j, NULL, 0, &q);
    fg_gate_run(m, &s, &q, &r, FG_ONERR_REJECT, g);
    if (!g->assessed)
        return;
    t->jobs++;
    bool serve = s.job.mode == FG_MODE_SERVE;
    unsigned trainer = s.job.trainer;
    /* the layout admitted is one the framework runs */
    if (g->d.fits && g->d.has_layout && g->d.kind != FG_DECIDE_REJECT && !g->d.resize_gpus &&
        !runs(&s, m, &q, &g->d.layout))
        note(t, j, "admitted a layout its framework does not run", g->d.lines[0]);
    if (g->d.fits || g->d.kind != FG_DECIDE_REJECT)
        return;
    t->rejected++;
    t->serve_rej += serve;
    t->dpo_rej += trainer == FG_TRAINER_DPO;
    t->grpo_rej += trainer == FG_TRAINER_GRPO;
    if (g->rem.n) {
        t->serve_rem += serve;
        t->dpo_rem += trainer == FG_TRAINER_DPO;
        t->grpo_rem += trainer == FG_TRAINER_GRPO;
    }
    bool other = false;
    for (size_t i = 0; i < g->rem.n; i++) {
        const struct fg_remedy *x = &g->rem.r[i];
        t->remedies++;
        t->kinds[x->kind]++;
        other |= x->kind != FG_REMEDY_SWITCH;
        /* the printed line carries the flags pasted here */
        char flags[320], copy[320];
        fg_remedy_flags(x, &q, "--ft-", flags, sizeof flags);
        if (i >= g->d.n_remedies || !strstr(g->d.remedies[i], flags)) {
            note(t, j, "the line does not say the remedy's flags", flags);
            continue;
        }
        snprintf(copy, sizeof copy, "%s", flags);
        char *tok[40];
        size_t n = 0;
        for (char *save = NULL, *w = strtok_r(copy, " ", &save); w && n < 40;
             w = strtok_r(NULL, " ", &save))
            tok[n++] = w;
        if (!spec_of(j, tok, n, &p)) {
            note(t, j, "the pasted options are refused", g->d.remedies[i]);
            continue;
        }
        request_of(j, tok, n, &qp);
        fg_gate_once(m, &p, &qp, &r, FG_ONERR_REJECT, h);
        t->pasted++;
        if (!h->assessed || !h->d.fits || h->d.kind == FG_DECIDE_REJECT) {
            note(t, j, "the pasted remedy is rejected", g->d.remedies[i]);
            if (t->fails < 12)
                print_message("  re-check: %s\n", h->d.lines[0]);
            continue;
        }
        if (h->d.has_layout && !runs(&p, m, &qp, &h->d.layout))
            note(t, j, "the pasted remedy runs a layout its framework does not",
                 g->d.remedies[i]);
        /* remedies of the job's own kind */
        for (size_t e = 0; e < x->n_edits; e++) {
            unsigned o = x->edits[e].opt;
            if (serve && !serve_opt(o))
                note(t, j, "a serving job told a training switch", g->d.remedies[i]);
            if (!serve && trainer != FG_TRAINER_SFT && o == FG_JOBOPT_MODE)
                note(t, j, "a trainer's job told another mode", g->d.remedies[i]);
        }
        if ((p.job.mode == FG_MODE_SERVE) != serve || p.job.trainer != trainer)
            note(t, j, "the remedy changes the job's kind", g->d.remedies[i]);
    }
    /* no more GPUs (nor another framework) where a switch of the row's table fits */
    if (!other)
        return;
    struct fg_remedy cand[FG_SWITCH_COUNT];
    size_t n = fg_remedy_switches(&s, &q, &g->a, cand, FG_SWITCH_COUNT);
    for (size_t k = 0; k < n; k++) {
        struct fg_jobspec after;
        struct fg_request qa;
        struct fg_err err = {0};
        if (fg_remedy_apply(&cand[k], &s, &q, &after, &qa, &err))
            continue;
        fg_gate_once(m, &after, &qa, &r, FG_ONERR_REJECT, h);
        if (h->assessed && h->d.fits && h->d.kind != FG_DECIDE_REJECT && h->d.has_layout &&
            runs(&after, m, &qa, &h->d.layout)) {
            char flags[320];
            fg_remedy_flags(&cand[k], &q, "--ft-", flags, sizeof flags);
            note(t, j, "more GPUs offered though a switch fits", flags);
            break;
        }
    }
}

static const char *const models[] = {
    "Qwen--Qwen3-0.6B",
    "meta-llama--Llama-3.2-1B-Instruct",
    "google--gemma-2-2b-it",
    "microsoft--phi-2",
    "ibm-granite--granite-3.1-1b-a400m-instruct",
    "Qwen--Qwen1.5-MoE-A2.7B-Chat",
    "deepseek-ai--DeepSeek-V2-Lite-Chat",
    "meta-llama--Llama-3.1-8B",
    "mistralai--Mistral-7B-v0.1",
    "nvidia--NVIDIA-Nemotron-Nano-9B-v2",
    "Qwen--Qwen3-30B-A3B",
    "mistralai--Mixtral-8x7B-v0.1",
    "meta-llama--Llama-3.1-70B",
};
#define N_MODELS (sizeof models / sizeof models[0])

static const char *const modes[] = {"full", "lora", "qlora", "serve", "dpo", "grpo", "kto",
                                    "reward"};
#define N_MODES (sizeof modes / sizeof modes[0])

static void sweep_every_printed_remedy_should_pass_when_pasted(void **state)
{
    (void)state;
    static const char *const cards[] = {"t4", "l4", "a100_40g", "h100", "rtx4090"};
    static const uint32_t per[] = {1, 2, 4, 8}, nodes[] = {1, 1, 2, 4, 16};
    static const char *const seqs[] = {NULL, NULL, "4096", "16384"};
    static const char *const batches[] = {NULL, NULL, "2", "4"};
    struct fg_model *mod[N_MODELS];
    for (size_t i = 0; i < N_MODELS; i++) {
        char dir[256];
        snprintf(dir, sizeof dir, M "%s", models[i]);
        mod[i] = load(dir);
    }
    struct fg_gate *g = calloc(1, sizeof *g), *h = calloc(1, sizeof *h);
    struct tally *t = calloc(1, sizeof *t);
    assert_non_null(g);
    assert_non_null(h);
    assert_non_null(t);
    size_t rows = 0;
    while (fg_framework_at(rows))
        rows++;
    /* every row x mode, round after round, the rest of the job drawn */
    for (int round = 0; round < 40; round++)
        for (size_t ri = 0; ri < rows; ri++)
            for (size_t mi = 0; mi < N_MODES; mi++) {
                const struct fg_framework *fw = fg_framework_at(ri);
                struct job j = {0};
                char name[48];
                snprintf(name, sizeof name, "%.20s@%.20s", fw->name, fw->version);
                put(&j, "framework=%s", name);
                bool trainer = mi >= 4;
                put(&j, "mode=%s", modes[mi]);
                if (trainer && pick(2))
                    put(&j, "adapter=%s", pick(2) ? "lora" : "qlora");
                if (mi == 5 && pick(2)) { /* grpo: vLLM beside the training */
                    bool server = !pick(3);
                    put(&j, "vllm-mode=%s", server ? "server" : "colocate");
                    if (server && pick(2))
                        put(&j, "gen-gpus=%s", "1");
                }
                const char *seq = seqs[pick(4)];
                if (seq && mi != 5)
                    put(&j, "seq-len=%s", seq);
                const char *b = batches[pick(4)];
                if (b)
                    put(&j, "batch=%s", b);
                if (mi != 3 && !pick(4))
                    put(&j, "grad-ckpt%s", "");
                snprintf(j.card, sizeof j.card, "%s", cards[pick(5)]);
                j.per = per[pick(4)];
                j.nodes = j.per == 8 || j.per == 4 ? nodes[pick(5)] : 1;
                j.via = pick(5) ? "gres" : "gpus";
                j.max_gpus = pick(4) ? 0 : 16; /* a small partition: remedies beyond it */
                size_t mo = pick(N_MODELS);
                unsigned before = t->jobs;
                check_job(mod[mo], &j, g, h, t);
                if (t->jobs > before && ri < 64)
                    t->rows_modes[ri][mi]++;
            }
    print_message("sweep: %u jobs, %u rejected, %u remedies (switch %u, more GPUs %u, another "
                  "framework %u, beyond MaxGPUs %u), %u pasted; serving %u/%u, DPO %u/%u, "
                  "GRPO %u/%u rejections with remedies; %u failures\n",
                  t->jobs, t->rejected, t->remedies, t->kinds[0], t->kinds[1], t->kinds[2],
                  t->kinds[3], t->pasted, t->serve_rem, t->serve_rej, t->dpo_rem, t->dpo_rej,
                  t->grpo_rem, t->grpo_rej, t->fails);
    assert_true(t->jobs >= 1000);
    assert_true(t->kinds[FG_REMEDY_SWITCH] > 50 && t->kinds[FG_REMEDY_GPUS] > 20);
    assert_true(t->serve_rem > 0 && t->dpo_rem > 0 && t->grpo_rem > 0);
    /* every row ran every mode its table has */
    for (size_t ri = 0; ri < rows; ri++)
        for (size_t mi = 0; mi < N_MODES; mi++) {
            const struct fg_framework *fw = fg_framework_at(ri);
            bool has = mi == 3 ? fw->serves
                     : mi >= 4 ? fg_framework_has_trainer(fw, mi == 4 ? FG_TRAINER_DPO
                                                        : mi == 5 ? FG_TRAINER_GRPO
                                                        : mi == 6 ? FG_TRAINER_KTO
                                                                  : FG_TRAINER_REWARD)
                     : fw->trains && (mi == 0 || (!fw->full_only && (mi == 1 || fw->qlora)));
            if (has && !t->rows_modes[ri][mi])
                print_message("row %s@%s ran no %s job\n", fw->name, fw->version, modes[mi]);
            assert_true(!has || t->rows_modes[ri][mi] > 0);
        }
    assert_int_equal(t->fails, 0);
    free(t);
    free(g);
    free(h);
    for (size_t i = 0; i < N_MODELS; i++)
        fg_model_free(mod[i]);
}

/* The switch table: every row has switches for every mode it runs, each of them an option
 * its jobspec takes; a mode it does not run has none. */
static void table_should_give_every_row_switches_for_every_mode_it_runs(void **state)
{
    (void)state;
    const struct fg_framework *fw;
    for (size_t i = 0; (fw = fg_framework_at(i)); i++) {
        for (unsigned mode = FG_MODE_FULL; mode <= FG_MODE_SERVE; mode++)
            for (unsigned tr = FG_TRAINER_SFT; tr <= FG_TRAINER_REWARD; tr++) {
                if (mode == FG_MODE_SERVE && tr != FG_TRAINER_SFT)
                    continue;
                bool runs_it = mode == FG_MODE_SERVE
                                   ? fw->serves
                                   : fg_framework_has_trainer(fw, tr) &&
                                         (mode == FG_MODE_FULL ||
                                          (!fw->full_only &&
                                           (mode == FG_MODE_LORA || fw->qlora)));
                enum fg_switch sw[FG_SWITCH_COUNT];
                size_t n = fg_framework_switch_list(fw, mode, tr, sw, FG_SWITCH_COUNT);
                if (!runs_it) {
                    assert_int_equal(n, 0);
                    continue;
                }
                if (!n)
                    print_message("%s@%s has no switch for mode %u trainer %u\n", fw->name,
                                  fw->version, mode, tr);
                assert_true(n > 0);
                for (size_t k = 0; k < n; k++) {
                    /* serving switches for serving, training ones for training */
                    bool serving = sw[k] >= FG_SWITCH_GPU_UTIL;
                    assert_int_equal(serving, mode == FG_MODE_SERVE);
                    assert_true(k == 0 || sw[k] > sw[k - 1]); /* cheapest first, once */
                }
            }
    }
    /* the rows the issue named: hf (transformers), trl, accelerate, torchtitan */
    const char *const named[] = {"hf", "trl", "accelerate", "torchtitan"};
    for (size_t i = 0; i < 4; i++) {
        enum fg_switch sw[FG_SWITCH_COUNT];
        assert_non_null(fg_framework_find(named[i]));
        assert_true(fg_framework_switch_list(fg_framework_find(named[i]), FG_MODE_FULL, 0, sw,
                                             FG_SWITCH_COUNT) >= 3);
    }
}

/* One table of what a framework runs (fg_framework_runs), the rules the issue named. */
static void runs_should_hold_layouts_to_the_framework_table(void **state)
{
    (void)state;
    const struct fg_framework *hf = fg_framework_find("hf"), *ds = fg_framework_find("deepspeed"),
                              *mg = fg_framework_find("megatron"),
                              *tt = fg_framework_find("torchtitan");
    struct fg_run_shape pp8 = {.tp = 1, .pp = 8, .dp = 1, .per_node = 4, .nodes = 2};
    assert_false(fg_framework_runs(hf, &pp8, NULL, 0)); /* device_map across nodes */
    pp8.per_node = 8;
    pp8.nodes = 1;
    assert_true(fg_framework_runs(hf, &pp8, NULL, 0)); /* on one node */
    struct fg_run_shape dspp = {.tp = 1, .pp = 2, .dp = 4, .zero = 2, .per_node = 8, .nodes = 1};
    assert_false(fg_framework_runs(ds, &dspp, NULL, 0)); /* PipelineEngine: ZeRO <= 1 */
    dspp.zero = 1;
    assert_true(fg_framework_runs(ds, &dspp, NULL, 0));
    struct fg_run_shape tp8 = {.tp = 8, .pp = 1, .dp = 1, .per_node = 4, .nodes = 2};
    assert_false(fg_framework_runs(mg, &tp8, NULL, 0)); /* TP across nodes */
    struct fg_run_shape ep = {.tp = 1, .pp = 1, .ep = 2, .dp = 2, .per_node = 2, .nodes = 1};
    assert_false(fg_framework_runs(mg, &ep, NULL, 0)); /* EP on a dense model */
    ep.experts = 8;
    assert_true(fg_framework_runs(mg, &ep, NULL, 0));
    /* trainers: no DPO under torchtitan, GRPO under TRL and torchtune */
    assert_false(fg_framework_has_trainer(tt, FG_TRAINER_DPO));
    assert_true(fg_framework_has_trainer(fg_framework_find("trl"), FG_TRAINER_GRPO));
    assert_true(fg_framework_has_trainer(fg_framework_find("torchtune"), FG_TRAINER_GRPO));
    struct fg_jobspec s;
    struct fg_err err = {0};
    assert_int_equal(spec_from_pairs(&s, (const char *const[]){"framework=torchtitan",
                                                               "mode=dpo", NULL}, &err),
                     FG_E_INVAL);
    assert_non_null(strstr(err.detail, "torchtitan has no trainer for --mode dpo"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table_should_give_every_row_switches_for_every_mode_it_runs),
        cmocka_unit_test(runs_should_hold_layouts_to_the_framework_table),
        cmocka_unit_test(sweep_every_printed_remedy_should_pass_when_pasted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
