/*
 * arch_multimodal.c - multimodal architecture readers (filled in by their own change).
 */
#include "arch.h"

const struct fg_arch fg__arch_multimodal_table[] = {
    {NULL, NULL, NULL, NULL},
};
