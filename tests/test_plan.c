/*
 * test_plan.c - every suggested layout is valid (divisibility, MoE rules,
 * contiguous stages) and fits on our own estimate, over every model in the
 * fixtures, for full, LoRA, QLoRA and serve on A100 40 GB, H100 80 GB and H200.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

#define MODELS "tests/fixtures/models"

/* The next fixture model of d (NULL at the end), past the refused roots (load_fixture);
 * dir gets its path. */
static struct fg_model *next_model(DIR *d, char *dir, size_t cap)
{
    struct dirent *de;
    struct fg_model *m;
    while ((de = readdir(d)))
        if (de->d_name[0] != '.' && strstr(de->d_name, "--")) {
            snprintf(dir, cap, MODELS "/%s", de->d_name);
            if ((m = load_fixture(dir)))
                return m;
        }
    return NULL;
}

/* Independent re-check of one layout: the rules, then each stage's estimate. */
static void check_layout(const struct fg_model *m, const struct fg_job *job,
                         const struct fg_layout *l, uint64_t usable, double headroom)
{
    uint32_t layers = fg_model_main_layers(m);
    assert_int_equal(l->tp * l->pp * l->dp, l->gpus);
    assert_int_equal(l->cp, job->cp); /* the planner keeps the job's context parallel */
    if (l->ep > 1) {
        assert_int_equal(l->tp, 1);
        assert_true(m->experts && m->experts % l->ep == 0);
        assert_int_equal(l->dp % l->ep, 0);
    }
    for (size_t i = 0; i < m->n_nodes; i++) {
        const struct fg_node *n = &m->nodes[i];
        if (n->stack != FG_STACK_MAIN)
            continue;
        if (n->kind == FG_NODE_ATTN || n->kind == FG_NODE_MLA) {
            assert_int_equal(n->heads % l->tp, 0);
            /* served, a rank may hold a copy of one KV head (vLLM QKVParallelLinear) */
            if (n->kv_heads && !(job->mode == FG_MODE_SERVE && l->tp % n->kv_heads == 0))
                assert_int_equal(n->kv_heads % l->tp, 0);
        }
        if (n->kind == FG_NODE_MLP || n->kind == FG_NODE_MOE)
            assert_int_equal(n->inter % l->tp, 0);
    }
    assert_int_equal(l->cut[0], 0);
    assert_int_equal(l->cut[l->pp], layers);
    for (uint32_t s = 0; s < l->pp; s++) {
        assert_true(l->cut[s] < l->cut[s + 1]);
        struct fg_job j = *job;
        j.tp = l->tp;
        j.ep = l->ep;
        j.dp = l->dp;
        j.zero = l->zero;
        if (l->pp > 1) {
            j.layer_first = l->cut[s];
            j.layer_last = l->cut[s + 1];
            j.stage_embed = s == 0;
            j.stage_head = s == l->pp - 1;
            j.inflight = l->pp - s;
        }
        struct fg_estimate e;
        assert_int_equal(fg_memory_estimate(m, &j, &e, NULL), 0);
        assert_true((double)e.total_bytes * headroom <= (double)usable);
    }
}

static void layouts_should_be_valid_and_fit_for_every_model(void **state)
{
    (void)state;
    DIR *d = opendir(MODELS);
    assert_non_null(d);
    static const unsigned cards[] = {40, 80, 141};
    static const enum fg_mode modes[] = {FG_MODE_FULL, FG_MODE_LORA, FG_MODE_QLORA,
                                         FG_MODE_SERVE};
    int plans = 0, layouts = 0, impossible = 0;
    char dir[512];
    struct fg_model *m;
    while ((m = next_model(d, dir, sizeof dir))) {
        for (size_t c = 0; c < 3; c++)
            for (size_t k = 0; k < 4; k++) {
                struct fg_job job;
                fg_job_defaults(&job, modes[k]);
                struct fg_plan_opts o;
                fg_plan_opts_default(&o);
                uint64_t usable = fg_fit_usable(cards[c], 0, &o.fit);
                struct fg_plan p;
                struct fg_err err = {0};
                if (fg_plan_layouts(m, &job, usable, &o, &p, &err))
                    fail_msg("%s: %s", dir, err.detail);
                plans++;
                if (p.status == FG_PLAN_IMPOSSIBLE) {
                    assert_int_equal(p.n, 0);
                    assert_true(strlen(p.why) > 10);
                    impossible++;
                    continue;
                }
                assert_true(p.n > 0);
                for (size_t i = 0; i < p.n; i++) {
                    check_layout(m, &job, &p.options[i], usable, o.fit.headroom);
                    layouts++;
                }
            }
        fg_model_free(m);
    }
    closedir(d);
    print_message("%d plans, %d layouts checked, %d impossible\n", plans, layouts, impossible);
    assert_true(plans > 200);
}

