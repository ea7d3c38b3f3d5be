/*
 * assess.c - the engine run once for a job (assess.h): its layout, the estimate on it,
 * the fit on one card, and the plans when one card is not enough.
 */
#include "assess_int.h"
#include "stack/trainer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/*
 * A data-parallel job that shards with ZeRO / FSDP fits as asked because its states are
 * spread over every rank: fewer ranks hold more each.  The fewest that still fit (powers
 * of two, as a scheduler hands them out), so an over-request is judged on that and not on
 * one rank holding a shard of 1/dp.
 */
static int zero_need(const struct fg_model *m, const struct fg_jobspec *spec,
                     struct fg_assessment *a, const struct fg_plan_opts *po, struct fg_err *err)
{
    const struct fg_job *j = &a->job;
    if (!j->zero || j->dp <= 1 || j->tp > 1 || j->pp > 1 || spec->dp ||
        (a->fit.verdict != FG_FIT_FITS && a->fit.verdict != FG_FIT_BORDERLINE))
        return 0;
    uint32_t cp = j->cp > 1 ? j->cp : 1;
    for (uint32_t d = 1; d < j->dp; d *= 2) {
        struct fg_job t = *j;
        struct fg_estimate e;
        struct fg_fit f;
        t.dp = d;
        int rc = fg_memory_estimate_totals(m, &t, &e, err);
        if (rc)
            return rc;
        fg_fit_card(&e, a->usable, &po->fit, &f);
        if (f.verdict == FG_FIT_FITS || f.verdict == FG_FIT_BORDERLINE) {
            a->need_min = d * cp;
            return 0;
        }
    }
    a->need_min = j->dp * cp;
    return 0;
}

static void scale_layout(struct fg_layout *l, double f)
{
    l->peak_bytes = (uint64_t)llround((double)l->peak_bytes * f);
    for (size_t i = 0; i < FG_PLAN_MAX_PP; i++)
        l->stage_bytes[i] = (uint64_t)llround((double)l->stage_bytes[i] * f);
}

static void scale_plan(struct fg_plan *p, double f)
{
    for (size_t i = 0; i < p->n && i < FG_PLAN_MAX_OPTIONS; i++)
        scale_layout(&p->options[i], f);
}

/* Where the GPUs of a request are (assess.h struct fg_assess_opts), into a's node_gpus,
 * nodes and plan_node_gpus: a request on one node plans more GPUs on nodes of
 * MaxGPUsPerNode; one over several keeps its own GPUs per node. */
static void place(const struct fg_assess_opts *ao, uint32_t gpus, const struct fg_rules *r,
                  struct fg_assessment *a)
{
    uint32_t node_max = r->max_gpus_node ? r->max_gpus_node : 8;
    uint32_t total = gpus ? gpus : 1;
    if (ao && ao->per_node && ao->nodes) {
        a->node_gpus = ao->per_node;
        a->nodes = ao->nodes;
    } else {
        a->nodes = (total + node_max - 1) / node_max;
        a->node_gpus = a->nodes > 1 ? node_max : total;
    }
    a->plan_node_gpus = a->nodes > 1 ? a->node_gpus : node_max;
}

