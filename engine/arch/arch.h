/*
 * arch.h - internal: the architecture registry and the building blocks
 * readers use.  A family is a row in a table (llama_rows.c) or a short
 * reader function (arch_*.c) registered in graph.c; the core has no
 * per-family control flow.
 *
 * Every reader: int read(const struct fg_cfg *c, struct fg_model *m,
 *                        const void *spec, struct fg_err *err)
 * fills m (hidden, vocab, layers ... and the nodes) and returns 0 or an
 * FG_E_* code with err naming the key.  Shape sources are named in each
 * reader: the transformers class whose __init__ creates the tensors.
 */
#ifndef FG_ARCH_H
#define FG_ARCH_H

#include "model/model.h"
#include "model/model_int.h"
#include "source/config.h"

typedef int (*fg_arch_read_fn)(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                               struct fg_err *err);

struct fg_arch {
    const char *model_type;
    const char *family;     /* shown in output: "llama-style decoder" */
    fg_arch_read_fn read;
    const void *spec;       /* row for table-driven readers, or NULL */
    const char *file;       /* the reader's source file, "engine/arch/<kind>/<file>.c" */
};

/* A registry row, written in the reader's <file>.def and included into <file>.c's table; the
 * file it names is the .c compiled (__BASE_FILE__), whose functions it points at ('fitgate
 * families'). */
#define FG_ARCH(model_type, family, read, spec)                                               \
    {(model_type), (family), (read), (spec), __BASE_FILE__}

/* A model type whose reader is tested on a released checkpoint's config.json: the fixture
 * folder under tests/fixtures/models, and via, NULL when the config's root is of the type,
 * else the root key of the sub-config that is (a "qwen3_vl_text" text_config).
 * fg__real_configs (generated at build time from the folders, tools/gen_real_configs.c) is
 * sorted by model_type and ends with a {0} row. */
struct fg__real_config {
    const char *model_type, *folder, *via;
};
extern const struct fg__real_config fg__real_configs[];

/* Registry lookup; NULL when model_type is unknown. */
const struct fg_arch *fg__arch_find(const char *model_type);
/* The reason model_type is refused by name (graph.c's table), or NULL; the i-th refused
 * model_type, NULL past the last. */
const char *fg__family_refused(const char *model_type);
const char *fg__family_refused_at(size_t i);
/* The i-th registry row over all tables, NULL past the last (for 'fitgate families'). */
const struct fg_arch *fg__arch_at(size_t i);

/* Registry tables of the reader files (each ends with a {NULL} row). */
extern const struct fg_arch fg__arch_decoder_table[];
extern const struct fg_arch fg__arch_moe_table[];
extern const struct fg_arch fg__arch_legacy_table[];
extern const struct fg_arch fg__arch_encoder_table[];
extern const struct fg_arch fg__arch_encdec_table[];
extern const struct fg_arch fg__arch_nomic_table[];
extern const struct fg_arch fg__arch_eurobert_table[];
extern const struct fg_arch fg__arch_hybrid_table[];
extern const struct fg_arch fg__arch_mamba_table[];
extern const struct fg_arch fg__arch_multimodal_table[];
extern const struct fg_arch fg__arch_llama4_table[];
extern const struct fg_arch fg__arch_dsv4_table[];
extern const struct fg_arch fg__arch_step3p7_table[];
extern const struct fg_arch fg__arch_minimax_m3_table[];
extern const struct fg_arch fg__arch_classic_table[];
extern const struct fg_arch fg__arch_mllama_table[];
extern const struct fg_arch fg__arch_enc1_table[];
extern const struct fg_arch fg__arch_enc1b_table[];
extern const struct fg_arch fg__arch_enc2_table[];
extern const struct fg_arch fg__arch_enc2b_table[];
extern const struct fg_arch fg__arch_enc2c_table[];
extern const struct fg_arch fg__arch_seq_table[];
extern const struct fg_arch fg__arch_seq_dec_table[];
extern const struct fg_arch fg__arch_seq_mm_table[];
extern const struct fg_arch fg__arch_ssm_table[];
extern const struct fg_arch fg__arch_vl_table[];
extern const struct fg_arch fg__arch_vl_glm_table[];
extern const struct fg_arch fg__arch_vl_ernie_table[];
extern const struct fg_arch fg__arch_vl_minicpm_table[];
extern const struct fg_arch fg__arch_vl_blip_table[];
extern const struct fg_arch fg__arch_vl_aria_table[];
extern const struct fg_arch fg__arch_vl_deepseek_table[];
extern const struct fg_arch fg__arch_vl_kosmos_table[];
extern const struct fg_arch fg__arch_vl_idefics_table[];
extern const struct fg_arch fg__arch_vl_janus_table[];
extern const struct fg_arch fg__arch_vl_phi4mm_table[];
extern const struct fg_arch fg__arch_vl_ovis_table[];
extern const struct fg_arch fg__arch_vl_evolla_table[];
extern const struct fg_arch fg__arch_vl_gemma4_table[];
extern const struct fg_arch fg__arch_vl_fast_vlm_table[];
extern const struct fg_arch fg__arch_dec_table[];
extern const struct fg_arch fg__arch_dec2_table[];

