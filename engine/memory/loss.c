/*
 * loss.c - the loss kernels' bytes (loss.h), each read from the code that runs it.  V is the
 * vocabulary on this rank (V / TP under a vocabulary-parallel loss), h the hidden size, c
 * the activations' bytes, T the tokens of one micro-batch.
 *
 *  plain    transformers loss/loss_utils.py ForCausalLMLoss: logits.float(), cross_entropy
 *           saves the fp32 log-softmax (4V) and backward holds its gradient and the
 *           upcast's (4V + 4V): 12V per token.
 *  chunked  a chunked cross-entropy keeps every chunk's logits in c and what its
 *           cross-entropy saves: torchtune's fp32 log-softmax of its upcast chunks
 *           (CEWithChunkedOutputLoss compute_cross_entropy), lit-gpt's in the logits' dtype
 *           (utils.py chunked_cross_entropy; fp32 under autocast), or a log-sum-exp per
 *           token (a compiled kernel that fuses the upcast): (c + 4 | c | 0) V.
 *  liger    Liger-Kernel v0.8.2 ops/fused_linear_cross_entropy.py
 *           fused_linear_cross_entropy_forward: grad_input (zeros_like the input: ch), an
 *           fp32 loss per token (4), one chunk's logits and their gradient in c, chunk_size
 *           = next_power_of_2(ceil(T / ceil(V / h))) tokens (under 2T / ceil(V / h)), and
 *           grad_weight (zeros_like the head) where the head trains.
 *  cce      apple/ml-cross-entropy cut_cross_entropy/cce.py LinearCrossEntropyFunction:
 *           save_for_backward(e, c, bias, lse, ...): the fp32 log-sum-exp (4) and the
 *           input's gradient (ch); logits recomputed blockwise in backward, never whole.
 *  chunked-nll  TRL 1.9 trainer/sft_trainer.py _chunked_cross_entropy_loss (loss_type
 *           "chunked_nll", SFTConfig's default): the hidden states are reordered so the
 *           non-masked tokens come first (hidden[order]: a copy, ch per token, kept as the
 *           checkpointed chunks' input; labels[order] and order: 8 + 8 B), and in backward
 *           their gradient accumulates in one more ch.  Masked tokens only shorten the loop:
 *           the chunks, _CHUNKED_LM_HEAD_CHUNK_SIZE = 256 tokens, each run under
 *           torch.utils.checkpoint, so one chunk's tensors live at a time.  _chunk: logits =
 *           h.float() @ w.float().t() (256 x V fp32), log_softmax's output and p =
 *           log_p.exp() saved for backward, and in backward the gradient of log_p with one
 *           product term beside them: 4 x 256 x V x 4 B.  w.float() is a fp32 copy of the
 *           head (4Vh) unless it is fp32 already, saved by the matmul through the chunk's
 *           backward.  Under autocast the matmul casts it to bf16 (2Vh), which it saves
 *           instead: the fp32 copy is freed when the matmul returns, so the chunk's peak is
 *           2Vh + the larger of 4Vh and the chunk's tensors.  Where the head trains, each
 *           chunk's fp32 gradient of that copy (4Vh) before it is added to the head's.
 *  vocab-parallel  Megatron-Core 0.19 tensor_parallel/cross_entropy.py
 *           VocabParallelCrossEntropy: calculate_logits_max upcasts the logits (.float()),
 *           calculate_predicted_logits exponentiates in place (torch.exp(..., out=)), and
 *           forward saves exp_logits (4 per entry), target_mask (1) and masked_target_1d (8);
 *           the bf16 logits are not kept (the output layer saves its input).  backward
 *           turns the saved softmax into the gradient in place and autograd casts it to the
 *           logits' dtype: (4 + c) V per token at the start of backward, not 12V.
 *  chunked-wrapper  torchtitan components/loss.py ChunkedLossWrapper (llama3
 *           config_registry.py; num_chunks 8): the hidden states are split into 8
 *           contiguous chunks (a ch copy) and each chunk's lm_head, loss and backward run in
 *           the forward; GradAccumulator holds their gradient in fp32 (4h).  One chunk's
 *           CrossEntropyLoss (pred.float(): c logits, the fp32 log-softmax, its gradient
 *           and the cast back: (8 + 2c) V) over T / 8 tokens.  With loss_parallel V is the
 *           rank's V / TP.
 *  linear-ce  torchtune 0.7 modules/loss/cross_entropy_loss.py LinearCrossEntropyLoss (its
 *           configs' loss): mask_inputs index_selects the non-ignored tokens' hidden states (a
 *           ch copy; targets and indices 8 + 8 B) and splits them into num_output_chunks = 8;
 *           compute_cross_entropy projects each chunk and runs cross_entropy(logits.float()),
 *           which saves only its fp32 log-softmax (4 per entry): the bf16 logits and their
 *           upcast are freed chunk by chunk.  In backward one chunk's gradient, fp32 and cast
 *           to bf16, beside the others' saved log-softmax: 4V + (4 + c) V / 8 per token.
 *  unsloth  unsloth-zoo 2026.8 fused_losses/cross_entropy_loss.py UnslothFusedLoss
 *           (unsloth's models/llama.py calls unsloth_fused_ce_loss, torch_compile=True):
 *           grad_inputs (empty_like the hidden states: ch) and grad_lm_head (zeros_like the
 *           head, where it trains) made in the forward; each chunk's grad_and_value under
 *           torch.compile holds the chunk's logits and their gradient (2c per entry; c if
 *           inductor writes the gradient over the logits' buffer: the larger is counted).
 *           get_chunk_size: one chunk while the fp32 logits of T tokens fit target_gb =
 *           min(half the free memory, 4 GiB), else n chunks, n the next multiple of 4.
 */
