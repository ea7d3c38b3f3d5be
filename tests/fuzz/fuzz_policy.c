/*
 * fuzz_policy.c - libFuzzer target: a fitgate.conf text -> fg_policy_parse,
 * and the same text split at blanks and newlines as plugstack arguments ->
 * fg_policy_args, then the rules of every partition the file named, of an
 * unknown one and of a comma list, and fg_modes_str.
 *
 * Seeds: conf/fitgate.conf whole and line by line, the plugstack snippet's
 * arguments, tests/fuzz/corpus/policy (tests/fuzz/run.sh).
 * Checks: the sanitizers, fuzz.h's error contract, values inside their bounds.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "policy.h"

FUZZ_INITIALIZE_LOG_ONLY

static void check_rules(const struct fg_rules *r)
{
    char modes[64];
    if (!(r->headroom >= 1.0 && r->headroom <= 4.0) ||
        !(r->conservative >= 1.0 && r->conservative <= 4.0))
        fuzz_fail("headroom / conservative outside 1..4", "");
    if (r->min_gpus < 1 || r->max_gpus > 65535 || r->min_gpus_node < 1 || r->max_gpus_node > 1024)
        fuzz_fail("GPU limits outside their bounds", "");
    fg_modes_str(r->modes, modes, sizeof modes);
    (void)fg_action_name(r->action);
    (void)fg_borderline_name(r->borderline);
}

static void use(const struct fg_policy *p)
{
    struct fg_rules r;
    fg_policy_rules_for(p, NULL, &r);
    check_rules(&r);
    fg_policy_rules_for(p, "no-such-partition", &r);
    check_rules(&r);
    for (size_t i = 0; i < p->n_parts && i < FG_POLICY_MAX_PARTS; i++) {
        char list[200];
        snprintf(list, sizeof list, "%s,other", p->parts[i].name);
        fg_policy_rules_for(p, p->parts[i].name, &r);
        check_rules(&r);
        fg_policy_rules_for(p, list, &r);
        (void)fg_policy_has_partition(p, p->parts[i].name);
    }
    (void)fg_on_error_name(p->on_error);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fg_policy *p = malloc(sizeof *p);
    char *text = fuzz_text(data, size);
    char **argv = malloc((size / 2 + 2) * sizeof *argv);
    if (!p || !text || !argv)
        goto out;
    struct fg_err err = {0};
    fg_policy_init(p);
    int rc = fg_policy_parse(p, (const char *)data, size, "fuzz/fitgate.conf", &err);
    fuzz_check_rc(rc, &err);
    use(p);

    int argc = 0;
    for (char *save = NULL, *a = strtok_r(text, " \t\n", &save); a; a = strtok_r(NULL, " \t\n", &save))
        argv[argc++] = a;
    argv[argc] = NULL;
    fg_policy_init(p);
    rc = fg_policy_args(p, argc, argv, "fuzz/plugstack.conf", &err);
    fuzz_check_rc(rc, &err);
    use(p);
out:
    free(argv);
    free(text);
    free(p);
    return 0;
}