/* The generic reader (generic.c), used for unknown model_types with the standard keys:
 * sets m->certainty to GENERIC, or UNSURE with a note naming the key it cannot size. */
int fg__arch_read_generic(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                          struct fg_err *err);
/* The table-driven llama-style reader; spec is a struct fg_decoder_spec. */
int fg__arch_read_decoder(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                          struct fg_err *err);

/* Bounds for config sizes: generous for real models, small enough that the
 * products in the readers cannot overflow uint64_t. */
#define FG_MAX_HIDDEN   (1u << 18)
#define FG_MAX_INTER    (1u << 20)
#define FG_MAX_VOCAB    (1u << 23)
#define FG_MAX_LAYERS   1024u
#define FG_MAX_HEADS    4096u
#define FG_MAX_EXPERTS  4096u
#define FG_MAX_POS      (1u << 27)

/* ---- building blocks ----------------------------------------------------
 * Every block returns 0, or FG_E_NOMEM with err set when the graph cannot grow; a block
 * that makes one node also gives it in *out (out may be NULL), for the reader to adjust. */

/* FG_NORM_LN_NOPARAM: a LayerNorm without weight or bias (OlmoLayerNorm, OPT's
 * layer_norm_elementwise_affine false): a node for the activations, nothing stored. */
enum fg_norm_kind { FG_NORM_RMS = 0, FG_NORM_LN = 1, FG_NORM_LN_NOBIAS = 2, FG_NORM_LN_NOPARAM = 3 };

/* A table that is not a linear map (token / position / token-type embedding,
 * stored buffer, conv stem): rows x width scalars, output width. */
int fg__add_table(struct fg_model *m, enum fg_node_kind kind, const char *name,
                  uint64_t rows, uint64_t width, struct fg_node **out, struct fg_err *err);

/* FG_E_RANGE when a router's top_k exceeds its experts, naming both keys (tk, ek) as the
 * config class spells them; 0 otherwise. */
int fg__check_top_k(const struct fg_cfg *c, uint64_t top_k, const char *tk, uint64_t experts,
                    const char *ek, struct fg_err *err);

/* A node of one Linear(in, out) with the weight role `role` ("proj", "head"), bias or not:
 * outside the blocks when layer is -1, else a block node of that layer.  Its desc is the
 * weight's shape "in x out" for a FG_NODE_HEAD, the widths it maps "in -> out" for the
 * others (projections).  *node (may be NULL) gets the node.  FG_E_NOMEM. */
int fg__add_linear(struct fg_model *m, enum fg_node_kind kind, int32_t layer, const char *name,
                   const char *role, uint64_t in, uint64_t out, bool bias,
                   struct fg_node **node, struct fg_err *err);

/* The first-token pooler of the BERT family (BertPooler, NomicBertPooler, DeBERTa's
 * ContextPooler): dense hidden x hidden + bias, one node after the blocks; FG_E_NOMEM. */
int fg__add_pooler(struct fg_model *m, uint64_t hidden, struct fg_err *err);

/* Token embedding vocab x hidden. */
int fg__add_embedding(struct fg_model *m, uint64_t vocab, uint64_t hidden, struct fg_err *err);

/* Norm over width (weight, plus bias for FG_NORM_LN). */
int fg__add_norm(struct fg_model *m, int32_t layer, const char *name, uint64_t width,
                 enum fg_norm_kind kind, struct fg_err *err);

struct fg_attn_shape {
    uint64_t hidden, heads, kv_heads, head_dim;
    uint64_t v_head_dim;     /* value head width, 0 = head_dim (MiMo-V2-Flash: 128 beside 192) */
    uint64_t window;         /* sliding window tokens, 0 = full */
    bool qkv_bias, o_bias;
    bool fused_qkv;          /* one qkv projection (LoRA target "qkv") */
    uint8_t qk_norm;         /* 0 none, 1 per head_dim (Qwen3, Gemma3), 2 over all heads (OLMo2) */
    enum fg_norm_kind qk_norm_kind;
    bool bidirectional, cross;
};
int fg__add_attention(struct fg_model *m, int32_t layer, const struct fg_attn_shape *s,
                      struct fg_node **out, struct fg_err *err);

