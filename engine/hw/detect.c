/*
 * detect.c - the node's GPUs through hwloc (2.x API), matched to the GPU table; the
 * device lists that restrict them are engine/hw/visible.c.
 *
 * The hwloc calls and their order are those docs/design.md ("GPU detection")
 * lists (init, blacklist, set_xml, I/O filter KEEP_IMPORTANT, load, walk
 * the PCI devices, read the OS devices under each).  Facts relied on, all
 * from hwloc 2.9's topology-*.c and the XML fixtures in tests/fixtures/hwloc:
 *   - I/O objects are dropped by default; KEEP_IMPORTANT keeps PCI classes
 *     0x03 and 0x12 and the OS devices under them.
 *   - OS devices sit directly under their PCI device.  Their subtype is not
 *     reliable (hwloc-1.x XML and the DGX-2 v2 XML have none), the "Backend"
 *     info is, and the name prefix is the last resort.
 *   - Memory attributes are KiB: CUDAGlobalMemorySize, RSMIVRAMSize,
 *     OpenCLGlobalMemorySize, LevelZeroHBMSize + LevelZeroDDRSize.  NVML
 *     osdevs carry no size in hwloc 2.9.
 *   - GPUModel strings are unreliable (stale pci.ids, truncated rsmi names,
 *     empty for CPX partitions), so the table is matched on PCI ids only.
 *
 * libhwloc is loaded on the first detection (dlopen), not linked: linked, it
 * and libudev were loaded by every CLI run and every tagged sbatch, while only
 * `fitgate gpus` and the node side of the plugin detect GPUs (bench/RESULTS.md).
 * <hwloc.h> still gives the types, the constants and the static inline
 * helpers; every exported function goes through the table `hw`.
 */
#include "hw/detect.h"

#include <dlfcn.h>
#include <errno.h>
#include <hwloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "util/fileio.h"
#include "util/fmt.h"
#include "util/log.h"
#include "hw/visible.h"

/* PCI vendors of compute GPUs and accelerators.  drop_class: a class of that
 * vendor that is not one (Intel VGA = integrated graphics).  Vendors with a
 * table row are kept too, so a site row can add a vendor. */
static const struct {
    uint16_t vendor;
    uint16_t drop_class;
} gpu_vendors[] = {
    {0x10de, 0},      /* NVIDIA */
    {0x1002, 0},      /* AMD */
    {0x1da3, 0},      /* Habana (Intel Gaudi) */
    {0x8086, 0x0300}, /* Intel: data center GPUs are 0x0380 */
};

/* The OS-device backends fitgate reads, in the order their memory size is
 * trusted: CUDA's totalGlobalMem is what a CUDA framework allocates from;
 * RSMI's VRAM total is the driver's; OpenCL's global size may be capped by
 * the ICD, so it comes last. */
enum backend { B_CUDA, B_RSMI, B_LEVELZERO, B_OPENCL, B_NVML, B_OTHER };

static const struct {
    const char *backend;   /* the "Backend" info value / subtype */
    const char *prefix;    /* OS device name prefix: cuda0, rsmi3, ze0, opencl0d1, nvml2 */
    const char *mem[2];    /* memory size infos in KiB, summed; NULL when none */
    const char *uuid;      /* UUID info, or NULL */
} backends[] = {
    [B_CUDA] = {"CUDA", "cuda", {"CUDAGlobalMemorySize", NULL}, NULL},
    [B_RSMI] = {"RSMI", "rsmi", {"RSMIVRAMSize", NULL}, "AMDUUID"},
    [B_LEVELZERO] = {"LevelZero", "ze", {"LevelZeroHBMSize", "LevelZeroDDRSize"}, "LevelZeroUUID"},
    [B_OPENCL] = {"OpenCL", "opencl", {"OpenCLGlobalMemorySize", NULL}, NULL},
    [B_NVML] = {"NVML", "nvml", {NULL, NULL}, "NVIDIAUUID"},
};
#define N_BACKENDS ((int)(sizeof backends / sizeof backends[0]))

