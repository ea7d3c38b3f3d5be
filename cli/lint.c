/*
 * lint.c - fitgate check --policy FILE --lint: the policy file read alone, as the plugin and
 * the controller's check (cmd_ctld.c) read it (fg_policy_load), its first bad line named; and
 * the site files it names (GpuTable=, Calibration=), which fail jobs closed as it does.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "hw/gpu.h"
#include "policy.h"

int fg_cli_lint(int argc, char **argv)
{
    const char *path = NULL;
    bool lint = false;
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) { /* after --: MODEL, a name */
        if (!strcmp(argv[i], "--lint"))
            lint = true;
        else if (!strncmp(argv[i], "--policy=", 9))
            path = argv[i] + 9;
        else if (!strcmp(argv[i], "--policy") && i + 1 < argc)
            path = argv[++i];
    }
    if (!lint)
        return -1;
    for (int i = 1; i < argc; i++) /* the policy alone: anything else is a mistake */
        if (strcmp(argv[i], "--lint") && strncmp(argv[i], "--policy", 8) &&
            !(i > 1 && !strcmp(argv[i - 1], "--policy"))) {
            fprintf(stderr, "fitgate: error: --lint reads the policy alone: drop '%.60s'\n",
                    argv[i]);
            return 2;
        }
    if (!path) {
        fprintf(stderr, "fitgate: error: --lint checks the file given with --policy FILE\n");
        return 2;
    }
    struct fg_policy p;
    struct fg_err err = {0};
    fg_policy_init(&p);
    struct fg_gpu_table *table = NULL;
    /* the GPU table it names is the policy's too: a broken one fails jobs closed as a bad
     * line does (cmd_ctld.c, the plugin), so it is named here */
    if (fg_policy_load(&p, path, &err) || fg_policy_gpu_table(&p, &table, &err)) {
        fprintf(stderr, "fitgate: error: %s\n", err.detail);
        return 2;
    }
    fg_gpu_table_free(table);
    printf("%s: ok (OnError=%s, LogFile=%s)\n", path, fg_on_error_name(p.on_error),
           p.log_file[0] ? p.log_file : "(none)");
    return 0;
}
