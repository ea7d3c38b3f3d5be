/*
 * jobspec.c - the job options of jobopts.def, parsed once for every front
 * end, and the framework's defaults (jobspec.h).
 */
#include "job/jobspec.h"
#include "stack/trainer.h"
#include "util/fmt.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "source/wquant.h"
#include "util/yesno.h"

static const struct fg_jobopt rows[] = {
#define FG_JOBOPT(id, name, arg, has_arg, help) {name, arg, help},
#include "job/jobopts.def"
#undef FG_JOBOPT
};
_Static_assert(sizeof rows / sizeof rows[0] == FG_JOBOPT_COUNT, "one row per option");
_Static_assert(FG_JOBOPT_COUNT <= 64, "given is a 64-bit set");

const struct fg_jobopt *fg_jobopt_at(unsigned id)
{
    return id < FG_JOBOPT_COUNT ? &rows[id] : NULL;
}

int fg_jobopt_find(const char *name)
{
    char want[64];
    if (!name)
        return -1;
    if (!strncmp(name, "ft-", 3) || !strncmp(name, "ft_", 3))
        name += 3;
    size_t n = strlen(name);
    if (n >= sizeof want)
        return -1;
    for (size_t i = 0; i <= n; i++)
        want[i] = name[i] == '_' ? '-' : name[i];
    for (unsigned i = 0; i < FG_JOBOPT_COUNT; i++)
        if (!strcmp(rows[i].name, want))
            return (int)i;
    return -1;
}

void fg_jobspec_init(struct fg_jobspec *s, const char *spelling)
{
    memset(s, 0, sizeof *s);
    fg_job_defaults(&s->job, FG_MODE_FULL);
    snprintf(s->spelling, sizeof s->spelling, "%s", spelling ? spelling : "--");
}

bool fg_jobspec_declares_layout(const struct fg_jobspec *s)
{
    return s->tp || s->pp || s->ep || s->cp || s->dp || s->layout_fixed;
}

static int parse_u64(const char *v, uint64_t min, uint64_t max, uint64_t *out)
{
    char *end;
    if (!v || *v < '0' || *v > '9')
        return -1;
    errno = 0;
    unsigned long long u = strtoull(v, &end, 10);
    if (errno || *end || u < min || u > max)
        return -1;
    *out = u;
    return 0;
}

static int parse_flag(const char *v, bool *out)
{
    /* a flag given bare: "" (the CLI, Slurm's environment copy), "set" (Slurm's
     * spank_option_get and cli_filter's options table); else the yes/no words of util/yesno.h */
    int b = !v || !*v || !strcasecmp(v, "set") ? 1 : fg_yes_no(v);
    if (b < 0)
        return -1;
    *out = b;
    return 0;
}

/* Whole-number bounds per option (0, 0: not a number). */
static const struct {
    unsigned id;
    uint64_t min, max;
} bounds[] = {
    {FG_JOBOPT_SEQ_LEN, 1, FG_MAX_SEQ}, {FG_JOBOPT_BATCH, 1, 1u << 20},
    {FG_JOBOPT_LORA_RANK, 1, 65536},    {FG_JOBOPT_ZERO, 0, 3},
    {FG_JOBOPT_GPUS, 1, 65535},         {FG_JOBOPT_TP, 1, 1024},
    {FG_JOBOPT_PP, 1, 64},              {FG_JOBOPT_EP, 1, 1024},
    {FG_JOBOPT_CP, 1, 1024},            {FG_JOBOPT_DP, 1, 65535},
    {FG_JOBOPT_NUM_GENERATIONS, 1, 4096}, {FG_JOBOPT_MAX_PROMPT_LENGTH, 1, FG_MAX_SEQ},
    {FG_JOBOPT_MAX_COMPLETION_LENGTH, 1, FG_MAX_SEQ}, {FG_JOBOPT_GEN_GPUS, 1, 65535},
    {FG_JOBOPT_GRAD_ACCUM, 1, 1u << 24}, {FG_JOBOPT_PP_MICROBATCHES, 1, 1u << 16},
};

size_t fg_jobopt_values(unsigned id, const char **out, size_t cap)
{
    static const char *const digits[] = {"0", "1", "2", "3", "4", "5", "6", "7", "8"};
    size_t n = 0;
    if (id >= FG_JOBOPT_COUNT)
        return 0;
    if (id == FG_JOBOPT_MODE) { /* an adaptation, or a trainer of trainer.c's table */
        const char *const *w = fg_job_words("mode", &n);
        for (size_t i = 0; i < n && i < cap; i++)
            out[i] = w[i];
        for (unsigned t = 1; fg_trainer_at(t); t++, n++)
            if (n < cap)
                out[n] = fg_trainer_at(t)->name;
        return n;
    }
    if (id == FG_JOBOPT_FRAMEWORK) { /* each name once: its newest release (NAME@VERSION
                                       * for the others) */
        const struct fg_framework *f;
        for (size_t i = 0; (f = fg_framework_at(i)); i++)
            if (fg_framework_is_newest(f) && n++ < cap)
                out[n - 1] = f->name;
        return n;
    }
    for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++)
        if (bounds[i].id == id && bounds[i].max - bounds[i].min < 8) {
            for (uint64_t v = bounds[i].min; v <= bounds[i].max; v++, n++)
                if (n < cap)
                    out[n] = digits[v];
            return n;
        }
    const char *const *w = fg_job_words(rows[id].name, &n);
    for (size_t i = 0; i < n && i < cap; i++)
        out[i] = w[i];
    return n;
}

