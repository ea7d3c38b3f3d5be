/*
 * moe_rows.c - the mixture-of-experts families as rows of struct moe_spec
 * (moe_mla.h), read by moe_mla.c's one reader.  Each row names the transformers class
 * (or remote-code file) its shapes were read from and the config class defaults.
 */
#include "arch/moe/moe_mla.h"

/* MixtralForCausalLM (models/mixtral/modeling_mixtral.py): MixtralSparseMoeBlock with
 * gate Linear(hidden, num_local_experts) and w1/w3/w2 experts of intermediate_size;
 * sliding_window on every layer when set.  MixtralConfig defaults. */
static const struct moe_spec mixtral = {
    .d = {.vocab = 32000, .hidden = 4096, .inter = 14336, .layers = 32, .heads = 32,
          .max_pos = 4096 * 32, .tie = false},
    .kv_heads_def = 8,
    .experts_key = "num_local_experts", .experts_def = 8,
    .topk_key = "num_experts_per_tok", .topk_def = 2,
    .peft = FG_LORA_EXPERTS_MERGED,
    .place = PLACE_ALL, .attn = ATTN_GQA, .windows = true};

/* Qwen2MoeForCausalLM (models/qwen2_moe/modular_qwen2_moe.py): q/k/v biases by
 * qkv_bias, shared expert of shared_expert_intermediate_size behind a sigmoid
 * shared_expert_gate, dense layers by mlp_only_layers / decoder_sparse_step.
 * Qwen2MoeConfig defaults.  peft 0.21 on transformers 5.17 adapted q/k/v/o, the shared
 * expert and its gate, but neither the routed experts nor the router (Qwen1.5-MoE-A2.7B cut
 * to 4 layers on H200: 2,654,272 trainable), though transformers lists qwen2_moe among
 * the types it converts. */
static const struct moe_spec qwen2_moe = {
    .d = {.vocab = 151936, .hidden = 2048, .inter = 5632, .layers = 24, .heads = 16,
          .max_pos = 32768, .tie = false},
    .experts_key = "num_experts", .experts_def = 60,
    .topk_key = "num_experts_per_tok", .topk_def = 4,
    .moe_inter_key = "moe_intermediate_size", .moe_inter_def = 1408,
    .peft = FG_LORA_EXPERTS_NONE,
    .place = PLACE_SPARSE_STEP, .shared = SHARED_QWEN, .shared_def = 5632,
    .attn = ATTN_GQA, .qkv_bias_key = "qkv_bias", .qkv_bias_def = true,
    .windows = true, .honour_use_sliding_window = true, .max_window_layers = true};

/* Qwen3MoeForCausalLM (models/qwen3_moe/modular_qwen3_moe.py): Qwen3 attention
 * (q_norm/k_norm over head_dim, attention_bias), Qwen2Moe placement, no shared
 * expert.  Qwen3MoeConfig defaults. */
static const struct moe_spec qwen3_moe = {
    .d = {.vocab = 151936, .hidden = 2048, .inter = 6144, .layers = 24, .heads = 32,
          .max_pos = 32768, .tie = false},
    .kv_heads_def = 4,
    .experts_key = "num_experts", .experts_def = 128,
    .topk_key = "num_experts_per_tok", .topk_def = 8,
    .moe_inter_key = "moe_intermediate_size", .moe_inter_def = 768,
    .peft = FG_LORA_EXPERTS_MERGED,
    .place = PLACE_SPARSE_STEP, .attn = ATTN_GQA,
    .attn_bias_key = "attention_bias", .qk_norm = 1, .windows = true,
    .honour_use_sliding_window = true, .max_window_layers = true};

/* Qwen3VLMoeTextModel (models/qwen3_vl_moe): Qwen3-MoE blocks with M-RoPE, no new tensors;
 * qwen3_vl_moe maps to qwen2_moe in transformers' conversion table as qwen3_moe does.
 * Qwen3VLMoeTextConfig defaults. */
static const struct moe_spec qwen3_vl_moe_text = {
    .d = {.vocab = 151936, .hidden = 2048, .inter = 5632, .layers = 24, .heads = 16,
          .max_pos = 128000, .tie = false},
    .kv_heads_def = 16,
    .experts_key = "num_experts", .experts_def = 60,
    .topk_key = "num_experts_per_tok", .topk_def = 4,
    .moe_inter_key = "moe_intermediate_size", .moe_inter_def = 1408,
    .peft = FG_LORA_EXPERTS_MERGED,
    .place = PLACE_SPARSE_STEP, .attn = ATTN_GQA,
    .attn_bias_key = "attention_bias", .qk_norm = 1};

