/*
 * llava.c - vision-language wrappers built like LLaVA (multimodal.c's reader: a text
 * model read by its own registered reader, a ViT tower, a projector): each family is a row
 * naming its tower and its projector (llava_proj.c).  The GLM-V family, whose tower is of
 * its own kind, is glm4v.c.
 */
#include "arch/vision/llava.h"

/* Idefics2VisionTransformer (models/idefics2/modeling_idefics2.py, commit 00dcc6dd): the
 * SigLIP layout (Conv2d stem with bias, a learned table of (image_size / patch_size)^2 rows,
 * LayerNorms and linears with bias, post_layernorm) without a pooling head.
 * Idefics2VisionConfig defaults. */
static const struct vit_spec idefics2_vit = {
    .name = "Idefics2 SigLIP ViT",
    .hidden = {"hidden_size", 768}, .layers = {"num_hidden_layers", 12},
    .heads = {"num_attention_heads", 12}, .inter = {"intermediate_size", 3072},
    .channels = {"num_channels", 3}, .patch = {"patch_size", 32}, .image = {"image_size", 224},
    .pos = VIT_POS_PATCHES, .patch_bias = true, .post_norm = true};

/* LlavaNextVideoForConditionalGeneration: LLaVA-NeXT (the tower vision_config.model_type
 * names, CLIP by default; image_newline) with its video pooler. */
static const struct mm_spec llava_next_video = {
    .text_type = "llama", .vit = &fg__mm_clip_vit, .vit_by_type = true, .image_newline = true,
    .proj_fn = fg__vl_proj_llava_next_video};

/* VipLlavaForConditionalGeneration (models/vipllava): LLaVA's tower and text model, the
 * multi-layer projector. */
static const struct mm_spec vipllava = {
    .text_type = "llama", .vit = &fg__mm_clip_vit, .vit_by_type = true,
    .proj_fn = fg__vl_proj_vipllava};

/* Lfm2VlForConditionalGeneration (models/lfm2_vl): an LFM2 text model (nemotron_h_lfm2_qwen3_next.c), the
 * SigLIP-2 NaFlex tower and the pixel-unshuffle projector; lm_head tied to the embedding by
 * tie_word_embeddings (Lfm2VlConfig default true, read through the text model). */
static const struct mm_spec lfm2_vl = {
    .text_type = "lfm2", .vit = &fg__mm_siglip2_vit, .vit_by_type = true,
    .proj_fn = fg__vl_proj_lfm2_vl};

/* Cohere2VisionForConditionalGeneration (models/cohere2_vision, Command-A-Vision): a Cohere-2
 * text model, the SigLIP tower and the SwiGLU projector. */
static const struct mm_spec cohere2_vision = {
    .text_type = "cohere2", .vit = &fg__mm_siglip_vit, .vit_by_type = true,
    .proj_fn = fg__vl_proj_cohere2_vision};

/* Idefics2ForConditionalGeneration: a Mistral text model (Idefics2Config's default), the
 * Idefics2 tower and the perceiver connector. */
static const struct mm_spec idefics2 = {
    .text_type = "mistral", .vit = &idefics2_vit, .proj_fn = fg__vl_proj_idefics2};

/* VideoLlama3VisionModel (models/video_llama_3/modular_video_llama_3.py, commit 0117d5f7): the
 * SigLIP blocks over a biased Conv2d stem, 2D rotary positions (nothing stored), post_layernorm,
 * no pooling head.  VideoLlama3VisionConfig is SiglipVisionConfig's defaults. */
static const struct vit_spec video_llama_3_vit = {
    .name = "VideoLLaMA3 SigLIP ViT",
    .hidden = {"hidden_size", 768}, .layers = {"num_hidden_layers", 12},
    .heads = {"num_attention_heads", 12}, .inter = {"intermediate_size", 3072},
    .channels = {"num_channels", 3}, .patch = {"patch_size", 16},
    .pos = VIT_POS_NONE, .patch_bias = true, .post_norm = true};

/* VideoLlama3ForConditionalGeneration: the text model text_config names (qwen2 by default),
 * the tower above and the readout MLP. */
static const struct mm_spec video_llama_3 = {
    .text_type = "qwen2", .vit = &video_llama_3_vit, .proj_fn = fg__vl_proj_mlp2};

const struct fg_arch fg__arch_vl_table[] = {
#include "arch/vision/llava.def"
    {0},
};
