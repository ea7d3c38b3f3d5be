/*
 * arch_multimodal.h - internal to the vision-language wrapper (arch_multimodal.c) and its
 * projectors (arch_multimodal_proj.c): the tower's dimensions as read and the projector
 * table, one builder per transformers projector class.  Views are borrowed from the config.
 */
#ifndef FG_ARCH_MULTIMODAL_H
#define FG_ARCH_MULTIMODAL_H

#include "arch/arch.h"

enum proj_kind { PROJ_LLAVA, PROJ_GEMMA3, PROJ_QWEN2_VL, PROJ_LLAMA4, PROJ_KIMI, PROJ_QWEN3_VL,
                 PROJ_MISTRAL3, PROJ_PALIGEMMA, PROJ_IDEFICS3, PROJ_QWEN2_5_VL, PROJ_AYA_VISION,
                 PROJ_INTERNVL, PROJ_COUNT };

/* The vision tower's sizes as add_vit read them. */
struct vit_dims {
    uint64_t hidden, layers, heads, inter, channels, patch, image, temporal;
};

/* A projector builder: adds the projector node(s) after the tower for the text model m
 * (c the wrapper's config, v its vision_config, d the tower); 0 or an FG_E_* code. */
typedef int (*fg__mm_proj_fn)(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                              const struct vit_dims *d, struct fg_err *err);
extern const fg__mm_proj_fn fg__mm_projectors[PROJ_COUNT];

#endif