/* hwloc components that start vendor drivers on a live load (docs/design.md). */
static const char *const driver_components[] = {"opencl", "gl"};

#define MAX_PARTS 64

/* ------------------------------------------------------------------------
 * libhwloc, loaded once.
 */

/* The soname of hwloc 2.x (the major version fitgate is built against; the API
 * version is checked again once loaded) and the Debian package that ships it. */
#define HWLOC_SONAME "libhwloc.so.15"
#define HWLOC_PACKAGE "libhwloc15"

/* Every exported hwloc function detect.c calls, loaded by name: hwloc_<n>.  The static
 * inline helpers of the headers used here (hwloc_obj_get_info_by_name,
 * hwloc_get_non_io_ancestor_obj) only read the objects and call none of them;
 * hwloc_get_next_pcidev calls two, so next_pcidev() below replaces it.  `nm -u
 * detect.o` must list no hwloc_ symbol. */
#define HWLOC_FNS(X)                                                                   \
    X(get_api_version) X(topology_init) X(topology_destroy) X(topology_set_components) \
    X(topology_set_xml) X(topology_set_io_types_filter) X(topology_set_flags)           \
    X(topology_load) X(topology_is_thissystem) X(get_type_depth) X(get_obj_by_depth)     \
    X(bitmap_list_snprintf)

/* The name as the library exports it, through hwloc/rename.h in case a build prefixes. */
#define HWLOC_SYM(n) HWLOC_STR(hwloc_##n)
#define HWLOC_STR(x) HWLOC_STR2(x)
#define HWLOC_STR2(x) #x

/* Each pointer has the type of the header's declaration, so calls are checked against it. */
static struct {
#define HWLOC_FIELD(n) __typeof__(hwloc_##n) *n;
    HWLOC_FNS(HWLOC_FIELD)
#undef HWLOC_FIELD
} hw;

static pthread_once_t hwloc_once = PTHREAD_ONCE_INIT;
static char hwloc_load_error[256]; /* why hwloc cannot be used; "" once loaded */

/*
 * Load libhwloc once per process (pthread_once: the table is complete before any thread
 * reads it).  RTLD_GLOBAL because hwloc's own plugins (libhwloc-plugins: pci, the libxml2
 * XML reader) are not linked against libhwloc: each looks for the core's symbols in the
 * global scope and disables itself when they are not there, and without the pci plugin
 * a live node shows no GPU.  Never closed: the pointers stay valid for the process.
 */
static void hwloc_load_once(void)
{
    void *h = dlopen(HWLOC_SONAME, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        snprintf(hwloc_load_error, sizeof hwloc_load_error, "%s", dlerror());
        return;
    }
    const char *missing = NULL;
#define HWLOC_LOAD(n)                                                          \
    if (!missing && !(hw.n = (__typeof__(hw.n))dlsym(h, HWLOC_SYM(n)))) \
        missing = HWLOC_SYM(n);
    HWLOC_FNS(HWLOC_LOAD)
#undef HWLOC_LOAD
    if (missing) {
        /* an older or foreign library under that name: refuse it whole */
        snprintf(hwloc_load_error, sizeof hwloc_load_error, "%s has no %s", HWLOC_SONAME,
                 missing);
        memset(&hw, 0, sizeof hw);
        dlclose(h);
    }
}

/* hwloc loaded, or FG_E_UNSUPPORTED saying what to install. */
static int hwloc_ready(struct fg_err *err)
{
    pthread_once(&hwloc_once, hwloc_load_once);
    if (hwloc_load_error[0])
        return fg_err_set(err, FG_E_UNSUPPORTED,
                          "cannot load hwloc (%s), which fitgate needs to see the GPUs of a node "
                          "or an XML topology; install the %s package (RPM: hwloc-libs)",
                          hwloc_load_error, HWLOC_PACKAGE);
    return 0;
}

/* hwloc_get_next_pcidev (helper.h) through the table: the first PCI device, then the
 * next at the same depth, as the inline hwloc_get_next_obj_by_depth does. */