struct fg_mlp_shape {
    uint64_t hidden, inter;
    bool gated;              /* gate and up projections (SwiGLU / GeGLU) */
    bool bias;
    bool fused_gate_up;      /* one gate_up projection (Phi-3) */
};
int fg__add_mlp(struct fg_model *m, int32_t layer, const struct fg_mlp_shape *s,
                struct fg_node **out, struct fg_err *err);

/*
 * A uniform block as the steps it runs, each one node per layer (fg__add_blocks): a norm of
 * m->hidden (or width), an attention or an MLP of the shape given (plus the parameters extra
 * that the modelling class adds to that node, an inner norm, and the buffers it stores), or
 * a reader's own call.  kdim: an attention whose k / v projections read kdim-wide states (a
 * cross-attention to another width).  Steps are borrowed for the call.
 */
enum fg_step_kind { FG_STEP_NORM = 1, FG_STEP_ATTN, FG_STEP_MLP, FG_STEP_CALL };
struct fg_block_step {
    enum fg_step_kind kind;
    enum fg_norm_kind norm;                  /* FG_STEP_NORM */
    uint64_t width;                          /* FG_STEP_NORM: 0 for m->hidden */
    const struct fg_attn_shape *attn;        /* FG_STEP_ATTN */
    const struct fg_mlp_shape *mlp;          /* FG_STEP_MLP */
    uint64_t kdim, extra;                    /* FG_STEP_ATTN (kdim), ATTN and MLP (extra) */
    uint64_t buffers;                        /* ATTN and MLP: stored buffers (counted in
                                                params too: old causal masks) */
    int (*call)(struct fg_model *m, int32_t layer, const void *ctx, struct fg_err *err);
    const void *ctx;                         /* FG_STEP_CALL */
};

/* m->layers blocks of the n steps, the repeated ones folded (fg__model_repeat_block); the
 * first failing step's code. */
int fg__add_blocks(struct fg_model *m, const struct fg_block_step *steps, size_t n,
                   struct fg_err *err);

/* Blocks [0, n), block l built by fn(m, l, ctx, err) until fg__model_repeat_block can copy
 * the one before it over the rest (a block that reads nothing of its layer); fn's code.  A
 * reader whose blocks are not uniform steps writes its block as an fg_layer_fn. */
typedef int (*fg_layer_fn)(struct fg_model *m, int32_t layer, const void *ctx,
                           struct fg_err *err);
int fg__add_layers(struct fg_model *m, uint64_t n, fg_layer_fn fn, const void *ctx,
                   struct fg_err *err);
/* The same for blocks that read their layer: alike(ctx, a, b) says layer b's block equals
 * layer a's, and the runs of such blocks after one built are copies of it. */
typedef bool (*fg_layers_alike_fn)(const void *ctx, uint64_t a, uint64_t b);
int fg__add_layers_alike(struct fg_model *m, uint64_t n, fg_layer_fn fn, fg_layers_alike_fn alike,
                         const void *ctx, struct fg_err *err);

/*
 * Multi-head latent attention as DeepseekV3Attention builds it (transformers
 * models/deepseek_v3/modeling_deepseek_v3.py): q_a_proj hidden -> q_lora, q_a_layernorm,
 * q_b_proj q_lora -> heads x (nope + rope), or one q_proj without q_lora;
 * kv_a_proj_with_mqa hidden -> kv_lora + rope, kv_a_layernorm, kv_b_proj kv_lora ->
 * heads x (nope + v); o_proj heads x v -> hidden.  bias (attention_bias) on q_a, kv_a and
 * o.  transformers expands the latent to full per-head keys and values, so kv_heads =
 * heads.  desc "MLA <heads>h q<q_lora>/kv<kv_lora> x<nope + rope>".
 */
struct fg_mla_shape {
    uint64_t hidden, heads, q_lora, kv_lora, nope, rope, v;
    bool bias;
};
int fg__add_mla(struct fg_model *m, int32_t layer, const struct fg_mla_shape *s,
                struct fg_node **out, struct fg_err *err);

/*
 * A mixture-of-experts block (MixtralSparseMoeBlock and its kin): router Linear(hidden,
 * experts); experts of inter as gate / up / down (gate_up fused, or up / down alone when
 * not gated); the shared experts as one MLP of shared_inter, gated as the experts are;
 * Qwen2MoeSparseMoeBlock's shared_expert_gate Linear(hidden, 1); the router's
 * e_score_correction_bias (experts scalars, a stored buffer).  desc "E experts top-K, W
 * wide[, N shared]"; a caller with other words writes its own.
 */