/* GraniteMoeForCausalLM (models/granitemoe/modeling_granitemoe.py): GraniteMoeMoE
 * with router Linear(hidden, experts, bias=False), ParallelExperts input_linear
 * hidden -> 2 x intermediate_size (fused gate/up) and output_linear back.
 * GraniteMoeConfig defaults. */
static const struct moe_spec granitemoe = {
    .d = {.vocab = 32000, .hidden = 4096, .inter = 11008, .layers = 32, .heads = 32,
          .max_pos = 2048, .tie = true},
    .experts_key = "num_local_experts", .experts_def = 8,
    .topk_key = "num_experts_per_tok", .topk_def = 2,
    .peft = FG_LORA_EXPERTS_NONE,
    .place = PLACE_ALL, .fused_gate_up = true, .attn = ATTN_GQA,
    .attn_bias_key = "attention_bias"};

/* MiniMaxM2ForCausalLM (models/minimax_m2/modular_minimax_m2.py): Mixtral experts of
 * intermediate_size, sigmoid router with an e_score_correction_bias buffer,
 * FlexOlmo attention (q_norm/k_norm over all heads), no sliding window.  The
 * published checkpoint carries no MTP weights despite use_mtp (its count,
 * 228,703,644,928, is the graph plus FP8 scales).  MiniMaxM2Config defaults. */
static const struct moe_spec minimax_m2 = {
    .d = {.vocab = 200064, .hidden = 3072, .inter = 1536, .layers = 62, .heads = 48,
          .max_pos = 196608, .tie = false},
    .kv_heads_def = 8, .head_dim_def = 128,
    .experts_key = "num_local_experts", .experts_def = 256,
    .topk_key = "num_experts_per_tok", .topk_def = 8,
    .peft = FG_LORA_EXPERTS_MERGED,
    .place = PLACE_ALL, .score_bias = SCORE_BIAS_KEY, .attn = ATTN_GQA,
    .qk_norm = 2, .qk_norm_key = "use_qk_norm", .qk_norm_def = true,
    .mtp_unstored_key = "num_mtp_modules"};

/* GptOssForCausalLM (models/gpt_oss/modular_gpt_oss.py): q/k/v/o biases
 * (attention_bias), per-head sinks, sliding window by layer_types; GptOssMLP
 * with router Linear(hidden, experts, bias=True) and GptOssExperts
 * gate_up_proj (E, hidden, 2 x intermediate) + bias, down_proj + bias.
 * GptOssConfig defaults. */
static const struct moe_spec gpt_oss = {
    .d = {.vocab = 201088, .hidden = 2880, .inter = 2880, .layers = 36, .heads = 64,
          .max_pos = 131072, .tie = false},
    .kv_heads_def = 8, .head_dim_def = 64,
    .experts_key = "num_local_experts", .experts_def = 128,
    .topk_key = "num_experts_per_tok|experts_per_token", .topk_def = 4,
    .peft = FG_LORA_EXPERTS_NONE,
    .place = PLACE_ALL, .fused_gate_up = true, .expert_bias = true, .router_bias = true,
    .attn = ATTN_GQA, .attn_bias_key = "attention_bias", .attn_bias_def = true,
    .sinks = SINKS_ALL, .windows = true};

/* DeepseekForCausalLM (remote code modeling_deepseek.py of deepseek-moe-16b):
 * llama attention; DeepseekMoE with MoEGate weight (n_routed_experts, hidden),
 * experts of moe_intermediate_size, shared_experts one MLP of
 * n_shared_experts x moe_intermediate_size; first_k_dense_replace dense layers.
 * DeepseekConfig defaults (n_routed_experts None: dense). */