/* A share or weight in [lo, hi] (lo excluded), strictly parsed; -1 when it is not one. */
static double parse_share(const char *v, double lo, double hi)
{
    char *end;
    errno = 0;
    double d = v ? strtod(v, &end) : 0;
    return !v || !*v || errno || *end || !(d > lo && d <= hi) ? -1 : d;
}

/* --mode: an adaptation (job.h), or a preference / RL trainer whose adaptation is --adapter's
 * (trainer.h). */
static int parse_mode(const char *v, struct fg_jobspec *s, struct fg_err *err)
{
    const struct fg_trainer_row *t = fg_trainer_find(v);
    if (t && t->id != FG_TRAINER_SFT) {
        s->job.trainer = t->id;
        return 0;
    }
    s->job.trainer = FG_TRAINER_SFT;
    if (!fg_mode_parse(v, &s->job.mode, NULL))
        return 0;
    char list[160] = "full|lora|qlora|serve";
    for (unsigned i = 1; fg_trainer_at(i); i++)
        fg__fmt(list + strlen(list), sizeof list - strlen(list), "|%s", fg_trainer_at(i)->name);
    return fg_err_set(err, FG_E_INVAL, "mode '%.60s' is not one of %s", v ? v : "(none)", list);
}

static int copy_text(char *dst, size_t cap, const char *v, const char *sp, const char *name,
                     struct fg_err *err)
{
    if (!v || !*v)
        return fg_err_set(err, FG_E_INVAL, "%s%s needs a value", sp, name);
    if (strlen(v) >= cap)
        return fg_err_set(err, FG_E_RANGE, "%s%s: at most %zu characters", sp, name, cap - 1);
    memcpy(dst, v, strlen(v) + 1);
    return 0;
}

/* "a.yaml,ds.json": one value may name several files (the plugin's option keeps one value,
 * as the job's environment does); each is added to s->configs. */
static int add_configs(struct fg_jobspec *s, const char *v, const char *sp, const char *name,
                       struct fg_err *err)
{
    int rc = !v || !*v ? copy_text(s->configs[0], 1, v, sp, name, err) : 0;
    for (const char *p = v; !rc && p && *p;) {
        size_t n = strcspn(p, ",");
        if (s->n_configs >= FG_JOBSPEC_CONFIGS)
            rc = fg_err_set(err, FG_E_RANGE, "%s%s: at most %d config files", sp, name,
                            FG_JOBSPEC_CONFIGS);
        else if (n >= sizeof s->configs[0])
            rc = fg_err_set(err, FG_E_RANGE, "%s%s: a file name of at most %zu characters", sp,
                            name, sizeof s->configs[0] - 1);
        else if (n)
            snprintf(s->configs[s->n_configs++], sizeof s->configs[0], "%.*s", (int)n, p);
        p += n + (p[n] == ',');
    }
    return rc;
}

/* --precision: the engine's, or float8 (torchao's Float8Linear over the FSDP2 mixed
 * precision it runs under: job.h float8). */
static int set_precision(struct fg_job *j, const char *v, struct fg_err *err)
{
    j->float8 = v && !strcmp(v, "float8");
    if (j->float8) {
        j->precision = FG_PREC_BF16_MIXED;
        return 0;
    }
    return fg_precision_parse(v, &j->precision, err);
}

/* --grad-ckpt takes no value, yes/no, or which recompute: full (every block's input) or
 * selective (per op, as torchtitan runs it); true for the two kinds. */
static bool grad_ckpt_kind(const char *v, bool *selective)
{
    *selective = v && !strcasecmp(v, "selective");
    return *selective || (v && !strcasecmp(v, "full"));
}

static void set_grad_ckpt(struct fg_jobspec *s, bool on, bool kind, bool selective)
{
    s->job.grad_ckpt = on;
    s->ac_selective_given = kind;
    s->ac_selective = selective;
}

/* The serving options' values: --kv-dtype (vLLM CacheConfig.cache_dtype / SGLang
 * --kv-cache-dtype: "auto" is the model dtype, fp8 (e4m3 or e5m2) one byte per element) and
 * --quantization (source/wquant.h); the caller names the option in the error. */
static int serve_dtypes(const char *kv, const char *quant, struct fg_job *j, struct fg_err *err)
{
    enum fg_wq_method q;
    if (quant) {
        int rc = fg_wq_method_parse(quant, &q, err);
        if (!rc)
            j->serve_wq = (uint8_t)q;
        return rc;
    }
    if (!strcasecmp(kv, "auto") || !strcasecmp(kv, "fp8") || !strcasecmp(kv, "fp8_e4m3") ||
        !strcasecmp(kv, "fp8_e5m2")) {
        j->kv_bytes = strcasecmp(kv, "auto") ? 1 : 0;
        return 0;
    }
    return fg_err_set(err, FG_E_INVAL, "'%.40s': expected auto or fp8 (fp8_e4m3, fp8_e5m2)",
                      kv);
}


