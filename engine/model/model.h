/*
 * model.h - the model graph: what a config.json describes, rebuilt as an
 * ordered list of nodes (embedding, norms, attention, MLP / MoE, SSM
 * mixers, heads), each with the parameters the checkpoint stores for it,
 * its per-token output width, and the structural numbers the memory model
 * needs (heads, widths, experts, state sizes).
 *
 * Error contract: see error.h.
 * Ownership: fg_model_load / fg_model_from_config return a model the caller
 * frees with fg_model_free() (NULL-safe).  Strings inside are owned by the
 * model.
 */
#ifndef FG_MODEL_H
#define FG_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* A checkpoint's weight quantization as a serving engine loads it (source/wquant.h reads
 * it from quantization_config and says where each figure comes from). */
/* The schemes, as vLLM's --quantization spells them (quant_method in config.json). */
enum fg_wq_method {
    FG_WQ_NONE,      /* the checkpoint dtype */
    FG_WQ_FP8,       /* fp8 e4m3: block scales (weight_block_size) or per tensor */
    FG_WQ_MXFP4,     /* OCP MX fp4 (gpt-oss): routed experts only */
    FG_WQ_GPTQ,
    FG_WQ_AWQ,
    FG_WQ_CT,        /* compressed-tensors (llm-compressor) */
    FG_WQ_BNB,       /* bitsandbytes 4-bit / 8-bit */
    FG_WQ_MODELOPT,  /* NVIDIA ModelOpt FP8 */
    FG_WQ_NVFP4,     /* NVIDIA ModelOpt NVFP4 (vLLM modelopt_fp4) */
    FG_WQ_COUNT
};

/* Role classes a scheme leaves unquantized (fg_wquant.keep). */
#define FG_WQK_ATTN 0x1u    /* attention projections (q k v o qkv, MLA's) */
#define FG_WQK_DENSE 0x2u   /* dense MLPs */
#define FG_WQK_SHARED 0x4u  /* shared experts */
#define FG_WQK_EXPERTS 0x8u /* routed experts */
#define FG_WQK_OTHER 0x10u  /* SSM / conv projections and anything else */

struct fg_wquant {
    enum fg_wq_method method;
    char label[64];      /* "fp8, 128x128 block scales" */
    double bytes;        /* per quantized weight, its scales and zero points included */
    unsigned keep;       /* FG_WQK_*: role classes kept in the checkpoint dtype */
    uint32_t pad_hidden; /* routed experts' hidden width rounded up to this (mxfp4: 256) */
    bool runtime;        /* quantized by the engine at load (--quantization on a bf16 base) */
};

enum fg_node_kind {
    FG_NODE_EMBED,       /* token embedding */
    FG_NODE_POS_EMBED,   /* learned position / token-type embedding */
    FG_NODE_NORM,        /* LayerNorm / RMSNorm */
    FG_NODE_ATTN,        /* multi-head / GQA / MQA / sliding-window attention */
    FG_NODE_MLA,         /* multi-head latent attention (DeepSeek-V2/V3) */
    FG_NODE_MLP,         /* feed-forward, plain or gated */
    FG_NODE_MOE,         /* routed experts (+ shared experts, router) */
    FG_NODE_MAMBA2,      /* Mamba-2 mixer */
    FG_NODE_SHORTCONV,   /* gated short convolution (LFM2) */
    FG_NODE_HEAD,        /* LM head / task head */
    FG_NODE_VISION,      /* a vision / audio tower counted as one block */
    FG_NODE_OTHER,       /* anything else with parameters (conv stem, projector) */
    FG_NODE_KIND_COUNT
};

enum fg_stack { FG_STACK_MAIN = 0, FG_STACK_ENCODER = 1, FG_STACK_TOWER = 2 };

/* One linear map inside a node: what LoRA can target. */
struct fg_linear {
    char role[12];        /* q k v o qkv gate up down gate_up in_proj out_proj router q_a q_b kv_a kv_b */
    uint32_t in, out;
    uint32_t count;       /* identical copies (experts); 1 otherwise */
};

#define FG_NODE_MAX_LINEAR 10

/* How peft's LoRA (>= 0.17, on transformers 5) reaches a MoE node's routed experts. */
enum fg_lora_experts {
    FG_LORA_EXPERTS_LINEAR, /* one nn.Linear per expert (remote code): adapted one by one */
    FG_LORA_EXPERTS_MERGED, /* fused 3-D parameters peft maps its target names onto: its
                               ParamWrapper rebuilds each as W + BA on every forward */
    FG_LORA_EXPERTS_NONE,   /* fused parameters peft does not map: no target name reaches them */
};