static const struct moe_spec deepseek = {
    .d = {.vocab = 102400, .hidden = 4096, .inter = 11008, .layers = 30, .heads = 32,
          .max_pos = 2048, .tie = false},
    .experts_key = "n_routed_experts", .experts_def = 0,
    .topk_key = "num_experts_per_tok", .topk_def = 0,
    .moe_inter_key = "moe_intermediate_size", .moe_inter_def = 1407,
    .place = PLACE_FIRST_K, .shared = SHARED_DEEPSEEK, .shared_def = 0,
    .attn = ATTN_GQA, .attn_bias_key = "attention_bias"};

/* DeepseekV2ForCausalLM (models/deepseek_v2, remote code modeling_deepseek.py):
 * MLA attention, DeepSeek MoE placement and shared experts, greedy routing
 * (no score bias).  DeepseekV2Config defaults, but for q_lora_rank: the class
 * says 1536, yet configs saved by transformers always write the key, and the
 * ones that lack it are transcriptions that dropped a null (mlc-llm's
 * deepseek_v2_lite preset); absent is read as null, with a note, which gives
 * V2-Lite's published 15,706,484,224 (1536 would add 42,508,800). */
static const struct moe_spec deepseek_v2 = {
    .d = {.vocab = 32000, .hidden = 4096, .inter = 11008, .layers = 32, .heads = 32,
          .max_pos = 2048, .tie = false},
    .experts_key = "n_routed_experts", .experts_def = 64,
    .topk_key = "num_experts_per_tok", .topk_def = 0,
    .moe_inter_key = "moe_intermediate_size", .moe_inter_def = 1407,
    .peft = FG_LORA_EXPERTS_MERGED,
    .place = PLACE_FIRST_K, .shared = SHARED_DEEPSEEK, .shared_def = 2,
    .score_bias = SCORE_BIAS_NOAUX, .topk_method_def = "greedy",
    .attn = ATTN_MLA, .attn_bias_key = "attention_bias",
    .mla = {.q_lora = 0, .kv_lora = 512, .nope = 128, .rope = 64, .v = 128}};

/* DeepseekV3Config defaults (models/deepseek_v3/configuration_deepseek_v3.py) and the
 * DeepseekV3ForCausalLM blocks (models/deepseek_v3/modeling_deepseek_v3.py): V2 blocks,
 * router with e_score_correction_bias (noaux_tc), MTP layers stored in the checkpoint.
 * The rows below add what differs. */
#define DEEPSEEK_V3(...)                                                                   \
    {.d = {.vocab = 129280, .hidden = 7168, .inter = 18432, .layers = 61, .heads = 128,   \
           .max_pos = 4096, .tie = false},                                                \
     .experts_key = "n_routed_experts", .experts_def = 256,                               \
     .topk_key = "num_experts_per_tok", .topk_def = 8,                                    \
     .moe_inter_key = "moe_intermediate_size", .moe_inter_def = 2048,                     \
     .place = PLACE_FIRST_K, .shared = SHARED_DEEPSEEK, .shared_def = 1,                   \
     .score_bias = SCORE_BIAS_NOAUX, .topk_method_def = "noaux_tc",                        \
     .attn = ATTN_MLA, .attn_bias_key = "attention_bias", .mtp = true,                     \
     .mla = {.q_lora = 1536, .kv_lora = 512, .nope = 128, .rope = 64, .v = 128},           \
     __VA_ARGS__}

static const struct moe_spec deepseek_v3 = DEEPSEEK_V3(.peft = FG_LORA_EXPERTS_MERGED);

/* Kimi-K2 (model_type kimi_k2) ships DeepseekV3ForCausalLM as remote code: its experts stay a
 * list of nn.Linear, which peft adapts one by one, with no merged copy. */
static const struct moe_spec kimi_k2 = DEEPSEEK_V3(.peft = FG_LORA_EXPERTS_LINEAR);

/* DeepseekV32ForCausalLM (models/deepseek_v32): DeepSeek-V3 plus the sparse
 * attention (DSA) lightning indexer in every attention block, MTP included. */
static const struct moe_spec deepseek_v32 = DEEPSEEK_V3(.dsa_indexer = true);

/* GlmMoeDsaForCausalLM (models/glm_moe_dsa, GLM-5 / 5.1 / 5.2): DeepSeek-V3.2's blocks (MLA,
 * the DSA indexer, noaux routing, first_k_dense_replace), indexer_types marking the layers
 * that share an indexer, and an MTP layer that - unlike DeepSeek-V3's and GLM-4.5's - holds
 * no embed_tokens or shared_head.head of its own: GLM-5.1 publishes 753,864,139,008, the
 * graph and MTP block without them (with them: 755,767,304,448).  Defaults are
 * DeepseekV3Config's; the published configs write every key read. */