/* --beta (a KL weight, 0 to 100) and --vllm-gpu-util (the colocated engine's share of each
 * GPU, above 0 and at most 0.95 so that the rest trains), strictly parsed. */
static int set_trainer_share(struct fg_job *j, unsigned id, const char *v, const char *sp,
                             const char *name, struct fg_err *err)
{
    bool beta = id == FG_JOBOPT_BETA;
    double d = beta ? parse_share(v, -1e-300, 100.0) : parse_share(v, 0.0, 0.95);
    if (d < 0)
        return fg_err_set(err, FG_E_RANGE, beta ? "%s%s=%.40s: expected a weight from 0 to 100"
                                                : "%s%s=%.40s: expected a share of each GPU "
                                                  "above 0 and at most 0.95 (the rest trains)",
                          sp, name, v ? v : "");
    if (beta)
        j->beta = (float)d;
    else
        j->vllm_util = (float)d;
    return 0;
}

/* torchtitan's pipeline and async-TP options (memory/titan.h), the number already parsed
 * into u where the option takes one. */
static int set_titan(struct fg_job *j, unsigned id, const char *v, uint64_t u,
                     struct fg_err *err)
{
    switch (id) {
    case FG_JOBOPT_PP_SCHEDULE: return fg_pp_schedule_parse(v, &j->pp_schedule, err);
    case FG_JOBOPT_RESHARD_AFTER_FORWARD: return fg_reshard_parse(v, &j->reshard, err);
    case FG_JOBOPT_PP_MICROBATCHES: j->pp_microbatches = (uint32_t)u; return 0;
    default: j->async_tp = u; return 0; /* FG_JOBOPT_ASYNC_TP */
    }
}

