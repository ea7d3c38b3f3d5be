/*
 * fitgate gpus: the GPUs of this node (or of an hwloc XML topology) matched
 * to the GPU table, or the table itself (--table).
 *
 * The engine never reads the environment; this front end passes the job's
 * device lists to it: SLURM_STEP_GPUS (inside a step) or SLURM_JOB_GPUS,
 * else CUDA_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES.  They describe this
 * machine, so they are not applied to --topology FILE (another node).
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "format.h"
#include "hw/detect.h"
#include "hw/gpu.h"

static void usage(FILE *f)
{
    fputs("usage: fitgate gpus [--topology FILE.xml] [--json] [--gpus-conf FILE]\n"
          "                    [--visible LIST | --all]\n"
          "       fitgate gpus --table [--json] [--gpus-conf FILE]\n"
          "  --topology FILE  read an hwloc XML export (lstopo --of xml) instead of this machine\n"
          "  --gpus-conf FILE site GPU table: adds rows, or replaces built-in rows by Name\n"
          "  --visible LIST   only these GPUs (node indices or UUIDs, as in SLURM_JOB_GPUS)\n"
          "  --all            ignore SLURM_STEP_GPUS / SLURM_JOB_GPUS / CUDA_VISIBLE_DEVICES /\n"
          "                   ROCR_VISIBLE_DEVICES\n"
          "  --table          print the GPU table instead of detecting\n"
          "Exit status: 0 success (also when no GPU is found), 2 error.\n",
          f);
}

static const char *human_bytes(uint64_t b, char *buf, size_t len)
{
    if (b == 0)
        snprintf(buf, len, "unknown");
    else
        snprintf(buf, len, "%.2f GiB", (double)b / (1024.0 * 1024.0 * 1024.0));
    return buf;
}

static char *hex4(uint16_t v, char buf[5])
{
    snprintf(buf, 5, "%04x", v);
    return buf;
}

static cJSON *row_json(const struct fg_gpu *g)
{
    char h[5];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", g->name);
    cJSON_AddStringToObject(o, "label", g->label);
    cJSON_AddStringToObject(o, "vendor_id", hex4(g->vendor, h));
    cJSON *d = cJSON_AddArrayToObject(o, "device_ids");
    for (size_t i = 0; i < g->n_devices; i++)
        cJSON_AddItemToArray(d, cJSON_CreateString(hex4(g->devices[i], h)));
    cJSON_AddNumberToObject(o, "memory_gb", g->memory_gb);
    cJSON_AddNumberToObject(o, "memory_bytes", (double)g->memory_bytes);
    cJSON_AddNumberToObject(o, "bf16_tflops", g->bf16_tflops);
    cJSON_AddNumberToObject(o, "fp16_tflops", g->fp16_tflops);
    cJSON_AddNumberToObject(o, "bw_tbps", g->bw_tbps);
    cJSON_AddNumberToObject(o, "link_gbps", g->link_gbps);
    cJSON_AddStringToObject(o, "interconnect", g->interconnect);
    cJSON *a = cJSON_AddArrayToObject(o, "aliases");
    char tmp[sizeof g->aliases];
    memcpy(tmp, g->aliases, sizeof tmp);
    for (char *save = NULL, *tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        cJSON_AddItemToArray(a, cJSON_CreateString(tok));
    cJSON_AddNumberToObject(o, "gcds", g->gcds);
    return o;
}

static void print_json(cJSON *root)
{
    char *s = fg_cli_json_print(root);
    if (s)
        puts(s);
    free(s);
    cJSON_Delete(root);
}

static int print_table(const struct fg_gpu_table *t, int json)
{
    size_t n = fg_gpu_table_count(t);
    if (json) {
        cJSON *root = cJSON_CreateObject();
        cJSON *rows = cJSON_AddArrayToObject(root, "gpus");
        for (size_t i = 0; i < n; i++) {
            cJSON *r = row_json(fg_gpu_table_at(t, i));
            cJSON_AddBoolToObject(r, "site", fg_gpu_table_is_site_row(t, i));
            cJSON_AddItemToArray(rows, r);
        }
        print_json(root);
        return 0;
    }
    printf("%-44s %-18s %-24s %6s %8s %7s %7s  %s\n", "Name", "Label", "PCI ids", "GB", "TFLOP/s",
           "TB/s", "GB/s", "Aliases");
    for (size_t i = 0; i < n; i++) {
        const struct fg_gpu *g = fg_gpu_table_at(t, i);
        char ids[64];
        size_t l = (size_t)snprintf(ids, sizeof ids, "%04x:", g->vendor);
        for (size_t d = 0; d < g->n_devices && l + 6 < sizeof ids; d++)
            l += (size_t)snprintf(ids + l, sizeof ids - l, "%s%04x", d ? "," : "", g->devices[d]);
        char tf[24];
        if (g->bf16_tflops > 0)
            snprintf(tf, sizeof tf, "%.1f", g->bf16_tflops);
        else
            snprintf(tf, sizeof tf, "%.1f*", g->fp16_tflops);
        printf("%-44s %-18s %-24s %6u %8s %7.4g %7.4g  %s%s\n", g->name, g->label, ids,
               g->memory_gb, tf, g->bw_tbps, g->link_gbps, g->aliases,
               fg_gpu_table_is_site_row(t, i) ? "  (site)" : "");
    }
    printf("TFLOP/s: dense BF16; * = FP16 (the card has no BF16).  %zu rows.\n", n);
    return 0;
}

static cJSON *result_json(const struct fg_detect_result *r)
{
    char h[5];
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "topology", r->topology);
    cJSON_AddBoolToObject(root, "this_system", r->this_system);
    cJSON_AddNumberToObject(root, "count", (double)r->n);
    cJSON_AddNumberToObject(root, "on_node", (double)r->n_on_node);
    cJSON_AddNumberToObject(root, "unknown", (double)r->n_unknown);
    cJSON_AddStringToObject(root, "restricted_by", r->restricted_by);
    cJSON_AddStringToObject(root, "blacklisted_components", r->blacklisted);
    cJSON *arr = cJSON_AddArrayToObject(root, "gpus");
    for (size_t i = 0; i < r->n; i++) {
        const struct fg_detected_gpu *g = &r->gpus[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "index", g->index);
        cJSON_AddNumberToObject(o, "runtime_index", g->runtime_index);
        cJSON_AddStringToObject(o, "pci_busid", g->busid);
        cJSON_AddStringToObject(o, "vendor_id", hex4(g->vendor, h));
        cJSON_AddStringToObject(o, "device_id", hex4(g->device, h));
        cJSON_AddStringToObject(o, "subvendor_id", hex4(g->subvendor, h));
        cJSON_AddStringToObject(o, "subdevice_id", hex4(g->subdevice, h));
        cJSON_AddStringToObject(o, "class_id", hex4(g->class_id, h));
        cJSON_AddBoolToObject(o, "known", g->known);
        if (g->row) {
            cJSON_AddStringToObject(o, "name", g->row->name);
            cJSON_AddStringToObject(o, "label", g->row->label);
        } else {
            cJSON_AddNullToObject(o, "name");
            cJSON_AddNullToObject(o, "label");
        }
        cJSON_AddStringToObject(o, "model", g->model);
        cJSON_AddNumberToObject(o, "memory_bytes", (double)g->memory_bytes);
        cJSON_AddStringToObject(o, "memory_source", g->memory_source);
        cJSON_AddNumberToObject(o, "partition", g->partition);
        cJSON_AddNumberToObject(o, "partitions", g->partitions);
        cJSON_AddStringToObject(o, "numa", g->numa);
        cJSON_AddStringToObject(o, "cpuset", g->cpuset);
        cJSON_AddStringToObject(o, "osdevs", g->osdevs);
        cJSON_AddStringToObject(o, "uuid", g->uuid);
        if (g->message[0])
            cJSON_AddStringToObject(o, "message", g->message);
        else
            cJSON_AddNullToObject(o, "message");
        cJSON_AddItemToArray(arr, o);
    }
    return root;
}

static void print_result(const struct fg_detect_result *r)
{
    if (r->n == 0)
        printf("No GPU on %s", r->topology);
    else
        printf("%zu GPU%s on %s", r->n, r->n == 1 ? "" : "s", r->topology);
    if (r->restricted_by[0])
        printf(" (%zu of %zu, by %s)", r->n, r->n_on_node, r->restricted_by);
    printf("\n");
    if (r->n) {
        printf("%3s  %-12s  %-9s  %-42s  %-26s  %-9s  %-5s  %s\n", "#", "PCI", "ID", "Card",
               "Memory", "From", "NUMA", "CPUs");
        for (size_t i = 0; i < r->n; i++) {
            const struct fg_detected_gpu *g = &r->gpus[i];
            char mem[64], hb[24], card[64];
            if (g->memory_bytes)
                snprintf(mem, sizeof mem, "%s (%llu)", human_bytes(g->memory_bytes, hb, sizeof hb),
                         (unsigned long long)g->memory_bytes);
            else
                snprintf(mem, sizeof mem, "unknown");
            if (g->row)
                snprintf(card, sizeof card, "%s", g->row->name);
            else
                snprintf(card, sizeof card, "unknown%s%.40s%s", g->model[0] ? " (" : "", g->model,
                         g->model[0] ? ")" : "");
            if (g->partitions > 1) {
                size_t l = strlen(card);
                snprintf(card + l, sizeof card - l, " [%u/%u]", g->partition + 1, g->partitions);
            }
            printf("%3u  %-12s  %04x:%04x  %-42s  %-26s  %-9s  %-5s  %s\n", g->index, g->busid,
                   g->vendor, g->device, card, mem, g->memory_source, g->numa[0] ? g->numa : "-",
                   g->cpuset[0] ? g->cpuset : "-");
        }
    }
    /* One note per PCI id (8 identical unknown cards need one line, not 8). */
    for (size_t i = 0; i < r->n; i++) {
        const struct fg_detected_gpu *g = &r->gpus[i];
        if (!g->message[0])
            continue;
        size_t same = 0;
        bool first = true;
        for (size_t j = 0; j < r->n; j++)
            if (r->gpus[j].vendor == g->vendor && r->gpus[j].device == g->device &&
                r->gpus[j].message[0]) {
                if (j < i)
                    first = false;
                same++;
            }
        if (!first)
            continue;
        printf("note: %s", g->message);
        if (same > 1)
            printf(" (and %zu more GPU%s like it)", same - 1, same == 2 ? "" : "s");
        printf("\n");
    }
    if (!r->this_system && strcmp(r->topology, "this machine") == 0)
        printf("warning: hwloc says this topology is not this machine's (HWLOC_XMLFILE, "
               "HWLOC_SYNTHETIC or HWLOC_FSROOT set?)\n");
}

