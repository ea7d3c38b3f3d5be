/*
 * multimodal.h - internal to the vision-language wrapper (multimodal.c) and its
 * projectors (multimodal_proj.c): the tower's dimensions as read and the projector
 * table, one builder per transformers projector class.  Views are borrowed from the config.
 */
#ifndef FG_ARCH_MULTIMODAL_H
#define FG_ARCH_MULTIMODAL_H

#include "arch/arch.h"

enum proj_kind { PROJ_LLAVA, PROJ_GEMMA3, PROJ_QWEN2_VL, PROJ_LLAMA4, PROJ_KIMI, PROJ_QWEN3_VL,
                 PROJ_MISTRAL3, PROJ_PALIGEMMA, PROJ_IDEFICS3, PROJ_QWEN2_5_VL, PROJ_AYA_VISION,
                 PROJ_INTERNVL, PROJ_PADDLEOCR, PROJ_LIGHTON_OCR, PROJ_COUNT };

/* The vision tower's sizes as add_vit read them. */
struct vit_dims {
    uint64_t hidden, layers, heads, kv_heads, inter, channels, patch, image, temporal;
};

/* A projector builder: adds the projector node(s) after the tower for the text model m
 * (c the wrapper's config, v its vision_config, d the tower); 0 or an FG_E_* code. */
typedef int (*fg__mm_proj_fn)(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                              const struct vit_dims *d, struct fg_err *err);
extern const fg__mm_proj_fn fg__mm_projectors[PROJ_COUNT];

/* A config key with its class default; def 0 means the key is required. */
struct mm_key {
    const char *keys;
    uint64_t def;
};

enum vit_pos {
    VIT_POS_NONE,     /* rotary only, nothing stored (Qwen2-VL) */
    VIT_POS_PATCHES,  /* learned table, one row per patch (+ class token) */
    VIT_POS_GRID,     /* learned pos_h x pos_w grid, interpolated (MoonViT) */
    VIT_POS_TABLE,    /* learned table of pos_rows rows, interpolated (Qwen3-VL) */
};

/*
 * A ViT-style tower.  Every tower here has blocks of: two LayerNorms with
 * bias, q/k/v/o with bias (fused qkv in some), and a two-layer MLP with
 * bias; they differ in the stem and what surrounds the blocks.
 */
struct vit_spec {
    const char *name;                   /* shown in the node's description */
    struct mm_key hidden, layers, heads, inter, channels, patch, image;
    struct mm_key kv_heads;             /* grouped k/v heads (EXAONE-4.5); keys NULL = heads */
    struct mm_key temporal;             /* Conv3d time taps (Qwen2-VL); keys NULL = 2D stem */
    const char *mlp_ratio_key;          /* MLP width = hidden x ratio (Qwen2-VL), or NULL */
    double mlp_ratio_def;
    enum vit_pos pos;
    struct mm_key pos_h, pos_w;         /* VIT_POS_GRID */
    struct mm_key pos_rows;             /* VIT_POS_TABLE */
    bool class_token;                   /* learned class embedding (+1 position) */
    bool patch_bias;                    /* patch stem has a bias */
    bool pre_norm, post_norm;           /* LayerNorm before / after the blocks */
    bool fused_qkv;                     /* one qkv projection (LoRA role "qkv") */
    const char *head_key;               /* SigLIP attention-pooling head switch, or NULL */
    bool head_def;
    const char *pos_type_key, *pos_type_val; /* the only position scheme the shapes cover */
    bool rms;                           /* RMSNorms (weight only) instead of LayerNorms */
    bool gated_mlp;                     /* gate / up / down MLP (Pixtral) */
    bool no_bias;                       /* no linear carries a bias (Pixtral) */
    bool internvl;                      /* InternVLVisionConfig's switches (read_switches) */
};

struct mm_spec {
    const char *text_type;    /* text reader when text_config names no model_type */
    const char *text_alias;   /* a text model_type meaning text_type, or NULL */
    bool text_in_root;        /* without text_config the text keys sit in the root */
    const struct vit_spec *vit;
    enum proj_kind proj;
    bool vit_by_type;         /* vision_config.model_type picks CLIP or SigLIP (LLaVA family:
                                 the tower is AutoModel.from_config(vision_config)) */
    bool image_newline;       /* LLaVA-NeXT's image_newline, one text-hidden vector */
    fg__mm_proj_fn proj_fn;   /* a projector of another file (arch_vl*.c), used instead of
                                 proj when set */
    const char *mtp_key;      /* the text_config key counting the MTP layers the release
                                 stores beside the text model (mtp.*), or NULL */
};

/* Towers other files name (multimodal.c): CLIPVisionModel, SiglipVisionModel,
 * Siglip2VisionModel, Idefics3VisionTransformer. */
extern const struct vit_spec fg__mm_clip_vit, fg__mm_siglip_vit, fg__mm_siglip2_vit,
    fg__mm_idefics3_vit;

/* The wrapper reader (multimodal.c): spec is a struct mm_spec; text model, tower and
 * projector, the tower nodes moved ahead of the text model's.  0 or an FG_E_* code. */