int fg_jobspec_set(struct fg_jobspec *s, unsigned id, const char *v, struct fg_err *err)
{
    if (id >= FG_JOBOPT_COUNT)
        return fg_err_set(err, FG_E_INVAL, "no job option number %u", id);
    const char *name = rows[id].name, *sp = s->spelling;
    struct fg_job *j = &s->job;
    uint64_t u = 0;
    int rc = 0, ext = 0; /* ext: the error comes from a parser that does not name the option */
    for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
        if (bounds[i].id != id)
            continue;
        if (parse_u64(v, bounds[i].min, bounds[i].max, &u))
            return fg_err_set(err, FG_E_RANGE, "%s%s=%.40s: expected a whole number in "
                              "%llu..%llu", sp, name, v ? v : "", (unsigned long long)bounds[i].min,
                              (unsigned long long)bounds[i].max);
    }
    bool selective = false, kind = id == FG_JOBOPT_GRAD_CKPT && grad_ckpt_kind(v, &selective);
    if (!rows[id].arg && !kind) {
        bool on;
        if (parse_flag(v, &on))
            return fg_err_set(err, FG_E_INVAL, "%s%s is a flag: it takes no value, or yes/no",
                              sp, name);
        u = on;
    }
    switch ((enum fg_jobopt_id)id) {
    case FG_JOBOPT_MODEL: rc = copy_text(s->model, sizeof s->model, v, sp, name, err); break;
    case FG_JOBOPT_MODE: rc = ext = parse_mode(v, s, err); break;
    case FG_JOBOPT_ADAPTER:
        rc = ext = fg_mode_parse(v, &s->adapter, err);
        if (!rc && s->adapter == FG_MODE_SERVE)
            rc = fg_err_set(err, FG_E_INVAL, "adapter 'serve' trains nothing: full|lora|qlora");
        break;
    case FG_JOBOPT_NUM_GENERATIONS: j->num_generations = (uint32_t)u; break;
    case FG_JOBOPT_MAX_PROMPT_LENGTH: j->max_prompt = u; break;
    case FG_JOBOPT_MAX_COMPLETION_LENGTH: j->max_completion = u; break;
    case FG_JOBOPT_GEN_GPUS: j->gen_gpus = (uint32_t)u; break;
    case FG_JOBOPT_REF_MODEL: rc = ext = fg_ref_model_parse(v, &j->ref_model, err); break;
    case FG_JOBOPT_VLLM_MODE: rc = ext = fg_vllm_mode_parse(v, &j->vllm_mode, err); break;
    case FG_JOBOPT_BETA:
    case FG_JOBOPT_VLLM_GPU_UTIL: rc = set_trainer_share(j, id, v, sp, name, err); break;
    case FG_JOBOPT_SEQ_LEN: j->seq_len = u; break;
    case FG_JOBOPT_BATCH: j->batch = u; break;
    case FG_JOBOPT_LORA_RANK: j->lora_rank = (uint32_t)u; break;
    case FG_JOBOPT_LORA_TARGETS: rc = ext = fg_lora_targets_parse(v, j, err); break;
    case FG_JOBOPT_PRECISION: rc = ext = set_precision(j, v, err); break;
    case FG_JOBOPT_OPTIMIZER: rc = ext = fg_optimizer_parse(v, &j->optimizer, err); break;
    case FG_JOBOPT_QUANT: rc = ext = fg_quant_parse(v, &j->quant, err); break;
    case FG_JOBOPT_ZERO: j->zero = (uint32_t)u; break;
    case FG_JOBOPT_GRAD_CKPT: set_grad_ckpt(s, u || kind, kind, selective); break;
    case FG_JOBOPT_GPU: rc = copy_text(s->gpu, sizeof s->gpu, v, sp, name, err); break;
    case FG_JOBOPT_GPUS: s->gpus = (uint32_t)u; break;
    case FG_JOBOPT_ATTENTION: rc = ext = fg_attention_parse(v, &j->attention, err); break;
    case FG_JOBOPT_FRAMEWORK:
        if (!(s->fw = fg_framework_find(v)))
            rc = fg_framework_unknown(v, sp, err);
        break;
    case FG_JOBOPT_OPTIMIZER_IN_BWD: j->optimizer_in_bwd = u; break;
    case FG_JOBOPT_NO_GRAD_CKPT:
        /* the same switch as --grad-ckpt=no: it counts as GRAD_CKPT given */
        j->grad_ckpt = !u;
        s->given |= 1ull << FG_JOBOPT_GRAD_CKPT;
        break;
    case FG_JOBOPT_TP: s->tp = (uint32_t)u; break;
    case FG_JOBOPT_PP: s->pp = (uint32_t)u; break;
    case FG_JOBOPT_EP: s->ep = (uint32_t)u; break;
    case FG_JOBOPT_CP: s->cp = (uint32_t)u; break;
    case FG_JOBOPT_DP: s->dp = (uint32_t)u; break;
    case FG_JOBOPT_OFFLOAD: rc = ext = fg_offload_parse(v, &j->offload, err); break;
    case FG_JOBOPT_UNSHARDED_COPY: j->unsharded_copy = u; break;
    case FG_JOBOPT_CHUNKED_CE: j->chunked_ce = u; break;
    case FG_JOBOPT_OVERRIDE:
        rc = copy_text(s->override_reason, sizeof s->override_reason, v, sp, name, err);
        break;
    case FG_JOBOPT_GPU_UTIL: {
        char *end;
        errno = 0;
        double d = v ? strtod(v, &end) : 0;
        if (!v || !*v || errno || *end || !(d > 0.05 && d <= 1.0))
            rc = fg_err_set(err, FG_E_RANGE, "%s%s=%.40s: expected a share of the card above "
                            "0.05 and at most 1", sp, name, v ? v : "");
        else
            s->gpu_util = d;
        break;
    }
    case FG_JOBOPT_CONFIG: rc = add_configs(s, v, sp, name, err); break;
    case FG_JOBOPT_KV_DTYPE: rc = ext = serve_dtypes(v ? v : "", NULL, j, err); break;
    case FG_JOBOPT_QUANTIZATION: rc = ext = serve_dtypes(NULL, v ? v : "", j, err); break;
    case FG_JOBOPT_GRAD_ACCUM: j->grad_accum = (uint32_t)u; break;
    case FG_JOBOPT_LOSS: rc = ext = fg_loss_parse(v, j, err); break;
    case FG_JOBOPT_DS_BUCKET:
        if (v && !strcasecmp(v, "auto"))
            j->ds_bucket = FG_DS_BUCKET_AUTO;
        else if (parse_u64(v, 1, 1000000000000ull, &j->ds_bucket))
            rc = fg_err_set(err, FG_E_RANGE, "%s%s=%.40s: expected elements 1..1e12 or auto",
                            sp, name, v ? v : "");
        break;
    case FG_JOBOPT_ACT_OFFLOAD: j->act_offload = u; break;
    case FG_JOBOPT_SP: j->sp = u; break;
    case FG_JOBOPT_GRAD_REDUCE_DTYPE:
        rc = ext = fg_dtype_bytes_parse(v, &s->grad_reduce_bytes, err);
        break;
    case FG_JOBOPT_OPTIMIZER_STATE_DTYPE:
        rc = ext = fg_dtype_bytes_parse(v, &s->state_dtype_bytes, err);
        break;
    case FG_JOBOPT_MASTER_DTYPE:
        rc = ext = fg_dtype_bytes_parse(v, &s->master_dtype_bytes, err);
        break;
    case FG_JOBOPT_PP_SCHEDULE: case FG_JOBOPT_PP_MICROBATCHES: case FG_JOBOPT_ASYNC_TP:
    case FG_JOBOPT_RESHARD_AFTER_FORWARD: rc = ext = set_titan(j, id, v, u, err); break;
    case FG_JOBOPT_COUNT: break;
    }
    if (rc && ext)
        fg_err_prefix(err, "%s%s", sp, name);
    if (rc)
        return rc;
    s->given |= 1ull << id;
    snprintf(s->said[id], sizeof s->said[id], "%s", v ? v : "");
    return 0;
}

static bool lora_mode_of(const struct fg_job *j)
{
    return j->mode == FG_MODE_LORA || j->mode == FG_MODE_QLORA;
}

static void note(struct fg_jobspec *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct fg_jobspec *s, const char *fmt, ...)
{
    if (s->n_notes >= FG_JOBSPEC_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->notes[s->n_notes++], sizeof s->notes[0], fmt, ap);
    va_end(ap);
}

/* A training job's defaults from its framework's row, for every option not given (d: the
 * seeds' job for the mode). */