static hwloc_obj_t next_pcidev(hwloc_topology_t topo, hwloc_obj_t prev)
{
    if (prev)
        return prev->next_cousin;
    int depth = hw.get_type_depth(topo, HWLOC_OBJ_PCI_DEVICE);
    if (depth == HWLOC_TYPE_DEPTH_UNKNOWN || depth == HWLOC_TYPE_DEPTH_MULTIPLE)
        return NULL;
    return hw.get_obj_by_depth(topo, depth, 0);
}

/* ------------------------------------------------------------------------ */

struct gpuvec {
    struct fg_detected_gpu *v;
    size_t n, cap;
};

static struct fg_detected_gpu *gpuvec_add(struct gpuvec *g)
{
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 16;
        struct fg_detected_gpu *v = realloc(g->v, cap * sizeof *v);
        if (!v)
            return NULL;
        g->v = v;
        g->cap = cap;
    }
    memset(&g->v[g->n], 0, sizeof g->v[0]);
    return &g->v[g->n++];
}

void fg_detect_result_free(struct fg_detect_result *r)
{
    if (!r)
        return;
    free(r->gpus);
    free(r);
}

/* A KiB count as hwloc writes it ("83026944", newer releases may add "KiB")
 * -> bytes; 0 when absent, malformed or zero. */
static uint64_t kib_bytes(const char *s)
{
    if (!s)
        return 0;
    uint64_t v = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX / 1024 - d) / 10)
            return 0;
        v = v * 10 + d;
    }
    if (p == s)
        return 0;
    while (*p == ' ')
        p++;
    if (*p && strcmp(p, "KiB") && strcmp(p, "kB"))
        return 0;
    return v * 1024;
}

static enum backend osdev_backend(hwloc_obj_t os)
{
    const char *b = hwloc_obj_get_info_by_name(os, "Backend");
    if (!b)
        b = os->subtype;
    for (int i = 0; b && i < N_BACKENDS; i++)
        if (!strcasecmp(b, backends[i].backend))
            return (enum backend)i;
    for (int i = 0; os->name && i < N_BACKENDS; i++) {
        size_t l = strlen(backends[i].prefix);
        if (!strncmp(os->name, backends[i].prefix, l) && os->name[l] >= '0' && os->name[l] <= '9')
            return (enum backend)i;
    }
    return B_OTHER;
}

/* The runtime index in an OS device name ("cuda3" -> 3, "rsmi12" -> 12);
 * -1 for names with more after the number ("opencl0d1", "ze0.1"). */
static int osdev_index(hwloc_obj_t os, enum backend b)
{
    if (b == B_OTHER || b == B_OPENCL || !os->name)
        return -1;
    const char *p = os->name + strlen(backends[b].prefix);
    if (*p < '0' || *p > '9')
        return -1;
    long v = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        v = v * 10 + (*p - '0');
        if (v > 1000000)
            return -1;
    }
    return *p ? -1 : (int)v;
}

/* A UUID worth keeping: not absent, not all zeros (CPX partitions, scrubbed XMLs). */
static const char *osdev_uuid(hwloc_obj_t os, enum backend b)
{
    if (b == B_OTHER || !backends[b].uuid)
        return NULL;
    const char *u = hwloc_obj_get_info_by_name(os, backends[b].uuid);
    if (!u)
        return NULL;
    const char *p = u;
    if (!strncasecmp(p, "GPU-", 4))
        p += 4;
    for (; *p; p++)
        if (*p != '0' && *p != '-')
            return u;
    return NULL;
}

static uint64_t osdev_memory(hwloc_obj_t os, enum backend b)
{
    if (b == B_OTHER)
        return 0;
    uint64_t sum = 0;
    for (int i = 0; i < 2; i++)
        if (backends[b].mem[i]) {
            uint64_t m = kib_bytes(hwloc_obj_get_info_by_name(os, backends[b].mem[i]));
            if (m > UINT64_MAX - sum)
                return 0;
            sum += m;
        }
    if (!sum && b == B_LEVELZERO) /* older hwloc: one total */
        sum = kib_bytes(hwloc_obj_get_info_by_name(os, "LevelZeroMemorySize"));
    return sum;
}