int fg__mm_read(const struct fg_cfg *c, struct fg_model *m, const void *spec, struct fg_err *err);
/* The text part alone: text_config (or the root, s->text_in_root) read by the registered
 * reader of its model_type; 0 or an FG_E_* code. */
int fg__mm_read_text(const struct fg_cfg *c, const struct mm_spec *s, struct fg_model *m,
                     struct fg_err *err);
/* The text model whose keys sit in the wrapper's root, read by the registered reader of type
 * through a view of the root with the text class's changes over (source/config.h; ending in
 * a NULL key); 0 or FG_E_*. */
int fg__mm_read_root_text(const struct fg_cfg *c, const char *type,
                          const struct fg_cfg_over *over, struct fg_model *m,
                          struct fg_err *err);
/* A ViT tower of spec s from vision_config v as one FG_NODE_VISION node; d gets its sizes. */
int fg__mm_add_vit(struct fg_model *m, const struct fg_cfg *v, const struct vit_spec *s,
                   struct vit_dims *d, struct fg_err *err);
/*
 * c's vision_config in *v: the object config.json holds, or, when it is absent, the tower
 * config c's class builds then (fg_cfg_class_fill: LlavaConfig's CLIP ViT-L/14-336) in a
 * document *fill the caller frees with fg_config_free(), the count marked unsure (the
 * checkpoint of a trimmed config may hold another tower).  v->obj NULL when it is absent and
 * the class builds none: the count marked unsure, the text model alone counted, and
 * left_out ("the vision tower and projector") named.  0, FG_E_TYPE or FG_E_NOMEM.
 */
int fg__mm_vision_view(const struct fg_cfg *c, struct fg_model *m, const char *left_out,
                       struct fg_cfg *v, struct fg_config **fill, struct fg_err *err);
/* A reader's tower and projector from c's vision_config view v (ctx its own); 0 or FG_E_*. */
typedef int (*fg__mm_tower_fn)(struct fg_model *m, const struct fg_cfg *c,
                               const struct fg_cfg *v, const void *ctx, struct fg_err *err);
/* add's nodes from c's vision_config (fg__mm_vision_view, left_out naming them), moved ahead of
 * the text model's; nothing when the view has no object.  0 or add's / an FG_E_* code. */
int fg__mm_add_vision_first(const struct fg_cfg *c, struct fg_model *m, const char *left_out,
                            fg__mm_tower_fn add, const void *ctx, struct fg_err *err);
/* Move the nodes from index first on to the front, keeping both runs in order; FG_E_NOMEM. */
int fg__mm_move_to_front(struct fg_model *m, size_t first, struct fg_err *err);
/* The tokens of one image in a ViT with a class token, (image / patch)^2 + 1, after checking
 * that heads divide h and patch divides image (FG_E_RANGE naming the four vision_config
 * sizes). */
int fg__mm_vit_tokens(const struct fg_cfg *v, uint64_t h, uint64_t heads, uint64_t image,
                      uint64_t patch, uint64_t *tokens, struct fg_err *err);
/* A tower node (FG_NODE_VISION in FG_STACK_TOWER) of width h, heads bidirectional heads of
 * h / heads and an MLP of inter, for the reader to add its linears to; NULL when out of memory
 * (err set). */
struct fg_node *fg__mm_tower_node(struct fg_model *m, const char *name, uint64_t h,
                                  uint64_t heads, uint64_t inter, struct fg_err *err);
/* The linears of L tower blocks of width h and MLP width f: q / k / v, or one qkv when
 * fused_qkv (bias by qkv_bias), k and v of width kv (0: h), o (o_bias), gate when gated, up
 * and down (mlp_bias). */
struct fg_mm_blocks {
    uint64_t h, f, L, kv;
    bool fused_qkv, qkv_bias, o_bias, gated, mlp_bias;
};
void fg__mm_tower_blocks(struct fg_node *n, const struct fg_mm_blocks *b);
/* A projector node (FG_NODE_OTHER in FG_STACK_TOWER) of output width out; NULL when out of
 * memory (err set). */
struct fg_node *fg__mm_projector_node(struct fg_model *m, uint64_t out, const char *desc,
                                      struct fg_err *err);
/* The pixel-shuffle SwiGLU projector of AyaVision (norm: its LayerNorm) and Cohere2Vision
 * (none): downsample_factor (2), linear_1 to alignment_intermediate_size (align_def when
 * absent; FG_E_RANGE when odd), linear_2 from half of it to the text hidden, both biased. */
int fg__mm_proj_pixel_swiglu(struct fg_model *m, const struct fg_cfg *c, const struct vit_dims *d,
                             uint64_t align_def, bool norm, struct fg_err *err);
/* LayerNorm (with bias) over wide, linear_1 wide -> text hidden, linear_2 text -> text, both
 * biased (InternVL after its pixel shuffle, VipLLaVA over its feature layers); FG_E_NOMEM. */
int fg__mm_proj_norm_mlp(struct fg_model *m, uint64_t wide, struct fg_err *err);
/* How many vision layers' features are concatenated: key (vision_feature_layer) an int or a
 * list; 1 when absent or null; FG_E_TYPE / FG_E_RANGE for other values. */
int fg__mm_feature_layers(const struct fg_cfg *c, const char *key, uint64_t *nfeat,
                          struct fg_err *err);

#endif
