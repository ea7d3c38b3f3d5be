/*
 * arch_encoder.c - encoder architecture readers (filled in by their own change).
 */
#include "arch.h"

const struct fg_arch fg__arch_encoder_table[] = {
    {NULL, NULL, NULL, NULL},
};