static int assess(const struct fg_model *m, const struct fg_jobspec *spec,
                  const struct fg_gpu *gpu, uint32_t gpus, const struct fg_assess_opts *ao,
                  const struct fg_rules *r, struct fg_assessment *out, struct fg_err *err)
{
    memset(out, 0, sizeof *out);
    out->job = spec->job;
    out->fw = spec->fw ? spec->fw : fg_framework_default();
    snprintf(out->override_reason, sizeof out->override_reason, "%s", spec->override_reason);
    snprintf(out->model_type, sizeof out->model_type, "%s", m->model_type);
    out->layers = fg_model_main_layers(m);
    out->headroom = r->headroom;
    place(ao, gpus, r, out);
    int rc = fg__assess_job_layout(m, spec, gpus ? gpus : 1, out->node_gpus, out->nodes, out, err);
    if (!rc)
        rc = fg__assess_layout_estimate(m, r, out, err);
    if (!rc && r->calib && (out->calib = fg_calib_find(r->calib, out->fw->name, out->job.mode)))
        fg_calib_apply(out->calib, &out->est);
    if (rc || !gpu)
        return rc;
    struct fg_plan_opts po;
    fg_plan_opts_default(&po);
    po.fit.headroom = r->headroom;
    po.fit.conservative = r->conservative;
    /* the search reaches the GPUs the job asked for as well as the partition's MaxGPUs=
     * (a 2,048-GPU job is planned on 2,048), within FG_ASSESS_MAX_GPUS */
    po.max_gpus = r->max_gpus > gpus ? r->max_gpus : gpus;
    if (po.max_gpus > FG_ASSESS_MAX_GPUS)
        po.max_gpus = FG_ASSESS_MAX_GPUS;
    po.min_gpus = 1;
    po.gpus_per_node = out->plan_node_gpus;
    po.global_batch = spec->global_batch;
    out->have_card = true;
    out->usable = fg_fit_usable(gpu->memory_gb, gpu->memory_bytes, &po.fit);
    if (out->job.mode == FG_MODE_SERVE && spec->gpu_util > 0) {
        /* inside its budget the engine sizes its KV pool to what is left, so the estimate
         * is held to the budget itself (headroom 1) */
        fg__assess_engine_budget(m, spec, gpu, &po.fit, out);
        out->headroom = po.fit.headroom = 1.0;
        po.fit.conservative = r->conservative / r->headroom;
    }
    if (out->job.vllm_mode == FG_VLLM_COLOCATE) {
        /* TRL's colocated vLLM takes vllm_gpu_memory_utilization of the whole card on every
         * training GPU (grpo_trainer.py: LLM(gpu_memory_utilization=...)): the policy
         * trains in what is left */
        struct fg_fit_opts raw = po.fit;
        raw.context_bytes = 0;
        out->gen_share = (uint64_t)((double)fg_fit_usable(gpu->memory_gb, gpu->memory_bytes,
                                                          &raw) * out->job.vllm_util);
        out->usable = out->usable > out->gen_share ? out->usable - out->gen_share : 0;
    }
    fg_fit_card(&out->est, out->usable, &po.fit, &out->fit);
    if (out->gpu_util > 0) {
        fg__assess_engine_fit(m, out);
        if ((rc = fg__assess_serve_max_len(m, out, err)))
            return rc;
        if (out->fit.verdict != FG_FIT_FITS)
            return fg__assess_serve_fewest(m, spec, gpu, gpus, r, &po.fit, out, err);
        return 0;
    }
    if (out->calib) {
        /* the planner's estimates are the model's own: the site's factor goes into the
         * fit's margins instead (need = headroom x factor x estimate) */
        po.fit.headroom *= out->calib->factor;
        po.fit.conservative *= out->calib->factor;
    }
    if ((rc = zero_need(m, spec, out, &po, err)))
        return rc;
    fg__assess_restrict_to(out->fw, &po);
    /* what the job declared stays: more GPUs are added around it, never by changing it */
    po.fix_tp = spec->tp;
    po.fix_pp = spec->pp;
    po.fix_ep = spec->ep;
    po.fix_dp = spec->dp;
    if (spec->layout_fixed)
        fg__assess_keep_files_layout(&out->job, &po);
    if (out->fit.verdict == FG_FIT_SPLIT && out->fit.max_batch == 0) {
        struct fg_job j = out->job;
        j.dp = 1;
        j.tp = j.pp = j.ep = 1;
        if (!fg_jobspec_given(spec, FG_JOBOPT_ZERO))
            j.zero = 0;
        struct fg_plan_opts any = po;
        any.restrict_layouts = false;
        any.naive_pp = false;
        if ((rc = fg_plan_layouts(m, &j, out->usable, &po, &out->plan, err)))
            return rc;
        if (out->plan.status != FG_PLAN_FOUND && j.batch > 1) {
            /* micro-batch 1 on more GPUs, the asked batch kept by accumulation */
            if (!po.global_batch)
                po.global_batch = any.global_batch = j.batch;
            j.batch = 1;
            if ((rc = fg_plan_layouts(m, &j, out->usable, &po, &out->plan, err)))
                return rc;
        }
        out->planned = true;
        if ((rc = fg__assess_layout_at_total(m, &j, gpus, &po, out, err)))
            return rc;
        if ((po.layouts != (FG_PLAN_TP | FG_PLAN_PP | FG_PLAN_EP | FG_PLAN_ZERO) ||
             po.naive_pp) && !(ao && ao->no_alt)) {
            if ((rc = fg_plan_layouts(m, &j, out->usable, &any, &out->alt, err)))
                return rc;
            out->alt_planned = true;
        }
    } else if (out->fit.verdict == FG_FIT_BORDERLINE) {
        /* layouts that hold the conservative peak too */
        struct fg_job j = out->job;
        j.dp = 1;
        j.tp = j.pp = j.ep = 1;
        if (!fg_jobspec_given(spec, FG_JOBOPT_ZERO))
            j.zero = 0;
        po.fit.headroom = po.fit.conservative;
        if ((rc = fg_plan_layouts(m, &j, out->usable, &po, &out->safe, err)))
            return rc;
        out->safe_planned = true;
    }
    return 0;
}