#include "memory/loss.h"

#include "util/sat.h"

/* TRL's _CHUNKED_LM_HEAD_CHUNK_SIZE; torchtitan's ChunkedLossWrapper num_chunks and torchtune's
 * LinearCrossEntropyLoss num_output_chunks (both 8) */
enum { TRL_CHUNK = 256, LOSS_CHUNKS = 8 };
#define UNSLOTH_TARGET (4ull << 30) /* _get_chunk_multiplier: target_gb at most 4.0 (GiB) */

/* Each loss kind's line and whether a trainer that takes log-probabilities instead of a
 * cross-entropy (DPO, GRPO: memory_rl.c) still holds them vocabulary-wide under it.  Only
 * Liger's fused kernels have preference/RL forms that TRL builds in their place
 * (trl 1.9 grpo_trainer.py GRPOTrainer.__init__: LigerFusedLinearGRPOLoss; dpo_trainer.py:
 * LigerFusedLinearDPOLoss; Liger-Kernel chunked_loss/), taking the log-probs chunk by
 * chunk from the hidden states; under every other kind TRL runs selective_log_softmax
 * over the whole logits.  FG_LOSS_DEFAULT's name and source follow chunked / kept. */
static const struct loss_row {
    enum fg_loss kind;
    bool fused_logprobs;
    const char *name, *source;
} loss_rows[] = {
    {FG_LOSS_DEFAULT, false, NULL, NULL},
    {FG_LOSS_LIGER, true, "Liger fused linear CE", "Liger-Kernel fused_linear_cross_entropy.py"},
    {FG_LOSS_CCE, false, "Cut Cross-Entropy", "ml-cross-entropy cce.py (no logits)"},
    {FG_LOSS_CHUNKED_NLL, false, "TRL chunked_nll",
     "trl 1.9 sft_trainer.py _chunked_cross_entropy_loss"},
    {FG_LOSS_VOCAB_PARALLEL, false, "Megatron vocab-parallel CE",
     "megatron/core tensor_parallel/cross_entropy.py"},
    {FG_LOSS_CHUNKED_WRAPPER, false, "torchtitan ChunkedLossWrapper",
     "torchtitan components/loss.py ChunkedLossWrapper"},
    {FG_LOSS_UNSLOTH, false, "unsloth fused CE", "unsloth-zoo fused_losses/cross_entropy_loss.py"},
    {FG_LOSS_LINEAR_CE, false, "torchtune LinearCrossEntropyLoss",
     "torchtune modules/loss/cross_entropy_loss.py LinearCrossEntropyLoss"},
};
#define N_LOSS_ROWS (sizeof loss_rows / sizeof loss_rows[0])

