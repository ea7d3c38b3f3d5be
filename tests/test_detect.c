/*
 * test_detect.c - GPU detection through hwloc on recorded XML topologies of
 * real nodes (tests/fixtures/hwloc, README.md there says where each comes
 * from): the GPU count, card and memory each node must give; BMC VGA chips
 * dropped; unknown PCI ids reported without losing the other GPUs; zero GPUs
 * as a valid answer; the job's device lists; and the OpenCL / GL hwloc
 * components kept from starting.  Run from the repository root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hw/detect.h"
#include "hw/gpu.h"

#define DIR_XML "tests/fixtures/hwloc/"

static struct fg_detect_result *detect_ok(const struct fg_detect_opts *o)
{
    struct fg_detect_result *r = NULL;
    struct fg_err err = {0};
    int rc = fg_detect_gpus(o, &r, &err);
    if (rc)
        print_message("fg_detect_gpus: %d %s\n", rc, err.detail);
    assert_int_equal(rc, 0);
    assert_non_null(r);
    return r;
}

static struct fg_detect_result *detect_file(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, DIR_XML "%s", name);
    struct fg_detect_opts o = {.xml_path = path};
    return detect_ok(&o);
}

static int detect_err(const struct fg_detect_opts *o, struct fg_err *err)
{
    struct fg_detect_result *r = (struct fg_detect_result *)0x1;
    int rc = fg_detect_gpus(o, &r, err);
    assert_ptr_equal(r, (struct fg_detect_result *)0x1); /* untouched on failure */
    print_message("-> %d %s\n", rc, err->detail);
    return rc;
}

/* What each recorded node must give.  row NULL: a card without a table row
 * (known = false for every GPU).  memory/source: of every GPU, or of the first
 * when mixed (checked in detail below). */
static const struct expect {
    const char *file;
    size_t gpus, unknown;
    const char *row;
    uint64_t memory;
    const char *source;
    bool uniform;   /* every GPU has that row, memory and source */
} expects[] = {
    {"flux-core-ipa20-4xH100-SXM5.xml", 4, 0, "NVIDIA H100 SXM5 80GB", 85019590656ull, "CUDA",
     true},  /* CUDAGlobalMemorySize 83026944 KiB; Matrox BMC VGA dropped */
    {"mpibind-hpe-tioga-MI250X.xml", 8, 0, "AMD Instinct MI250X (per GCD)", 68702699520ull, "RSMI",
     true},  /* 4 OAMs = 8 GCDs, RSMIVRAMSize 67092480 KiB each */
    {"mpibind-g4dnmetal.xml", 8, 0, "NVIDIA T4", 15843721216ull, "CUDA", true},
    {"hwloc-tests-nvidiaDGX2.v2.xml", 16, 0, "NVIDIA V100 32GB / V100S (SXM2/SXM3/PCIe)",
     34089205760ull, "table", true},  /* NVML osdevs carry no size; NVSwitches dropped */
    {"mpibind-coral-lassen.xml", 4, 0, "NVIDIA V100 16GB (SXM2/PCIe)", 16911433728ull, "CUDA",
     true},  /* ASPEED BMC VGA dropped */
    {"flux-core-elcap-4xMI300A.xml", 4, 0, "AMD Instinct MI300A (APU)", 101060198400ull, "RSMI",
     true},
    {"flux-core-tuo.SPX-4xMI300A.xml", 4, 0, "AMD Instinct MI300A (APU)", 101060198400ull,
     "table", true},  /* no RSMIVRAMSize in this export */
    {"flux-core-tuo.CPX-4xMI300A.xml", 24, 0, "AMD Instinct MI300A (APU)", 101060198400ull / 6,
     "table", true},  /* 6 partitions per APU share its memory */
    {"flux-sched-rsmi_corona240-MI50.xml", 8, 8, NULL, 34342961152ull, "RSMI", true},
    {"mpibind-epyc-corona-p2.xml", 8, 8, NULL, 34342961152ull, "OpenCL", true},
    {"hwloc-tests-power8gpudistances.v2.xml", 4, 4, NULL, 17071734784ull, "CUDA", true},
    {"flux-sched-chimera-multi-gpu.hwloc1.xml", 2, 2, NULL, 8513978368ull, "CUDA", false},
    {"hwloc-tests-32em64t-pci-wholeio.v2.xml", 4, 4, NULL, 0, "none", false},
    /* hwloc 2.x cannot import XML version 3.0: an error, checked below */
    {"hwloc-tests-nvidiaDGX2.v3-format.xml", 0, 0, NULL, 0, NULL, false},
};