static const struct moe_spec glm_moe_dsa = DEEPSEEK_V3(.dsa_indexer = true,
                                                       .mtp_no_copies = true,
                                                       .peft = FG_LORA_EXPERTS_NONE);

/* Mistral4ForCausalLM (models/mistral4/modeling_mistral4.py @decba1d2ea, the text model of
 * Mistral-Small-4's Mistral3ForConditionalGeneration): DeepSeek-V3's MLA attention
 * (Mistral4Attention), first_k_dense_replace dense Mistral4MLP layers, Mistral4MoE of fused
 * Mistral4Experts plus one shared Mistral4MLP of n_shared_experts x moe_intermediate_size,
 * and a Mistral4TopkRouter that is a weight only: no e_score_correction_bias, whatever the
 * routing keys say.  No MTP modules.  Mistral4Config defaults.  Its model type is not in
 * transformers' conversion_mapping.py _MODEL_TO_CONVERSION_PATTERN (nor is the mistral3
 * wrapper mapped to qwen2_moe), which peft@5d602fdbf utils/transformers_weight_conversion.py
 * _convert_peft_config_moe reads: no LoRA target name reaches the fused experts. */
static const struct moe_spec mistral4 = {
    .d = {.vocab = 131072, .hidden = 4096, .inter = 12288, .layers = 36, .heads = 32,
          .max_pos = 1048576, .tie = false},
    .experts_key = "n_routed_experts", .experts_def = 128,
    .topk_key = "num_experts_per_tok", .topk_def = 4,
    .moe_inter_key = "moe_intermediate_size", .moe_inter_def = 2048,
    .peft = FG_LORA_EXPERTS_NONE,
    .place = PLACE_FIRST_K, .shared = SHARED_DEEPSEEK, .shared_def = 1,
    .score_bias = SCORE_BIAS_NONE,
    .attn = ATTN_MLA, .attn_bias_key = "attention_bias",
    .mla = {.q_lora = 1024, .kv_lora = 256, .nope = 64, .rope = 64, .v = 128}};

/* The rows below that peft reaches (FG_LORA_EXPERTS_MERGED) are the ones transformers'
 * conversion_mapping.py _MODEL_TO_CONVERSION_PATTERN maps to qwen2_moe (olmoe, glm4_moe,
 * ernie4_5_moe), as the qwen3_moe row.
 *
 * OlmoeForCausalLM (models/olmoe/modular_olmoe.py): OlmoeAttention with q_norm over
 * heads x head_dim and k_norm over kv_heads x head_dim (always built), attention_bias;
 * OlmoeSparseMoeBlock gate Linear(hidden, num_experts) and experts of intermediate_size,
 * every layer, no shared expert.  OlmoeConfig defaults. */
static const struct moe_spec olmoe = {
    .d = {.vocab = 50304, .hidden = 2048, .inter = 2048, .layers = 16, .heads = 16,
          .max_pos = 4096, .tie = false},
    .experts_key = "num_experts", .experts_def = 64,
    .topk_key = "num_experts_per_tok", .topk_def = 8,
    .peft = FG_LORA_EXPERTS_MERGED,
    .place = PLACE_ALL, .attn = ATTN_GQA, .attn_bias_key = "attention_bias", .qk_norm = 2};

/* PhimoeForCausalLM (models/phimoe/modular_phimoe.py, Phi-3.5-MoE): LayerNorm with bias
 * (input_layernorm, post_attention_layernorm, norm), q/k/v/o biased by attention_bias,
 * Mixtral experts of intermediate_size behind a bias-free router, lm_head biased by
 * lm_head_bias, sliding window when set.  PhimoeConfig defaults. */
static const struct moe_spec phimoe = {
    .d = {.vocab = 32064, .hidden = 4096, .inter = 6400, .layers = 32, .heads = 32,
          .max_pos = 4096 * 32, .tie = false},
    .kv_heads_def = 8,
    .experts_key = "num_local_experts", .experts_def = 16,
    .topk_key = "num_experts_per_tok", .topk_def = 2,
    /* phimoe is not in transformers' _MODEL_TO_CONVERSION_PATTERN: peft maps no target
     * name onto its fused experts */
    .peft = FG_LORA_EXPERTS_NONE, .norm = FG_NORM_LN, .head_bias_key = "lm_head_bias",
    .place = PLACE_ALL, .attn = ATTN_GQA, .attn_bias_key = "attention_bias", .windows = true};

