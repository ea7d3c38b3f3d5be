/*
 * llava.h - internal to the vision-language rows of llava.c: the projectors of
 * llava_proj.c, each a fg__mm_proj_fn (multimodal.h) naming its transformers class.
 */
#ifndef FG_ARCH_VL_H
#define FG_ARCH_VL_H

#include "arch/vision/multimodal.h"

int fg__vl_proj_llava_next_video(struct fg_model *m, const struct fg_cfg *c,
                                 const struct fg_cfg *v, const struct vit_dims *d,
                                 struct fg_err *err);
int fg__vl_proj_vipllava(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                         const struct vit_dims *d, struct fg_err *err);
int fg__vl_proj_lfm2_vl(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                        const struct vit_dims *d, struct fg_err *err);
int fg__vl_proj_cohere2_vision(struct fg_model *m, const struct fg_cfg *c,
                               const struct fg_cfg *v, const struct vit_dims *d,
                               struct fg_err *err);
int fg__vl_proj_idefics2(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                         const struct vit_dims *d, struct fg_err *err);
int fg__vl_proj_mlp2(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                     const struct vit_dims *d, struct fg_err *err);

#endif
