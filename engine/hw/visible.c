/*
 * visible.c - the device lists that restrict the GPUs a job sees (visible.h): Slurm's
 * node-wide SLURM_STEP_GPUS / SLURM_JOB_GPUS, CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES.
 */
#include "hw/visible.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/fmt.h"

#define MAX_LIST_ITEMS 4096

/* Does gpu g belong to the scope of a list: all GPUs, or one vendor's. */
static bool in_scope(const struct fg__visible_gpu *g, uint16_t vendor)
{
    return vendor == 0 || g->vendor == vendor;
}

static unsigned list_key(const struct fg__visible_gpu *g, bool runtime)
{
    return runtime ? g->runtime_index : g->index;
}

/* "GPU-1234abcd" and "1234abcd" name the same UUID. */
static bool uuid_prefix_match(const char *uuid, const char *tok, size_t len)
{
    if (!uuid[0])
        return false;
    if (!strncasecmp(uuid, "GPU-", 4))
        uuid += 4;
    if (len >= 4 && !strncasecmp(tok, "GPU-", 4)) {
        tok += 4;
        len -= 4;
    }
    return len > 0 && strlen(uuid) >= len && !strncasecmp(uuid, tok, len);
}

/*
 * Keep, among the GPUs in scope (vendor 0 = all), only those the list
 * names; GPUs out of scope are untouched.  A list whose scope holds no GPU
 * does not apply (Slurm sets CUDA_VISIBLE_DEVICES for AMD GPUs too) - except
 * the node-wide list, where it means hwloc sees fewer GPUs than Slurm gave.
 */