struct fg_node {
    enum fg_node_kind kind;
    int32_t layer;          /* block index from 0; -1 outside the blocks */
    uint8_t stack;          /* enum fg_stack */
    char name[32];          /* "Attention_3" */
    char desc[64];          /* "GQA 32q/8kv x128" */
    uint64_t params;        /* scalars the checkpoint stores for this node (buffers included) */
    uint64_t buffers;       /* of which stored non-trainable buffers */
    uint64_t alias;         /* of which the same tensor as another node's once loaded (a tied
                               head the checkpoint writes anyway): memory counts it there */
    uint32_t width;         /* per-token output width */
    /* structure; meaning depends on kind, unused fields are 0 */
    uint32_t hidden;        /* residual width entering the node */
    uint32_t heads, kv_heads, head_dim, v_head_dim, window;
    uint32_t q_lora, kv_lora, rope_dim;
    uint32_t inter;         /* MLP / expert width */
    uint32_t experts, top_k, shared, shared_inter;
    uint32_t ssm_heads, ssm_head_dim, groups, state, conv_kernel, chunk;
    uint8_t gated;          /* gated MLP (SwiGLU / GeGLU): 2 up-projections */
    uint8_t bidirectional;  /* encoder attention (no causal mask) */
    uint8_t cross;          /* cross-attention over the encoder output */
    uint8_t score_bytes;    /* attention: bytes per score (heads x s x s) its implementation
                               keeps for backward under SDPA; 0 where a fused kernel runs */
    uint8_t eager_bytes;    /* the same under attn_implementation="eager" */
    uint8_t lora_experts;   /* MoE, and a MoE model's dense MLP: enum fg_lora_experts */
    uint8_t nlin;
    struct fg_linear lin[FG_NODE_MAX_LINEAR];
    /* derived at finalize from lin[]: in x out x count summed over the routed experts
     * (count > 1 in a MoE node) and over every other linear */
    uint64_t lin_routed, lin_other;
};

/*
 * A run of consecutive nodes that make up one block of the main stack (same layer, stack
 * MAIN), or a single node outside the blocks.  rep is the first block segment whose nodes
 * equal this one's in everything but name and layer number (the estimator computes a
 * block once and reuses it for its copies); rep is the segment itself for the others.
 */
struct fg_seg {
    uint32_t first, n;      /* nodes [first, first + n) */
    int32_t layer;          /* -1: not a block */
    uint32_t rep;
    uint32_t run;           /* block: it and the segments after it that repeat it, block
                               after block (same rep, next layer numbers); 1 otherwise */
    uint8_t side;           /* enum fg_seg_side: which pipeline stage holds it */
};

/* Where a pipeline stage finds a segment (memory.c sizes one stage at a time). */
enum fg_seg_side {
    FG_SEG_LAYER,           /* by its layer number: a block, or a main-stack node with one */
    FG_SEG_HEAD,            /* with the last stage: the head, the final norm */
    FG_SEG_EMBED,           /* with the first: embeddings, encoder stacks, towers */
};

/* A named counting rule applied to reach the checkpoint's stored count. */
struct fg_rule {
    char name[96];
    int64_t scalars;        /* signed: what the rule adds (or removes) */
    bool optional;          /* stored by some checkpoints of the config and not others (MTP
                               layers a fine-tune or a pruned release drops): the checkpoint,
                               when at hand, decides (model_load.c) */
};

#define FG_MODEL_MAX_RULES 12
#define FG_MODEL_MAX_NOTES 8
#define FG_MODEL_MAX_ASSUMED 12

/*
 * How sure the parameter count is.  An admission gate must not act on a confident wrong
 * number: a front end shows this beside every count, and the policy's OnUnknown says what
 * happens to a job whose model is FG_CERT_UNSURE.
 */
enum fg_certainty {
    FG_CERT_EXACT,      /* a family reader: shapes from the family's modeling class, counts
                           checked against published checkpoints by the tests */
    FG_CERT_CHECKPOINT, /* counted from the checkpoint's safetensors headers (set by the
                           caller that read them; no reader sets it) */
    FG_CERT_GENERIC,    /* the generic reader understood every structural key it met; what
                           it assumed is in assumed[] */
    FG_CERT_UNSURE,     /* the generic reader met a structural key it cannot size (named in
                           unsure_key): the count may be far off */
};

struct fg_arch;

