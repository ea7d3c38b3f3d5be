/*
 * trainer.h - the preference and RL trainers a fine-tune can run on top of its adaptation
 * (--mode dpo|orpo|kto|grpo|rloo|ppo|reward with --adapter full|lora|qlora), as table rows:
 * what each one's forward holds per sample, which models beside the policy it keeps, and
 * whether it generates.  Each row follows TRL's trainer (trainer.c names file and
 * function); the estimator (memory_rl.c) reads only the row and the job's fields.
 *
 * Rows are static and never NULL once found; lookups return NULL for an unknown name.
 * Nothing here allocates or prints.
 */
#ifndef FG_TRAINER_H
#define FG_TRAINER_H

#include <stdbool.h>
#include <stdint.h>

#include "job/job.h"
#include "util/error.h"

/* Whether a trainer keeps a reference model. */
enum fg_ref_need { FG_REF_NEVER, FG_REF_ALWAYS, FG_REF_IF_BETA };

struct fg_trainer_row {
    enum fg_trainer id;
    const char *name;          /* "dpo": the --mode spelling */
    const char *label;         /* "TRL DPOTrainer" */
    uint32_t seqs;             /* sequences per sample in one forward (chosen + rejected: 2) */
    enum fg_ref_need ref;      /* its reference model (a full fine-tune's is a frozen copy,
                                  a peft model's the base with adapters disabled) */
    bool generates;            /* samples completions before each step */
    bool value_model;          /* trains a value model beside the policy (PPO) */
    bool reward_model;         /* scores completions with a frozen reward model (PPO) */
    bool score_head;           /* a sequence-classification head: no vocabulary logits */
    const char *source;        /* where the row's facts come from */
};

/* The row of a trainer; never NULL for a valid enum value. */
const struct fg_trainer_row *fg_trainer_row(enum fg_trainer t);

/* The row whose name is s ("dpo"; case-sensitive, as the other spellings); NULL when none. */
const struct fg_trainer_row *fg_trainer_find(const char *s);

/* "sft", "dpo", ... */
const char *fg_trainer_name(enum fg_trainer t);

/* Row i of the table (NULL past the end), for listings and usage text. */
const struct fg_trainer_row *fg_trainer_at(unsigned i);

/* The reference model the job keeps: ref as asked, or the trainer's own (beta for GRPO and
 * RLOO) resolved for the job's adaptation.  Never FG_REF_AUTO. */
enum fg_ref_model fg_trainer_ref(const struct fg_job *job);

#endif