static void detect_should_give_each_recorded_node_its_gpus(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof expects / sizeof expects[0]; i++) {
        const struct expect *e = &expects[i];
        if (!e->source)
            continue;
        print_message("%s\n", e->file);
        struct fg_detect_result *r = detect_file(e->file);
        assert_int_equal(r->n, e->gpus);
        assert_int_equal(r->n_on_node, e->gpus);
        assert_int_equal(r->n_unknown, e->unknown);
        assert_false(r->this_system);
        assert_string_equal(r->restricted_by, "");
        for (size_t k = 0; k < r->n; k++) {
            const struct fg_detected_gpu *g = &r->gpus[k];
            assert_int_equal(g->index, k);
            assert_true((g->class_id >> 8) == 0x03 || (g->class_id >> 8) == 0x12);
            assert_true(g->vendor == 0x10de || g->vendor == 0x1002); /* no BMC VGA */
            assert_int_equal(g->known, g->row != NULL);
            if (g->known)
                assert_int_equal(g->row->vendor, g->vendor);
            else
                assert_non_null(strstr(g->message, "no row in the GPU table"));
            assert_true(g->cpuset[0] != '\0');
            assert_true(g->numa[0] != '\0');
            if (!e->uniform && k > 0)
                continue;
            if (e->row)
                assert_string_equal(g->row->name, e->row);
            else
                assert_null(g->row);
            assert_int_equal(g->memory_bytes, e->memory);
            assert_string_equal(g->memory_source, e->source);
        }
        fg_detect_result_free(r);
    }
}

/* Every file in the fixture folder has an expectation above. */
static void every_fixture_should_have_an_expectation(void **state)
{
    (void)state;
    DIR *d = opendir(DIR_XML);
    assert_non_null(d);
    size_t n = 0;
    for (struct dirent *de; (de = readdir(d));) {
        size_t l = strlen(de->d_name);
        if (l < 5 || strcmp(de->d_name + l - 4, ".xml"))
            continue;
        bool found = false;
        for (size_t i = 0; i < sizeof expects / sizeof expects[0]; i++)
            found = found || !strcmp(expects[i].file, de->d_name);
        if (!found)
            print_message("no expectation for %s\n", de->d_name);
        assert_true(found);
        n++;
    }
    closedir(d);
    assert_int_equal(n, sizeof expects / sizeof expects[0]);
}

static void detect_should_refuse_hwloc3_xml_with_a_hint(void **state)
{
    (void)state;
    struct fg_detect_opts o = {.xml_path = DIR_XML "hwloc-tests-nvidiaDGX2.v3-format.xml"};
    if ((hwloc_get_api_version() >> 16) >= 3) {
        struct fg_detect_result *r = detect_ok(&o); /* a newer hwloc reads it */
        assert_int_equal(r->n, 16);
        fg_detect_result_free(r);
        return;
    }
    struct fg_err err = {0};
    assert_int_equal(detect_err(&o, &err), FG_E_PARSE);
    assert_non_null(strstr(err.detail, "nvidiaDGX2.v3-format.xml"));
    assert_non_null(strstr(err.detail, "hwloc 3.x"));
    assert_non_null(strstr(err.detail, "lstopo --of xml"));
}