static bool is_gpu(const struct fg_gpu_table *t, hwloc_obj_t pci)
{
    unsigned cls = pci->attr->pcidev.class_id;
    unsigned base = cls >> 8;
    uint16_t vendor = pci->attr->pcidev.vendor_id;
    if (base != 0x03 && base != 0x12)
        return false;
    if (fg_gpu_find_pci(t, vendor, pci->attr->pcidev.device_id))
        return true;
    for (size_t i = 0; i < sizeof gpu_vendors / sizeof gpu_vendors[0]; i++)
        if (gpu_vendors[i].vendor == vendor)
            return gpu_vendors[i].drop_class != cls;
    /* A vendor that has table rows, even if this device id has none. */
    return fg_gpu_table_has_vendor(t, vendor);
}

/* The runtime an index list applies to: NVIDIA -> CUDA, AMD -> ROCr, else LevelZero. */
static enum backend runtime_of(uint16_t vendor)
{
    return vendor == 0x10de ? B_NVML : vendor == 0x1002 ? B_RSMI : B_LEVELZERO;
}

/* What one PCI device's OS devices tell. */
struct pci_info {
    char names[64];
    char model[64];
    char uuid[48];
    uint64_t mem;           /* best memory attribute of the device as a whole */
    int mem_from;           /* backend, or -1 */
    int index;              /* runtime index, -1 when none */
    unsigned n_parts;       /* rsmi devices under it (partitions when > 1) */
    struct {
        char name[16];
        char uuid[48];
        int index;
        uint64_t mem;
    } part[MAX_PARTS];
};

static void read_osdevs(hwloc_obj_t pci, struct pci_info *pi)
{
    memset(pi, 0, sizeof *pi);
    pi->mem_from = -1;
    pi->index = -1;
    enum backend rt = runtime_of(pci->attr->pcidev.vendor_id);
    int cuda_index = -1;
    for (hwloc_obj_t os = pci->io_first_child; os; os = os->next_sibling) {
        if (os->type != HWLOC_OBJ_OS_DEVICE || !os->name)
            continue;
        enum backend b = osdev_backend(os);
        fg__list_append(pi->names, sizeof pi->names, os->name);
        const char *model = hwloc_obj_get_info_by_name(os, "GPUModel");
        if (model && *model && !pi->model[0])
            fg__copy(pi->model, sizeof pi->model, model);
        const char *uuid = osdev_uuid(os, b);
        if (uuid && !pi->uuid[0])
            fg__copy(pi->uuid, sizeof pi->uuid, uuid);
        uint64_t mem = osdev_memory(os, b);
        int idx = osdev_index(os, b);
        if (b == B_RSMI && pi->n_parts < MAX_PARTS) {
            /* One rsmi device per schedulable GPU: several under one PCI
             * device are partitions (MI300A CPX: 6, tuo.CPX fixture). */
            unsigned k = pi->n_parts++;
            fg__copy(pi->part[k].name, sizeof pi->part[k].name, os->name);
            fg__copy(pi->part[k].uuid, sizeof pi->part[k].uuid, uuid);
            pi->part[k].index = idx;
            pi->part[k].mem = mem;
        }
        if (mem && (pi->mem_from < 0 || (int)b < pi->mem_from)) {
            pi->mem = mem;
            pi->mem_from = (int)b;
        }
        if (b == rt && idx >= 0 && pi->index < 0)
            pi->index = idx;
        if (b == B_CUDA && idx >= 0 && cuda_index < 0)
            cuda_index = idx;
    }
    /* NVML's order is PCI bus order, which is also the order Slurm's
     * AutoDetect=nvml numbers GPUs in; CUDA's default order may differ, so
     * cudaN is only the fallback. */
    if (pi->index < 0 && rt == B_NVML)
        pi->index = cuda_index;
}