static int apply_list(const char *list, const char *name, uint16_t vendor, bool runtime,
                      const struct fg__visible_gpu *gpu, size_t n, bool *keep,
                      struct fg_err *err)
{
    size_t in = 0;
    for (size_t i = 0; i < n; i++)
        in += in_scope(&gpu[i], vendor);
    if (in == 0 && vendor != 0)
        return 0;
    bool *sel = calloc(n ? n : 1, sizeof *sel);
    if (!sel)
        return fg_err_set(err, FG_E_NOMEM, "out of memory");
    int rc = 0;
    const char *vname = vendor == 0x10de ? "NVIDIA " : vendor == 0x1002 ? "AMD " : "";
    /* Slurm writes NoDevFiles when the gres has no device files: no GPU. */
    if (strcmp(list, "NoDevFiles") != 0 && list[strspn(list, " \t")] != '\0') {
        for (const char *p = list;;) {
            const char *e = strchr(p, ',');
            const char *te = e ? e : p + strlen(p);
            while (p < te && (*p == ' ' || *p == '\t'))
                p++;
            while (te > p && (te[-1] == ' ' || te[-1] == '\t'))
                te--;
            size_t tl = (size_t)(te - p);
            int shown = tl > 48 ? 48 : (int)tl;
            if (tl == 0) {
                rc = fg_err_set(err, FG_E_PARSE, "%s=\"%.64s\": empty item; expected a comma list "
                                "of GPU indices or UUIDs", name, list);
                break;
            }
            if (tl >= 4 && !strncasecmp(p, "MIG-", 4)) {
                rc = fg_err_set(err, FG_E_UNSUPPORTED,
                                "%s names MIG instance %.*s; fitgate checks whole GPUs and cannot "
                                "size a MIG slice", name, shown, p);
                break;
            }
            unsigned lo = 0, hi = 0;
            const char *q = p;
            bool num = q < te && *q >= '0' && *q <= '9';
            if (num) {
                unsigned long v = 0;
                for (; q < te && *q >= '0' && *q <= '9' && v <= 1000000; q++)
                    v = v * 10 + (unsigned long)(*q - '0');
                lo = hi = (unsigned)v;
                if (q < te && *q == '-' && q + 1 < te) {
                    v = 0;
                    for (q++; q < te && *q >= '0' && *q <= '9' && v <= 1000000; q++)
                        v = v * 10 + (unsigned long)(*q - '0');
                    hi = (unsigned)v;
                }
                num = q == te && lo <= hi && hi <= 1000000 && hi - lo < MAX_LIST_ITEMS;
            }
            if (num) {
                for (unsigned x = lo; x <= hi && !rc; x++) {
                    bool found = false;
                    for (size_t i = 0; i < n; i++)
                        if (in_scope(&gpu[i], vendor) && list_key(&gpu[i], runtime) == x) {
                            sel[i] = true;
                            found = true;
                        }
                    if (!found && in)
                        rc = fg_err_set(err, FG_E_RANGE,
                                        "%s=\"%.64s\" names GPU %u, but hwloc sees %zu %sGPU%s "
                                        "on this node (indices 0-%zu)",
                                        name, list, x, in, vname, in == 1 ? "" : "s", in - 1);
                    else if (!found)
                        rc = fg_err_set(err, FG_E_RANGE,
                                        "%s=\"%.64s\" names GPU %u, but hwloc sees no GPU on "
                                        "this node (is hwloc's pci component, from "
                                        "libhwloc-plugins, installed?)",
                                        name, list, x);
                }
                if (rc)
                    break;
            } else if (tl >= 4 && !strncasecmp(p, "GPU-", 4)) {
                size_t hits = 0;
                for (size_t i = 0; i < n; i++)
                    if (in_scope(&gpu[i], vendor) && uuid_prefix_match(gpu[i].uuid, p, tl)) {
                        sel[i] = true;
                        hits++;
                    }
                if (hits > 1) {
                    rc = fg_err_set(err, FG_E_RANGE,
                                    "%s: %.*s matches %zu GPUs; give more of the UUID", name,
                                    shown, p, hits);
                    break;
                }
                if (hits == 0) {
                    rc = fg_err_set(err, FG_E_RANGE,
                                    "%s: no GPU has UUID %.*s (hwloc knows UUIDs only from its "
                                    "NVML / RSMI components; use indices)",
                                    name, shown, p);
                    break;
                }
            } else {
                rc = fg_err_set(err, FG_E_PARSE,
                                "%s: '%.*s' is not a GPU index, range (0-3) or UUID (GPU-...)",
                                name, shown, p);
                break;
            }
            if (!e)
                break;
            p = e + 1;
        }
    }
    if (!rc)
        for (size_t i = 0; i < n; i++)
            if (in_scope(&gpu[i], vendor))
                keep[i] = keep[i] && sel[i];
    free(sel);
    return rc;
}

static bool has_vendor(const struct fg__visible_gpu *v, size_t n, uint16_t vendor)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].vendor == vendor)
            return true;
    return false;
}

int fg__visible_keep(const struct fg__visible_lists *l, const struct fg__visible_gpu *v,
                     size_t n, bool *keep, char *restricted_by, size_t cap, struct fg_err *err)
{
    for (size_t i = 0; i < n; i++)
        keep[i] = true;
    int rc = 0;
    if (l->visible) {
        const char *name = l->visible_name ? l->visible_name : "visible";
        rc = apply_list(l->visible, name, 0, false, v, n, keep, err);
        fg__copy(restricted_by, cap, name);
    } else {
        /* A vendor list names what restricted the set only where it applied. */
        if (l->cuda && !rc && has_vendor(v, n, 0x10de)) {
            rc = apply_list(l->cuda, "CUDA_VISIBLE_DEVICES", 0x10de, true, v, n, keep, err);
            fg__list_append(restricted_by, cap, "CUDA_VISIBLE_DEVICES");
        }
        if (l->rocr && !rc && has_vendor(v, n, 0x1002)) {
            rc = apply_list(l->rocr, "ROCR_VISIBLE_DEVICES", 0x1002, true, v, n, keep, err);
            fg__list_append(restricted_by, cap, "ROCR_VISIBLE_DEVICES");
        }
    }
    return rc;
}