/* Peak per GPU of the layout job (its tp, pp, ep, dp, zero) with pp even stages (the last
 * takes the remainder). */
static uint64_t even_cut_peak(const struct fg_model *m, const struct fg_job *job)
{
    uint32_t layers = fg_model_main_layers(m), pp = job->pp, per = layers / pp;
    uint64_t peak = 0;
    for (uint32_t s = 0; s < pp; s++) {
        struct fg_job j = *job;
        if (pp > 1) {
            j.layer_first = s * per;
            j.layer_last = s == pp - 1 ? layers : (s + 1) * per;
            j.stage_embed = s == 0;
            j.stage_head = s == pp - 1;
            j.inflight = pp - s;
        }
        struct fg_estimate e;
        assert_int_equal(fg_memory_estimate_totals(m, &j, &e, NULL), 0);
        if (e.total_bytes > peak)
            peak = e.total_bytes;
    }
    return peak;
}

/* Every shape of g GPUs the rules allow (powers of two, ZeRO 0-3), cut evenly: fn(peak, j)
 * for each, j the job with the shape's tp, pp, ep, dp and zero. */
static void each_shape(const struct fg_model *m, const struct fg_job *job, uint32_t g,
                       void (*fn)(uint64_t peak, const struct fg_job *j, void *ctx), void *ctx)
{
    uint32_t layers = fg_model_main_layers(m);
    for (uint32_t tp = 1; tp <= g; tp *= 2)
        for (uint32_t pp = 1; tp * pp <= g && pp <= layers; pp *= 2) {
            uint32_t dp = g / tp / pp;
            for (uint32_t ep = 1; ep <= dp; ep *= 2) {
                if (ep > 1 && (!m->experts || m->experts % ep || tp > 1))
                    continue;
                for (uint32_t z = 0; z <= 3; z++) {
                    struct fg_job j = *job;
                    j.tp = tp;
                    j.pp = pp;
                    j.ep = ep;
                    j.dp = dp;
                    j.zero = z;
                    fn(even_cut_peak(m, &j), &j, ctx);
                }
            }
        }
}

struct floor_check {
    bool count;        /* the count's floor (fg__plan_count_floor), else the shape's */
    double within;     /* tight: peak under floor x within */
    long checked, tight, tight_pp;
    const struct fg_model *m;
    const char *dir;
    uint64_t floor;    /* the count's */
};

/* The peak of j's layout must be at or over the floor. */
static void check_floor(uint64_t peak, const struct fg_job *j, void *ctx)
{
    struct floor_check *f = ctx;
    uint64_t floor = f->count ? f->floor : fg__plan_shape_floor(f->m, j);
    if (peak < floor)
        fail_msg("%s %s%s: tp %u pp %u ep %u dp %u zero %u: peak %llu under the floor %llu",
                 f->dir, fg_mode_name(j->mode), j->grad_ckpt ? " grad-ckpt" : "", j->tp, j->pp,
                 j->ep, j->dp, j->zero, (unsigned long long)peak, (unsigned long long)floor);
    f->checked++;
    if ((double)peak < f->within * (double)floor) {
        f->tight++;
        f->tight_pp += j->pp > 1;
    }
}

/* check_floor over every fixture model, the first `variants` jobs (each mode; 4, 5: full and
 * LoRA with an unsharded copy; 6, 7: checkpointed; 8, 9: micro-batch 4) and every shape of
 * 1 to 16 GPUs. */