static void set_memory(struct fg_detected_gpu *g, uint64_t mem, int from, unsigned parts)
{
    if (mem && from >= 0) {
        g->memory_bytes = mem / parts;
        fg__copy(g->memory_source, sizeof g->memory_source, backends[from].backend);
    } else if (g->row) {
        g->memory_bytes = g->row->memory_bytes / parts;
        fg__copy(g->memory_source, sizeof g->memory_source, "table");
    } else {
        g->memory_bytes = 0;
        fg__copy(g->memory_source, sizeof g->memory_source, "none");
    }
}

static void locality(hwloc_topology_t topo, hwloc_obj_t pci, struct fg_detected_gpu *g)
{
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, pci);
    if (!anc)
        return;
    if (anc->cpuset && hw.bitmap_list_snprintf(g->cpuset, sizeof g->cpuset, anc->cpuset) < 0)
        g->cpuset[0] = '\0';
    if (anc->nodeset && hw.bitmap_list_snprintf(g->numa, sizeof g->numa, anc->nodeset) < 0)
        g->numa[0] = '\0';
}

/* One PCI GPU -> one entry, or one per partition. */
static int add_pci_gpu(hwloc_topology_t topo, hwloc_obj_t pci, const struct fg_gpu_table *t,
                       struct gpuvec *out)
{
    struct pci_info *pi = malloc(sizeof *pi);
    if (!pi)
        return FG_E_NOMEM;
    read_osdevs(pci, pi);
    const struct hwloc_pcidev_attr_s *a = &pci->attr->pcidev;
    const struct fg_gpu *row = fg_gpu_find_pci(t, a->vendor_id, a->device_id);
    unsigned parts = pi->n_parts > 1 ? pi->n_parts : 1;
    for (unsigned p = 0; p < parts; p++) {
        struct fg_detected_gpu *g = gpuvec_add(out);
        if (!g) {
            free(pi);
            return FG_E_NOMEM;
        }
        snprintf(g->busid, sizeof g->busid, "%04x:%02x:%02x.%01x", (unsigned)a->domain, a->bus,
                 a->dev, a->func);
        g->vendor = a->vendor_id;
        g->device = a->device_id;
        g->subvendor = a->subvendor_id;
        g->subdevice = a->subdevice_id;
        g->class_id = a->class_id;
        g->row = row;
        g->known = row != NULL;
        g->partition = p;
        g->partitions = parts;
        fg__copy(g->model, sizeof g->model, pi->model[0] ? pi->model : row ? row->name : "");
        locality(topo, pci, g);
        if (parts > 1) {
            fg__copy(g->osdevs, sizeof g->osdevs, pi->part[p].name);
            fg__copy(g->uuid, sizeof g->uuid, pi->part[p].uuid);
            g->runtime_index = pi->part[p].index < 0 ? ~0u : (unsigned)pi->part[p].index;
            if (pi->part[p].mem)
                set_memory(g, pi->part[p].mem, B_RSMI, 1);
            else {
                /* The partitions of one device share its memory pool; a fit
                 * check per partition may only count on an even share. */
                set_memory(g, pi->mem_from == B_RSMI ? 0 : pi->mem,
                           pi->mem_from == B_RSMI ? -1 : pi->mem_from, parts);
                snprintf(g->message, sizeof g->message,
                         "partition %u of %u of PCI device %s (e.g. MI300A in CPX mode): hwloc "
                         "gives no size per partition, so the device's memory (%s) is split "
                         "evenly: %llu bytes each",
                         p + 1, parts, g->busid, g->memory_source,
                         (unsigned long long)g->memory_bytes);
            }
        } else {
            fg__copy(g->osdevs, sizeof g->osdevs, pi->names);
            fg__copy(g->uuid, sizeof g->uuid, pi->uuid);
            g->runtime_index = pi->index < 0 ? ~0u : (unsigned)pi->index;
            set_memory(g, pi->mem, pi->mem_from, 1);
        }
    }
    free(pi);
    return 0;
}