/* ---- a trainer's generation engine ---- */

/*
 * The generation engine of a trainer that generates through vLLM: what the engine holds,
 * where, and how a server-mode job's GPUs split between generating and training.
 *
 * TRL (grpo_trainer.py, f2cd577) runs vLLM either colocated, one engine per training
 * process at vllm_gpu_memory_utilization of its GPU with max_num_seqs =
 * per_device_train_batch_size x vllm_tensor_parallel_size x steps_per_generation, or as a
 * server (`trl vllm-serve`, its own GPUs, --gpu-memory-utilization 0.9 by default) that
 * generates generation_batch_size = per_device_train_batch_size x training processes x
 * steps_per_generation completions per round.  The engine holds its own bf16 copy of the
 * policy's weights, its profile run's working set and the KV cache of those completions at
 * prompt + completion length: the serving estimate of the model (memory.c) sizes it.
 */

/* vLLM's own default share of a server GPU (vllm EngineArgs gpu_memory_utilization). */
#define GEN_SERVER_UTIL 0.9

/* The engine's bytes per GPU at tensor parallel tp for seqs completions, and its budget. */
static int engine_side(const struct fg_model *m, const struct fg_job *job, const struct fg_gpu *gpu,
                       uint32_t tp, uint32_t seqs, double util, struct fg_assessment *out,
                       struct fg_err *err)
{
    struct fg_job js;
    struct fg_estimate e;
    fg_job_defaults(&js, FG_MODE_SERVE);
    js.seq_len = job->seq_len;
    js.batch = seqs ? seqs : 1;
    js.tp = tp ? tp : 1;
    int rc = fg_memory_estimate_totals(m, &js, &e, err);
    if (rc)
        return rc;
    struct fg_fit_opts raw;
    fg_fit_opts_default(&raw);
    raw.context_bytes = 0;
    double card = (double)fg_fit_usable(gpu->memory_gb, gpu->memory_bytes, &raw);
    double budget = card * util - (double)FG_CUDA_CONTEXT_BYTES;
    out->gen_need = e.total_bytes;
    out->gen_budget = budget > 0 ? (uint64_t)budget : 0;
    out->gen_seqs = js.batch;
    out->gen_fits = out->gen_need <= out->gen_budget;
    return 0;
}

/* A server on n GPUs as vLLM runs it: TP over them (it must divide the heads). */
static bool server_tp_ok(const struct fg_model *m, uint32_t n)
{
    return n && (!m->heads || m->heads % n == 0) &&
           (!m->kv_heads || m->kv_heads % n == 0 || n % m->kv_heads == 0);
}

static bool training_fits(const struct fg_assessment *a)
{
    return a->fit.verdict == FG_FIT_FITS || a->fit.verdict == FG_FIT_BORDERLINE;
}

/* Server mode: the job's GPUs less the server's train; the server's count as asked, else
 * the fewest that hold the engine while the rest hold the training. */