static void train_defaults(struct fg_jobspec *s, const struct fg_framework *fw,
                           const struct fg_job *d)
{
    struct fg_job *j = &s->job;
    bool lora = j->mode == FG_MODE_LORA || j->mode == FG_MODE_QLORA;
    if (!fg_jobspec_given(s, FG_JOBOPT_PRECISION)) {
        j->precision = j->mode == FG_MODE_FULL ? fw->full_precision
                     : fw->lora_fp32_base   ? FG_PREC_BF16_MIXED /* fp32 base, autocast */
                                            : d->precision;
        j->autocast = lora && fw->lora_autocast;
        if (lora && fw->fsdp_mixed) {
            /* torchtitan components/lora.py: the frozen base stays in the model's fp32
             * shards (FSDP2 gathers it in bf16, as for a full fine-tune) and the adapters
             * are fp32 Linears computing on the gathered bf16 weights: no cast copy */
            j->precision = FG_PREC_BF16_MIXED;
            j->autocast = true;
        }
        if (lora && fw->lora_fp32_base)
            note(s, "%s loads the model in fp32 unless told (model_init_kwargs dtype); "
                    "--precision bf16 when it loads bf16", fw->name);
    }
    if (!fg_jobspec_given(s, FG_JOBOPT_OPTIMIZER))
        j->optimizer = j->mode == FG_MODE_FULL && fw->full_optimizer_set ? fw->full_optimizer
                                                                         : fw->optimizer;
    if (!fg_jobspec_given(s, FG_JOBOPT_OPTIMIZER_IN_BWD))
        j->optimizer_in_bwd = j->mode == FG_MODE_FULL && fw->optimizer_in_bwd;
    j->fsdp_mixed = fw->fsdp_mixed;
    j->pp_keeps_outputs = fw->pp_keeps_outputs;
    j->bnb_keeps_input = j->mode == FG_MODE_QLORA && fw->bnb_keeps_input;
    j->embed_swap = j->mode == FG_MODE_QLORA && fw->qlora_embed_swap;
    j->adapters_bf16 = j->mode == FG_MODE_QLORA && fw->qlora_adapters_bf16;
    if (!fg_jobspec_given(s, FG_JOBOPT_CHUNKED_CE) && !fg_jobspec_given(s, FG_JOBOPT_LOSS)) {
        j->chunked_ce = fw->chunked_ce;
        /* a row's loss is its SFT trainer's (TRL SFTConfig.loss_type); a preference or RL
         * trainer's log-probs are its trainer row's (memory_rl.c) */
        j->loss = j->trainer == FG_TRAINER_SFT ? fw->loss : FG_LOSS_DEFAULT;
    }
    j->grads_persist = fw->grads_persist;
    j->ddp_buckets = fw->ddp_buckets;
    /* DeepSpeed's own row, or a job that names DeepSpeed's reduce bucket (a DeepSpeed file
     * under an HF trainer: jobfile_apply.c declared_deepspeed) */
    j->ds_buffers = fw->ds_buffers || fg_jobspec_given(s, FG_JOBOPT_DS_BUCKET);
    j->te_act = fw->te_act;
    if (!fg_jobspec_given(s, FG_JOBOPT_SP))
        j->sp = fw->sp;
    j->ce_kept = fw->ce_kept;
    j->kv_expanded = fw->kv_expanded;
    if (!fg_jobspec_given(s, FG_JOBOPT_GRAD_CKPT)) {
        j->grad_ckpt = fw->grad_ckpt;
        if (fw->grad_ckpt)
            note(s, "%s turns gradient checkpointing on by default; --no-grad-ckpt says "
                    "it is off", fw->name);
    }
    /* --grad-ckpt=selective|full says which; a bare flag keeps the framework's kind */
    j->ac_selective = j->grad_ckpt && (s->ac_selective || (!s->ac_selective_given &&
                                                           fw->ac_selective));
    if (!fg_jobspec_given(s, FG_JOBOPT_UNSHARDED_COPY))
        j->unsharded_copy = fw->unsharded_copy;
}

/* The options only Megatron-Core's code has: sequence parallel and the gradient buffer's
 * dtype (megatron/core/distributed/distributed_data_parallel_config.py grad_reduce_in_fp32);
 * and those of an optimizer that holds the master copy (Megatron's and DeepSpeed's): the
 * Adam moments' dtype (Megatron optimizer/optimizer_config.py exp_avg_dtype; DeepSpeed
 * runtime/precision_config.py bf16_optimizer_states) and the master weights' and
 * gradients' (DeepSpeed bf16_master_weights_and_grads: zero/stage3.py and
 * stage_1_and_2.py master_weights_and_grads_dtype), after the row's master-copy semantics
 * are set. */
