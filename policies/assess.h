/*
 * assess.h - what the engine says of a job on the card it asked for, run once per job
 * before the decision (decide.h):
 *
 *   fg_assess()  the estimate, the verdict on one card, and - when one card is not
 *                enough, or only borderline - the smallest layouts within the
 *                partition's limits (MaxGPUs, MaxGPUsPerNode).
 *
 * Ownership: struct fg_assessment is a value (its plans are fixed arrays); fw is borrowed
 * from framework.h's static rows.  Nothing to free.
 *
 * Error contract: see error.h.  fg_assess fails only with the engine's errors and a job
 * whose own options contradict each other; a job that does not fit is a result, not an
 * error.
 */
#ifndef FG_ASSESS_H
#define FG_ASSESS_H

#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"
#include "plan/fit.h"
#include "stack/framework.h"
#include "hw/gpu.h"
#include "job/jobspec.h"
#include "memory/memory.h"
#include "model/model.h"
#include "plan/plan.h"
#include "policy.h"
#include "memory/serve_engine.h"

/* The most GPUs the planner searches for one job (16,384: two of today's largest
 * training clusters' pods; docs/planner.md). */
#define FG_ASSESS_MAX_GPUS 16384u

struct fg_assessment {
    struct fg_job job;         /* as it runs: its layout's tp, pp, ep, dp and ZeRO stage */
    const struct fg_framework *fw; /* borrowed (framework.h rows are static) */
    char model_type[64];       /* the model's architecture (fg_model.model_type, copied) */
    uint32_t layers;           /* main-stack blocks */
    struct fg_layout layout;   /* the job's own layout (declared, or the framework's default) */
    struct fg_estimate est;    /* per GPU on that layout (its largest stage), at the micro-batch */
    bool have_card;            /* false: estimate only (the job named no known card) */
    uint64_t usable;           /* one card after the CUDA context (serving: the engine's share) */
    double headroom;           /* the headroom the fit used (1.0 inside a serving budget) */
    double gpu_util;           /* serving engines: the share of the card (0: none) */
    uint64_t engine_static;    /* serving engines: weights + the profile run's working set
                                  (+ CUDA graphs where they come off the budget) */
    uint64_t kv_seq_bytes;     /* serving engines: KV cache (and state) of one sequence */
    uint64_t serve_card;       /* serving engines: the card's total the share is taken of */
    uint64_t serve_profile;    /* the profile run's working set (vLLM; SGLang: 0, serve_reserve) */
    uint64_t serve_graphs;     /* CUDA graphs counted off the budget (vLLM >= 0.21) */
    uint64_t serve_reserve;    /* SGLang: what mem_fraction_static leaves out of the card */
    uint64_t serve_graph_reserve; /* SGLang: of which its decode and prefill CUDA graphs */
    uint64_t serve_kv_budget;  /* what the budget leaves the KV cache */
    uint32_t serve_tokens;     /* vLLM max_num_batched_tokens / SGLang chunked_prefill_size */
    uint64_t serve_max_len;    /* the longest max_model_len one sequence's KV fits (0: none) */
    uint64_t serve_sampler;    /* vLLM: the profile's dummy sampler run (in serve_profile) */
    uint32_t serve_seqs;       /* vLLM max_num_seqs: the sampler's rows */
    int64_t serve_kv_avail;    /* vLLM: the KV budget, negative when the rest overdraws it */
    enum fg_vllm_refusal serve_refusal; /* vLLM: whether it would refuse to start */
    uint32_t need_min;         /* the fewest GPUs that run the job's layout as declared */
    uint32_t need_checked;     /* the fewest GPUs a re-check through the gate found to fit
                                  (gate.c, for an over-request); 0 when not checked */
    struct fg_fit fit;         /* the job's micro-batch on its layout */
    struct fg_plan plan;       /* layouts the framework can run, when the job does not fit */
    bool planned;
    struct fg_plan safe;       /* the same under the conservative factor, for borderline jobs */
    bool safe_planned;
    struct fg_plan alt;        /* layouts of any framework (suggestions only) */
    bool alt_planned;
    char override_reason[200]; /* --ft-override (copied); "" none */
    const struct fg_calib_row *calib; /* the site calibration applied to est (rules.calib:
                                         borrowed from the policy); NULL none */
    /* A trainer that generates through vLLM (job.vllm_mode): */
    uint64_t gen_share;        /* colocate: the engine's share of each training GPU */
    uint64_t gen_need;         /* what the engine holds per GPU: weights, working set, the KV
                                  cache of the completions it generates at once */
    uint64_t gen_budget;       /* what it may hold: its share, or a server GPU's budget */
    uint32_t gen_gpus;         /* server: GPUs that run the vLLM server (as asked or found) */
    uint32_t gen_seqs;         /* completions the engine generates at once */
    bool gen_fits;             /* the engine's side holds gen_need */
    bool gen_found;            /* server: gen_gpus was found by fitgate, not asked */
    /* Where the GPUs asked for are: node_gpus on each of nodes (the request's; one node
     * holds a request within a node).  The job's layout, the planner's and every remedy's
     * are held to the framework's table (framework.h fg_framework_runs) on them. */
    uint32_t node_gpus, nodes;
    uint32_t plan_node_gpus;   /* the planner's GPUs per node (more GPUs than asked) */
    /* The job does not fit one card but the plan holds it within the GPUs asked for: the
     * best layout of exactly those GPUs that the framework runs (at_total_found), the one
     * the check admits.  False when no such layout fits: the job does not fit as asked. */
    struct fg_layout at_total;
    bool at_total_found;
};

/* Where the job's GPUs are, and what the assessment may leave out (fg_assess_on). */
struct fg_assess_opts {
    uint32_t per_node;         /* GPUs on each node (0: the job's GPUs on as few nodes of
                                  MaxGPUsPerNode as hold them) */
    uint32_t nodes;            /* nodes (0: as few as hold them) */
    bool no_alt;               /* no plan of other frameworks (a remedy's re-check: the
                                  decision does not read it) */
};

/*
 * Assess the job of spec (fg_jobspec_finish'ed) on model m for gpus GPUs of card gpu
 * (NULL: estimate only) under rules r.  The job's layout is the one it declares (--tp,
 * --pp, --ep, --cp, --dp), the rest derived from the GPU count, or its framework's
 * default: data parallel over every GPU, ZeRO as asked (or the framework's own when it
 * shards by default); serving engines split the model by TP over the GPUs they get.
 * A layout the framework cannot run, that does not multiply to the GPU count, or that
 * the model cannot take (TP must divide the heads, EP the experts) is FG_E_INVAL with
 * the reason: the job's own options contradict each other.  Engine errors pass through
 * (FG_E_RANGE, FG_E_OVERFLOW, FG_E_NOMEM) with their detail.
 */
int fg_assess(const struct fg_model *m, const struct fg_jobspec *spec, const struct fg_gpu *gpu,
              uint32_t gpus, const struct fg_rules *r, struct fg_assessment *out,
              struct fg_err *err);

/* fg_assess for GPUs on nodes as o says (NULL: as fg_assess). */
int fg_assess_on(const struct fg_model *m, const struct fg_jobspec *spec,
                 const struct fg_gpu *gpu, uint32_t gpus, const struct fg_assess_opts *o,
                 const struct fg_rules *r, struct fg_assessment *out, struct fg_err *err);

#endif
