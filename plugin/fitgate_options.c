/*
 * fitgate_options.c - the --ft-* options: one table and one callback that
 * keeps the value (callbacks may run more than once: from the environment
 * and from the command line, and twice for an srun step).  Part of the thin
 * plugin: no engine code here; the values are checked by the engine part
 * when a job is tagged (fitgate_common.c: fitgate_job).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fitgate.h"

static char *values[FITGATE_OPT_COUNT];

static int option_cb(int val, const char *optarg, int remote);

/* name, arg, usage, has_arg, val, cb: the SPANK option table. */
static struct spank_option table[] = {
    {"ft-model", "ID",
     "[fitgate] model to check: org/name[@rev], a directory or a config.json; jobs without it "
     "are not checked", 1, FITGATE_OPT_MODEL, option_cb},
    {"ft-mode", "MODE", "[fitgate] full|lora|qlora|serve (default full)", 1, FITGATE_OPT_MODE,
     option_cb},
    {"ft-seq-len", "N", "[fitgate] tokens per sample (default 2048, or the model's context)", 1,
     FITGATE_OPT_SEQ_LEN, option_cb},
    {"ft-batch", "N", "[fitgate] micro-batch per GPU (default 1)", 1, FITGATE_OPT_BATCH,
     option_cb},
    {"ft-lora-rank", "R", "[fitgate] LoRA rank (default 16)", 1, FITGATE_OPT_LORA_RANK,
     option_cb},
    {"ft-lora-targets", "LIST", "[fitgate] all-linear|attn|qv|q,v,... (default all-linear)", 1,
     FITGATE_OPT_LORA_TARGETS, option_cb},
    {"ft-precision", "P", "[fitgate] bf16-mixed|bf16|fp16-mixed|fp32 (default bf16-mixed)", 1,
     FITGATE_OPT_PRECISION, option_cb},
    {"ft-optimizer", "O", "[fitgate] adamw|adamw-fused|adamw-8bit|sgd (default adamw)", 1,
     FITGATE_OPT_OPTIMIZER, option_cb},
    {"ft-quant", "Q", "[fitgate] QLoRA base quantization nf4|nf4-dq|int8", 1, FITGATE_OPT_QUANT,
     option_cb},
    {"ft-zero", "Z", "[fitgate] ZeRO stage 0..3", 1, FITGATE_OPT_ZERO, option_cb},
    {"ft-grad-ckpt", NULL, "[fitgate] gradient checkpointing", 0, FITGATE_OPT_GRAD_CKPT,
     option_cb},
    {"ft-gpu", "NAME", "[fitgate] the card, when the job's --gres/--gpus names none", 1,
     FITGATE_OPT_GPU, option_cb},
    {"ft-gpus", "N", "[fitgate] GPUs, when the job asks for them some other way", 1,
     FITGATE_OPT_GPUS, option_cb},
    {"ft-attention", "A", "[fitgate] sdpa|eager: the job's attn_implementation (default sdpa)", 1,
     FITGATE_OPT_ATTENTION, option_cb},
};
#define NOPTS (sizeof table / sizeof table[0])
_Static_assert(NOPTS == FITGATE_OPT_COUNT, "one table row per option");

static int keep(enum fitgate_opt id, const char *v)
{
    char *copy = strdup(v);
    if (!copy)
        return -1;
    free(values[id]);
    values[id] = copy;
    return 0;
}

static int option_cb(int val, const char *optarg, int remote)
{
    (void)remote;
    if (val < 0 || val >= (int)FITGATE_OPT_COUNT)
        return -1;
    /* a flag has no value */
    const char *v = table[val].has_arg ? optarg : "1";
    if (!v || strlen(v) > 1000) {
        slurm_error("fitgate: --%s needs a value of at most 1000 characters", table[val].name);
        return -1;
    }
    if (keep((enum fitgate_opt)val, v)) {
        slurm_error("fitgate: out of memory keeping --%s", table[val].name);
        return -1;
    }
    return 0;
}

int fitgate_options_register(spank_t sp)
{
    for (size_t i = 0; i < NOPTS; i++) {
        spank_err_t rc = spank_option_register(sp, &table[i]);
        if (rc != ESPANK_SUCCESS) {
            slurm_error("fitgate: cannot register --%s: %s", table[i].name, spank_strerror(rc));
            return -1;
        }
    }
    return 0;
}

bool fitgate_tagged(void)
{
    return values[FITGATE_OPT_MODEL] != NULL;
}

void fitgate_options_from_env(spank_t sp)
{
    char name[128], val[1024];
    for (size_t i = 0; i < NOPTS; i++) {
        if (values[i])
            continue;
        /* SLURM_SPANK__SLURM_SPANK_OPTION_<plugin>_<option, '-' as '_'> */
        int w = snprintf(name, sizeof name, "SLURM_SPANK__SLURM_SPANK_OPTION_fitgate_%s",
                         table[i].name);
        for (int k = w - (int)strlen(table[i].name); k < w; k++)
            if (name[k] == '-')
                name[k] = '_';
        if (spank_getenv(sp, name, val, sizeof val) != ESPANK_SUCCESS)
            continue;
        /* a flag travels as an empty value */
        (void)keep((enum fitgate_opt)i, table[i].has_arg ? val : "1");
    }
}

const char *const *fitgate_option_values(void)
{
    return (const char *const *)values;
}