static int megatron_options(struct fg_jobspec *s, struct fg_err *err)
{
    struct fg_job *j = &s->job;
    const struct fg_framework *fw = s->fw;
    static const struct {
        unsigned id;
        bool megatron; /* Megatron-Core's only; else any optimizer holding the master copy */
    } opts[] = {{FG_JOBOPT_SP, true},
                {FG_JOBOPT_GRAD_REDUCE_DTYPE, true},
                {FG_JOBOPT_OPTIMIZER_STATE_DTYPE, false},
                {FG_JOBOPT_MASTER_DTYPE, false}};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        if (!fg_jobspec_given(s, opts[i].id))
            continue;
        if (opts[i].megatron && !fw->te_act && !(opts[i].id == FG_JOBOPT_SP && fw->sp))
            return fg_err_set(err, FG_E_INVAL, "%s%s is Megatron-Core's: use it with "
                              "--framework megatron or nemo (%s runs no Megatron-Core)",
                              s->spelling, fg_jobopt_at(opts[i].id)->name, fw->name);
        if (!opts[i].megatron && fw->master != FG_MASTER_OPTIMIZER)
            return fg_err_set(err, FG_E_INVAL, "%s%s is for an optimizer that keeps the master "
                              "copy: use it with --framework deepspeed, megatron or nemo (%s "
                              "keeps the parameters as the master copy)",
                              s->spelling, fg_jobopt_at(opts[i].id)->name, fw->name);
    }
    if (j->master == FG_MASTER_OPTIMIZER && s->grad_reduce_bytes)
        j->main_grad_bytes = s->grad_reduce_bytes;
    j->bf16_states = j->master == FG_MASTER_OPTIMIZER && s->state_dtype_bytes == 2;
    j->master_bytes = j->master == FG_MASTER_OPTIMIZER ? s->master_dtype_bytes : 0;
    return 0;
}

/* The options a trainer reads (trainer.h), and those that need one that generates. */
static const struct {
    unsigned id;
    bool generating; /* only for a trainer that generates (grpo, rloo, ppo) */
    bool vllm;       /* only for a trainer that generates through vLLM (grpo, rloo) */
} trainer_opts[] = {
    {FG_JOBOPT_ADAPTER, false, false},          {FG_JOBOPT_REF_MODEL, false, false},
    {FG_JOBOPT_NUM_GENERATIONS, true, true},    {FG_JOBOPT_BETA, true, true},
    {FG_JOBOPT_MAX_PROMPT_LENGTH, true, false}, {FG_JOBOPT_MAX_COMPLETION_LENGTH, true, false},
    {FG_JOBOPT_VLLM_MODE, true, true},          {FG_JOBOPT_VLLM_GPU_UTIL, true, true},
    {FG_JOBOPT_GEN_GPUS, true, true},
};

/*
 * A preference / RL mode: the adaptation from --adapter, the trainer's defaults (TRL's
 * configs, trainer.c), and the options that do not go with it refused by name.
 */
static int finish_trainer(struct fg_jobspec *s, struct fg_err *err)
{
    struct fg_job *j = &s->job;
    const struct fg_trainer_row *t = fg_trainer_row(j->trainer);
    bool gen = t->generates, vllm = gen && !t->value_model;
    for (size_t i = 0; i < sizeof trainer_opts / sizeof trainer_opts[0]; i++) {
        unsigned id = trainer_opts[i].id;
        bool ok = j->trainer != FG_TRAINER_SFT && (!trainer_opts[i].generating || gen) &&
                  (!trainer_opts[i].vllm || vllm);
        if (fg_jobspec_given(s, id) && !ok)
            return fg_err_set(err, FG_E_INVAL, "%s%s does not go with --mode %s: it is for %s",
                              s->spelling, fg_jobopt_at(id)->name,
                              j->trainer == FG_TRAINER_SFT ? fg_mode_name(j->mode) : t->name,
                              trainer_opts[i].vllm ? "grpo and rloo"
                              : trainer_opts[i].generating ? "grpo, rloo and ppo"
                                                           : "dpo, orpo, kto, grpo, rloo, ppo "
                                                             "and reward");
    }
    if (j->trainer == FG_TRAINER_SFT)
        return 0;
    j->mode = fg_jobspec_given(s, FG_JOBOPT_ADAPTER) ? s->adapter : FG_MODE_FULL;
    if (gen) {
        if (fg_jobspec_given(s, FG_JOBOPT_SEQ_LEN))
            return fg_err_set(err, FG_E_INVAL, "--mode %s sizes its sequences from %smax-prompt-"
                              "length and %smax-completion-length, not %sseq-len", t->name,
                              s->spelling, s->spelling, s->spelling);
        if (!j->max_prompt)
            j->max_prompt = 512;
        if (!j->max_completion)
            j->max_completion = 512;
        j->seq_len = j->max_prompt + j->max_completion;
        if (j->seq_len > FG_MAX_SEQ)
            return fg_err_set(err, FG_E_RANGE, "prompt + completion is %llu tokens, over %u",
                              (unsigned long long)j->seq_len, FG_MAX_SEQ);
        s->given |= 1ull << FG_JOBOPT_SEQ_LEN;
    }
    if (!j->num_generations && vllm)
        j->num_generations = 8;
    if (j->vllm_mode == FG_VLLM_COLOCATE && !j->vllm_util)
        j->vllm_util = 0.3f;
    if (fg_jobspec_given(s, FG_JOBOPT_VLLM_GPU_UTIL) && j->vllm_mode != FG_VLLM_COLOCATE)
        return fg_err_set(err, FG_E_INVAL, "%svllm-gpu-util is the colocated engine's share: "
                          "use it with %svllm-mode colocate", s->spelling, s->spelling);
    if (fg_jobspec_given(s, FG_JOBOPT_GEN_GPUS) && j->vllm_mode != FG_VLLM_SERVER)
        return fg_err_set(err, FG_E_INVAL, "%sgen-gpus are the vLLM server's GPUs: use it with "
                          "%svllm-mode server", s->spelling, s->spelling);
    if (j->ref_model == FG_REF_ADAPTER && j->mode == FG_MODE_FULL)
        return fg_err_set(err, FG_E_INVAL, "%sref-model adapter-disabled needs adapters: use "
                          "%sadapter lora or qlora, or %sref-model copy", s->spelling, s->spelling,
                          s->spelling);
    j->ref_model = fg_trainer_ref(j);
    return 0;
}