static void check_floors(struct floor_check *f, size_t variants)
{
    DIR *d = opendir(MODELS);
    assert_non_null(d);
    static const enum fg_mode modes[] = {FG_MODE_FULL, FG_MODE_LORA, FG_MODE_QLORA,
                                         FG_MODE_SERVE};
    static const uint32_t counts[] = {1, 2, 4, 8, 16};
    char dir[512];
    struct fg_model *m;
    while ((m = next_model(d, dir, sizeof dir))) {
        f->m = m;
        f->dir = dir;
        for (size_t k = 0; k < variants; k++) {
            struct fg_job job;
            fg_job_defaults(&job, modes[k % 4]);
            job.unsharded_copy = k == 4 || k == 5;
            job.grad_ckpt = k == 6 || k == 7;
            job.batch = k >= 8 ? 4 : 1;
            for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
                if (f->count) {
                    f->floor = fg__plan_count_floor(m, &job, counts[c]);
                    assert_true(f->floor > 0);
                }
                each_shape(m, &job, counts[c], check_floor, f);
            }
        }
        fg_model_free(m);
    }
    closedir(d);
}

/* The planner skips a GPU count whose floor is over the card; so the floor must be under
 * every layout of that count: checked against every shape the rules allow, cut evenly. */
static void count_floor_should_be_under_every_layout_of_the_count(void **state)
{
    (void)state;
    struct floor_check f = {.count = true, .within = 1.05};
    check_floors(&f, 6);
    print_message("%ld layouts at or over their count's floor, %ld within 5%% of it\n",
                  f.checked, f.tight);
    assert_true(f.checked > 10000);
    assert_true(f.tight > 100); /* a floor, not a formality: reached by the ZeRO-3 layouts */
}

/* The planner skips a pipeline shape whose floor is over the card before costing its blocks;
 * so the floor must be under every cut of that shape: checked against every shape the
 * rules allow, cut evenly, also checkpointed and at a larger micro-batch (the per-sample
 * part and its slack).  It fails if the floor is raised by 2%: the shapes without a
 * pipeline sit within 2% of it (the floor is their own estimate less the slack), and so
 * do thousands with one. */
static void shape_floor_should_be_under_every_cut_of_the_shape(void **state)
{
    (void)state;
    struct floor_check f = {.within = 1.02};
    check_floors(&f, 10);
    print_message("%ld layouts at or over their shape's floor, %ld within 2%% of it (%ld of "
                  "them with a pipeline)\n", f.checked, f.tight, f.tight_pp);
    assert_true(f.checked > 10000);
    assert_true(f.tight_pp > 100); /* a floor, not a formality: pipelines reach it too */
}

/* The default full fine-tune of a fixture model planned on cards of card_gb (up to max_gpus,
 * 0 for the default); fails the test on an estimator error. */
static void plan_full(const char *model, unsigned card_gb, uint32_t max_gpus, struct fg_plan *p)
{
    struct fg_model *m = load(model);
    struct fg_job job;
    fg_job_defaults(&job, FG_MODE_FULL);
    struct fg_plan_opts o;
    fg_plan_opts_default(&o);
    if (max_gpus)
        o.max_gpus = max_gpus;
    struct fg_err err = {0};
    if (fg_plan_layouts(m, &job, fg_fit_usable(card_gb, 0, &o.fit), &o, p, &err))
        fail_msg("%s: %s", model, err.detail);
    fg_model_free(m);
}

static void nemotron_full_on_h200_should_split_by_layer_on_two_cards(void **state)
{
    (void)state;
    struct fg_plan p; /* the default job is 2048 tokens, the seed's */
    plan_full(MODELS "/nvidia--NVIDIA-Nemotron-Nano-9B-v2", 141, 0, &p);
    assert_int_equal(p.status, FG_PLAN_FOUND);
    assert_int_equal(p.options[0].gpus, 2);
    assert_int_equal(p.options[0].pp, 2);
    assert_int_equal(p.options[0].tp, 1);
    char split[64];
    fg_layout_split_str(&p.options[0], split, sizeof split);
    print_message("Nemotron-Nano-9B-v2 full on 2 x H200: layers %s\n", split);
    /* stage 0 carries the embedding and 2 micro-batches in flight: it gets fewer blocks */
    assert_true(p.options[0].cut[1] < 56 / 2 + 4);
}

static void moe_layouts_should_use_expert_parallel_with_tp_1(void **state)
{
    (void)state;
    struct fg_plan p;
    plan_full(MODELS "/Qwen--Qwen3-30B-A3B", 80, 0, &p);
    assert_int_equal(p.status, FG_PLAN_FOUND);
    assert_true(p.options[0].ep > 1);
    assert_int_equal(p.options[0].tp, 1);
}