/* GraniteMoeSharedForCausalLM (models/granitemoeshared/modular_granitemoeshared.py):
 * GraniteMoe blocks plus GraniteMoeSharedMLP, input_linear hidden -> 2 x
 * shared_intermediate_size and output_linear back, when that size is not 0.
 * GraniteMoeSharedConfig defaults. */
static const struct moe_spec granitemoeshared = {
    .d = {.vocab = 32000, .hidden = 4096, .inter = 11008, .layers = 32, .heads = 32,
          .max_pos = 2048, .tie = true},
    .experts_key = "num_local_experts", .experts_def = 8,
    .topk_key = "num_experts_per_tok", .topk_def = 2,
    .peft = FG_LORA_EXPERTS_NONE,
    .place = PLACE_ALL, .shared = SHARED_GRANITE, .fused_gate_up = true, .attn = ATTN_GQA,
    .attn_bias_key = "attention_bias"};

/* Glm4MoeForCausalLM (models/glm4_moe/modular_glm4_moe.py, GLM-4.5 / 4.6 / 4.7):
 * Glm4MoeAttention q/k/v biased by attention_bias (o_proj never), q_norm / k_norm over
 * head_dim when use_qk_norm; DeepSeek-V3 MoE placement (first_k_dense_replace), shared
 * experts of n_shared_experts x moe_intermediate_size, Glm4MoeTopkRouter with its
 * e_score_correction_bias buffer always; the checkpoint stores num_nextn_predict_layers
 * MTP layers laid out as DeepSeek-V3's.  Glm4MoeConfig defaults.  GLM-4.5-Air's shapes
 * give 110,468,824,832 with its MTP layer, its published total (tests/test_arch_moe.c). */
static const struct moe_spec glm4_moe = {
    .d = {.vocab = 151552, .hidden = 4096, .inter = 10944, .layers = 46, .heads = 96,
          .max_pos = 131072, .tie = false},
    .kv_heads_def = 8, .head_dim_def = 128,
    .experts_key = "n_routed_experts", .experts_def = 128,
    .topk_key = "num_experts_per_tok", .topk_def = 8,
    .moe_inter_key = "moe_intermediate_size", .moe_inter_def = 1408,
    .peft = FG_LORA_EXPERTS_MERGED,
    .place = PLACE_FIRST_K, .shared = SHARED_DEEPSEEK, .shared_def = 1,
    .score_bias = SCORE_BIAS_ALWAYS, .attn = ATTN_GQA, .qkv_bias_key = "attention_bias",
    .qk_norm = 1, .qk_norm_key = "use_qk_norm", .mtp = true};

/* MiMoV2FlashForCausalLM (models/mimo_v2_flash/modular_mimo_v2_flash.py at decba1d2ea,
 * MiMo-V2-Flash): Glm4Moe blocks without shared experts or q/k norms.  MiMoV2FlashAttention:
 * q_proj / k_proj of head_dim, v_proj and o_proj of v_head_dim, biases by attention_bias on
 * q/k/v only; sliding layers (layer_types, or the Hub's hybrid_layer_pattern) hold twice the
 * key/value heads and one sink per head.  Layer 0 a dense MLP of intermediate_size, the rest
 * MiMoV2FlashMoE (mlp_layer_types, or the Hub's moe_layer_freq list): MiMoV2FlashTopkRouter
 * weight (experts, hidden) with its e_score_correction_bias buffer, MiMoV2FlashExperts
 * gate_up_proj / down_proj of moe_intermediate_size.  The Hub's swa_* and *_sink_bias keys
 * are what convert_mimo_v2_flash_weights_to_hf.py drops as hardcoded: read, and a value
 * other than the class's makes the count unsure.  The checkpoint's model.mtp.* layers
 * (_keys_to_ignore_on_load_unexpected) have no size in config.json.  Its conversion copies
 * qwen2_moe's (conversion_mapping.py), but _MODEL_TO_CONVERSION_PATTERN does not list the
 * type, and peft (huggingface/peft@5d602fdb utils/transformers_weight_conversion.py
 * _convert_peft_config_moe) maps target names onto fused experts only for the types listed
 * there: no target name reaches them.  MiMoV2FlashConfig defaults. */
