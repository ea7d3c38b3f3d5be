/*
 * arch_hybrid.c - hybrid architecture readers (filled in by their own change).
 */
#include "arch.h"

const struct fg_arch fg__arch_hybrid_table[] = {
    {NULL, NULL, NULL, NULL},
};