struct fg_model {
    char id[256];
    char model_type[64];
    char reader[48];        /* which reader built the graph */
    bool generic;           /* read by the generic reader (certainty GENERIC or UNSURE) */
    enum fg_certainty certainty;
    char unsure_key[64];    /* UNSURE: the first key that made it so (as the config spells
                               it, "vision_config", "layer_types[3]=linear_attention") */
    bool unsure_count_only; /* UNSURE only of the stored count, not of what is loaded: a
                               tied head a checkpoint may write anyway, blocks its releases
                               store that the class does not build (MTP layers, a pooler
                               under a head class); the memory estimate follows what the class
                               loads and does not depend on it (fg_decide_unknown) */
    bool custom_code;       /* config names classes through auto_map */
    bool encoder_only;      /* bidirectional encoder, no LM head */
    bool enc_dec;           /* encoder-decoder (T5, Whisper) */
    bool tied;              /* LM head shares the embedding */
    bool tied_head_open;    /* the reader counted a tied head as written not knowing whether
                               the checkpoint writes it: its tensor names decide when read */
    uint64_t hidden, vocab, layers, heads, kv_heads, head_dim, inter, max_pos;
    uint64_t experts, top_k;
    uint64_t enc_positions;  /* encoder sequence length where fixed (Whisper 1500) */
    char torch_dtype[16];
    /* Dropout config.json asks for in training (0 when it names none): on the attention
     * probabilities (attention_probs_dropout_prob, attn_pdrop, attention_dropout) and on the
     * hidden states (hidden_dropout_prob, resid_pdrop, hidden_dropout).  memory.c counts
     * the masks autograd keeps. */
    double attn_dropout, hidden_dropout;
    size_t n_nodes, cap_nodes;
    struct fg_node *nodes;
    size_t n_rules;
    struct fg_rule rules[FG_MODEL_MAX_RULES];
    size_t n_notes;
    char notes[FG_MODEL_MAX_NOTES][160];
    size_t n_assumed;        /* what the generic reader assumed, one line each */
    char assumed[FG_MODEL_MAX_ASSUMED][120];
    uint64_t params_total;   /* as the checkpoint stores them: nodes + rules */
    uint64_t params_buffers; /* stored non-trainable buffers within the total */
    uint64_t params_checkpoint; /* what the checkpoint's safetensors headers (or its index's
                                   total_parameters) say it stores; 0 when not read */
    /* derived at finalize (NULL / 0 before: the estimator then walks node by node) */
    size_t n_segs;
    struct fg_seg *segs;
    uint64_t widest_inter;   /* widest MLP / top-k expert width of any node */
    bool node_by_node;       /* built without fg__model_repeat_block (tests compare the two) */
    /* The architecture registry, set by fg_model_from_config for the readers that dispatch
     * on a nested model_type (a multimodal wrapper's text_config): handed in rather than
     * called by name, so no reader links back to the registry that names it. */
    const struct fg_arch *(*arch_find)(const char *model_type);
    struct fg_wquant wq;     /* the checkpoint's quantization_config (FG_WQ_NONE: none) */
    uint64_t stored_bytes;   /* a quantized checkpoint's bytes as its safetensors headers give
                                them (set by the caller that read them; 0: not read) */
    /* What the checkpoint's safetensors headers said, when read (model_load.c fills it) */
    struct fg_ckpt_seen {
        char where[200];     /* "DIR (local)", "the hub now (N requests, M ms)", "fitgate's
                                cache (N s old)"; "" when no header was read */
        uint64_t tensors;    /* tensors the headers name */
        uint64_t elements;   /* their elements, packed formats as stored */
        uint64_t bytes;      /* their bytes as stored */
        char dtypes[160];    /* elements per dtype: "BF16 7818448896, F32 64" */
        bool structure;      /* the graph itself was built from the tensors (tensors.h) */
        char unused[200];    /* stored parts the graph does not load ("", none found) */
    } ckpt;
};

void fg_model_free(struct fg_model *m);

/* "exact", "checkpoint", "generic", "unsure". */
const char *fg_certainty_name(enum fg_certainty c);

/* Is m unsure in a way the memory estimate depends on (FG_CERT_UNSURE, and not only of the
 * stored count: unsure_count_only)?  What OnUnknown acts on. */
bool fg_model_unsure_of_memory(const struct fg_model *m);

/* "Attention", "MLP", ... */
const char *fg_node_kind_name(enum fg_node_kind kind);

/* Sum of params over nodes matching kind (FG_NODE_KIND_COUNT = all). */
uint64_t fg_model_params_of(const struct fg_model *m, enum fg_node_kind kind);

/* Number of layers in the main stack (blocks with layer >= 0, stack MAIN). */
uint32_t fg_model_main_layers(const struct fg_model *m);

#endif