static const struct moe_fixed mimo_v2_flash_fixed[] = {
    {"swa_num_attention_heads", FIXED_HEADS},
    {"swa_num_key_value_heads", FIXED_SWA_KV},
    {"swa_head_dim|swa_qk_head_dim", FIXED_HEAD_DIM},
    {"swa_v_head_dim", FIXED_V_HEAD_DIM},
    {"add_swa_attention_sink_bias", FIXED_TRUE},
    {"add_full_attention_sink_bias", FIXED_FALSE},
    {NULL, 0},
};
static const struct moe_spec mimo_v2_flash = {
    .d = {.vocab = 152576, .hidden = 4096, .inter = 16384, .layers = 48, .heads = 64,
          .max_pos = 131072, .tie = false},
    .kv_heads_def = 4, .head_dim_def = 192,
    .experts_key = "n_routed_experts", .experts_def = 256,
    .topk_key = "num_experts_per_tok", .topk_def = 8,
    .moe_inter_key = "moe_intermediate_size", .moe_inter_def = 2048,
    .peft = FG_LORA_EXPERTS_NONE,
    .place = PLACE_TYPES, .fused_gate_up = true, .score_bias = SCORE_BIAS_ALWAYS,
    .attn = ATTN_GQA, .qkv_bias_key = "attention_bias",
    .sinks = SINKS_SLIDING, .hybrid_pattern = true, .swa_kv_mult = 2,
    .v_head_dim_key = "v_head_dim", .v_head_dim_def = 128, .fixed = mimo_v2_flash_fixed,
    .mtp_unsized = true};

/* Ernie4_5_MoeForCausalLM (models/ernie4_5_moe/modular_ernie4_5_moe.py): q/k/v/o biased by
 * use_bias, MoE layers from moe_layer_start_index every moe_layer_interval, shared experts of
 * moe_num_shared_experts x moe_intermediate_size, and Ernie4_5_MoeStatics'
 * e_score_correction_bias (1 x moe_num_experts, requires_grad False) in every MoE layer:
 * 27 x 64 = 1,728 scalars on ERNIE-4.5-21B-A3B.  Ernie4_5_MoeConfig defaults. */
static const struct moe_spec ernie4_5_moe = {
    .d = {.vocab = 103424, .hidden = 2560, .inter = 12288, .layers = 28, .heads = 20,
          .max_pos = 131072, .tie = true},
    .kv_heads_def = 4,
    .experts_key = "moe_num_experts", .experts_def = 64,
    .topk_key = "moe_k", .topk_def = 6,
    .moe_inter_key = "moe_intermediate_size", .moe_inter_def = 1536,
    .peft = FG_LORA_EXPERTS_MERGED,
    .place = PLACE_ERNIE, .shared = SHARED_DEEPSEEK, .shared_def = 2,
    .shared_key = "moe_num_shared_experts", .score_bias = SCORE_BIAS_ALWAYS,
    .attn = ATTN_GQA, .attn_bias_key = "use_bias"};

/* Dots1ForCausalLM (models/dots1/modular_dots1.py @008e5743, dots.llm1): Qwen3Attention
 * (q_norm / k_norm over head_dim, attention_bias) over DeepseekV3's MoE: first_k_dense_replace
 * dense layers, DeepseekV3TopkRouter with its e_score_correction_bias buffer always, shared
 * experts of n_shared_experts x moe_intermediate_size; sliding windows from
 * max_window_layers on.  dots1 maps to qwen2_moe in transformers' conversion table.
 * Dots1Config defaults (32 key/value heads; n_routed_experts None: dense). */
static const struct moe_spec dots1 = {
    .d = {.vocab = 152064, .hidden = 4608, .inter = 10944, .layers = 62, .heads = 32,
          .max_pos = 2048, .tie = false},
    .kv_heads_def = 32,
    .experts_key = "n_routed_experts", .experts_def = 0,
    .topk_key = "num_experts_per_tok", .topk_def = 0,
    .moe_inter_key = "moe_intermediate_size", .moe_inter_def = 1408,
    .peft = FG_LORA_EXPERTS_MERGED,
    .place = PLACE_FIRST_K, .shared = SHARED_DEEPSEEK, .shared_def = 0,
    .score_bias = SCORE_BIAS_ALWAYS, .attn = ATTN_GQA, .attn_bias_key = "attention_bias",
    .qk_norm = 1, .windows = true, .max_window_layers = true};

