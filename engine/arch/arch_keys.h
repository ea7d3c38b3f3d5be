/*
 * arch_keys.h - internal to the readers: how a config's keys read as switches, the check of
 * the keys that make the generic reader's count unsure, and the check of the shape keys a
 * family reader left unread (arch_keys.c).
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

/* Mark m unsure for every key of c's root that can change the stored shapes (another tower,
 * MTP layers, experts, a head flag) and that the family reader which built m never read
 * (fg__cfg_was_read); called after a family reader, before the graph is finished. */
void fg__family_check_unread(const struct fg_cfg *c, struct fg_model *m);

#endif
