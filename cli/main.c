/*
 * fitgate - the command line front end.  Thin: parse arguments, call the
 * engine, print.  Exit codes: 0 ok / fits, 1 does not fit, 2 error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "format.h"
#include "jobopts.h"
#include "util/log.h"

static void log_stderr(enum fg_log_level level, const char *msg, void *ctx)
{
    (void)ctx;
    fprintf(stderr, "fitgate: %s%s\n", level == FG_LOG_ERROR ? "error: " :
                                       level == FG_LOG_WARN ? "warning: " : "", msg);
}

static void usage(FILE *f)
{
    fputs("usage:\n"
          "  fitgate plan  MODEL [job options] [--json] [--structure] [--html FILE] [--gpu NAME]\n"
          "  fitgate check MODEL [job options] --gres=gpu:TYPE:N|--gpus=TYPE:N [--nodes N]\n"
          "                [--partition P] [--policy FILE] [--gpus-conf FILE] [--offline]\n"
          "  fitgate gpus  [--topology FILE.xml] [--json]\n"
          "  fitgate frameworks [--json | --names]\n"
          "  fitgate verify MODEL\n"
          "  fitgate families [--json | --markdown]\n"
          "  fitgate report LOG... [--json] [--html FILE] [--by day|week|month]\n"
          "                 [--since DATE] [--until DATE]\n"
          "  fitgate learn LOG... [--sacct FILE] [--logs DIR] [--json] [--html FILE]\n"
          "                [--min-jobs N] [--far-below F] [--write-calibration FILE]\n"
          "MODEL: a directory holding config.json, a path to a config.json, or org/name[@rev].\n"
          "Job options:\n", f);
    fg_cli_jobopts_usage(f, 92);
    fputs("  (every job option also as the plugin spells it: --ft-NAME=VALUE)\n"
          "  --headroom X --conservative X --samples N --epochs E --global-batch N\n"
          "Exit status: 0 fits / goes on as asked, 1 does not fit / rejected, 3 resized (check\n"
          "  under a policy that resizes), 2 error.\n", f);
}

int main(int argc, char **argv)
{
    /* everything printed passes the escape (format.h): text from files, servers and the
     * audit trail never reaches a terminal raw, whichever line prints it */
    if (fg_cli_escape_stdio()) {
        fputs("fitgate: error: cannot set up the output streams\n", stderr);
        return 2;
    }
    fg_log_set_sink(log_stderr, NULL, getenv("FITGATE_DEBUG") ? FG_LOG_DEBUG : FG_LOG_WARN);
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    for (const struct fg_cli_cmd *c = fg_cli_commands; c->name; c++) {
        if (strcmp(c->name, cmd))
            continue;
        /* `fitgate check --help` as `fitgate --help`: every subcommand takes it */
        for (int i = 2; i < argc && strcmp(argv[i], "--"); i++)
            if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
                usage(stdout);
                return 0;
            }
        return c->run(argc - 1, argv + 1);
    }
    fprintf(stderr, "fitgate: unknown command '%s'\n", cmd);
    usage(stderr);
    return 2;
}
