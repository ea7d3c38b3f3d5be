/*
 * fuzz_gpu.c - libFuzzer target: a site GPU table (gpus.conf rows) ->
 * fg_gpu_table_load_text, then every lookup on the table it built: each
 * row by name, label, every alias, as gres specs ("gpu:ALIAS:4",
 * "gres/gpu:ALIAS=2"), by PCI id, and the input's first line as a spec.
 *
 * Seeds: conf/gpus.conf whole and row by row (tests/fuzz/run.sh).
 * Checks: the sanitizers, fuzz.h's error contract, *out untouched on failure.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "hw/gpu.h"

FUZZ_INITIALIZE_LOG_ONLY

static void lookups(const struct fg_gpu_table *t, const char *spec)
{
    unsigned count = 0;
    const struct fg_gpu *g = fg_gpu_find(t, spec, &count);
    if (g)
        (void)fg_gpu_tflops(g);
    (void)fg_gpu_find(t, spec, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    if (!text)
        return 0;
    struct fg_gpu_table *t = (struct fg_gpu_table *)1;
    struct fg_err err = {0};
    int rc = fg_gpu_table_load_text(text, "fuzz/gpus.conf", &t, &err);
    fuzz_check_rc(rc, &err);
    if (rc) {
        if (t != (struct fg_gpu_table *)1)
            fuzz_fail("fg_gpu_table_load_text failed but changed *out", err.detail);
        free(text);
        return 0;
    }
    size_t n = fg_gpu_table_count(t);
    char spec[400];
    for (size_t i = 0; i < n; i++) {
        const struct fg_gpu *g = fg_gpu_table_at(t, i);
        if (!g)
            fuzz_fail("fg_gpu_table_at returned NULL inside the table", "");
        (void)fg_gpu_table_is_site_row(t, i);
        if (!fg_gpu_table_is_site_row(t, i))
            continue;   /* built-in rows are the same for every input */
        lookups(t, g->name);
        lookups(t, g->label);
        for (size_t d = 0; d < g->n_devices && d < 8; d++)
            (void)fg_gpu_find_pci(t, g->vendor, g->devices[d]);
        (void)fg_gpu_table_has_vendor(t, g->vendor);
        char aliases[sizeof g->aliases];
        memcpy(aliases, g->aliases, sizeof aliases);
        aliases[sizeof aliases - 1] = '\0';
        for (char *save = NULL, *a = strtok_r(aliases, ",", &save); a;
             a = strtok_r(NULL, ",", &save)) {
            lookups(t, a);
            snprintf(spec, sizeof spec, "gpu:%s:4", a);
            lookups(t, spec);
            snprintf(spec, sizeof spec, "gres/gpu:%s=2,mps:100", a);
            lookups(t, spec);
        }
    }
    /* the first line of the input as a --gpu / gres spec */
    text[strcspn(text, "\n")] = '\0';
    lookups(t, text);
    lookups(NULL, text);
    fg_gpu_table_free(t);
    free(text);
    return 0;
}
