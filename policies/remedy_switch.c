/*
 * remedy_switch.c - a framework row's switches as the options that turn them on (remedy_int.h):
 * the edits a remedy carries, and for each switch (framework.h enum fg_switch) whether it
 * applies to the job and which options it sets.  remedy.c tries them.
 */
#include "remedy_int.h"

#include <stdio.h>
#include <string.h>

#include "assess.h"
#include "stack/framework.h"
#include "stack/trainer.h"

/* opt = value, replacing an earlier edit of opt (it keeps its place). */
void fg__remedy_edit(struct fg_remedy *x, unsigned opt, const char *value)
{
    for (size_t i = 0; i < x->n_edits; i++)
        if (x->edits[i].opt == opt) {
            snprintf(x->edits[i].value, sizeof x->edits[i].value, "%s", value);
            return;
        }
    if (x->n_edits >= FG_REMEDY_EDITS)
        return;
    x->edits[x->n_edits].opt = opt;
    snprintf(x->edits[x->n_edits].value, sizeof x->edits[x->n_edits].value, "%s", value);
    x->n_edits++;
}

void fg__remedy_edit_u(struct fg_remedy *x, unsigned opt, uint64_t v)
{
    char b[24];
    snprintf(b, sizeof b, "%llu", (unsigned long long)v);
    fg__remedy_edit(x, opt, b);
}

/* The switches of an inference engine, a GRPO trainer's colocated one included: its share of
 * the card, a server of its own, the served sequences and their length, an fp8 KV cache. */
static bool engine_edits(enum fg_switch sw, const struct fg_jobspec *spec,
                         const struct fg_assessment *a, uint32_t total, struct fg_remedy *x)
{
    const struct fg_job *j = &spec->job;
    char b[24];
    switch (sw) {
    case FG_SWITCH_VLLM_UTIL: {
        /* the colocated engine's share: the least that holds it (what it needs over the
         * card it takes its share of), the rest trains */
        if (j->vllm_mode != FG_VLLM_COLOCATE || !a || !a->gen_share || j->vllm_util <= 0)
            return false;
        double card = (double)a->gen_share / j->vllm_util;
        double u = card > 0 ? (double)a->gen_need / card : 1.0;
        int c = (int)(u * 100.0) + 1;
        if (c > 95 || c == (int)(j->vllm_util * 100.0 + 0.5))
            return false;
        snprintf(b, sizeof b, "%d.%02d", c / 100, c % 100);
        fg__remedy_edit(x, FG_JOBOPT_VLLM_GPU_UTIL, b);
        return true;
    }
    case FG_SWITCH_VLLM_SERVER:
        if (j->vllm_mode == FG_VLLM_SERVER && fg_jobspec_given(spec, FG_JOBOPT_GEN_GPUS)) {
            /* the server's GPUs as asked: another split of the job's GPUs (try_switch) */
            if (total < 3)
                return false;
            fg__remedy_edit_u(x, FG_JOBOPT_GEN_GPUS, j->gen_gpus > 1 ? 1 : 2);
            return true;
        }
        if (j->vllm_mode != FG_VLLM_COLOCATE || total < 2 ||
            fg_jobspec_given(spec, FG_JOBOPT_VLLM_GPU_UTIL))
            return false;
        fg__remedy_edit(x, FG_JOBOPT_VLLM_MODE, "server");
        return true;
    case FG_SWITCH_GPU_UTIL:
        if (!(spec->gpu_util > 0) || spec->gpu_util >= 0.95)
            return false;
        fg__remedy_edit(x, FG_JOBOPT_GPU_UTIL, "0.95");
        return true;
    case FG_SWITCH_KV_FP8:
        if (j->kv_bytes == 1)
            return false;
        fg__remedy_edit(x, FG_JOBOPT_KV_DTYPE, "fp8");
        return true;
    case FG_SWITCH_SEQS:
        if (j->batch <= 1)
            return false;
        fg__remedy_edit_u(x, FG_JOBOPT_BATCH,
                   a && a->fit.max_batch >= 1 && a->fit.max_batch < j->batch ? a->fit.max_batch
                                                                             : 1);
        return true;
    case FG_SWITCH_MAX_LEN: {
        uint64_t len = a && a->serve_max_len ? a->serve_max_len / (j->batch ? j->batch : 1)
                                             : j->seq_len / 2;
        if (!len || len >= j->seq_len)
            return false;
        fg__remedy_edit_u(x, FG_JOBOPT_SEQ_LEN, len);
        return true;
    }
    default:
        return false;
    }
}