/* FlexOlmoForCausalLM (models/flex_olmo/modular_flex_olmo.py @008e5743, FlexOlmo-7x7B):
 * Olmo2Attention (q_norm over heads x head_dim, k_norm over kv_heads x head_dim,
 * attention_bias) and OlmoE's MoE (router Linear(hidden, num_experts), experts of
 * intermediate_size, every layer), with post_attention / post_feedforward norms in place of
 * the input norm: two per block.  flex_olmo maps to qwen2_moe in transformers' conversion
 * table.  FlexOlmoConfig defaults (7 experts, top-5). */
static const struct moe_spec flex_olmo = {
    .d = {.vocab = 100352, .hidden = 4096, .inter = 11008, .layers = 32, .heads = 32,
          .max_pos = 4096, .tie = false},
    .experts_key = "num_experts|num_local_experts", .experts_def = 7,
    .topk_key = "num_experts_per_tok", .topk_def = 5,
    .peft = FG_LORA_EXPERTS_MERGED,
    .place = PLACE_ALL, .attn = ATTN_GQA, .attn_bias_key = "attention_bias", .qk_norm = 2};

/* HYV3ForCausalLM (models/hy_v3/modeling_hy_v3.py @decba1d2ea, Hy3): HYV3Attention q/k/v/o
 * biased by attention_bias, q_norm / k_norm over head_dim always; layer 0 an HYV3MLP of
 * intermediate_size and the rest HYV3MoE (mlp_layer_types; HYV3Config never reads the Hub's
 * first_k_dense_replace): HYV3TopKRouter weight (num_experts, hidden), the
 * e_score_correction_bias buffer, HYV3Experts gate_up_proj / down_proj of
 * moe_intermediate_size, one shared HYV3MLP of num_shared_experts x moe_intermediate_size.
 * The checkpoint stores num_nextn_predict_layers MTP layers (model.layers.80, in
 * _keys_to_ignore_on_load_unexpected) with no embed_tokens / head of their own: Hy3's
 * index gives 298,786,155,776 with its one MTP layer.  The Hub keys the class replaces by its
 * own (first_k_dense_replace, expert_hidden_dim, qk_norm, moe_router_enable_expert_bias) are
 * read, and a value other than the class's makes the count unsure.  hy_v3 is not in
 * conversion_mapping.py _MODEL_TO_CONVERSION_PATTERN: no peft target name reaches the fused
 * experts.  HYV3Config defaults. */
static const struct moe_fixed hy_v3_fixed[] = {
    {"first_k_dense_replace", FIXED_FIRST_DENSE},
    {"expert_hidden_dim", FIXED_MOE_INTER},
    {"qk_norm", FIXED_TRUE},
    {"moe_router_enable_expert_bias", FIXED_TRUE},
    {NULL, 0},
};
static const struct moe_spec hy_v3 = {
    .d = {.vocab = 120832, .hidden = 4096, .inter = 13312, .layers = 80, .heads = 64,
          .max_pos = 131072, .tie = false},
    .kv_heads_def = 8, .head_dim_def = 128,
    .experts_key = "num_experts|num_local_experts", .experts_def = 192,
    .topk_key = "num_experts_per_tok", .topk_def = 8,
    .moe_inter_key = "moe_intermediate_size", .moe_inter_def = 1536,
    .peft = FG_LORA_EXPERTS_NONE,
    .place = PLACE_TYPES, .shared = SHARED_DEEPSEEK, .shared_def = 1,
    .shared_key = "num_shared_experts", .fused_gate_up = true,
    .score_bias = SCORE_BIAS_ALWAYS, .attn = ATTN_GQA, .attn_bias_key = "attention_bias",
    .qk_norm = 1, .fixed = hy_v3_fixed, .mtp = true, .mtp_no_copies = true};

const struct fg_arch fg__arch_moe_table[] = {
#include "arch/moe/moe_rows.def"
    {0},
};