void fg_jobspec_unfinish(struct fg_jobspec *s)
{
    if (!s->raw.saved)
        return;
    s->job = s->raw.job;
    s->fw = s->raw.fw;
    s->gpu_util = s->raw.gpu_util;
    s->given = s->raw.given;
    s->n_notes = s->raw.n_notes;
    s->raw.saved = false;
}

/* What the framework has no code for: a trainer it does not have, LoRA or QLoRA where it has
 * none, serving or training where it does the other only.  FG_E_INVAL naming the frameworks
 * that can, else 0. */
static int framework_refuses(const struct fg_job *j, const struct fg_framework *fw,
                             struct fg_err *err)
{
    bool serve = j->mode == FG_MODE_SERVE;
    if (!serve && fw->trains && !fg_framework_has_trainer(fw, j->trainer)) {
        /* the frameworks.md table: DPO, GRPO ... only where the framework has the trainer */
        char who[200] = "";
        size_t off = 0;
        const struct fg_framework *f;
        for (size_t i = 0; (f = fg_framework_at(i)) && off < sizeof who; i++)
            if (fg_framework_is_newest(f) && fg_framework_has_trainer(f, j->trainer)) {
                int w = snprintf(who + off, sizeof who - off, "%s%s", off ? ", " : "", f->name);
                off += w > 0 ? (size_t)w : 0;
            }
        return fg_err_set(err, FG_E_INVAL, "--framework %s has no trainer for --mode %s: use "
                          "one that has (%s)", fw->name, fg_trainer_name(j->trainer),
                          who[0] ? who : "none");
    }
    if ((j->mode == FG_MODE_LORA || j->mode == FG_MODE_QLORA) && fw->full_only)
        return fg_err_set(err, FG_E_INVAL, "--framework %s trains full fine-tunes only (it has "
                          "no LoRA adapters): use --mode full, or a framework with peft or its "
                          "own LoRA (transformers, trl, axolotl, llama-factory, unsloth, "
                          "torchtune, lit-gpt, nemo)", fw->name);
    if (j->mode == FG_MODE_QLORA && !fw->qlora)
        return fg_err_set(err, FG_E_INVAL, "--framework %s has no 4-bit QLoRA path (it "
                          "quantizes no base with bitsandbytes or NF4): use --mode lora, or a "
                          "framework on peft + bitsandbytes (transformers, trl, axolotl, "
                          "llama-factory, unsloth, lit-gpt) or torchtune", fw->name);
    if (serve && !fw->serves)
        return fg_err_set(err, FG_E_INVAL, "--framework %s does not serve models; use "
                          "--framework vllm or sglang for --mode serve", fw->name);
    if (!serve && !fw->trains)
        return fg_err_set(err, FG_E_INVAL, "--framework %s serves models; it does not run "
                          "--mode %s", fw->name, fg_mode_name(j->mode));
    return 0;
}

/* The schedules and async TP are torch's, as torchtitan drives them (memory/titan.h). */
static int titan_options(const struct fg_jobspec *s, struct fg_err *err)
{
    static const unsigned titan_only[] = {FG_JOBOPT_PP_SCHEDULE, FG_JOBOPT_PP_MICROBATCHES,
                                          FG_JOBOPT_ASYNC_TP, FG_JOBOPT_RESHARD_AFTER_FORWARD};
    for (size_t i = 0; i < sizeof titan_only / sizeof titan_only[0]; i++)
        if (fg_jobspec_given(s, titan_only[i]) && !s->fw->pp_even)
            return fg_err_set(err, FG_E_INVAL, "%s%s is torch pipelining's and inductor's as "
                              "torchtitan runs them: use it with --framework torchtitan (%s "
                              "runs neither)", s->spelling, fg_jobopt_at(titan_only[i])->name,
                              s->fw->name);
    return 0;
}