static void ipa20_should_give_four_h100_with_locality_and_no_matrox(void **state)
{
    (void)state;
    struct fg_detect_result *r = detect_file("flux-core-ipa20-4xH100-SXM5.xml");
    static const char *const bus[] = {"0000:4e:00.0", "0000:5f:00.0", "0000:cb:00.0",
                                      "0000:db:00.0"};
    assert_int_equal(r->n, 4);
    for (size_t i = 0; i < 4; i++) {
        const struct fg_detected_gpu *g = &r->gpus[i];
        assert_string_equal(g->busid, bus[i]);
        assert_int_equal(g->device, 0x2330);
        assert_int_equal(g->runtime_index, i); /* nvml0..3 in bus order */
        assert_int_equal(g->class_id, 0x0302);
        assert_int_equal(g->subdevice, 0x16c0);
        assert_string_equal(g->row->label, "H100 80 GB");
        assert_string_equal(g->model, "NVIDIA H100 80GB HBM3");
        assert_int_equal(g->partitions, 1);
        assert_string_equal(g->message, "");
        assert_non_null(strstr(g->osdevs, "cuda"));
    }
    /* the non-I/O ancestor of 5f:00.0 (the cpuset the XML gives the package) */
    assert_string_equal(r->gpus[1].cpuset, "14-27,126-139");
    assert_string_equal(r->gpus[1].numa, "1");
    fg_detect_result_free(r);
}

static void tioga_should_count_each_mi250x_gcd_in_rsmi_order(void **state)
{
    (void)state;
    struct fg_detect_result *r = detect_file("mpibind-hpe-tioga-MI250X.xml");
    assert_int_equal(r->n, 8);
    for (size_t i = 0; i < 8; i++) {
        const struct fg_detected_gpu *g = &r->gpus[i];
        char want[16];
        snprintf(want, sizeof want, "rsmi%zu", i);
        assert_string_equal(g->osdevs, want);
        assert_int_equal(g->runtime_index, i);
        assert_int_equal(g->row->gcds, 2);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(r->gpus[j].busid, g->busid); /* one PCI function per GCD */
    }
    assert_string_equal(r->gpus[0].busid, "0000:c1:00.0");
    assert_string_equal(r->gpus[0].uuid, "4a7c19da329a2b8c");
    fg_detect_result_free(r);
}

/* On corona the rsmi (ROCr) order is not the PCI bus order: node order
 * follows the runtime, so index 0 is rsmi0 at 63:00.0. */
static void corona_should_follow_rsmi_order_and_drop_aspeed(void **state)
{
    (void)state;
    struct fg_detect_result *r = detect_file("flux-sched-rsmi_corona240-MI50.xml");
    assert_int_equal(r->n, 8);
    assert_string_equal(r->gpus[0].busid, "0000:63:00.0");
    assert_string_equal(r->gpus[0].osdevs, "rsmi0");
    assert_string_equal(r->gpus[2].busid, "0000:03:00.0");
    for (size_t i = 0; i < r->n; i++) {
        assert_int_equal(r->gpus[i].vendor, 0x1002);
        assert_int_equal(r->gpus[i].device, 0x66a1);
        assert_int_equal(r->gpus[i].runtime_index, i);
        assert_non_null(strstr(r->gpus[i].message, "1002:66a1"));
        assert_non_null(strstr(r->gpus[i].message, "Vendor=1002 Devices=66a1"));
        assert_non_null(strstr(r->gpus[i].message, "MemoryBytes=34342961152"));
        assert_non_null(strstr(r->gpus[i].message, "gpus.conf"));
    }
    fg_detect_result_free(r);
}