/* Runtime indices: keep hwloc's when every GPU of a vendor has a distinct
 * one, else number that vendor's GPUs in PCI bus order (what NVML does, and
 * what the runtimes do on a homogeneous node). */
static int cmp_bus(const void *x, const void *y)
{
    const struct fg_detected_gpu *a = x, *b = y;
    if (a->vendor != b->vendor)
        return a->vendor < b->vendor ? -1 : 1;
    int c = strcmp(a->busid, b->busid);
    if (c)
        return c;
    return a->partition < b->partition ? -1 : a->partition > b->partition;
}

static void fix_runtime_indices(struct gpuvec *g)
{
    if (g->n == 0)
        return; /* g->v is NULL: qsort's pointer must not be */
    qsort(g->v, g->n, sizeof g->v[0], cmp_bus);
    for (size_t s = 0; s < g->n;) {
        size_t e = s;
        while (e < g->n && g->v[e].vendor == g->v[s].vendor)
            e++;
        bool ok = true;
        for (size_t i = s; i < e && ok; i++) {
            if (g->v[i].runtime_index == ~0u)
                ok = false;
            for (size_t j = s; j < i && ok; j++)
                if (g->v[j].runtime_index == g->v[i].runtime_index)
                    ok = false;
        }
        for (size_t i = s; i < e && !ok; i++)
            g->v[i].runtime_index = (unsigned)(i - s);
        s = e;
    }
}

/* Node order: vendors in the order their first GPU appears on the bus (a
 * mixed node is rare; Slurm numbers gres.conf lines in order), then the
 * runtime index.  Expects g in cmp_bus order (grouped by vendor). */
struct order_key {
    size_t vendor_rank, runtime_index, bus_pos;
};

static int cmp_key(const void *x, const void *y)
{
    const struct order_key *a = x, *b = y;
    if (a->vendor_rank != b->vendor_rank)
        return a->vendor_rank < b->vendor_rank ? -1 : 1;
    if (a->runtime_index != b->runtime_index)
        return a->runtime_index < b->runtime_index ? -1 : 1;
    return a->bus_pos < b->bus_pos ? -1 : a->bus_pos > b->bus_pos;
}

static int node_order(struct gpuvec *g)
{
    if (g->n == 0)
        return 0;
    struct order_key *k = malloc(g->n * sizeof *k);
    struct fg_detected_gpu *sorted = malloc(g->n * sizeof *sorted);
    if (!k || !sorted) {
        free(k);
        free(sorted);
        return FG_E_NOMEM;
    }
    for (size_t i = 0; i < g->n; i++) {
        /* rank = number of vendor groups whose first bus id sorts before this one's */
        size_t first = i;
        while (first > 0 && g->v[first - 1].vendor == g->v[i].vendor)
            first--;
        size_t rank = 0;
        for (size_t j = 0; j < g->n; j++)
            if ((j == 0 || g->v[j - 1].vendor != g->v[j].vendor) &&
                strcmp(g->v[j].busid, g->v[first].busid) < 0)
                rank++;
        k[i].vendor_rank = rank;
        k[i].runtime_index = g->v[i].runtime_index;
        k[i].bus_pos = i;
    }
    qsort(k, g->n, sizeof *k, cmp_key);
    for (size_t i = 0; i < g->n; i++) {
        sorted[i] = g->v[k[i].bus_pos];
        sorted[i].index = (unsigned)i;
    }
    free(g->v);
    free(k);
    g->v = sorted;
    g->cap = g->n;
    return 0;
}

