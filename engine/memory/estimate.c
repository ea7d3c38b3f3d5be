/*
 * estimate.c - the memory model's entry points (memory.h, memory_int.h): the job's sizes
 * checked, its sequence length settled, then the serving estimate (serve.c) or the training
 * pipeline (pipeline.h: the stages of stages.def, in order), and on top of a training
 * estimate a preference / RL trainer's part (memory_rl.c), whose other models (a value
 * model, the generation phase) are estimated through the same entry point.  The sources the stages cite by
 * short name ([AMP], [MEG], [KOR] ...) are listed in pipeline.h.
 */
#include "memory/memory_int.h"
#include "memory/memory.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "memory/pipeline.h"
#include "stack/trainer.h"
#include "util/sat.h"

/* The job's numbers the estimator cannot read: FG_E_INVAL / FG_E_RANGE naming the field. */
static int check_job(const struct fg_job *job, struct fg_err *err)
{
    if (job->batch == 0)
        return fg_err_set(err, FG_E_INVAL, "micro-batch must be at least 1");
    if (job->batch > (1u << 20))
        return fg_err_set(err, FG_E_RANGE, "micro-batch %llu is absurd (limit 1048576)",
                          (unsigned long long)job->batch);
    if (job->seq_len > FG_MAX_SEQ)
        return fg_err_set(err, FG_E_RANGE, "sequence length %llu is beyond %u tokens",
                          (unsigned long long)job->seq_len, FG_MAX_SEQ);
    if ((job->mode == FG_MODE_LORA || job->mode == FG_MODE_QLORA) &&
        (job->lora_rank == 0 || job->lora_rank > 65536))
        return fg_err_set(err, FG_E_INVAL, "LoRA rank %u is out of range 1..65536",
                          job->lora_rank);
    if (job->zero > 3)
        return fg_err_set(err, FG_E_INVAL, "ZeRO stage %u is not 0..3", job->zero);
    if (!(job->lora_dropout >= 0 && job->lora_dropout < 1) || !(job->attn_dropout <= 1) ||
        !(job->hidden_dropout <= 1))
        return fg_err_set(err, FG_E_INVAL, "dropout probabilities must be below 1 (LoRA: 0 or "
                                           "more; attention, hidden: negative for config.json's)");
    return 0;
}


/* A preference / RL trainer on top of the adaptation's estimate (memory_rl.h): the models
 * it keeps beside the policy sized here, its lines appended. */
static int trainer_part(const struct fg_model *m, const struct fg_job *job,
                        struct fg_estimate *e, bool lines, struct fg_err *err)
{
    const struct fg_trainer_row *row = fg_trainer_row(job->trainer);
    struct fg_estimate value, gen;
    struct fg__rl_aux aux = {0};
    struct fg__rl_lines add;
    struct fg_job j;
    int rc = 0;
    if (row->value_model) {
        fg__trainer_value_job(job, &j);
        if (!(rc = fg_memory_estimate_totals(m, &j, &value, err)))
            aux.value = &value;
    }
    if (!rc && row->generates && job->vllm_mode == FG_VLLM_NONE) {
        fg__trainer_generation_job(job, e->seq_len, &j);
        if (!(rc = fg_memory_estimate_totals(m, &j, &gen, err)))
            aux.generation = &gen;
    }
    if (rc)
        return rc;
    fg__memory_trainer(m, job, &aux, lines, e, &add);
    for (size_t i = 0; lines && i < add.n; i++)
        fg__put_line(e, add.lines[i].key, add.lines[i].bytes, add.lines[i].per_sample,
                 add.lines[i].source, "%s", add.lines[i].what);
    e->total_bytes = fg_estimate_at(e, job->batch);
    if (e->total_bytes == UINT64_MAX)
        return fg_err_set(err, FG_E_OVERFLOW, "memory estimate overflows 64 bits");
    return 0;
}

/*
 * lines false: the planner's estimates, of which it reads only the byte totals.  The
 * lines then count as full from the start, so add_line returns before formatting (its
 * vsnprintf was two thirds of a plan's instructions, callgrind), and the 4.8 KB line
 * array is not cleared.  Every number is computed by the same code either way, so the
 * totals are the same; n_lines is 0 on return.
 */
static int estimate(const struct fg_model *m, const struct fg_job *job, struct fg_estimate *e,
                    bool lines, struct part_set *set, struct fg_err *err)
{
    memset(e, 0, lines ? sizeof *e : offsetof(struct fg_estimate, lines));
    if (!lines)
        e->n_lines = FG_ESTIMATE_MAX_LINES;
    int rc = check_job(job, err);
    if (rc)
        return rc;

    /* Sequence: the job's, else 2048 for training / 4096 for serving, capped
     * by the model's context (seed defaults). */
    uint64_t seq = job->seq_len;
    if (!seq) {
        seq = job->mode == FG_MODE_SERVE ? 4096 : 2048;
        if (m->max_pos && m->max_pos < seq)
            seq = m->max_pos;
    }
    e->seq_len = seq;
    e->batch = job->batch;
    if (job->mode == FG_MODE_SERVE)
        return fg__serve_estimate(m, job, e, err);

    struct train x = {.m = m, .job = job, .e = e, .lines = lines, .set = set, .seq = seq};
    rc = fg__train_run(&x, err);
    if (!rc && job->trainer != FG_TRAINER_SFT)
        rc = trainer_part(m, job, e, lines, err);
    return rc;
}

int fg_memory_estimate(const struct fg_model *m, const struct fg_job *job, struct fg_estimate *e,
                       struct fg_err *err)
{
    struct part_set set = {0};
    return estimate(m, job, e, true, &set, err);
}

int fg_memory_estimate_totals(const struct fg_model *m, const struct fg_job *job,
                              struct fg_estimate *e, struct fg_err *err)
{
    struct part_set set = {0};
    int rc = estimate(m, job, e, false, &set, err);
    e->n_lines = 0;
    return rc;
}

/* Not zeroed (13 KB; a plan makes one): a set is cleared when a key takes it. */
struct fg__parts *fg__parts_new(void)
{
    struct fg__parts *p = malloc(sizeof *p);
    if (p)
        p->used = p->next = 0;
    return p;
}

void fg__parts_free(struct fg__parts *p)
{
    for (unsigned i = 0; p && i < p->used; i++)
        fg__table_free(p->set[i].table);
    free(p);
}

int fg__memory_estimate_parts(const struct fg_model *m, const struct fg_job *job,
                              struct fg_estimate *e, struct fg__parts *parts, struct fg_err *err)
{
    int rc = estimate(m, job, e, false, fg__parts_set(parts, m, job), err);
    e->n_lines = 0;
    return rc;
}
