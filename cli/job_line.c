/*
 * job_line.c - the job as plan and check print it (job_line.h): its adaptation, precision
 * and optimizer (or a serving job's dtypes), its trainer, framework and layout, and where
 * each option came from.
 */
#include "job_line.h"

#include <stdio.h>

#include "job/jobspec.h"
#include "source/wquant.h"
#include "stack/trainer.h"

/* "trainer: grpo (TRL GRPOTrainer), reference none, 8 completions x (512 + 2048) tokens,
 * vLLM colocate at 0.30" */
static void print_trainer(const struct fg_job *job)
{
    const struct fg_trainer_row *t = fg_trainer_row(job->trainer);
    printf("trainer: %s (%s), reference %s", t->name, t->label,
           fg_ref_model_name(job->ref_model));
    if (t->seqs > 1)
        printf(", %u sequences per sample", t->seqs);
    if (t->generates)
        printf(", completions of %llu + %llu tokens", (unsigned long long)job->max_prompt,
               (unsigned long long)job->max_completion);
    if (job->num_generations)
        printf(", %u per prompt", job->num_generations);
    if (job->vllm_mode != FG_VLLM_NONE)
        printf(job->vllm_mode == FG_VLLM_COLOCATE ? ", vLLM %s at %.2f" : ", vLLM %s",
               fg_vllm_mode_name(job->vllm_mode), job->vllm_util);
    printf("\n");
}

void fg_cli_print_job(const struct fg_cli_opts *o, const struct fg_job *job)
{
    if (job->mode == FG_MODE_SERVE) /* no optimizer: the weights' and the cache's dtypes */
        printf("job: serve, %s weights, %s KV cache",
               job->serve_wq ? fg_wq_method_name((enum fg_wq_method)job->serve_wq)
                             : "checkpoint's", job->kv_bytes == 1 ? "fp8" : "bf16");
    else
        printf("job: %s, %s, %s", fg_mode_name(job->mode), fg_precision_name(job->precision),
               fg_optimizer_name(job->optimizer));
    if (job->mode == FG_MODE_LORA || job->mode == FG_MODE_QLORA)
        printf(", LoRA r=%u", job->lora_rank);
    printf("%s%s%s", job->grad_ckpt ? ", gradient checkpointing" : "",
           job->unsharded_copy ? ", unsharded weight copy beside ZeRO-3 shards" : "",
           job->attention == FG_ATTN_EAGER ? ", eager attention" : "");
    if (job->master == FG_MASTER_OPTIMIZER)
        printf(", %s master weights in the optimizer", job->master_bytes == 2 ? "bf16" : "fp32");
    if (job->offload != FG_OFFLOAD_NONE)
        printf(", %s offloaded to the CPU", fg_offload_name(job->offload));
    printf("\n");
    if (job->trainer != FG_TRAINER_SFT)
        print_trainer(job);
    if (fg_jobspec_given(&o->spec, FG_JOBOPT_FRAMEWORK) || fg_jobspec_declares_layout(&o->spec) ||
        job->tp > 1 || job->pp > 1 || job->ep > 1 || job->zero || job->dp > 1)
        printf("framework: %s (%s); layout TP=%u PP=%u EP=%u%s%.0u DP=%u%s%.0u%s\n",
               o->spec.fw->name, o->spec.fw->label, job->tp, job->pp, job->ep,
               job->cp > 1 ? " CP=" : "", job->cp > 1 ? job->cp : 0, job->dp,
               job->zero ? " ZeRO-" : "", job->zero,
               fg_jobspec_declares_layout(&o->spec) ? " (declared)" : "");
    for (size_t i = 0; i < o->spec.n_notes; i++)
        printf("note: %s\n", o->spec.notes[i]);
    for (size_t i = 0; i < o->spec.n_from; i++)
        printf("  from %s%s%s\n", o->spec.from[i].where, o->spec.from[i].set[0] ? " -> " : "",
               o->spec.from[i].set);
    for (size_t i = 0; i < o->spec.n_unknown; i++)
        printf("  not modelled: %s\n", o->spec.unknown[i]);
}
