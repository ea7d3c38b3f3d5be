/*
 * lint.c - fitgate check --policy FILE --lint: the policy file read alone, as the plugin and
 * the controller's check (cmd_ctld.c) read it (fg_policy_load), its first bad line named.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "policy.h"

int fg_cli_lint(int argc, char **argv)
{
    const char *path = NULL;
    bool lint = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--lint"))
            lint = true;
        else if (!strncmp(argv[i], "--policy=", 9))
            path = argv[i] + 9;
        else if (!strcmp(argv[i], "--policy") && i + 1 < argc)
            path = argv[++i];
    }
    if (!lint)
        return -1;
    if (!path) {
        fprintf(stderr, "fitgate: error: --lint checks the file given with --policy FILE\n");
        return 2;
    }
    struct fg_policy p;
    struct fg_err err = {0};
    fg_policy_init(&p);
    if (fg_policy_load(&p, path, &err)) {
        fprintf(stderr, "fitgate: error: %s\n", err.detail);
        return 2;
    }
    printf("%s: ok (OnError=%s, LogFile=%s)\n", path, fg_on_error_name(p.on_error),
           p.log_file[0] ? p.log_file : "(none)");
    return 0;
}
