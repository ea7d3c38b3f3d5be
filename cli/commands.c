/* commands.c - the subcommand table of the fitgate CLI (one row per command). */
#include <stddef.h>

#include "cli.h"

const struct fg_cli_cmd fg_cli_commands[] = {
    {"plan", fg_cli_plan},
    {"check", fg_cli_check},
    {"verify", fg_cli_verify},
    {"gpus", fg_cli_gpus},
    {"families", fg_cli_families},
    {"report", fg_cli_report},
    {"learn", fg_cli_learn},
    {"frameworks", fg_cli_frameworks},
    {"ctld", fg_cli_ctld},
    {NULL, NULL},
};