static const struct loss_row *loss_row(enum fg_loss kind)
{
    for (size_t i = 0; i < N_LOSS_ROWS; i++)
        if (loss_rows[i].kind == kind)
            return &loss_rows[i];
    return &loss_rows[0];
}

bool fg_loss_fused_logprobs(enum fg_loss kind)
{
    return loss_row(kind)->fused_logprobs;
}

void fg_loss_bytes(const struct fg_loss_in *in, struct fg_loss_bytes *out)
{
    uint64_t tp = in->tp ? in->tp : 1, h = in->hidden, c = in->c, v = in->vocab / tp;
    uint64_t head = fg__mul_sat(in->vocab, h); /* the whole head: none of these shard it */
    const struct loss_row *row = loss_row(in->kind);
    *out = (struct fg_loss_bytes){.name = row->name, .source = row->source};
    switch (in->kind) {
    case FG_LOSS_LIGER: {
        uint64_t inc = h ? (v + h - 1) / h : 1;
        out->per_tok = c * h + 4 + 2 * c * v / (inc ? inc : 1);
        out->head_grad = in->head_trains ? fg__mul_sat(v * h, in->head_bytes) : 0;
        break;
    }
    case FG_LOSS_CCE:
        out->per_tok = c * h + 4;
        break;
    case FG_LOSS_CHUNKED_NLL: {
        out->per_tok = 2 * c * h + 16;
        uint64_t chunk = fg__mul_sat(4ull * TRL_CHUNK * 4, v);
        uint64_t copy = in->head_bytes == 4 ? 0 : fg__mul_sat(head, 4);
        if (in->autocast) /* the bf16 cast is saved; the fp32 copy lives only until it is made */
            out->work = fg__add_sat(fg__mul_sat(head, 2), chunk > copy ? chunk : copy);
        else
            out->work = fg__add_sat(copy, chunk);
        out->work = fg__add_sat(out->work, in->head_trains ? fg__mul_sat(head, 4) : 0);
        break;
    }
    case FG_LOSS_VOCAB_PARALLEL:
        out->per_tok = (4 + c) * v + 9;
        break;
    case FG_LOSS_CHUNKED_WRAPPER:
        out->per_tok = (c + 4) * h + (8 + 2 * c) * v / LOSS_CHUNKS;
        break;
    case FG_LOSS_UNSLOTH: {
        uint64_t full = fg__mul_sat(fg__mul_sat(in->tokens, v), 4);
        out->per_tok = c * h;
        if (full <= UNSLOTH_TARGET) {
            out->per_tok += 2 * c * v;
        } else {
            uint64_t n = (full + UNSLOTH_TARGET - 1) / UNSLOTH_TARGET;
            n = (n + 3) / 4 * 4;
            out->work = fg__mul_sat(2 * c * v, (in->tokens + n - 1) / n);
        }
        out->head_grad = in->head_trains ? fg__mul_sat(head, in->head_bytes) : 0;
        break;
    }
    case FG_LOSS_LINEAR_CE:
        out->per_tok = c * h + 16 + 4 * v + (4 + c) * v / LOSS_CHUNKS;
        break;
    case FG_LOSS_DEFAULT:
    default:
        if (!in->chunked) {
            out->per_tok = 12 * in->vocab / tp;
            out->name = "logits + fp32 loss";
            out->source = "transformers ForCausalLMLoss fp32 upcast";
            break;
        }
        out->per_tok = (c + (in->kept == FG_CE_LSE                    ? 0
                             : in->kept == FG_CE_FP32 || in->autocast ? 4
                                                                      : c)) * in->vocab / tp;
        out->name = "chunked CE";
        out->source = in->kept == FG_CE_FP32      ? "torchtune CEWithChunkedOutputLoss"
                    : in->kept == FG_CE_COMPUTE ? "lit-gpt chunked_cross_entropy"
                                                : "compiled chunked CE (log-sum-exp)";
        break;
    }
}