int fg_jobspec_finish(struct fg_jobspec *s, struct fg_err *err)
{
    s->raw.saved = true;
    s->raw.job = s->job;
    s->raw.fw = s->fw;
    s->raw.gpu_util = s->gpu_util;
    s->raw.given = s->given;
    s->raw.n_notes = s->n_notes;
    int rc = finish_trainer(s, err);
    if (rc)
        return rc;
    struct fg_job *j = &s->job, d;
    if (!s->fw)
        s->fw = fg_framework_default();
    const struct fg_framework *fw = s->fw;
    bool serve = j->mode == FG_MODE_SERVE;
    if ((rc = framework_refuses(j, fw, err)))
        return rc;
    fg_job_defaults(&d, j->mode);
#define KEEP(id, field)                                                                        \
    do {                                                                                       \
        if (!fg_jobspec_given(s, FG_JOBOPT_##id))                                              \
            j->field = d.field;                                                                \
    } while (0)
    KEEP(SEQ_LEN, seq_len);
    KEEP(BATCH, batch);
    KEEP(LORA_RANK, lora_rank);
    KEEP(QUANT, quant);
    KEEP(ZERO, zero);
    KEEP(ATTENTION, attention);
    KEEP(OFFLOAD, offload);
#undef KEEP
    if (!fg_jobspec_given(s, FG_JOBOPT_LORA_TARGETS)) {
        j->lora_targets = d.lora_targets;
        memcpy(j->lora_list, d.lora_list, sizeof j->lora_list);
    }
    if (j->mode == FG_MODE_QLORA && (j->quant == FG_QUANT_NONE ||
                                     !fg_jobspec_given(s, FG_JOBOPT_QUANT)))
        j->quant = fw->qlora_quant != FG_QUANT_NONE ? fw->qlora_quant : FG_QUANT_NF4;
    bool lora = j->mode == FG_MODE_LORA || j->mode == FG_MODE_QLORA;
    /* what the framework builds (job.h): its head, and a 4-bit base's quantization */
    bool bnb4 = j->mode == FG_MODE_QLORA ||
                (serve && (j->quant == FG_QUANT_NF4 || j->quant == FG_QUANT_NF4_DQ));
    j->head_4bit = bnb4 && fw->qlora_head_4bit;
    j->bnb_fp16_quant = bnb4 && fw->bnb_fp16_quant;
    j->head_untied = fw->head_untied;
    if (!serve) {
        train_defaults(s, fw, &d);
    } else {
        if (!fg_jobspec_given(s, FG_JOBOPT_PRECISION))
            j->precision = d.precision;
        j->optimizer = d.optimizer;
    }
    if (fg_jobspec_given(s, FG_JOBOPT_GPU_UTIL) && (!serve || !(fw->gpu_util > 0)))
        return fg_err_set(err, FG_E_INVAL, "%sgpu-util is a serving engine's share of the card: "
                          "use it with --mode serve and --framework vllm or sglang",
                          s->spelling);
    if ((fg_jobspec_given(s, FG_JOBOPT_KV_DTYPE) || fg_jobspec_given(s, FG_JOBOPT_QUANTIZATION)) &&
        !serve)
        return fg_err_set(err, FG_E_INVAL, "%skv-dtype and %squantization say how a serving "
                          "engine stores the KV cache and the weights: use them with --mode "
                          "serve (a training job's base quantization is --quant)", s->spelling,
                          s->spelling);
    if (j->mode == FG_MODE_QLORA && fw->kbit_prepared) {
        /* peft prepare_model_for_kbit_training: the unquantized parameters in fp32, and
         * use_gradient_checkpointing=True unless the job says otherwise */
        j->kbit_prepared = true;
        if (!fg_jobspec_given(s, FG_JOBOPT_GRAD_CKPT))
            j->grad_ckpt = true;
    }
    if (lora_mode_of(j)) {
        j->lora_base_dtype = fw->lora_base_dtype;
        j->lora_fused_qkv = fw->lora_fused_qkv;
        j->lora_dropout = fw->lora_dropout;
    }
    if (fw->no_dropout && !serve)
        j->attn_dropout = j->hidden_dropout = 0;
    bool mixed = j->precision == FG_PREC_BF16_MIXED || j->precision == FG_PREC_FP16_MIXED;
    if (lora && mixed && fw->lora_base_torch_dtype) {
        j->precision = FG_PREC_BF16;
        j->autocast = true;
        note(s, "%s: the LoRA base stays in the dtype it was loaded in (bf16); mixed precision "
                "autocasts the compute only, the adapters are fp32", fw->name);
    }
    if (j->mode == FG_MODE_FULL && fw->master == FG_MASTER_OPTIMIZER &&
        j->precision != FG_PREC_FP32) {
        if (mixed)
            note(s, "%s: bf16 parameters with the %s master copy in the optimizer", fw->name,
             s->master_dtype_bytes == 2 ? "bf16" : "fp32");
        j->precision = FG_PREC_BF16;
        j->master = FG_MASTER_OPTIMIZER;
        j->main_grad_bytes = fw->main_grad_bytes;
    }
    if (j->float8 && (j->mode != FG_MODE_FULL || !fw->float8))
        return fg_err_set(err, FG_E_INVAL, "%sprecision float8 is modelled as torchtitan runs "
                          "it (torchao Float8Linear over FSDP2): a full fine-tune with "
                          "--framework torchtitan", s->spelling);
    if ((rc = titan_options(s, err)))
        return rc;
    if (j->float8)
        note(s, "float8: torchao Float8Linear (rowwise) keeps each linear's bf16 input; "
                "selective checkpointing saves what bf16's does (no _scaled_mm on its list)");
    if (j->optimizer_in_bwd && j->mode != FG_MODE_FULL)
        j->optimizer_in_bwd = false; /* adapters' states are tiny: the switch is a full one */
    if ((rc = megatron_options(s, err)))
        return rc;
    if (j->offload != FG_OFFLOAD_NONE && !(fw->layouts & FG_LAY_ZERO))
        return fg_err_set(err, FG_E_INVAL, "--framework %s has no CPU offload (it runs no "
                          "ZeRO / FSDP)", fw->name);
    if (!s->gpu_util)
        s->gpu_util = fw->gpu_util;
    j->kv_ds_mla = serve && fw->kv_ds_mla;
    j->cp = s->cp;
    return 0;
}