static int server_split(const struct fg_model *m, const struct fg_jobspec *spec,
                        const struct fg_gpu *gpu, uint32_t gpus,
                        const struct fg_assess_opts *ao, const struct fg_rules *r,
                        struct fg_assessment *out, struct fg_err *err)
{
    const struct fg_job *j = &spec->job;
    uint32_t asked = j->gen_gpus;
    if (asked && asked >= gpus)
        return fg_err_set(err, FG_E_INVAL, "%sgen-gpus=%u leaves no GPU of the %u asked to "
                          "train on", spec->spelling, asked, gpus);
    if (gpus < 2)
        return fg_err_set(err, FG_E_INVAL, "%svllm-mode server needs GPUs of its own: ask for "
                          "2 or more (or use %svllm-mode colocate)", spec->spelling,
                          spec->spelling);
    uint32_t first = asked ? asked : 1, last = asked ? asked : gpus - 1;
    for (uint32_t n = first; n <= last; n++) {
        if (!asked && !server_tp_ok(m, n))
            continue;
        int rc = assess(m, spec, gpu, gpus - n, ao, r, out, err);
        if (rc)
            return rc;
        uint32_t seqs = (uint32_t)(j->batch * (gpus - n));
        if ((rc = engine_side(m, j, gpu, n, seqs, GEN_SERVER_UTIL, out, err)))
            return rc;
        out->gen_gpus = n;
        out->gen_found = !asked;
        out->layout.gen_gpus = n;
        out->need_min = (out->need_min ? out->need_min : 1) + n;
        if (asked || (out->gen_fits && training_fits(out)))
            return 0;
    }
    /* nothing holds both: the answer for one server GPU, which says what does not fit */
    if (!asked && last >= 1) {
        int rc = assess(m, spec, gpu, gpus - 1, ao, r, out, err);
        if (!rc)
            rc = engine_side(m, j, gpu, 1, (uint32_t)(j->batch * (gpus - 1)), GEN_SERVER_UTIL,
                             out, err);
        out->gen_gpus = out->layout.gen_gpus = 1;
        out->gen_found = true;
        return rc;
    }
    return 0;
}

static int assess_generation(const struct fg_model *m, const struct fg_jobspec *spec,
                          const struct fg_gpu *gpu, uint32_t gpus,
                          const struct fg_assess_opts *ao, const struct fg_rules *r,
                          struct fg_assessment *out, struct fg_err *err)
{
    const struct fg_job *j = &spec->job;
    bool gen = fg_trainer_row(j->trainer)->generates && j->vllm_mode != FG_VLLM_NONE;
    if (!gen || !gpu)
        return assess(m, spec, gpu, gpus, ao, r, out, err);
    if (j->vllm_mode == FG_VLLM_SERVER)
        return server_split(m, spec, gpu, gpus ? gpus : 1, ao, r, out, err);
    int rc = assess(m, spec, gpu, gpus, ao, r, out, err);
    if (!rc)
        rc = engine_side(m, j, gpu, 1, (uint32_t)j->batch, j->vllm_util, out, err);
    if (!rc) {
        /* the share is what the engine may hold; its context is the training process's */
        out->gen_budget = out->gen_share;
        out->gen_fits = out->gen_need <= out->gen_budget;
    }
    return rc;
}

int fg_assess(const struct fg_model *m, const struct fg_jobspec *spec, const struct fg_gpu *gpu,
              uint32_t gpus, const struct fg_rules *r, struct fg_assessment *out,
              struct fg_err *err)
{
    return fg_assess_on(m, spec, gpu, gpus, NULL, r, out, err);
}

int fg_assess_on(const struct fg_model *m, const struct fg_jobspec *spec,
                 const struct fg_gpu *gpu, uint32_t gpus, const struct fg_assess_opts *ao,
                 const struct fg_rules *r, struct fg_assessment *out, struct fg_err *err)
{
    int rc = assess_generation(m, spec, gpu, gpus, ao, r, out, err);
    if (rc || !out->calib)
        return rc;
    /* Every byte figure the decision quotes carries the site calibration: the job's own
     * layout (sized before it) and the planner's layouts (planned on the model's own
     * estimates with the factor in the margins). */
    double f = out->calib->factor;
    if (out->layout.tp <= 1 && out->layout.pp <= 1)
        out->layout.peak_bytes = out->layout.stage_bytes[0] = out->est.total_bytes;
    else
        scale_layout(&out->layout, f);
    if (out->planned)
        scale_plan(&out->plan, f);
    if (out->safe_planned)
        scale_plan(&out->safe, f);
    if (out->alt_planned)
        scale_plan(&out->alt, f);
    if (out->at_total_found)
        scale_layout(&out->at_total, f);
    return 0;
}
