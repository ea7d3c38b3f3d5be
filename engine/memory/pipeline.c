/*
 * pipeline.c - runs a training estimate's stages (pipeline.h) in the order stages.def lists them.
 */
#include "memory/pipeline.h"

#include <stddef.h>

static int (*const stages[])(struct train *, struct fg_err *) = {
#define FG_TRAIN_STAGE(name, what) fg__train_##name,
#include "memory/stages.def"
#undef FG_TRAIN_STAGE
};

int fg__train_run(struct train *x, struct fg_err *err)
{
    int rc = 0;
    for (size_t i = 0; !rc && i < sizeof stages / sizeof stages[0]; i++)
        rc = stages[i](x, err);
    return rc;
}
