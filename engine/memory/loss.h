/*
 * loss.h - what each stack's loss keeps, per token and once per step, as its code computes
 * it (loss.c says where each number is read).  The estimator's logits line is one call
 * (train_logits.c); the preference/RL trainers ask fg_loss_fused_logprobs.
 *
 * Nothing here allocates, fails or prints; names and sources are static strings.
 */
#ifndef FG_LOSS_H
#define FG_LOSS_H

#include <stdbool.h>
#include <stdint.h>

#include "job/job.h"

/* The inputs a loss kernel's bytes depend on. */
struct fg_loss_in {
    enum fg_loss kind;      /* FG_LOSS_DEFAULT: chunked / ce_kept below decide */
    bool chunked;           /* FG_LOSS_DEFAULT: a chunked cross-entropy (job.h chunked_ce) */
    enum fg_ce_kept kept;   /* what that chunked loss keeps (job.h ce_kept) */
    bool autocast;          /* the forward runs under bf16 autocast */
    bool head_trains;       /* the head's weight takes a gradient (full fine-tune) */
    unsigned c;             /* the activations' bytes per element (2: bf16) */
    unsigned head_bytes;    /* the head weight's bytes per element as stored (4: fp32) */
    uint64_t vocab, hidden; /* the model's */
    uint32_t tp;            /* tensor-parallel ranks the vocabulary splits over (1: none) */
    uint64_t tokens;        /* tokens of one micro-batch on this rank (batch x sequence) */
};

/* What the loss holds: per_tok through backward for each token; work once per step, at
 * the loss's own peak (one chunk's working set, copies of the head); head_grad the head's
 * weight gradient made in the forward (fused kernels, where the head trains). */
struct fg_loss_bytes {
    uint64_t per_tok, work, head_grad;
    const char *name;   /* "TRL chunked_nll" */
    const char *source; /* "trl 1.9 trainer/sft_trainer.py _chunked_cross_entropy_loss" */
};

/* The bytes of in's loss into out. */
void fg_loss_bytes(const struct fg_loss_in *in, struct fg_loss_bytes *out);

/* Whether a trainer that takes log-probabilities in place of a cross-entropy (DPO, GRPO)
 * takes them through kind's fused kernel, never holding them vocabulary-wide. */
bool fg_loss_fused_logprobs(enum fg_loss kind);

#endif
