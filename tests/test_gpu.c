/*
 * test_gpu.c - the GPU table: the shipped rows against the facts in
 * tests/fixtures/gpus.tsv, lookups by name / label / gres alias / PCI id,
 * site files that add or replace rows, and the errors a bad row gets
 * (file:line named, no crash).  Run from the repository root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hw/gpu.h"
#include "hw/gpu_table.h"

#define TSV "tests/fixtures/gpus.tsv"

static const struct fg_gpu *by_name(const struct fg_gpu_table *t, const char *name)
{
    for (size_t i = 0; i < fg_gpu_table_count(t); i++)
        if (!strcmp(fg_gpu_table_at(t, i)->name, name))
            return fg_gpu_table_at(t, i);
    return NULL;
}

static bool has_alias(const struct fg_gpu *g, const char *alias)
{
    size_t l = strlen(alias);
    for (const char *a = g->aliases; *a;) {
        const char *e = strchr(a, ',');
        size_t al = e ? (size_t)(e - a) : strlen(a);
        if (al == l && !strncmp(a, alias, l))
            return true;
        a += al + (e ? 1 : 0);
    }
    return false;
}

/* ------------------------------------------------------------------------ */

static void builtin_should_parse_every_shipped_row(void **state)
{
    (void)state;
    const struct fg_gpu_table *t = fg_gpu_table_builtin();
    assert_non_null(t);
    assert_ptr_equal(t, fg_gpu_table_builtin()); /* parsed once, cached */
    assert_int_equal(fg_gpu_table_count(t), 42);
    assert_null(fg_gpu_table_at(t, 42));
    for (size_t i = 0; i < fg_gpu_table_count(t); i++) {
        const struct fg_gpu *g = fg_gpu_table_at(t, i);
        assert_true(g->name[0] && g->label[0]);
        assert_true(g->vendor == 0x10de || g->vendor == 0x1002 || g->vendor == 0x1da3);
        assert_true(g->n_devices >= 1 && g->n_devices <= 8);
        assert_true(g->memory_gb > 0 && g->memory_bytes > 0);
        assert_true(g->bf16_tflops > 0 || g->fp16_tflops > 0);
        assert_true(fg_gpu_tflops(g) > 0);
        assert_true(g->bw_tbps > 0 && g->link_gbps > 0);
        assert_true(g->gcds >= 1);
        assert_true(g->interconnect[0] && g->aliases[0]);
        assert_false(fg_gpu_table_is_site_row(t, i));
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(fg_gpu_table_at(t, j)->name, g->name);
        /* every row can be found by its own name, label (first row with it) and aliases */
        assert_ptr_equal(fg_gpu_find(t, g->name, NULL), g);
        assert_non_null(fg_gpu_find(t, g->label, NULL));
    }
}

/* Split one TSV line into fields (empty fields kept). */
static size_t split_tabs(char *line, char **f, size_t max)
{
    size_t n = 0;
    for (char *p = line; n < max;) {
        f[n++] = p;
        char *tab = strchr(p, '\t');
        if (!tab)
            break;
        *tab = '\0';
        p = tab + 1;
    }
    return n;
}

static bool near(double a, double b)
{
    return fabs(a - b) <= 1e-6 * (fabs(b) > 1 ? fabs(b) : 1);
}

/* Every fact in gpus.tsv is in the compiled-in table: ids, memory, dense
 * BF16, bandwidth, link, aliases.  Multi-GCD rows hold per-GCD figures, so
 * the card's figures are row x gcds. */