/* The best layout of a larger count is shown, not the first ones found: the planner kept
 * 64 layouts and dropped the rest, so at 40 GPUs gpt-oss-120b full on H200 showed DP=40
 * ZeRO-3 (rank 7) while PP2 x EP2 (rank -2, and lower) was dropped. */
static void plan_should_show_the_best_layout_of_each_larger_count(void **state)
{
    (void)state;
    struct fg_plan p;
    plan_full(MODELS "/openai--gpt-oss-120b", 141, 0, &p);
    assert_int_equal(p.status, FG_PLAN_FOUND);
    bool larger = false;
    for (size_t i = 1; i < p.n; i++) {
        if (p.options[i].gpus == p.options[0].gpus)
            continue;
        larger = true;
        assert_true(p.options[i].ep > 1); /* EP ranks first (NeMo), and fits there */
    }
    assert_true(larger);
}

static void impossible_request_should_say_why(void **state)
{
    (void)state;
    struct fg_plan p;
    plan_full(MODELS "/moonshotai--Kimi-K2-Instruct", 16, 8, &p);
    assert_int_equal(p.status, FG_PLAN_IMPOSSIBLE);
    assert_non_null(strstr(p.why, "8 GPUs"));
}

static int collect(const char *name, const char *value, void *ctx)
{
    char *buf = ctx;
    size_t n = strlen(buf);
    snprintf(buf + n, 2048 - n, "%s=%s\n", name, value);
    return 0;
}

/* Two plans the same: status, options in order, every dimension, cut and peak. */
static bool same_plan(const struct fg_plan *a, const struct fg_plan *b)
{
    if (a->status != b->status || a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++) {
        const struct fg_layout *x = &a->options[i], *y = &b->options[i];
        if (x->gpus != y->gpus || x->tp != y->tp || x->pp != y->pp || x->ep != y->ep ||
            x->dp != y->dp || x->zero != y->zero || x->peak_bytes != y->peak_bytes ||
            memcmp(x->cut, y->cut, sizeof x->cut))
            return false;
    }
    return true;
}

/*
 * Above FG_PLAN_JUMP_FROM GPUs the planner goes by families of layouts (plan.c struct
 * family): the counts where one can fit, not every count.  The plans are the ones the
 * count-by-count search gives (FG_PLAN_NO_JUMP), for dense, MoE and hybrid models, every
 * layout restriction of the rows, checkpointing or not, short and long sequences, and the
 * dimensions a job declares.
 */
