/*
 * fuzz_options.c - libFuzzer target: option values as users type them.
 * The input is split at newlines; each piece goes through every parser a
 * CLI or plugin option value reaches:
 *   engine   fg_mode_parse, fg_precision_parse, fg_optimizer_parse,
 *            fg_quant_parse, fg_lora_targets_parse, fg_source_parse_id,
 *            fg_source_check_file, fg_source_set_order,
 *            fg_source_add_site_dirs, fg_gpu_find (--gpu / gres specs),
 *            fg__hub_check_url and fg__hub_quote (HF_ENDPOINT, ids in URLs);
 *   plugin   fitgate_job (plugin/fitgate_common.c): the pieces in order
 *            are the values of --ft-model, --ft-mode, --ft-seq-len, ...
 *            (enum fg_jobopt_id), checked as the plugin does for a job;
 *   cli      fg_cli_parse_opts (cli/jobopts.c): "plan" + the pieces as argv.
 *
 * Seeds: tests/fuzz/corpus/options.  Checks: the sanitizers and fuzz.h's
 * error contract.  stderr is closed to the CLI parser's messages
 * (libFuzzer keeps its own stream).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fitgate.h"
#include "fuzz.h"
#include "hw/gpu.h"
#include "source/hub.h"
#include "jobopts.h"
#include "memory/memory.h"
#include "source/source.h"

/* fitgate_common.c logs through Slurm; nothing here calls these, but the object names them. */
void slurm_error(const char *fmt, ...);
void slurm_info(const char *fmt, ...);
void slurm_debug(const char *fmt, ...);
void slurm_error(const char *fmt, ...) { (void)fmt; }
void slurm_info(const char *fmt, ...) { (void)fmt; }
void slurm_debug(const char *fmt, ...) { (void)fmt; }
/* nor this one (the node side's read of what the submit side packed) */
spank_err_t spank_getenv(spank_t sp, const char *var, char *buf, int len)
{
    (void)sp, (void)var, (void)buf, (void)len;
    return ESPANK_ENV_NOEXIST;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_log_init();
    FILE *null = fopen("/dev/null", "w");
    if (null)
        stderr = null;
    return 0;
}

#define MAX_PIECES 24

static void each(const char *s)
{
    struct fg_err err = {0};
    int rc;
    enum fg_mode mode;
    enum fg_precision prec;
    enum fg_optimizer opt;
    enum fg_quant q;
    struct fg_job job;
    struct fg_model_id id;
    static struct fg_source_opts so;
    char buf[512];

    fuzz_check_rc(fg_mode_parse(s, &mode, &err), &err);
    fuzz_check_rc(fg_precision_parse(s, &prec, &err), &err);
    fuzz_check_rc(fg_optimizer_parse(s, &opt, &err), &err);
    fuzz_check_rc(fg_quant_parse(s, &q, &err), &err);
    fg_job_defaults(&job, FG_MODE_LORA);
    fuzz_check_rc(fg_lora_targets_parse(s, &job, &err), &err);
    if (memchr(job.lora_list, '\0', sizeof job.lora_list) == NULL)
        fuzz_fail("lora_list not terminated", s);

    memset(&id, 0x5a, sizeof id);
    rc = fg_source_parse_id(s, &id, &err);
    fuzz_check_rc(rc, &err);
    if (!rc) {
        /* a valid id never reaches outside its directory or its URL path */
        if (strstr(id.org, "..") || strstr(id.name, "..") || strchr(id.org, '/') ||
            strchr(id.name, '/') || id.org[0] == '.' || id.name[0] == '.' || !id.org[0] ||
            !id.name[0] || strstr(id.rev, "..") || id.rev[0] == '/' || id.rev[0] == '.')
            fuzz_fail("fg_source_parse_id accepted an unsafe id", s);
    }
    rc = fg_source_check_file(s, &err);
    fuzz_check_rc(rc, &err);
    if (!rc && (strchr(s, '/') || strstr(s, "..") || !*s))
        fuzz_fail("fg_source_check_file accepted an unsafe name", s);
    fg_source_opts_init(&so);
    fuzz_check_rc(fg_source_set_order(&so, s, &err), &err);
    fuzz_check_rc(fg_source_add_site_dirs(&so, s, &err), &err);
    (void)fg_source_rev_is_commit(s);
    unsigned count;
    (void)fg_gpu_find(NULL, s, &count);
    fuzz_check_rc(fg__hub_check_url(s, false, &err), &err);
    fuzz_check_rc(fg__hub_check_url(s, true, &err), &err);
    (void)fg__hub_quote(s, buf, sizeof buf);
    (void)fg__hub_quote(s, buf, 4);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    if (!text)
        return 0;
    char *pieces[MAX_PIECES + 2];
    int n = 0;
    char *p = text;
    while (n < MAX_PIECES) {
        pieces[n++] = p;
        char *nl = strchr(p, '\n');
        if (!nl)
            break;
        *nl = '\0';
        p = nl + 1;
    }
    for (int i = 0; i < n; i++)
        each(pieces[i]);

    /* the plugin: piece i is the value of option i (an empty piece: not given) */
    const char *values[FG_JOBOPT_COUNT] = {0};
    for (int i = 0; i < n && i < FG_JOBOPT_COUNT; i++)
        values[i] = pieces[i][0] ? pieces[i] : NULL;
    fitgate_use_options(values, FG_JOBOPT_COUNT);
    static struct fg_jobspec job;
    struct fg_err err = {0};
    fuzz_check_rc(fitgate_job(&job, NULL, &err), &err);
    fitgate_use_options(NULL, 0);

    /* the CLI: fitgate plan PIECES... */
    char *argv[MAX_PIECES + 2];
    argv[0] = "plan";
    for (int i = 0; i < n; i++)
        argv[i + 1] = pieces[i];
    argv[n + 1] = NULL;
    static struct fg_cli_opts o;
    (void)fg_cli_parse_opts(n + 1, argv, &o);
    free(text);
    return 0;
}