static void builtin_should_match_facts_in_gpus_tsv(void **state)
{
    (void)state;
    const struct fg_gpu_table *t = fg_gpu_table_builtin();
    FILE *f = fopen(TSV, "r");
    assert_non_null(f);
    char line[4096];
    size_t rows = 0;
    const struct fg_gpu *seen[64] = {0};
    assert_non_null(fgets(line, sizeof line, f)); /* header */
    assert_non_null(strstr(line, "memory_bytes_if_known"));
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0])
            continue;
        char *c[11];
        assert_int_equal(split_tabs(line, c, 11), 11);
        unsigned vendor = (unsigned)strtoul(c[1], NULL, 16);
        char ids[128];
        snprintf(ids, sizeof ids, "%s", c[2]);
        unsigned first = (unsigned)strtoul(ids, NULL, 16);
        const struct fg_gpu *g = fg_gpu_find_pci(t, (uint16_t)vendor, (uint16_t)first);
        assert_non_null(g);
        print_message("%s -> %s\n", c[0], g->name);
        for (size_t i = 0; i < rows; i++)
            assert_ptr_not_equal(seen[i], g); /* one table row per TSV row */
        seen[rows++] = g;
        assert_int_equal(g->vendor, vendor);
        for (char *save = NULL, *tok = strtok_r(ids, ",", &save); tok;
             tok = strtok_r(NULL, ",", &save)) {
            unsigned d = (unsigned)strtoul(tok, NULL, 16);
            bool found = false;
            for (size_t k = 0; k < g->n_devices; k++)
                found = found || g->devices[k] == d;
            assert_true(found);
        }
        assert_int_equal(g->memory_gb * g->gcds, strtoul(c[3], NULL, 10));
        if (c[4][0])
            assert_int_equal(g->memory_bytes, strtoull(c[4], NULL, 10));
        else
            assert_int_equal(g->memory_bytes, (uint64_t)g->memory_gb * 1000000000ull);
        if (!strcmp(c[5], "NA")) {
            assert_true(g->bf16_tflops == 0 && g->fp16_tflops > 0);
        } else {
            assert_true(near(g->bf16_tflops * g->gcds, strtod(c[5], NULL)));
            assert_true(near(g->fp16_tflops, g->bf16_tflops));
        }
        assert_true(near(g->bw_tbps * g->gcds, strtod(c[6], NULL)));
        assert_true(near(g->link_gbps * g->gcds, strtod(c[8], NULL)));
        char al[256];
        snprintf(al, sizeof al, "%s", c[9]);
        for (char *save = NULL, *tok = strtok_r(al, ",", &save); tok;
             tok = strtok_r(NULL, ",", &save))
            assert_true(has_alias(g, tok));
    }
    fclose(f);
    assert_int_equal(rows, 42);
}

/* The built-in table is made at build time (tools/gen_gpus.c): it must be exactly
 * what the run-time reader makes of conf/gpus.conf, row by row, key by key. */
static void builtin_should_equal_the_shipped_file_read_at_run_time(void **state)
{
    (void)state;
    FILE *f = fopen("conf/gpus.conf", "rb");
    assert_non_null(f);
    static char text[1 << 18];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    assert_true(n > 0 && n < sizeof text - 1);
    text[n] = '\0';
    struct fg_gpu_table *p = NULL;
    struct fg_err err = {0};
    assert_int_equal(fg__gpu_table_parse(text, "conf/gpus.conf", &p, &err), 0);
    const struct fg_gpu_table *b = fg_gpu_table_builtin();
    assert_true(b->builtin);
    assert_int_equal(b->n, p->n);
    for (size_t i = 0; i < p->n; i++) {
        const struct fg_gpu *x = &b->rows[i], *y = &p->rows[i];
        assert_string_equal(x->name, y->name);
        assert_string_equal(x->label, y->label);
        assert_int_equal(x->vendor, y->vendor);
        assert_memory_equal(x->devices, y->devices, sizeof x->devices);
        assert_int_equal(x->n_devices, y->n_devices);
        assert_int_equal(x->memory_bytes, y->memory_bytes);
        assert_int_equal(x->memory_gb, y->memory_gb);
        /* bit for bit: %a in the generated file */
        assert_memory_equal(&x->bf16_tflops, &y->bf16_tflops, sizeof(double));
        assert_memory_equal(&x->fp16_tflops, &y->fp16_tflops, sizeof(double));
        assert_memory_equal(&x->bw_tbps, &y->bw_tbps, sizeof(double));
        assert_memory_equal(&x->link_gbps, &y->link_gbps, sizeof(double));
        assert_string_equal(x->interconnect, y->interconnect);
        assert_string_equal(x->aliases, y->aliases);
        assert_int_equal(x->gcds, y->gcds);
        assert_int_equal(b->site[i], 0);
    }
    assert_int_equal(b->n_keys, p->n_keys);
    for (size_t i = 0; i < p->n_keys; i++) {
        assert_string_equal(b->keys[i].norm, p->keys[i].norm);
        assert_int_equal(b->keys[i].row, p->keys[i].row);
    }
    assert_int_equal(b->n_pci, p->n_pci);
    assert_memory_equal(b->pci, p->pci, p->n_pci * sizeof *p->pci);
    assert_memory_equal(b->pci_row, p->pci_row, p->n_pci * sizeof *p->pci_row);
    fg_gpu_table_free(p);
}

