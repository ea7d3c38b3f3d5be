/*
 * moe_mla.h - internal to the mixture-of-experts reader (moe_mla.c) and its rows
 * (moe_rows.c): what differs between families is a column of struct moe_spec; step3p7.c
 * shares its checkpoint rules (FP8 block scales).
 * Error contract: arch.h's (0 or FG_E_*, err naming the key).
 */
#ifndef FG_ARCH_MOE_H
#define FG_ARCH_MOE_H

#include "arch/arch.h"

/* Which layers hold routed experts (the others get the dense MLP). */
enum moe_place {
    PLACE_ALL,          /* every layer (Mixtral, GraniteMoe, gpt-oss, MiniMax-M2) */
    PLACE_SPARSE_STEP,  /* Qwen2MoeDecoderLayer: not in mlp_only_layers and (i+1) % decoder_sparse_step == 0 */
    PLACE_FIRST_K,      /* modeling_deepseek.py: i >= first_k_dense_replace and i % moe_layer_freq == 0 */
    PLACE_ERNIE,        /* Ernie4_5_MoeDecoderLayer: (i+1) % moe_layer_interval == 0 and
                           moe_layer_start_index <= i <= moe_layer_end_index (-1: the last) */
    PLACE_TYPES,        /* MiMoV2FlashDecoderLayer, HYV3DecoderLayer: mlp_layer_types "sparse" /
                           "dense", or the Hub's moe_layer_freq list (1 / 0); absent: layer 0
                           dense; MTP layers past the stack are expert layers */
};

/* Which attention layers carry per-head sinks. */
enum moe_sinks {
    SINKS_NONE,
    SINKS_ALL,          /* GptOssAttention.sinks */
    SINKS_SLIDING,      /* MiMoV2FlashAttention: sliding layers only */
};

/* What a Hub key the class hardcodes must equal for the class's shapes to be the
 * checkpoint's (struct moe_fixed). */
enum moe_fixed_of {
    FIXED_HEADS,        /* num_attention_heads */
    FIXED_SWA_KV,       /* num_key_value_heads x swa_kv_mult */
    FIXED_HEAD_DIM,     /* head_dim */
    FIXED_V_HEAD_DIM,   /* v_head_dim */
    FIXED_FIRST_DENSE,  /* the dense layers before the first expert layer (PLACE_TYPES) */
    FIXED_MOE_INTER,    /* the routed experts' width */
    FIXED_TRUE,
    FIXED_FALSE,
};

struct moe_fixed {
    const char *key;
    enum moe_fixed_of of;
};

/* How the always-on shared expert is sized. */
enum moe_shared {
    SHARED_NONE,
    SHARED_QWEN,        /* one MLP of shared_expert_intermediate_size, scaled by sigmoid(shared_expert_gate) */
    SHARED_DEEPSEEK,    /* one MLP of n_shared_experts x moe_intermediate_size */
    SHARED_GRANITE,     /* GraniteMoeSharedMLP of shared_intermediate_size, absent when 0 */
};

/* The router's stored e_score_correction_bias buffer (aux-loss-free balancing). */
enum moe_score_bias {
    SCORE_BIAS_NONE,
    SCORE_BIAS_KEY,     /* present when use_routing_bias (MiniMaxM2SparseMoeBlock) */
    SCORE_BIAS_NOAUX,   /* present when topk_method == "noaux_tc" (DeepseekV3 MoEGate) */
    SCORE_BIAS_ALWAYS,  /* always built (Glm4MoeTopkRouter buffer, Ernie4_5_MoeStatics) */
};

enum moe_attn { ATTN_GQA, ATTN_MLA };

/* MLA sizes; 0 q_lora means a plain q_proj (DeepSeek-V2-Lite). */
struct mla_defaults {
    uint64_t q_lora, kv_lora, nope, rope, v;
};