static void family_search_should_plan_as_the_count_by_count_search(void **state)
{
    (void)state;
    static const char *const models[] = {"meta-llama--Llama-3.1-405B",
                                         "meta-llama--Llama-3.1-70B", "Qwen--Qwen3-30B-A3B",
                                         "nvidia--NVIDIA-Nemotron-Nano-9B-v2",
                                         "deepseek-ai--DeepSeek-V2-Lite-Chat",
                                         "mistralai--Mixtral-8x7B-v0.1"};
    static const unsigned lays[] = {FG_PLAN_TP | FG_PLAN_PP | FG_PLAN_EP | FG_PLAN_ZERO,
                                    FG_PLAN_PP | FG_PLAN_ZERO, FG_PLAN_ZERO,
                                    FG_PLAN_TP | FG_PLAN_PP | FG_PLAN_ZERO};
    unsigned plans = 0, found = 0, over = 0;
    for (size_t mi = 0; mi < sizeof models / sizeof models[0]; mi++) {
        char dir[256];
        snprintf(dir, sizeof dir, "tests/fixtures/models/%s", models[mi]);
        struct fg_model *m = load(dir);
        for (int mode = 0; mode < 2; mode++)
            for (int k = 0; k < 8; k++) {
                struct fg_job job;
                fg_job_defaults(&job, mode ? FG_MODE_LORA : FG_MODE_FULL);
                job.seq_len = k & 1 ? 32768 : 2048;
                job.grad_ckpt = k & 2;
                struct fg_plan_opts o;
                fg_plan_opts_default(&o);
                o.max_gpus = k & 4 ? 2048 : 512;
                o.restrict_layouts = true;
                o.layouts = lays[(mi + (size_t)k) % 4];
                o.naive_pp = o.layouts == (FG_PLAN_PP | FG_PLAN_ZERO);
                if (k == 5 && (o.layouts & FG_PLAN_PP))
                    o.fix_pp = 4; /* a declared dimension */
                for (unsigned gb = 16; gb <= 80; gb += 32) {
                    struct fg_plan a, b;
                    struct fg_err err = {0};
                    uint64_t usable = (uint64_t)gb * 1000000000ull;
                    assert_int_equal(fg_plan_layouts(m, &job, usable, &o, &a, &err), 0);
                    setenv("FG_PLAN_NO_JUMP", "1", 1);
                    assert_int_equal(fg_plan_layouts(m, &job, usable, &o, &b, &err), 0);
                    unsetenv("FG_PLAN_NO_JUMP");
                    if (!same_plan(&a, &b))
                        print_message("%s mode %d k %d %u GB: %zu options from %u vs %zu "
                                      "from %u\n", models[mi], mode, k, gb, a.n,
                                      a.n ? a.options[0].gpus : 0, b.n,
                                      b.n ? b.options[0].gpus : 0);
                    assert_true(same_plan(&a, &b));
                    plans++;
                    found += a.status == FG_PLAN_FOUND;
                    over += a.n && a.options[a.n - 1].gpus > FG_PLAN_JUMP_FROM;
                }
            }
        fg_model_free(m);
    }
    print_message("%u plans the same, %u found, %u reaching above %u GPUs\n", plans, found,
                  over, FG_PLAN_JUMP_FROM);
    assert_true(over >= 10 && found < plans); /* the families were used, some plans fail */
}

static void layout_env_should_export_the_plan(void **state)
{
    (void)state;
    struct fg_layout l = {.gpus = 4, .tp = 2, .pp = 2, .ep = 1, .dp = 1, .cut = {0, 27, 56},
                          .peak_bytes = 123, .micro_batch = 1, .grad_accum = 8};
    char buf[2048] = "";
    assert_int_equal(fg_layout_env(&l, collect, buf), 0);
    assert_non_null(strstr(buf, "FITGATE_TP=2\n"));
    assert_non_null(strstr(buf, "FITGATE_PP=2\n"));
    assert_non_null(strstr(buf, "FITGATE_PP_SPLIT=0-26,27-55\n"));
    assert_non_null(strstr(buf, "FITGATE_GRAD_ACCUM=8\n"));
    assert_non_null(strstr(buf, "tensor_model_parallel_size=2 pipeline_model_parallel_size=2"));
    assert_non_null(strstr(buf, "num_layers_in_first_pipeline_stage=27"));
}

/* torchtitan's split (pipeline_parallel.py _generate_llm_fqn_per_model_part, input and
 * output weight 1): Llama-3.1-405B's 126 layers over 8 stages are 15, 16 x 6, 15; 32 over
 * 4 deal the remainder of 34 to the first two stages: 8, 9, 8, 7; a stage left with no
 * block is refused, as torchtitan refuses it. */
static void even_cut_should_deal_the_layers_as_torchtitan_does(void **state)
{
    (void)state;
    uint32_t cut[FG_PLAN_MAX_PP + 1] = {0};
    assert_true(fg_plan_even_cut(126, 8, 1, 1, cut));
    const uint32_t want[] = {0, 15, 31, 47, 63, 79, 95, 111, 126};
    for (int i = 0; i <= 8; i++)
        assert_int_equal(cut[i], want[i]);
    assert_true(fg_plan_even_cut(32, 4, 1, 1, cut));
    const uint32_t four[] = {0, 8, 17, 25, 32};
    for (int i = 0; i <= 4; i++)
        assert_int_equal(cut[i], four[i]);
    assert_false(fg_plan_even_cut(2, 4, 1, 1, cut));
    assert_int_equal(cut[4], 32); /* untouched */
    assert_false(fg_plan_even_cut(32, 0, 1, 1, cut));
}

