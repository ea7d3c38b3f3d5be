/*
 * arch_legacy.c - legacy architecture readers (filled in by their own change).
 */
#include "arch.h"

const struct fg_arch fg__arch_legacy_table[] = {
    {NULL, NULL, NULL, NULL},
};
