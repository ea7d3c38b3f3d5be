/*
 * train_states.c - the gradients and optimizer states stage (stages.def): a full fine-tune's
 * gradients and optimizer states, or the adapters' weights, gradients and states; where they
 * live under offload.
 */
#include "memory/pipeline.h"

#include "util/sat.h"

/* A full fine-tune's gradients and optimizer states, where they live (offload). */
static void states_full(struct train *x)
{
    const struct fg_job *job = x->job;
    struct fg_estimate *e = x->e;
    struct fg_breakdown *b = &e->b;
    uint64_t params = x->params, experts_here = x->experts_here;
    b->gradients = sharded_bytes(params, experts_here, x->gbytes, x->shard_g, job->ep);
    b->optimizer = sharded_bytes(params, experts_here, x->obytes, x->shard_o, job->ep);
    if (job->optimizer_in_bwd) {
        /* job.h optimizer_in_bwd: one parameter's gradient at a time, the largest */
        uint64_t big = x->largest_linear, emb = x->m->vocab * x->m->hidden / x->tp;
        if (x->t.has_head || job->layer_last == 0 || job->stage_embed)
            big = emb > big ? emb : big;
        b->gradients = fg__mul_sat(big, x->gbytes);
        add_line(e, "gradients", b->gradients, false,
                 "torchtune optimizer_in_bwd (full_finetune_single_device.py)",
                 "one parameter's gradient at a time: %u B x %llu (stepped in backward)",
                 x->gbytes, (unsigned long long)big);
    } else {
        /* Alive through forward and backward (struct train grads_alive): Megatron's buffer
         * always, torch's .grad from the second accumulated micro-batch on. */
        add_line(e, "gradients", b->gradients, false,
                 job->grads_persist ? "Megatron param_and_grad_buffer.py grad_data"
                 : job->grad_accum > 1 ? "transformers Trainer gradient accumulation"
                                       : "parameter dtype",
                 "gradients: %u B x %llu params%s", x->gbytes, (unsigned long long)params,
                 job->grads_persist ? ", one buffer alive throughout"
                 : job->grad_accum > 1 ? ", alive across the accumulated micro-batches" : "");
    }
    if (x->master_opt)
        add_line(e, "optimizer", b->optimizer, false,
                 "Megatron distrib_optimizer.py; ZeRO paper",
                 "%s master weights + %s state: %u B x %llu params%s",
                 job->master_bytes == 2 ? "bf16" : "fp32", fg_optimizer_name(job->optimizer), x->obytes, (unsigned long long)params,
                 x->shard_o > 1 ? ", sharded over DP" : "");
    else
        add_line(e, "optimizer", b->optimizer, false, job->optimizer >= FG_OPT_PAGED_ADAMW
                 ? "bitsandbytes paged optimizer (on the GPU)" : "torch AdamW; Transformer Math 101",
                 "%s state: %u B x %llu params", fg_optimizer_name(job->optimizer), x->obytes,
                 (unsigned long long)params);
    /* ZeRO-Offload / FSDP CPUOffload: the optimizer step runs on the CPU, so its states
     * (and master weights) live there (DeepSpeed zero/stage_1_and_2.py cpu_offload);
     * offloading parameters also moves the gradients (torch FSDP CPUOffload
     * offload_params; DeepSpeed offload_param under ZeRO-3). */
    if (job->offload != FG_OFFLOAD_NONE) {
        fg__offloaded(e, x->lines, "optimizer", "DeepSpeed ZeRO-Offload; FSDP CPUOffload");
        b->optimizer = 0;
    }
    if (job->offload == FG_OFFLOAD_PARAMS) {
        fg__offloaded(e, x->lines, "weights", "DeepSpeed offload_param; FSDP CPUOffload");
        fg__offloaded(e, x->lines, "gradients", "DeepSpeed offload_param; FSDP CPUOffload");
        b->weights = 0;
        b->gradients = 0;
    }
}

/*
 * [PEFT]: fp32 adapters with fp32 grads and Adam states; lit-gpt's and torchtune's in the
 * base's dtype, torch AdamW's states following it (job.lora_base_dtype).  Sharded as the
 * base's are by the ZeRO stage: FSDP shards every parameter it wraps, trainable or not, with
 * the gradients and the optimizer states that follow them (torch distributed/fsdp:
 * FlatParameter / fully_shard; torchtune lora_finetune_distributed shards the whole PEFT
 * model); DeepSpeed ZeRO-1/2 partition the states / gradients of whatever trains.
 */
static void states_adapters(struct train *x)
{
    const struct fg_job *job = x->job;
    struct fg_estimate *e = x->e;
    uint64_t adapters = x->adapters;
    /* job.adapters_bf16 (TRL QLoRA): the adapters are cast to bf16, the states follow */
    bool own = job->lora_base_dtype || job->adapters_bf16;
    unsigned ab = job->adapters_bf16 ? 2 : job->lora_base_dtype ? x->pbytes : 4;
    unsigned aob = !own || job->optimizer == FG_OPT_ADAMW_8BIT ||
                           job->optimizer >= FG_OPT_PAGED_ADAMW
                       ? x->obytes
                   : x->adam ? 2 * ab : ab;
    uint64_t wg = fg__add_sat(sharded_bytes(adapters, 0, ab, x->shard_w, job->ep),
                              sharded_bytes(adapters, 0, ab, x->shard_g, job->ep));
    uint64_t states = sharded_bytes(adapters, 0, aob, x->shard_o, job->ep);
    /* ZeRO-Offload / FSDP CPUOffload move what trains, adapters as a full fine-tune's
     * weights: the optimizer's states (DeepSpeed zero/stage_1_and_2.py cpu_offload: the fp32
     * partition and its Adam states on the CPU), and with params also the adapters' weights
     * and gradients (FSDP CPUOffload offload_params; DeepSpeed offload_param).  The frozen
     * base stays counted on the GPU (it is gathered there for every forward). */
    uint64_t all = fg__add_sat(wg, states);
    if (job->offload != FG_OFFLOAD_NONE)
        states = 0;
    if (job->offload == FG_OFFLOAD_PARAMS)
        wg = 0;
    e->b.adapters = fg__add_sat(wg, states);
    add_line(e, "adapters", e->b.adapters ? e->b.adapters : all, false,
             job->offload != FG_OFFLOAD_NONE ? "DeepSpeed ZeRO-Offload; FSDP CPUOffload"
             : job->adapters_bf16            ? "TRL sft_trainer.py: QLoRA adapters cast to bf16"
             : job->lora_base_dtype          ? "lit-gpt / torchtune LoRA"
                                             : "peft autocast_adapter_dtype",
             "LoRA r=%u: %llu adapter params x %u B (%s weight, grad, %s)%s%s",
             job->lora_rank, (unsigned long long)adapters, 2 * ab + aob,
             ab == 4 ? "fp32" : "bf16", fg_optimizer_name(job->optimizer),
             x->shard_o > 1 ? ", sharded over DP" : "",
             job->offload == FG_OFFLOAD_OPTIMIZER ? "; states on the CPU (offload)" : "");
    if (!e->b.adapters)
        fg__offloaded(e, x->lines, "adapters", "DeepSpeed offload_param; FSDP CPUOffload");
}

int fg__train_states(struct train *x, struct fg_err *err)
{
    (void)err;
    if (x->full)
        states_full(x);
    else
        states_adapters(x);
    return 0;
}
