/*
 * arch_moe.c - moe architecture readers (filled in by their own change).
 */
#include "arch.h"

const struct fg_arch fg__arch_moe_table[] = {
    {NULL, NULL, NULL, NULL},
};
