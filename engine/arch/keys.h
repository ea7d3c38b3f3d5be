/*
 * keys.h - internal to the readers: how a config's keys read as switches, the check of
 * the keys that make the generic reader's count unsure, and the check of the shape keys a
 * family reader left unread (keys.c).
 * Pointers are borrowed from the config document, valid while it is.
 */
#ifndef FG_ARCH_KEYS_H
#define FG_ARCH_KEYS_H

#include <stdbool.h>
#include <stddef.h>

#include "arch/arch.h"

struct cJSON;

/* A value that switches something on: not null, false, 0, "" or an empty array / object. */
bool fg__cfg_set_on(const struct cJSON *v);

/* Mark m unsure (fg__model_unsure) for every key of c that means structure the generic
 * reader does not build: the table's keys, a factorised embedding_size, and any key naming
 * expert / vision / audio ... structure it does not understand. */
void fg__generic_check_unsure(const struct fg_cfg *c, struct fg_model *m);

/* The kinds of value a shape key holds (what a test adds to a config to switch one on). */
enum fg_shape_kind {
    FG_SHAPE_CONFIG,      /* a sub-config object */
    FG_SHAPE_COUNT,       /* a number */
    FG_SHAPE_FLAG,        /* true / false */
    FG_SHAPE_NAME,        /* a string (a tower's name) */
    FG_SHAPE_LIST,        /* a list of layer indices or per-layer objects */
    FG_SHAPE_LAYER_KINDS, /* per-layer mixer names: on when one is not attention */
};

/* One key that changes the stored shapes when set (keys.c's table says which). */
struct fg__shape_key {
    const char *key;
    enum fg_shape_kind kind;
    const char *what;    /* what it means, for the family reader's note */
    const char *generic; /* the generic reader's note when it never sizes it, or NULL */
    bool (*built)(const struct fg_model *m); /* the graph holds the structure the key means
                                                whether or not the reader read it, or NULL */
};

/* Row i of the table, or NULL past its end. */
const struct fg__shape_key *fg__shape_key_at(size_t i);

/* Mark m unsure for the first key of the table that is set, at c's root or in a sub-config
 * the reader entered (text_config, vision_config ... to two levels below the root), and that
 * the family reader which built m never read (fg__cfg_unread); called after a family reader,
 * before the graph is finished.  The note names the key, what it means and the reader. */
void fg__family_check_unread(const struct fg_cfg *c, struct fg_model *m);

/* Mark m unsure when c's auto_map names a config class of its own (remote code) and
 * config.json leaves out a size every reader reads (vocabulary, width, depth, heads, MLP
 * width): the transformers class's default was taken, which the remote class need not
 * share.  Called after a family reader. */
void fg__family_check_remote_defaults(const struct fg_cfg *c, struct fg_model *m);

#endif