/* Keep the GPUs the device lists name (visible.h), in node order. */
static int restrict_gpus(const struct fg_detect_opts *o, struct gpuvec *g,
                         struct fg_detect_result *r, struct fg_err *err)
{
    size_t n = g->n ? g->n : 1;
    struct fg__visible_gpu *v = malloc(n * sizeof *v);
    bool *keep = malloc(n * sizeof *keep);
    int rc = 0;
    if (!v || !keep) {
        rc = fg_err_set(err, FG_E_NOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < g->n; i++)
        v[i] = (struct fg__visible_gpu){g->v[i].vendor, g->v[i].index, g->v[i].runtime_index,
                                        g->v[i].uuid};
    struct fg__visible_lists lists = {o->visible, o->visible_name, o->cuda_visible,
                                      o->rocr_visible};
    rc = fg__visible_keep(&lists, v, g->n, keep, r->restricted_by, sizeof r->restricted_by, err);
    if (!rc) {
        size_t k = 0;
        for (size_t i = 0; i < g->n; i++)
            if (keep[i])
                g->v[k++] = g->v[i];
        g->n = k;
    }
out:
    free(v);
    free(keep);
    return rc;
}

/* ------------------------------------------------------------------------ */

static void unknown_message(struct fg_detected_gpu *g)
{
    char mem[96];
    if (g->memory_bytes)
        snprintf(mem, sizeof mem, "its memory (%llu bytes) comes from %s",
                 (unsigned long long)g->memory_bytes, g->memory_source);
    else
        snprintf(mem, sizeof mem, "hwloc gives no memory size for it");
    char extra[40] = "";
    if (g->memory_bytes)
        snprintf(extra, sizeof extra, " MemoryBytes=%llu", (unsigned long long)g->memory_bytes);
    /* hwloc's model name seeds the suggested Name unless it would break the quoting. */
    bool model_ok = g->model[0] && !strchr(g->model, '"');
    snprintf(g->message, sizeof g->message,
             "GPU %s has PCI id %04x:%04x%s%s%s, which has no row in the GPU table; %s. "
             "To plan with it, add a row to the site gpus.conf: Name=\"%s\" Label=\"...\" "
             "Vendor=%04x Devices=%04x MemoryGB=<GB>%s BF16TFLOPS=<dense> MemBWTBps=<TB/s> "
             "LinkGBps=<GB/s>",
             g->busid, g->vendor, g->device, model_ok ? " (\"" : "", model_ok ? g->model : "",
             model_ok ? "\")" : "", mem, model_ok ? g->model : "...", g->vendor, g->device, extra);
}

/* Read the head of an XML file: it must exist and be readable; a v3 export
 * gets a precise hint later (hwloc 2.x refuses "cannot import XML version 3.0"). */
static int check_xml(const char *path, bool *v3, struct fg_err *err)
{
    *v3 = false;
    int fd = fg__open_regular(path);
    if (fd < 0 && errno == EINVAL)
        return fg_err_set(err, FG_E_IO,
                          "%s: not a regular file; give an hwloc XML export (lstopo --of xml)",
                          path);
    if (fd < 0)
        return fg_err_set(err, errno == ENOENT ? FG_E_NOTFOUND : FG_E_IO,
                          "%s: cannot open the topology: %s", path, strerror(errno));
    char head[4096];
    ssize_t n;
    do
        n = read(fd, head, sizeof head - 1);
    while (n < 0 && errno == EINTR);
    close(fd);
    head[n > 0 ? n : 0] = '\0';
    const char *t = strstr(head, "<topology");
    if (t) {
        const char *v = strstr(t, "version=\"");
        if (v && v[9] >= '3' && v[9] <= '9')
            *v3 = true;
    }
    return 0;
}

/* hwloc refused the topology (set_xml parses the file, load imports it). */
static int load_error(const char *what, bool v3, int e, struct fg_err *err)
{
    if (v3)
        return fg_err_set(err, FG_E_PARSE,
                          "%s: exported by hwloc 3.x, which this hwloc (API %u.x) cannot read; "
                          "export it again with hwloc 2.x (lstopo --of xml)",
                          what, hw.get_api_version() >> 16);
    return fg_err_set(err, FG_E_PARSE,
                      "%s: hwloc cannot load the topology (%s); give an hwloc XML export "
                      "(lstopo --of xml)",
                      what, strerror(e));
}

int fg_detect_gpus(const struct fg_detect_opts *o, struct fg_detect_result **out,
                   struct fg_err *err)
{
    static const struct fg_detect_opts none;
    if (!out)
        return fg_err_set(err, FG_E_INVAL, "fg_detect_gpus: out is NULL");
    if (!o)
        o = &none;
    const struct fg_gpu_table *t = o->table ? o->table : fg_gpu_table_builtin();
    int lrc = hwloc_ready(err);
    if (lrc)
        return lrc;
    /* hwloc's ABI changes between major versions (hwloc.h, "API version"). */
    unsigned api = hw.get_api_version();
    if ((api >> 16) != (HWLOC_API_VERSION >> 16))
        return fg_err_set(err, FG_E_UNSUPPORTED,
                          "hwloc library API 0x%x does not match the 0x%x fitgate was built "
                          "against; rebuild fitgate",
                          api, (unsigned)HWLOC_API_VERSION);
    bool v3 = false;
    if (o->xml_path) {
        int rc = check_xml(o->xml_path, &v3, err);
        if (rc)
            return rc;
    }
    struct fg_detect_result *r = calloc(1, sizeof *r);
    if (!r)
        return fg_err_set(err, FG_E_NOMEM, "out of memory");
    fg__copy(r->topology, sizeof r->topology, o->xml_path ? o->xml_path : "this machine");

