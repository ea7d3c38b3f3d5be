/*
 * model_arg.c - turn the MODEL argument of a subcommand into a model graph.
 * MODEL is a directory holding config.json, a path to a config.json, or a
 * hub id org/name[@revision] (resolved by engine/source).
 */
#include <stdio.h>

#include "cli.h"
#include "model.h"

int fg_cli_load_model(const char *arg, struct fg_model **out, struct fg_err *err)
{
    return fg_model_load(arg, out, err);
}