static void builtin_should_describe_one_gcd_for_mi250(void **state)
{
    (void)state;
    const struct fg_gpu *x = fg_gpu_find(NULL, "mi250x", NULL);
    assert_non_null(x);
    assert_int_equal(x->gcds, 2);
    assert_int_equal(x->memory_gb, 64);
    assert_int_equal(x->memory_bytes, 68702699520ull); /* rocm-smi per GCD */
    const struct fg_gpu *t4 = fg_gpu_find(NULL, "t4", NULL);
    assert_true(t4->bf16_tflops == 0 && t4->fp16_tflops == 65);
    assert_true(fg_gpu_tflops(t4) == 65);
    assert_true(fg_gpu_tflops(fg_gpu_find(NULL, "h100_sxm", NULL)) == 989);
    assert_true(fg_gpu_tflops(NULL) == 0);
}

struct find_case {
    const char *spec;
    const char *name;   /* expected row, NULL for none */
    unsigned count;
};

static void find_should_accept_names_labels_aliases_and_gres(void **state)
{
    (void)state;
    static const struct find_case cases[] = {
        /* a shared alias gives the first row: the variant with least memory/bandwidth */
        {"h100", "NVIDIA H100 PCIe 80GB", 0},
        {"a100", "NVIDIA A100 PCIe 40GB", 0},
        {"v100", "NVIDIA V100 16GB (SXM2/PCIe)", 0},
        {"hpu", "Intel Gaudi2", 0},
        {"H100_SXM", "NVIDIA H100 SXM5 80GB", 0},
        {"nvidia_h100_80gb_hbm3", "NVIDIA H100 SXM5 80GB", 0},
        {"gpu:h100:4", "NVIDIA H100 PCIe 80GB", 4},
        {"gres:gpu:a100_80g:2", "NVIDIA A100 PCIe 80GB", 2},
        {"gres/gpu:h100=2", "NVIDIA H100 PCIe 80GB", 2},
        {"gpu:nvidia_h100_80gb_hbm3:8(S:0-1)", "NVIDIA H100 SXM5 80GB", 8},
        {"gpu:h100", "NVIDIA H100 PCIe 80GB", 0},
        {"GPU:L4:3", "NVIDIA L4", 3},
        {"  gpu:h200:2  ", "NVIDIA H200 SXM 141GB", 2},
        {"gpu:h200:2,mps:100", "NVIDIA H200 SXM 141GB", 2},
        {"mps:100,gres:gpu:l40s:1", "NVIDIA L40S", 1},
        {"H200", "NVIDIA H200 SXM 141GB", 0},
        {"h200:3", "NVIDIA H200 SXM 141GB", 3}, /* --gpus=h200:3 */
        {"A100-80GB", "NVIDIA A100 PCIe 80GB", 0},
        {"a100 80 GB", "NVIDIA A100 PCIe 80GB", 0},
        {"A100_40G", "NVIDIA A100 PCIe 40GB", 0},
        {"NVIDIA H100 SXM5 80GB", "NVIDIA H100 SXM5 80GB", 0},
        {"nvidia h100 sxm5 80gb", "NVIDIA H100 SXM5 80GB", 0},
        {"H100 SXM5 80GB", "NVIDIA H100 SXM5 80GB", 0},
        {"H100-NVL", "NVIDIA H100 NVL 94GB", 0},
        {"T4 16 GB", "NVIDIA T4", 0},
        {"Tesla T4", "NVIDIA T4", 0},
        {"tesla_v100-sxm3-32gb-h", "NVIDIA V100 32GB / V100S (SXM2/SXM3/PCIe)", 0},
        {"AMD Instinct MI300X", "AMD Instinct MI300X", 0},
        {"MI250X", "AMD Instinct MI250X (per GCD)", 0},
        {"gpu:mi250x:8", "AMD Instinct MI250X (per GCD)", 8},
        {"RTX 4090", "NVIDIA GeForce RTX 4090", 0},
        {"GeForce RTX 4090", "NVIDIA GeForce RTX 4090", 0},
        {"gb200", "NVIDIA GB200 (per Blackwell GPU)", 0},
        {"Gaudi3", "Intel Gaudi3", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned count = 99;
        const struct fg_gpu *g = fg_gpu_find(NULL, cases[i].spec, &count);
        print_message("'%s' -> %s x%u\n", cases[i].spec, g ? g->name : "(null)", count);
        assert_non_null(g);
        assert_string_equal(g->name, cases[i].name);
        assert_int_equal(count, cases[i].count);
        assert_ptr_equal(fg_gpu_find(NULL, cases[i].spec, NULL), g); /* count may be NULL */
    }
}

static void find_should_return_null_for_unknown_or_malformed(void **state)
{
    (void)state;
    static const struct find_case cases[] = {
        {"", NULL, 0},         {"   ", NULL, 0},          {"gpu", NULL, 0},
        {"gpu:4", NULL, 4},    {"h1000", NULL, 0},        {"gpu:h100:0", NULL, 0},
        {"gpu:h100:x", NULL, 0}, {"gpu:h100:-1", NULL, 0}, {"gpu:h100:4:5", NULL, 0},
        {"gpu:h100:65536", NULL, 0}, {"mps:100", NULL, 0}, {"::", NULL, 0},
        {"gpu::2", NULL, 2},   {"gpu:foo:4", NULL, 4},    {"mps:100,shard:2", NULL, 0},
        {"nvidia", NULL, 0},   {"h100:4:4", NULL, 0},     {"gpu:h100:4.5", NULL, 0},
        {"foo:3", NULL, 0},    /* without the gpu: prefix a count needs a known card */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned count = 99;
        const struct fg_gpu *g = fg_gpu_find(NULL, cases[i].spec, &count);
        print_message("'%s' -> %s x%u\n", cases[i].spec, g ? g->name : "(null)", count);
        assert_null(g);
        assert_int_equal(count, cases[i].count);
    }
    unsigned count = 7;
    assert_null(fg_gpu_find(NULL, NULL, &count));
    assert_int_equal(count, 0);
    char big[600];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_null(fg_gpu_find(NULL, big, NULL));
}

static void find_pci_should_map_ids_first_row_winning(void **state)
{
    (void)state;
    assert_string_equal(fg_gpu_find_pci(NULL, 0x10de, 0x2330)->name, "NVIDIA H100 SXM5 80GB");
    assert_string_equal(fg_gpu_find_pci(NULL, 0x10de, 0x2331)->name, "NVIDIA H100 PCIe 80GB");
    assert_string_equal(fg_gpu_find_pci(NULL, 0x10de, 0x1db8)->label, "V100 32 GB");
    assert_string_equal(fg_gpu_find_pci(NULL, 0x1002, 0x7408)->name,
                        "AMD Instinct MI250X (per GCD)");
    /* 740c is both MI250 and MI250X in pci.ids: the lower MI250 figures win */
    assert_string_equal(fg_gpu_find_pci(NULL, 0x1002, 0x740c)->name,
                        "AMD Instinct MI250 (per GCD)");
    assert_string_equal(fg_gpu_find_pci(NULL, 0x1da3, 0x1063)->name, "Intel Gaudi3");
    assert_null(fg_gpu_find_pci(NULL, 0x10de, 0x233f)); /* seen in a log, unconfirmed */
    assert_null(fg_gpu_find_pci(NULL, 0x102b, 0x0536)); /* Matrox BMC VGA */
    assert_null(fg_gpu_find_pci(NULL, 0, 0));
    assert_true(fg_gpu_table_has_vendor(NULL, 0x1da3));
    assert_false(fg_gpu_table_has_vendor(NULL, 0x1a03));
}

static const char site_text[] =
    "# site additions\n"
    "\n"
    "# our SXM H100s are the h100s here, with a measured total\n"
    "Name=\"NVIDIA H100 SXM5 80GB\" Label=\"H100 80 GB\" Vendor=10de Devices=2330 MemoryGB=80 "
    "MemoryBytes=85000000000 BF16TFLOPS=989 MemBWTBps=3.35 LinkGBps=900 Aliases=h100,h100_sxm\n"
    "Name=\"AMD Instinct MI50 32GB\" Label=\"MI50 32 GB\" vendor=1002 devices=66A1 memorygb=32 "
    "FP16TFLOPS=26.5 MemBWTBps=1.024 LinkGBps=184 Interconnect=\"Infinity Fabric\" "
    "Aliases=MI50 GCDs=1   # no BF16 on gfx906\n";

static void load_should_add_rows_and_replace_by_name(void **state)
{
    (void)state;
    struct fg_gpu_table *t = NULL;
    struct fg_err err = {0};
    assert_int_equal(fg_gpu_table_load_text(site_text, "site.conf", &t, &err), 0);
    const struct fg_gpu_table *b = fg_gpu_table_builtin();
    assert_int_equal(fg_gpu_table_count(t), fg_gpu_table_count(b) + 1);
    /* replaced in place */
    const struct fg_gpu *h = by_name(t, "NVIDIA H100 SXM5 80GB");
    assert_non_null(h);
    assert_int_equal(h->memory_bytes, 85000000000ull);
    for (size_t i = 0; i < fg_gpu_table_count(b); i++) {
        assert_string_equal(fg_gpu_table_at(t, i)->name, fg_gpu_table_at(b, i)->name);
        assert_int_equal(fg_gpu_table_is_site_row(t, i), fg_gpu_table_at(t, i) == h);
    }
    /* added at the end; keys case-insensitive, hex either case, aliases lower-cased */
    const struct fg_gpu *mi50 = fg_gpu_table_at(t, fg_gpu_table_count(t) - 1);
    assert_string_equal(mi50->name, "AMD Instinct MI50 32GB");
    assert_true(fg_gpu_table_is_site_row(t, fg_gpu_table_count(t) - 1));
    assert_int_equal(mi50->devices[0], 0x66a1);
    assert_string_equal(mi50->aliases, "mi50");
    assert_true(mi50->bf16_tflops == 0 && mi50->fp16_tflops == 26.5);
    assert_int_equal(mi50->memory_bytes, 32000000000ull);
    assert_ptr_equal(fg_gpu_find_pci(t, 0x1002, 0x66a1), mi50);
    assert_ptr_equal(fg_gpu_find(t, "gpu:mi50:8", NULL), mi50);
    /* site rows are looked up first: "h100" is now the site's SXM row */
    assert_ptr_equal(fg_gpu_find(t, "h100", NULL), h);
    /* the built-in table is untouched */
    assert_string_equal(fg_gpu_find(b, "h100", NULL)->name, "NVIDIA H100 PCIe 80GB");
    assert_int_equal(by_name(b, "NVIDIA H100 SXM5 80GB")->memory_bytes, 85520809984ull);
    assert_null(fg_gpu_find_pci(b, 0x1002, 0x66a1));
    fg_gpu_table_free(t);
}

static void load_should_read_a_site_file_or_copy_builtin(void **state)
{
    (void)state;
    char path[] = "/tmp/fitgate-test-gpus-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, site_text, strlen(site_text)), (ssize_t)strlen(site_text));
    close(fd);
    struct fg_gpu_table *t = NULL;
    struct fg_err err = {0};
    assert_int_equal(fg_gpu_table_load(path, &t, &err), 0);
    assert_int_equal(fg_gpu_table_count(t), 43);
    fg_gpu_table_free(t);
    unlink(path);

    assert_int_equal(fg_gpu_table_load(NULL, &t, &err), 0);
    assert_int_equal(fg_gpu_table_count(t), 42);
    assert_ptr_not_equal(t, fg_gpu_table_builtin());
    assert_string_equal(fg_gpu_find(t, "t4", NULL)->name, "NVIDIA T4");
    fg_gpu_table_free(t);
}

static void load_should_name_missing_or_unreadable_file(void **state)
{
    (void)state;
    struct fg_gpu_table *t = (struct fg_gpu_table *)0x1;
    struct fg_err err = {0};
    assert_int_equal(fg_gpu_table_load("/nonexistent/gpus.conf", &t, &err), FG_E_NOTFOUND);
    assert_non_null(strstr(err.detail, "/nonexistent/gpus.conf"));
    assert_ptr_equal(t, (struct fg_gpu_table *)0x1); /* untouched on failure */
    assert_int_equal(fg_gpu_table_load("tests", &t, &err), FG_E_IO);
    assert_non_null(strstr(err.detail, "not a regular file"));
    assert_int_equal(fg_gpu_table_load("x", NULL, &err), FG_E_INVAL);
}

struct bad_case {
    const char *row;     /* written as line 3 of site.conf */
    int code;
    const char *needle;  /* must appear in the detail */
};

#define OK_ROW "Name=X Label=Y Vendor=10de Devices=1234 MemoryGB=8 MemBWTBps=1 LinkGBps=1 "

static void load_should_reject_bad_rows_naming_file_and_line(void **state)
{
    (void)state;
    static const struct bad_case cases[] = {
        {OK_ROW "BF16TFLOPS=1 Colour=red", FG_E_PARSE, "unknown key 'Colour'"},
        {OK_ROW "BF16TFLOPS=1 Name=Z", FG_E_PARSE, "Name is given twice"},
        {"Name=X Label=Y Vendor=10de Devices=1234 MemoryGB=80GB MemBWTBps=1 LinkGBps=1 BF16TFLOPS=1",
         FG_E_PARSE, "MemoryGB=80GB"},
        {"Name=X Label=Y Vendor=10de Devices=1234 MemoryGB=0 MemBWTBps=1 LinkGBps=1 BF16TFLOPS=1",
         FG_E_PARSE, "MemoryGB=0"},
        {OK_ROW "BF16TFLOPS=-5", FG_E_PARSE, "BF16TFLOPS=-5"},
        {OK_ROW "BF16TFLOPS=1e3", FG_E_PARSE, "BF16TFLOPS=1e3"},
        {OK_ROW "BF16TFLOPS=0", FG_E_PARSE, "BF16TFLOPS=0"},
        {OK_ROW "BF16TFLOPS=.5", FG_E_PARSE, "BF16TFLOPS=.5"},
        {OK_ROW "BF16TFLOPS=5.", FG_E_PARSE, "BF16TFLOPS=5."},
        {"Name=X Label=Y Vendor=10de Devices=1234 MemoryGB=8 MemBWTBps=3,35 LinkGBps=1 BF16TFLOPS=1",
         FG_E_PARSE, "MemBWTBps=3,35"},
        {"Label=Y Vendor=10de Devices=1234 MemoryGB=8 MemBWTBps=1 LinkGBps=1 BF16TFLOPS=1",
         FG_E_MISSING, "Name is missing"},
        {"Name=X Label=Y Vendor=10de Devices=1234 MemoryGB=8 LinkGBps=1 BF16TFLOPS=1",
         FG_E_MISSING, "X: MemBWTBps is missing"},
        {OK_ROW, FG_E_MISSING, "give BF16TFLOPS"},
        {OK_ROW "BF16TFLOPS=1 Interconnect=\"NVLink", FG_E_PARSE, "no closing"},
        {OK_ROW "BF16TFLOPS=1 Interconnect=\"NVLink\"x", FG_E_PARSE, "closing"},
        {"Name=X Label=Y Vendor=nvidia Devices=1234 MemoryGB=8 MemBWTBps=1 LinkGBps=1 BF16TFLOPS=1",
         FG_E_PARSE, "Vendor=nvidia"},
        {"Name=X Label=Y Vendor=10d Devices=1234 MemoryGB=8 MemBWTBps=1 LinkGBps=1 BF16TFLOPS=1",
         FG_E_PARSE, "4 hex digits"},
        {"Name=X Label=Y Vendor=10de Devices=1,2,3,4,5,6,7,8,9 MemoryGB=8 MemBWTBps=1 LinkGBps=1 "
         "BF16TFLOPS=1",
         FG_E_PARSE, "Devices="},
        {"Name=X Label=Y Vendor=10de Devices=0001,0002,0003,0004,0005,0006,0007,0008,0009 "
         "MemoryGB=8 MemBWTBps=1 LinkGBps=1 BF16TFLOPS=1",
         FG_E_PARSE, "1 to 8 PCI device ids"},
        {"Name=X Label=Y Vendor=10de Devices=1234,1234 MemoryGB=8 MemBWTBps=1 LinkGBps=1 "
         "BF16TFLOPS=1",
         FG_E_PARSE, "Devices=1234,1234"},
        {"Name=X Label=Y Vendor=10de Devices=1234, MemoryGB=8 MemBWTBps=1 LinkGBps=1 BF16TFLOPS=1",
         FG_E_PARSE, "Devices=1234,"},
        {"Name=\"0123456789012345678901234567890123456789012345678901234567890123456789\" Label=Y "
         "Vendor=10de Devices=1234 MemoryGB=8 MemBWTBps=1 LinkGBps=1 BF16TFLOPS=1",
         FG_E_PARSE, "at most 63"},
        {"Name=X Label=\"a label that is far too long\" Vendor=10de Devices=1234 MemoryGB=8 "
         "MemBWTBps=1 LinkGBps=1 BF16TFLOPS=1",
         FG_E_PARSE, "at most 23"},
        {OK_ROW "BF16TFLOPS=1 MemoryBytes=8388608", FG_E_RANGE, "MemoryBytes=8388608"},
        {OK_ROW "BF16TFLOPS=1 MemoryBytes=8589934592000", FG_E_RANGE, "not near MemoryGB=8"},
        {OK_ROW "BF16TFLOPS=1 Aliases=\"h 100\"", FG_E_PARSE, "Aliases=h 100"},
        {OK_ROW "BF16TFLOPS=1 Aliases=a,,b", FG_E_PARSE, "Aliases=a,,b"},
        {OK_ROW "BF16TFLOPS=1 GCDs=0", FG_E_PARSE, "GCDs=0"},
        {OK_ROW "BF16TFLOPS=1 Aliases=", FG_E_PARSE, "Aliases has no value"},
        {OK_ROW "BF16TFLOPS=1 Gcds", FG_E_PARSE, "'Gcds' is not Key=Value"},
        {OK_ROW "BF16TFLOPS=1 =5", FG_E_PARSE, "'=5' is not Key=Value"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text, "# site\n\n  %s\n", cases[i].row);
        struct fg_gpu_table *t = NULL;
        struct fg_err err = {0};
        int rc = fg_gpu_table_load_text(text, "site.conf", &t, &err);
        print_message("[%zu] rc=%d %s\n", i, rc, err.detail);
        assert_int_equal(rc, cases[i].code);
        assert_int_equal(err.code, cases[i].code);
        assert_null(t);
        assert_non_null(strstr(err.detail, "site.conf:3: "));
        assert_non_null(strstr(err.detail, cases[i].needle));
    }
}

static void load_should_reject_a_name_used_twice(void **state)
{
    (void)state;
    const char *text = OK_ROW "BF16TFLOPS=1\n" OK_ROW "BF16TFLOPS=2\n" OK_ROW "BF16TFLOPS=3\n";
    struct fg_gpu_table *t = NULL;
    struct fg_err err = {0};
    assert_int_equal(fg_gpu_table_load_text(text, "site.conf", &t, &err), FG_E_PARSE);
    assert_non_null(strstr(err.detail, "site.conf:2: "));
    assert_non_null(strstr(err.detail, "already used at line 1"));
    /* CRLF line ends and a missing final newline are fine */
    assert_int_equal(fg_gpu_table_load_text(OK_ROW "BF16TFLOPS=1\r\n" "# x\r\n", "c.conf", &t, &err),
                     0);
    assert_int_equal(fg_gpu_table_count(t), 43);
    fg_gpu_table_free(t);
    assert_int_equal(fg_gpu_table_load_text(OK_ROW "BF16TFLOPS=1", "c.conf", &t, &err), 0);
    fg_gpu_table_free(t);
}

static void free_should_accept_null_and_ignore_builtin(void **state)
{
    (void)state;
    fg_gpu_table_free(NULL);
    fg_gpu_table_free((struct fg_gpu_table *)fg_gpu_table_builtin());
    assert_int_equal(fg_gpu_table_count(fg_gpu_table_builtin()), 42);
    assert_int_equal(fg_gpu_table_count(NULL), 0);
    assert_null(fg_gpu_table_at(NULL, 0));
    assert_false(fg_gpu_table_is_site_row(NULL, 0));
}

static void *builtin_from_thread(void *arg)
{
    (void)arg;
    return (void *)fg_gpu_table_builtin();
}

/* Every thread must see one and the same table (static data since
 * tools/gen_gpus.c; parsed on first use, under a lock, before).  Run in a
 * child, as a fresh process would. */
static void builtin_should_be_parsed_once_across_threads(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        pthread_t th[8];
        void *res[8];
        for (int i = 0; i < 8; i++)
            if (pthread_create(&th[i], NULL, builtin_from_thread, NULL))
                _exit(3);
        for (int i = 0; i < 8; i++)
            pthread_join(th[i], &res[i]);
        for (int i = 0; i < 8; i++)
            if (!res[i] || res[i] != res[0])
                _exit(1);
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* The planner and the plugin call fg_gpu_find in loops: it must stay cheap
 * (well over thousands of lookups per second, even under sanitizers). */
static void find_should_stay_cheap(void **state)
{
    (void)state;
    static const char *const specs[] = {"h100", "gres:gpu:a100_80g:2", "NVIDIA H100 SXM5 80GB",
                                        "gaudi3", "no-such-card", "gpu:mi250x:8"};
    const struct fg_gpu_table *t = fg_gpu_table_builtin();
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    size_t hits = 0;
    for (int i = 0; i < 60000; i++)
        hits += fg_gpu_find(t, specs[i % 6], NULL) != NULL;
    clock_gettime(CLOCK_MONOTONIC, &b);
    double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
    /* a figure, not a check: make check asserts no speed (make bench measures it) */
    print_message("60000 lookups in %.3f s (%.0f per second)\n", s, 60000 / s);
    assert_int_equal(hits, 50000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(builtin_should_be_parsed_once_across_threads),
        cmocka_unit_test(builtin_should_parse_every_shipped_row),
        cmocka_unit_test(builtin_should_equal_the_shipped_file_read_at_run_time),
        cmocka_unit_test(builtin_should_match_facts_in_gpus_tsv),
        cmocka_unit_test(builtin_should_describe_one_gcd_for_mi250),
        cmocka_unit_test(find_should_accept_names_labels_aliases_and_gres),
        cmocka_unit_test(find_should_return_null_for_unknown_or_malformed),
        cmocka_unit_test(find_pci_should_map_ids_first_row_winning),
        cmocka_unit_test(find_should_stay_cheap),
        cmocka_unit_test(load_should_add_rows_and_replace_by_name),
        cmocka_unit_test(load_should_read_a_site_file_or_copy_builtin),
        cmocka_unit_test(load_should_name_missing_or_unreadable_file),
        cmocka_unit_test(load_should_reject_bad_rows_naming_file_and_line),
        cmocka_unit_test(load_should_reject_a_name_used_twice),
        cmocka_unit_test(free_should_accept_null_and_ignore_builtin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