struct fg_moe_shape {
    uint64_t hidden, experts, top_k, inter;
    uint64_t shared_inter;   /* 0 = no shared expert */
    uint32_t shared_n;       /* the node's shared count when shared_inter */
    bool gated, fused_gate_up;
    bool router_bias, expert_bias;
    bool shared_gate;        /* shexp_gate Linear(hidden, 1), with a shared expert */
    bool score_bias;         /* e_score_correction_bias */
    uint8_t lora_experts;    /* enum fg_lora_experts */
};
int fg__add_moe(struct fg_model *m, int32_t layer, const struct fg_moe_shape *s,
                struct fg_node **out, struct fg_err *err);

/*
 * LM head vocab x hidden.  tied: shares the embedding (stored 0 scalars)
 * unless stored_when_tied (the checkpoint still writes lm_head.weight).
 */
int fg__add_head(struct fg_model *m, uint64_t vocab, uint64_t hidden, bool tied,
                 bool stored_when_tied, bool bias, struct fg_err *err);

struct fg_mamba2_shape {
    uint64_t hidden, heads, head_dim, groups, state, kernel, chunk;
    bool conv_bias, proj_bias;
    bool no_norm;           /* FalconH1Mixer without mamba_rms_norm: no gated norm */
};
/* A Mamba-2 mixer (nemotron_h_lfm2_qwen3_next.c, NemotronHMamba2Mixer shapes); FG_E_NOMEM. */
int fg__add_mamba2(struct fg_model *m, int32_t layer, const struct fg_mamba2_shape *s,
                   struct fg_err *err);

/* Common sizes every decoder config carries (aliases across families). */
struct fg_core_defaults {
    uint64_t vocab, hidden, inter, layers, heads, max_pos;
    bool tie;
    uint64_t kv_heads, head_dim; /* the class defaults; 0: heads, hidden / heads */
};
int fg__read_core(const struct fg_cfg *c, struct fg_model *m, const struct fg_core_defaults *d,
                  struct fg_err *err);

/* The raw value of key in c's object, or NULL (absent, or a view without an object): for
 * what fg_cfg_* do not read, an explicit null or a value of several types.  Borrowed from
 * the config document, valid while it is. */
const struct cJSON *fg__cfg_item(const struct fg_cfg *c, const char *key);

/* The alias of keys the config uses (the first one when none is present),
 * so a message names the key the user will find in the file; written to buf. */
const char *fg__cfg_key_used(const struct fg_cfg *c, const char *keys, char *buf, size_t len);

/* FG_E_RANGE naming both keys (as the config spells them) when heads does
 * not divide hidden. */
int fg__check_heads(const struct fg_cfg *c, const char *hidden_key, uint64_t hidden,
                    const char *heads_key, uint64_t heads, struct fg_err *err);

/* transformers_version of the config as major * 1000 + minor ("4.31.0.dev0" -> 4031);
 * 0 when absent or unreadable.  Checkpoint-layout rules key on it. */
unsigned fg__cfg_tf_version(const struct fg_cfg *c);

/* True when the class name is one of the '|'-separated prefixes followed by suffix
 * ("Roberta|XLMRoberta" + "ForMaskedLM"). */
bool fg__class_is(const char *name, const char *prefixes, const char *suffix);

/* *out: whether the architectures list names cls (false when absent); the list's read
 * errors. */
int fg__cfg_has_arch(const struct fg_cfg *c, const char *cls, bool *out, struct fg_err *err);

/* *out: the architectures list names only base-model classes ("Qwen3Model", "LlamaModel":
 * no "For..." task class, no "...LMHeadModel"), which hold no LM head; false when the list
 * is absent or names a head class.  The list's read errors. */
int fg__cfg_headless(const struct fg_cfg *c, bool *out, struct fg_err *err);

/* num_labels of a classifier head: the key, else the size of id2label (PretrainedConfig),
 * else 2.  FG_E_RANGE when the key is out of bounds or id2label is empty, FG_E_TYPE when
 * id2label is not an object. */
int fg__read_num_labels(const struct fg_cfg *c, uint64_t *out, struct fg_err *err);

/* Per-layer sliding-window: fills window[layer] (0 = full attention) from
 * layer_types, or from sliding_window + a pattern.  pattern 0: every layer
 * slides when sliding_window is set (Mistral); pattern k: layers with
 * (i+1) % k != 0 slide (Gemma-3); pattern 2 with even_slides: even layers
 * slide (Gemma-2). */
int fg__read_windows(const struct fg_cfg *c, uint64_t layers, uint64_t *window, uint64_t pattern,
                     bool honour_use_sliding_window, struct fg_err *err);

/* Which layers attend over the whole sequence (Gemma 3n, Gemma 4): full[l] from layer_types
 * ("full_attention" / "sliding_attention", one a layer), else true where (l + 1) % period
 * == 0.  FG_E_RANGE naming the key for a list of another length or another kind. */
int fg__read_full_layers(const struct fg_cfg *c, uint64_t layers, uint64_t period, bool *full,
                         struct fg_err *err);

#endif