    hwloc_topology_t topo;
    if (hw.topology_init(&topo)) {
        free(r);
        return fg_err_set(err, FG_E_NOMEM, "hwloc_topology_init failed");
    }
    int rc = 0;
    if (!(o->flags & FG_DETECT_ALLOW_DRIVER_COMPONENTS))
        for (size_t i = 0; i < sizeof driver_components / sizeof driver_components[0]; i++)
            /* -1 means hwloc has no such component (libhwloc-plugins absent):
             * nothing to keep from starting. */
            if (hw.topology_set_components(topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST,
                                              driver_components[i]) == 0)
                fg__list_append(r->blacklisted, sizeof r->blacklisted, driver_components[i]);
    if (o->xml_path && hw.topology_set_xml(topo, o->xml_path)) {
        rc = load_error(o->xml_path, v3, errno, err);
        goto out;
    }
    /* I/O objects are dropped by default; KEEP_IMPORTANT keeps GPU classes
     * and their OS devices.  INCLUDE_DISALLOWED: inside a job's cpuset a GPU
     * near other CPUs still gets its real locality. */
    hw.topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    hw.topology_set_flags(topo, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
    if (hw.topology_load(topo)) {
        rc = load_error(o->xml_path ? o->xml_path : "this machine", v3, errno, err);
        goto out;
    }
    r->this_system = hw.topology_is_thissystem(topo) != 0;

    struct gpuvec g = {0};
    for (hwloc_obj_t pci = NULL; (pci = next_pcidev(topo, pci)) != NULL;)
        if (is_gpu(t, pci) && (rc = add_pci_gpu(topo, pci, t, &g))) {
            fg_err_set(err, rc, "out of memory");
            free(g.v);
            goto out;
        }
    fix_runtime_indices(&g);
    if ((rc = node_order(&g))) {
        fg_err_set(err, rc, "out of memory");
        free(g.v);
        goto out;
    }
    r->n_on_node = g.n;
    if ((rc = restrict_gpus(o, &g, r, err))) {
        free(g.v);
        goto out;
    }
    for (size_t i = 0; i < g.n; i++)
        if (!g.v[i].known) {
            r->n_unknown++;
            unknown_message(&g.v[i]);
            fg__log(FG_LOG_DEBUG, "%s", g.v[i].message);
        }
    r->gpus = g.v;
    r->n = g.n;
    fg__log(FG_LOG_DEBUG, "detect: %zu GPU(s) on %s, %zu after restriction, %zu unknown",
            r->n_on_node, r->topology, r->n, r->n_unknown);
out:
    hw.topology_destroy(topo);
    if (rc) {
        free(r);
        return rc;
    }
    *out = r;
    return 0;
}
