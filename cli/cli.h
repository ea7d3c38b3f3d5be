/* cli.h - subcommands of the fitgate CLI; each returns the process exit code. */
#ifndef FG_CLI_H
#define FG_CLI_H

#include <stdbool.h>

struct fg_cli_cmd {
    const char *name;
    int (*run)(int argc, char **argv);   /* argv[0] is the subcommand */
};

extern const struct fg_cli_cmd fg_cli_commands[];

struct fg_model;
struct fg_err;

/* gres aliases of the cards in the plan's card table (NULL-terminated; report_html.c). */
extern const char *const fg_cli_default_cards[];

int fg_cli_plan(int argc, char **argv);
int fg_cli_check(int argc, char **argv);
int fg_cli_verify(int argc, char **argv);
int fg_cli_gpus(int argc, char **argv);
int fg_cli_families(int argc, char **argv);
int fg_cli_report(int argc, char **argv);
int fg_cli_learn(int argc, char **argv);
int fg_cli_frameworks(int argc, char **argv);
/* fitgate ctld: the controller's check for job_submit.lua (cmd_ctld.c). */
int fg_cli_ctld(int argc, char **argv);
/* fitgate check --policy FILE --lint: the exit status, or -1 when argv has no --lint. */
int fg_cli_lint(int argc, char **argv);

/* MODEL argument (path or hub id) -> model graph; caller frees with fg_model_free.  offline:
 * the caches only, never the hub. */
int fg_cli_load_model(const char *arg, bool offline, struct fg_model **out, struct fg_err *err);

#endif