/* One switch as the options that turn it on (spec: the job; a: its assessment), into x
 * (cleared first); false when it does not apply to the job. */
bool fg__remedy_switch_edits(enum fg_switch sw, const struct fg_jobspec *spec,
                             const struct fg_request *q, const struct fg_assessment *a,
                             struct fg_remedy *x)
{
    const struct fg_job *j = &spec->job;
    const struct fg_framework *fw = spec->fw;
    uint32_t total = fg_request_total(q);
    uint32_t split = (spec->tp ? spec->tp : 1) * (spec->pp ? spec->pp : 1) *
                     (spec->cp ? spec->cp : 1);
    bool dp_gt1 = spec->dp ? spec->dp > 1 : total / (split ? split : 1) > 1;
    uint64_t accum0 = j->grad_accum ? j->grad_accum : 1;
    memset(x, 0, sizeof *x);
    x->kind = FG_REMEDY_SWITCH;
    x->count = q->count;
    x->nodes = q->nodes ? q->nodes : 1;
    switch (sw) {
    case FG_SWITCH_GRAD_CKPT:
        /* a job that said --no-grad-ckpt would keep it off: the plugin applies the options
         * in the table's order, whatever was pasted last */
        if (j->grad_ckpt || fg_jobspec_given(spec, FG_JOBOPT_NO_GRAD_CKPT))
            return false;
        fg__remedy_edit(x, FG_JOBOPT_GRAD_CKPT, "");
        return true;
    case FG_SWITCH_ACCUM:
        if (j->batch <= 1)
            return false;
        fg__remedy_edit_u(x, FG_JOBOPT_BATCH, 1);
        fg__remedy_edit_u(x, FG_JOBOPT_GRAD_ACCUM, j->batch * accum0);
        return true;
    case FG_SWITCH_LIGER:
        if (j->loss == FG_LOSS_LIGER || j->loss == FG_LOSS_CCE)
            return false;
        fg__remedy_edit(x, FG_JOBOPT_LOSS, "liger");
        return true;
    case FG_SWITCH_ZERO3:
        if (j->zero >= 3 || !dp_gt1)
            return false;
        fg__remedy_edit(x, FG_JOBOPT_ZERO, "3");
        return true;
    case FG_SWITCH_ADAM8:
    case FG_SWITCH_PAGED:
        if (j->optimizer == FG_OPT_ADAMW_8BIT || j->optimizer == FG_OPT_PAGED_ADAMW_8BIT ||
            j->optimizer == FG_OPT_SGD)
            return false;
        fg__remedy_edit(x, FG_JOBOPT_OPTIMIZER, sw == FG_SWITCH_ADAM8 ? "adamw-8bit"
                                                               : "paged-adamw-8bit");
        return true;
    case FG_SWITCH_OFFLOAD_OPT:
        if (j->offload != FG_OFFLOAD_NONE)
            return false;
        if (j->zero < 1)
            fg__remedy_edit(x, FG_JOBOPT_ZERO, dp_gt1 ? "3" : "1");
        fg__remedy_edit(x, FG_JOBOPT_OFFLOAD, "optimizer");
        return true;
    case FG_SWITCH_OFFLOAD_PARAMS:
        if (j->offload == FG_OFFLOAD_PARAMS)
            return false;
        if (j->zero < 3)
            fg__remedy_edit(x, FG_JOBOPT_ZERO, "3");
        fg__remedy_edit(x, FG_JOBOPT_OFFLOAD, "params");
        return true;
    case FG_SWITCH_ACT_OFFLOAD:
        if (j->act_offload)
            return false;
        fg__remedy_edit(x, FG_JOBOPT_ACT_OFFLOAD, "");
        return true;
    case FG_SWITCH_REF_PRECOMPUTE:
        if (j->ref_model == FG_REF_NONE)
            return false;
        fg__remedy_edit(x, FG_JOBOPT_REF_MODEL, "none");
        return true;
    case FG_SWITCH_QLORA:
        if (j->mode != FG_MODE_LORA || !fw->qlora)
            return false;
        fg__remedy_edit(x, j->trainer != FG_TRAINER_SFT ? FG_JOBOPT_ADAPTER : FG_JOBOPT_MODE, "qlora");
        return true;
    default:
        return engine_edits(sw, spec, a, total, x);
    }
}