struct moe_spec {
    struct fg_core_defaults d;       /* the config class defaults */
    uint64_t kv_heads_def;           /* num_key_value_heads when absent; 0 = heads */
    uint64_t head_dim_def;           /* head_dim when absent; 0 = hidden / heads */
    const char *experts_key;
    uint64_t experts_def;            /* 0: the class default is None (a dense model) */
    const char *topk_key;
    uint64_t topk_def;               /* 0: required whenever there are experts */
    const char *moe_inter_key;       /* NULL: intermediate_size is the expert width */
    uint64_t moe_inter_def;
    enum moe_place place;
    enum moe_shared shared;
    uint64_t shared_def;             /* n_shared_experts or shared_expert_intermediate_size */
    const char *shared_key;          /* SHARED_DEEPSEEK count key; NULL = n_shared_experts */
    enum fg_norm_kind norm;          /* block and final norms (RMS unless the row says) */
    const char *head_bias_key;       /* lm_head bias switch (PhiMoE lm_head_bias), or NULL */
    bool fused_gate_up;              /* experts store one gate_up tensor */
    enum fg_lora_experts peft;       /* how peft's LoRA reaches the routed experts: transformers
                                        5 fuses them into 3-D parameters, and peft maps its
                                        target names onto those only for the model types that
                                        transformers converts to the mixtral / qwen2_moe layout
                                        (transformers conversion_mapping.py
                                        _MODEL_TO_CONVERSION_PATTERN; peft
                                        utils/transformers_weight_conversion.py); remote-code
                                        families keep nn.Linear experts */
    bool expert_bias, router_bias;   /* gpt-oss */
    enum moe_score_bias score_bias;
    const char *topk_method_def;
    enum moe_attn attn;
    const char *attn_bias_key;       /* q/k/v/o (MLA: q_a/q/kv_a/o) biases */
    bool attn_bias_def;
    const char *qkv_bias_key;        /* q/k/v only (Qwen2Moe) */
    bool qkv_bias_def;
    uint8_t qk_norm;                 /* 1 per head_dim, 2 over all heads */
    const char *qk_norm_key;         /* NULL: qk_norm always */
    bool qk_norm_def;
    enum moe_sinks sinks;            /* per-head attention sinks */
    bool windows;                    /* sliding_window / layer_types honoured */
    bool hybrid_pattern;             /* layer_types, or the Hub's hybrid_layer_pattern (1 =
                                        sliding); absent: layer 0 and every 6th full
                                        (MiMoV2FlashConfig.__post_init__) */
    uint8_t swa_kv_mult;             /* sliding layers hold num_key_value_heads x this (0: x1) */
    const char *v_head_dim_key;      /* value heads narrower than head_dim, or NULL */
    uint64_t v_head_dim_def;
    const struct moe_fixed *fixed;   /* Hub keys the class hardcodes, NULL-key ended, or NULL */
    bool mtp_unsized;                /* the class drops the checkpoint's model.mtp.* on load and
                                        config.json sizes none: the stored count is unsure */
    bool honour_use_sliding_window;
    bool max_window_layers;          /* Qwen: layers below max_window_layers attend fully */
    bool mtp;                        /* num_nextn_predict_layers stored in the checkpoint */
    bool mtp_no_copies;              /* the MTP layers hold no embed_tokens / shared_head.head */
    const char *mtp_unstored_key;    /* a count of MTP modules the config declares and the
                                        published checkpoints do not store (said in a note) */
    bool dsa_indexer;                /* DeepSeek sparse attention indexer inside attention */
    struct mla_defaults mla;
};

/* quantization_config of c: *bo x *bi, the FP8 weight_block_size (0 x 0 when the checkpoint
 * stores no FP8 block scales), and the MXFP4 packing rule added to m. */
int fg__moe_read_quant(const struct fg_cfg *c, struct fg_model *m, uint64_t *bo, uint64_t *bi,
                       struct fg_err *err);

/* The FP8 weight_scale_inv scalars of m's block linears: one per bo x bi block of every
 * linear of an attention, MLA, MLP or MoE node but those checkpoints keep in bf16 (routers,
 * Qwen's shared-expert gate, the DSA indexer's weights_proj). */
uint64_t fg__moe_fp8_scales(const struct fg_model *m, uint64_t bo, uint64_t bi);

/* 0 when a per-layer list key of n entries is absent (n 0) or has one per layer, else
 * FG_E_RANGE naming the key. */
int fg__moe_check_list_len(const struct fg_cfg *c, const char *key, size_t n, uint64_t layers,
                           struct fg_err *err);

/* A Hub key the class does not read, whose other values would mean other shapes (what
 * spec->fixed checks for the rows here, for readers of their own file): m unsure, naming key,
 * when got is not the want the class builds; why names what builds it. */
void fg__moe_doubt_u64(struct fg_model *m, const char *key, uint64_t got, uint64_t want,
                       const char *why);

/* Adds the rule of total FP8 block scales of bo x bi blocks to m; nothing when bo is 0. */
void fg__moe_fp8_rule(struct fg_model *m, uint64_t bo, uint64_t bi, uint64_t total);

/* The reader of every row: spec is its struct moe_spec. */
int fg__arch_read_moe(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                      struct fg_err *err);

#endif