static void tuo_cpx_should_count_partitions_and_split_memory(void **state)
{
    (void)state;
    struct fg_detect_result *r = detect_file("flux-core-tuo.CPX-4xMI300A.xml");
    assert_int_equal(r->n, 24);
    for (size_t i = 0; i < r->n; i++) {
        const struct fg_detected_gpu *g = &r->gpus[i];
        assert_int_equal(g->partitions, 6);
        assert_int_equal(g->partition, i % 6);
        assert_int_equal(g->runtime_index, i);
        assert_string_equal(g->busid, r->gpus[i - i % 6].busid);
        assert_true(g->known);
        assert_non_null(strstr(g->message, "split evenly"));
    }
    assert_string_equal(r->gpus[6].busid, "0001:02:00.0");
    fg_detect_result_free(r);
}

static void chimera_should_keep_both_vendors_as_unknown(void **state)
{
    (void)state;
    struct fg_detect_result *r = detect_file("flux-sched-chimera-multi-gpu.hwloc1.xml");
    assert_int_equal(r->n, 2);
    assert_int_equal(r->gpus[0].vendor, 0x10de);
    assert_string_equal(r->gpus[0].model, "GeForce GTX 1070");
    assert_int_equal(r->gpus[0].memory_bytes, 8314432ull * 1024);
    assert_string_equal(r->gpus[0].memory_source, "CUDA");
    assert_int_equal(r->gpus[1].vendor, 0x1002);
    assert_int_equal(r->gpus[1].memory_bytes, 16760832ull * 1024);
    assert_string_equal(r->gpus[1].memory_source, "OpenCL");
    assert_int_equal(r->gpus[1].runtime_index, 0); /* first AMD GPU */
    fg_detect_result_free(r);
}

static void wholeio_should_drop_matrox_and_report_missing_memory(void **state)
{
    (void)state;
    struct fg_detect_result *r = detect_file("hwloc-tests-32em64t-pci-wholeio.v2.xml");
    assert_int_equal(r->n, 4);
    static const struct {
        const char *bus;
        uint64_t mem;
        const char *src;
    } want[] = {{"0000:03:00.0", 0, "none"},
                {"0000:83:00.0", 0, "none"},
                {"0000:84:00.0", 11796032ull * 1024, "CUDA"},
                {"0000:84:00.1", 3087360ull * 1024, "OpenCL"}};
    for (size_t i = 0; i < 4; i++) {
        assert_string_equal(r->gpus[i].busid, want[i].bus);
        assert_int_equal(r->gpus[i].memory_bytes, want[i].mem);
        assert_string_equal(r->gpus[i].memory_source, want[i].src);
        assert_int_not_equal(r->gpus[i].vendor, 0x102b);
    }
    assert_non_null(strstr(r->gpus[0].message, "hwloc gives no memory size"));
    fg_detect_result_free(r);
}