/* torch.distributed.pipelining's schedules as torchtitan builds them (plan.h
 * fg_plan_pp_rank): 1F1B keeps min(n, pp - r) micro-batches (Schedule1F1B warmup_chunks);
 * GPipe all n; Interleaved1F1B two chunks a rank, (2 - 1) x per_round + 2 (pp - 1 - r)
 * warmup forwards and one more before the first backward (pp 4, n 8: rounds 2, per_round 4:
 * 11 on rank 0, 5 on rank 3), capped at n x 2 (pp 8, n 8: all 16 on rank 0); LoopedBFS
 * every chunk's forwards.  405B's 126 layers over 16 stages: rank 0 holds stages 0 and 8
 * (7 + 8 blocks) and the embedding, rank 7 stages 7 and 15 (8 + 7) and the head. */
static void pp_rank_should_keep_what_torchs_schedules_keep_in_flight(void **state)
{
    (void)state;
    struct fg_job j;
    fg_job_defaults(&j, FG_MODE_FULL);
    uint32_t first, last, chunks, inflight;
    bool embed, head;
    j.pp_microbatches = 8;
    assert_true(fg_plan_pp_rank(&j, 126, 8, 0, &first, &last, &embed, &head, &chunks, &inflight));
    assert_true(first == 0 && last == 15 && embed && !head && chunks == 1 && inflight == 8);
    assert_true(fg_plan_pp_rank(&j, 126, 8, 7, &first, &last, &embed, &head, &chunks, &inflight));
    assert_true(first == 111 && last == 126 && !embed && head && inflight == 1);
    j.pp_microbatches = 2; /* fewer micro-batches than stages: no more than there are */
    assert_true(fg_plan_pp_rank(&j, 126, 8, 0, &first, &last, &embed, &head, &chunks, &inflight));
    assert_int_equal(inflight, 2);
    j.pp_schedule = FG_PP_GPIPE;
    j.pp_microbatches = 12;
    assert_true(fg_plan_pp_rank(&j, 126, 8, 7, &first, &last, &embed, &head, &chunks, &inflight));
    assert_int_equal(inflight, 12);
    j.pp_schedule = FG_PP_INTERLEAVED_1F1B;
    j.pp_microbatches = 8;
    assert_true(fg_plan_pp_rank(&j, 32, 4, 0, &first, &last, &embed, &head, &chunks, &inflight));
    assert_true(chunks == 2 && inflight == 11);
    assert_true(fg_plan_pp_rank(&j, 32, 4, 3, &first, &last, &embed, &head, &chunks, &inflight));
    assert_int_equal(inflight, 5);
    assert_true(fg_plan_pp_rank(&j, 126, 8, 0, &first, &last, &embed, &head, &chunks, &inflight));
    assert_true(last - first == 15 && embed && !head && inflight == 16);
    assert_true(fg_plan_pp_rank(&j, 126, 8, 7, &first, &last, &embed, &head, &chunks, &inflight));
    assert_true(last - first == 15 && last <= 126 && head && inflight == 9);
    j.pp_schedule = FG_PP_LOOPED_BFS;
    assert_true(fg_plan_pp_rank(&j, 126, 8, 7, &first, &last, &embed, &head, &chunks, &inflight));
    assert_int_equal(inflight, 16);
    assert_false(fg_plan_pp_rank(&j, 126, 8, 8, &first, &last, &embed, &head, &chunks, &inflight));
    assert_false(fg_plan_pp_rank(&j, 126, 40, 0, &first, &last, &embed, &head, &chunks,
                                 &inflight)); /* 80 stages: more than the split holds */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(even_cut_should_deal_the_layers_as_torchtitan_does),
        cmocka_unit_test(pp_rank_should_keep_what_torchs_schedules_keep_in_flight),
        cmocka_unit_test(nemotron_full_on_h200_should_split_by_layer_on_two_cards),
        cmocka_unit_test(moe_layouts_should_use_expert_parallel_with_tp_1),
        cmocka_unit_test(impossible_request_should_say_why),
        cmocka_unit_test(plan_should_show_the_best_layout_of_each_larger_count),
        cmocka_unit_test(layout_env_should_export_the_plan),
        cmocka_unit_test(family_search_should_plan_as_the_count_by_count_search),
        cmocka_unit_test(layouts_should_be_valid_and_fit_for_every_model),
        cmocka_unit_test(count_floor_should_be_under_every_layout_of_the_count),
        cmocka_unit_test(shape_floor_should_be_under_every_cut_of_the_shape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
