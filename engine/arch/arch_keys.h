/*
 * arch_keys.h - internal to the generic reader (arch_generic.c): how a config's keys read
 * as switches, and the check of the keys that make its count unsure (arch_keys.c).
 * Pointers are borrowed from the config document, valid while it is.
 */
#ifndef FG_ARCH_KEYS_H
#define FG_ARCH_KEYS_H

#include <stdbool.h>

#include "arch/arch.h"

struct cJSON;

/* A value that switches something on: not null, false, 0, "" or an empty array / object. */
bool fg__cfg_set_on(const struct cJSON *v);

/* Mark m unsure (fg__model_unsure) for every key of c that means structure the generic
 * reader does not build: the table's keys, a factorised embedding_size, and any key naming
 * expert / vision / audio ... structure it does not understand. */
void fg__generic_check_unsure(const struct fg_cfg *c, struct fg_model *m);

#endif