/* Copy a fixture with one string replaced once; the caller unlinks path. */
static void patched_fixture(const char *name, const char *from, const char *to, char *path,
                            size_t cap)
{
    char src[256];
    snprintf(src, sizeof src, DIR_XML "%s", name);
    FILE *f = fopen(src, "rb");
    assert_non_null(f);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *at = strstr(buf, from);
    assert_non_null(at);
    snprintf(path, cap, "/tmp/fitgate-test-detect-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *o = fdopen(fd, "wb");
    fwrite(buf, 1, (size_t)(at - buf), o);
    fputs(to, o);
    fputs(at + strlen(from), o);
    fclose(o);
}

/* 10de:233f shows up in a public nvidia-smi log but in no id list: it must
 * be reported with its id and the row to add, and the other GPUs kept. */
static void unknown_id_should_be_reported_and_the_others_kept(void **state)
{
    (void)state;
    char path[64];
    patched_fixture("flux-core-ipa20-4xH100-SXM5.xml", "[10de:2330]", "[10de:233f]", path,
                    sizeof path);
    struct fg_detect_opts o = {.xml_path = path};
    struct fg_detect_result *r = detect_ok(&o);
    unlink(path);
    assert_int_equal(r->n, 4);
    assert_int_equal(r->n_unknown, 1);
    size_t unknown = 0;
    for (size_t i = 0; i < r->n; i++) {
        const struct fg_detected_gpu *g = &r->gpus[i];
        if (g->known) {
            assert_string_equal(g->row->name, "NVIDIA H100 SXM5 80GB");
            assert_string_equal(g->message, "");
            continue;
        }
        unknown++;
        assert_null(g->row);
        assert_int_equal(g->device, 0x233f);
        assert_int_equal(g->memory_bytes, 85019590656ull); /* CUDA still knows */
        assert_string_equal(g->memory_source, "CUDA");
        print_message("%s\n", g->message);
        assert_non_null(strstr(g->message, g->busid));
        assert_non_null(strstr(g->message, "PCI id 10de:233f"));
        assert_non_null(strstr(g->message, "Vendor=10de Devices=233f"));
        assert_non_null(strstr(g->message, "Name=\"NVIDIA H100 80GB HBM3\""));
    }
    assert_int_equal(unknown, 1);
    fg_detect_result_free(r);
}

/* A site row for the MI50 turns corona's unknown GPUs into known ones. */
static void site_row_should_make_an_unknown_card_known(void **state)
{
    (void)state;
    struct fg_gpu_table *t = NULL;
    struct fg_err err = {0};
    assert_int_equal(fg_gpu_table_load_text("Name=\"AMD Instinct MI50 32GB\" Label=\"MI50 32 GB\" "
                                            "Vendor=1002 Devices=66a1 MemoryGB=32 FP16TFLOPS=26.5 "
                                            "MemBWTBps=1.024 LinkGBps=184 Aliases=mi50\n",
                                            "site.conf", &t, &err),
                     0);
    struct fg_detect_opts o = {.xml_path = DIR_XML "flux-sched-rsmi_corona240-MI50.xml",
                               .table = t};
    struct fg_detect_result *r = detect_ok(&o);
    assert_int_equal(r->n, 8);
    assert_int_equal(r->n_unknown, 0);
    for (size_t i = 0; i < r->n; i++) {
        assert_ptr_equal(r->gpus[i].row, fg_gpu_find(t, "mi50", NULL));
        assert_string_equal(r->gpus[i].memory_source, "RSMI"); /* the attribute beats the row */
    }
    fg_detect_result_free(r);
    fg_gpu_table_free(t);
}

static void machine_without_gpu_should_give_zero_not_an_error(void **state)
{
    (void)state;
    /* a GPU-less node, as hwloc itself would export it */
    char path[] = "/tmp/fitgate-test-nogpu-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    hwloc_topology_t topo;
    assert_int_equal(hwloc_topology_init(&topo), 0);
    assert_int_equal(hwloc_topology_set_synthetic(topo, "pack:2 l3:1 core:4 pu:2"), 0);
    assert_int_equal(hwloc_topology_load(topo), 0);
    assert_int_equal(hwloc_topology_export_xml(topo, path, 0), 0);
    hwloc_topology_destroy(topo);

    struct fg_detect_opts o = {.xml_path = path};
    struct fg_detect_result *r = detect_ok(&o);
    assert_int_equal(r->n, 0);
    assert_int_equal(r->n_on_node, 0);
    assert_null(r->gpus);
    fg_detect_result_free(r);

    /* a job that was given GPU 0 where hwloc sees none: say so */
    o.visible = "0";
    o.visible_name = "SLURM_JOB_GPUS";
    struct fg_err err = {0};
    assert_int_equal(detect_err(&o, &err), FG_E_RANGE);
    assert_non_null(strstr(err.detail, "SLURM_JOB_GPUS=\"0\""));
    assert_non_null(strstr(err.detail, "no GPU"));
    /* but CUDA_VISIBLE_DEVICES alone does not apply where there is no NVIDIA GPU */
    o.visible = NULL;
    o.cuda_visible = "0";
    r = detect_ok(&o);
    assert_int_equal(r->n, 0);
    fg_detect_result_free(r);
    unlink(path);

    /* This machine (no GPU expected here, but any count is a valid answer).
     * In a child: hwloc's pci plugin (libpciaccess) leaks ~1 KB per live
     * load, which would fail a SANITIZE=address run for a leak not ours. */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct fg_detect_result *live = NULL;
        if (fg_detect_gpus(NULL, &live, NULL))
            _exit(1);
        bool ok = (live->this_system || getenv("HWLOC_XMLFILE") || getenv("HWLOC_SYNTHETIC")) &&
                  !strcmp(live->topology, "this machine") && live->n == live->n_on_node;
        fg_detect_result_free(live);
        _exit(ok ? 0 : 2);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static void visible_should_restrict_to_the_jobs_gpus(void **state)
{
    (void)state;
    struct fg_detect_opts o = {.xml_path = DIR_XML "flux-core-ipa20-4xH100-SXM5.xml",
                               .visible = "1,3",
                               .visible_name = "SLURM_JOB_GPUS"};
    struct fg_detect_result *r = detect_ok(&o);
    assert_int_equal(r->n, 2);
    assert_int_equal(r->n_on_node, 4);
    assert_string_equal(r->restricted_by, "SLURM_JOB_GPUS");
    assert_string_equal(r->gpus[0].busid, "0000:5f:00.0");
    assert_int_equal(r->gpus[0].index, 1); /* node index kept */
    assert_string_equal(r->gpus[1].busid, "0000:db:00.0");
    fg_detect_result_free(r);

    o.visible = " 0-2 ";
    r = detect_ok(&o);
    assert_int_equal(r->n, 3);
    fg_detect_result_free(r);

    o.visible = "3,3,1"; /* duplicates collapse; node order kept */
    r = detect_ok(&o);
    assert_int_equal(r->n, 2);
    assert_int_equal(r->gpus[0].index, 1);
    fg_detect_result_free(r);

    o.visible = "";
    r = detect_ok(&o);
    assert_int_equal(r->n, 0);
    assert_int_equal(r->n_on_node, 4);
    fg_detect_result_free(r);

    o.visible = "NoDevFiles";
    r = detect_ok(&o);
    assert_int_equal(r->n, 0);
    fg_detect_result_free(r);

    /* the node-wide list wins over CUDA_VISIBLE_DEVICES, which Slurm numbers
     * inside the job's device cgroup */
    o.visible = "2";
    o.cuda_visible = "0";
    r = detect_ok(&o);
    assert_int_equal(r->n, 1);
    assert_string_equal(r->gpus[0].busid, "0000:cb:00.0");
    fg_detect_result_free(r);
}

static void vendor_lists_should_restrict_only_their_vendor(void **state)
{
    (void)state;
    struct fg_detect_opts o = {.xml_path = DIR_XML "flux-sched-chimera-multi-gpu.hwloc1.xml",
                               .cuda_visible = ""};
    struct fg_detect_result *r = detect_ok(&o);
    assert_int_equal(r->n, 1); /* the Vega stays: CUDA_VISIBLE_DEVICES is NVIDIA's */
    assert_int_equal(r->gpus[0].vendor, 0x1002);
    assert_string_equal(r->restricted_by, "CUDA_VISIBLE_DEVICES");
    fg_detect_result_free(r);

    o.cuda_visible = "0";
    o.rocr_visible = "";
    r = detect_ok(&o);
    assert_int_equal(r->n, 1);
    assert_int_equal(r->gpus[0].vendor, 0x10de);
    assert_string_equal(r->restricted_by, "CUDA_VISIBLE_DEVICES,ROCR_VISIBLE_DEVICES");
    fg_detect_result_free(r);

    struct fg_detect_opts t = {.xml_path = DIR_XML "mpibind-hpe-tioga-MI250X.xml",
                               .rocr_visible = "6,7",
                               .cuda_visible = "0,1,2,3,4,5,6,7"}; /* Slurm sets both */
    r = detect_ok(&t);
    assert_int_equal(r->n, 2);
    assert_string_equal(r->gpus[0].osdevs, "rsmi6");
    assert_string_equal(r->gpus[1].osdevs, "rsmi7");
    assert_string_equal(r->restricted_by, "ROCR_VISIBLE_DEVICES"); /* no NVIDIA GPU here */
    fg_detect_result_free(r);
}

static void uuids_should_select_by_unique_prefix(void **state)
{
    (void)state;
    struct fg_detect_opts o = {.xml_path = DIR_XML "hwloc-tests-nvidiaDGX2.v2.xml",
                               .cuda_visible = "GPU-d3977428,gpu-BB4648D3"};
    struct fg_detect_result *r = detect_ok(&o);
    assert_int_equal(r->n, 2);
    assert_string_equal(r->gpus[0].busid, "0000:34:00.0");
    assert_string_equal(r->gpus[1].busid, "0000:e7:00.0");
    fg_detect_result_free(r);

    struct fg_err err = {0};
    o.cuda_visible = "GPU-d"; /* d3977428 and d256cac8 */
    assert_int_equal(detect_err(&o, &err), FG_E_RANGE);
    assert_non_null(strstr(err.detail, "matches 2 GPUs"));
}

static void device_lists_should_reject_bad_items(void **state)
{
    (void)state;
    static const struct {
        const char *visible, *cuda;
        int code;
        const char *needle;
    } cases[] = {
        {"4", NULL, FG_E_RANGE, "names GPU 4, but hwloc sees 4 GPUs on this node (indices 0-3)"},
        {"0-9", NULL, FG_E_RANGE, "names GPU 4"},
        {"a", NULL, FG_E_PARSE, "'a' is not a GPU index"},
        {"0,,1", NULL, FG_E_PARSE, "empty item"},
        {"1-0", NULL, FG_E_PARSE, "'1-0'"},
        {"-1", NULL, FG_E_PARSE, "'-1'"},
        {"99999999999", NULL, FG_E_PARSE, "99999999999"},
        {NULL, "MIG-4f2e8a1c", FG_E_UNSUPPORTED, "MIG instance MIG-4f2e8a1c"},
        {NULL, "GPU-deadbeef", FG_E_RANGE, "no GPU has UUID GPU-deadbeef"},
        {NULL, "7", FG_E_RANGE, "CUDA_VISIBLE_DEVICES=\"7\" names GPU 7, but hwloc sees 4 NVIDIA"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct fg_detect_opts o = {.xml_path = DIR_XML "flux-core-ipa20-4xH100-SXM5.xml",
                                   .visible = cases[i].visible,
                                   .visible_name = "SLURM_JOB_GPUS",
                                   .cuda_visible = cases[i].cuda};
        struct fg_err err = {0};
        assert_int_equal(detect_err(&o, &err), cases[i].code);
        assert_non_null(strstr(err.detail, cases[i].needle));
    }
}

static void detect_should_name_missing_or_bad_topology(void **state)
{
    (void)state;
    struct fg_err err = {0};
    struct fg_detect_opts o = {.xml_path = "/nonexistent/node.xml"};
    assert_int_equal(detect_err(&o, &err), FG_E_NOTFOUND);
    assert_non_null(strstr(err.detail, "/nonexistent/node.xml"));
    o.xml_path = "tests/fixtures";
    assert_int_equal(detect_err(&o, &err), FG_E_IO);
    assert_non_null(strstr(err.detail, "not a regular file"));
    o.xml_path = "tests/fixtures/gpus.tsv";
    assert_int_equal(detect_err(&o, &err), FG_E_PARSE);
    assert_non_null(strstr(err.detail, "gpus.tsv: hwloc cannot load"));
    assert_int_equal(fg_detect_gpus(&o, NULL, &err), FG_E_INVAL);
    fg_detect_result_free(NULL);
}

/*
 * The OpenCL and GL components must not run inside a job step (they start
 * vendor drivers in slurmstepd).  hwloc prints its component decisions
 * with HWLOC_COMPONENTS_VERBOSE=1; run detection in a child with stderr in a
 * file and read what hwloc did, with and without the opt-out flag.
 */
static char *components_log(unsigned flags, int *child_rc)
{
    char path[] = "/tmp/fitgate-test-components-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setenv("HWLOC_COMPONENTS_VERBOSE", "1", 1);
        unsetenv("HWLOC_XMLFILE");
        unsetenv("HWLOC_COMPONENTS");
        dup2(fd, 2);
        struct fg_detect_opts o = {.flags = flags};
        struct fg_detect_result *r = NULL;
        int rc = fg_detect_gpus(&o, &r, NULL);
        if (!rc)
            fprintf(stderr, "\nRESULT blacklisted=[%s]\n", r->blacklisted);
        fg_detect_result_free(r);
        _exit(rc ? 1 : 0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    *child_rc = WIFEXITED(status) ? WEXITSTATUS(status) : 99;
    static char buf[1 << 16];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    close(fd);
    unlink(path);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

static void detect_should_keep_opencl_and_gl_from_starting(void **state)
{
    (void)state;
    int rc = -1;
    char *log = components_log(0, &rc);
    assert_int_equal(rc, 0);
    if (!strstr(log, "Registered discovery component `opencl'") ||
        !strstr(log, "Registered discovery component `gl'")) {
        print_message("hwloc has no opencl/gl plugin here (libhwloc-plugins): nothing to keep "
                      "from starting\n");
        assert_non_null(strstr(log, "RESULT blacklisted=[]"));
        skip();
    }
    assert_non_null(strstr(log, "Blacklisting component `opencl`"));
    assert_non_null(strstr(log, "Blacklisting component `gl`"));
    assert_null(strstr(log, "Enabling discovery component `opencl'"));
    assert_null(strstr(log, "Enabling discovery component `gl'"));
    assert_non_null(strstr(log, "RESULT blacklisted=[opencl,gl]"));

    /* the opt-out flag leaves hwloc's defaults alone */
    log = components_log(FG_DETECT_ALLOW_DRIVER_COMPONENTS, &rc);
    assert_int_equal(rc, 0);
    assert_null(strstr(log, "Blacklisting component"));
    assert_non_null(strstr(log, "Enabling discovery component `opencl'"));
    assert_non_null(strstr(log, "RESULT blacklisted=[]"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(detect_should_give_each_recorded_node_its_gpus),
        cmocka_unit_test(every_fixture_should_have_an_expectation),
        cmocka_unit_test(detect_should_refuse_hwloc3_xml_with_a_hint),
        cmocka_unit_test(ipa20_should_give_four_h100_with_locality_and_no_matrox),
        cmocka_unit_test(tioga_should_count_each_mi250x_gcd_in_rsmi_order),
        cmocka_unit_test(corona_should_follow_rsmi_order_and_drop_aspeed),
        cmocka_unit_test(tuo_cpx_should_count_partitions_and_split_memory),
        cmocka_unit_test(chimera_should_keep_both_vendors_as_unknown),
        cmocka_unit_test(wholeio_should_drop_matrox_and_report_missing_memory),
        cmocka_unit_test(unknown_id_should_be_reported_and_the_others_kept),
        cmocka_unit_test(site_row_should_make_an_unknown_card_known),
        cmocka_unit_test(machine_without_gpu_should_give_zero_not_an_error),
        cmocka_unit_test(visible_should_restrict_to_the_jobs_gpus),
        cmocka_unit_test(vendor_lists_should_restrict_only_their_vendor),
        cmocka_unit_test(uuids_should_select_by_unique_prefix),
        cmocka_unit_test(device_lists_should_reject_bad_items),
        cmocka_unit_test(detect_should_name_missing_or_bad_topology),
        cmocka_unit_test(detect_should_keep_opencl_and_gl_from_starting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
