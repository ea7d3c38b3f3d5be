/*
 * gen_gpus.c - build-time generator of the built-in GPU table.
 *
 *   gen_gpus conf/gpus.conf > build/gen/gpus_table.c
 *
 * Reads the file with engine/hw/gpu.c's own reader (fg__gpu_table_parse: the
 * same rows, normalized keys and PCI index a site file gets) and writes that
 * table as static C data defining fg__gpu_builtin (gpu_table.h).  Parsing the
 * embedded text at run time cost 0.71 M instructions per tagged sbatch and per
 * CLI run (callgrind); the data costs nothing until a row is read.
 *
 * A bad row in the shipped file fails the build here, naming file:line, where
 * the run-time parse could only return NULL.  Doubles are written with %a, so
 * they are bit-for-bit what strtod gave the reader; tests/test_gpu.c parses the
 * file again and compares every byte of the table with the generated one.
 * Exit 0, or 1 with a message on stderr.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/fileio.h"
#include "hw/gpu.h"
#include "hw/gpu_table.h"

/* gpu.o refers to the built-in table; the generator makes it, so it has none. */
const struct fg_gpu_table fg__gpu_builtin = {.builtin = true};

/* A C string literal of s: quotes, backslashes and '?' (trigraphs) escaped, bytes
 * outside printable ASCII in octal. */
static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\' || *p == '?')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20 || *p > 0x7e)
            fprintf(f, "\\%03o", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

static void put_row(FILE *f, const struct fg_gpu *g)
{
    fputs("    {.name = ", f);
    put_string(f, g->name);
    fputs(", .label = ", f);
    put_string(f, g->label);
    fprintf(f, ",\n     .vendor = 0x%04x, .devices = {", g->vendor);
    for (size_t d = 0; d < sizeof g->devices / sizeof g->devices[0]; d++)
        fprintf(f, "%s0x%04x", d ? ", " : "", g->devices[d]);
    fprintf(f, "}, .n_devices = %zu,\n", g->n_devices);
    fprintf(f, "     .memory_bytes = %lluULL, .memory_gb = %uu,\n",
            (unsigned long long)g->memory_bytes, g->memory_gb);
    fprintf(f, "     .bf16_tflops = %a, .fp16_tflops = %a, .bw_tbps = %a, .link_gbps = %a,\n",
            g->bf16_tflops, g->fp16_tflops, g->bw_tbps, g->link_gbps);
    fputs("     .interconnect = ", f);
    put_string(f, g->interconnect);
    fputs(",\n     .aliases = ", f);
    put_string(f, g->aliases);
    fprintf(f, ",\n     .gcds = %uu},\n", g->gcds);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_gpus conf/gpus.conf > gpus_table.c\n");
        return 1;
    }
    char *text;
    size_t len;
    if (fg__read_file(argv[1], 1 << 24, &text, &len)) {
        fprintf(stderr, "gen_gpus: cannot read %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    struct fg_gpu_table *t = NULL;
    struct fg_err err = {0};
    if (fg__gpu_table_parse(text, argv[1], &t, &err)) {
        fprintf(stderr, "gen_gpus: %s\n", err.detail);
        free(text);
        return 1;
    }
    free(text);

    FILE *f = stdout;
    fprintf(f, "/* Generated from %s by tools/gen_gpus.c; do not edit. */\n", argv[1]);
    fputs("#include \"hw/gpu.h\"\n#include \"hw/gpu_table.h\"\n\n", f);
    fprintf(f, "static struct fg_gpu rows[%zu] = {\n", t->n);
    for (size_t i = 0; i < t->n; i++)
        put_row(f, &t->rows[i]);
    fputs("};\n\n", f);
    fprintf(f, "static unsigned char site[%zu];\n\n", t->n);
    /* keys as string literals: the built-in table is never freed (builtin = true) */
    fprintf(f, "static struct fg__gpu_key keys[%zu] = {\n", t->n_keys ? t->n_keys : 1);
    for (size_t i = 0; i < t->n_keys; i++) {
        fputs("    {", f);
        put_string(f, t->keys[i].norm);
        fprintf(f, ", %u},\n", t->keys[i].row);
    }
    fputs("};\n\n", f);
    fprintf(f, "static uint32_t pci[%zu] = {", t->n_pci ? t->n_pci : 1);
    for (size_t i = 0; i < t->n_pci; i++)
        fprintf(f, "%s%s0x%08x", i ? "," : "", i % 6 ? " " : "\n    ", t->pci[i]);
    fputs("\n};\n\n", f);
    fprintf(f, "static uint32_t pci_row[%zu] = {", t->n_pci ? t->n_pci : 1);
    for (size_t i = 0; i < t->n_pci; i++)
        fprintf(f, "%s%s%u", i ? "," : "", i % 12 ? " " : "\n    ", t->pci_row[i]);
    fputs("\n};\n\n", f);
    fputs("const struct fg_gpu_table fg__gpu_builtin = {\n", f);
    fprintf(f, "    .rows = rows, .site = site, .n = %zu,\n", t->n);
    fprintf(f, "    .keys = keys, .n_keys = %zu,\n", t->n_keys);
    fprintf(f, "    .pci = pci, .pci_row = pci_row, .n_pci = %zu,\n", t->n_pci);
    fputs("    .builtin = true,\n};\n", f);
    fg_gpu_table_free(t);
    if (fflush(f) || ferror(f)) {
        fprintf(stderr, "gen_gpus: write error\n");
        return 1;
    }
    return 0;
}