int fg_cli_gpus(int argc, char **argv)
{
    const char *topology = NULL, *conf = NULL, *visible = NULL;
    int json = 0, table = 0, all = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--json"))
            json = 1;
        else if (!strcmp(a, "--table"))
            table = 1;
        else if (!strcmp(a, "--all"))
            all = 1;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if ((!strcmp(a, "--topology") || !strcmp(a, "--gpus-conf") ||
                    !strcmp(a, "--visible")) && i + 1 < argc) {
            const char **dst = a[2] == 't' ? &topology : a[2] == 'g' ? &conf : &visible;
            *dst = argv[++i];
        } else if (!strncmp(a, "--topology=", 11))
            topology = a + 11;
        else if (!strncmp(a, "--gpus-conf=", 12))
            conf = a + 12;
        else if (!strncmp(a, "--visible=", 10))
            visible = a + 10;
        else {
            fprintf(stderr, "fitgate gpus: unknown option or missing value '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (visible && all) {
        fprintf(stderr, "fitgate gpus: --visible and --all contradict each other\n");
        return 2;
    }
    struct fg_err err = {0};
    struct fg_gpu_table *site = NULL;
    if (conf && fg_gpu_table_load(conf, &site, &err)) {
        fprintf(stderr, "fitgate: error: %s\n", err.detail);
        return 2;
    }
    const struct fg_gpu_table *t = site ? site : fg_gpu_table_builtin();
    if (!t) {
        fprintf(stderr, "fitgate: error: out of memory reading the GPU table\n");
        return 2;
    }
    if (table) {
        int rc = print_table(t, json);
        fg_gpu_table_free(site);
        return rc;
    }

    struct fg_detect_opts o = {.xml_path = topology, .table = t};
    if (visible) {
        o.visible = visible;
        o.visible_name = "--visible";
    } else if (!all && !topology) {
        /* The step's list is the narrower one when both are set. */
        if ((o.visible = getenv("SLURM_STEP_GPUS")))
            o.visible_name = "SLURM_STEP_GPUS";
        else if ((o.visible = getenv("SLURM_JOB_GPUS")))
            o.visible_name = "SLURM_JOB_GPUS";
        o.cuda_visible = getenv("CUDA_VISIBLE_DEVICES");
        o.rocr_visible = getenv("ROCR_VISIBLE_DEVICES");
    }
    struct fg_detect_result *r = NULL;
    if (fg_detect_gpus(&o, &r, &err)) {
        fprintf(stderr, "fitgate: error: %s\n", err.detail);
        fg_gpu_table_free(site);
        return 2;
    }
    if (json)
        print_json(result_json(r));
    else
        print_result(r);
    fg_detect_result_free(r);
    fg_gpu_table_free(site);
    return 0;
}
