/*
 * request.h - the GPUs a job asks for, in every Slurm spelling, resolved to a card once.
 *
 * Every front end reads a job's GPU request here: the CLI (`fitgate check` / `plan`, and
 * through `check` the Lua filters), the SPANK plugin's submit side and the node side.
 * Slurm's meanings, as sbatch reads them (sbatch(1), slurm_opt.c):
 *
 *   --gpus=[TYPE:]N           N GPUs for the whole job, however many nodes
 *   --gpus-per-node=[TYPE:]N  N on each node; --nodes multiplies it
 *   --gres=gpu[:TYPE]:N       N on each node; --nodes multiplies it
 *   --ft-gpus=N               fitgate's own, when Slurm's options are not visible: N per node
 *
 * so `--gpus 8 --nodes 16` is 8 GPUs in all and `--gres=gpu:8 --nodes 16` is 128.
 *
 *   fg_request_from_option()  one of Slurm's options, as the job spelled it
 *   fg_request_from_plugin()  --ft-gpus (the job spec's parsed count)
 *   fg_request_card()         the card, once: the request's type, else --ft-gpu, else the
 *                             partition's DefaultGPU=, else the smallest card the
 *                             partition's nodes have (a job that fits it fits any of them)
 *   fg_request_total()        GPUs of the whole job
 *   fg_request_spell()        a count back in the job's own spelling (for suggestions)
 *   fg_request_describe()     "--nodes=16 --gpus=8: 8 GPUs in all (--gpus counts the job's)"
 *
 * Ownership: struct fg_request is plain data the caller owns; gpu is borrowed from the GPU
 * table it was looked up in and valid while that table is.  Nothing here allocates, prints
 * or calls Slurm: the plugin asks the controller which cards a partition has and passes
 * the list.  Error contract: error.h.
 */
#ifndef FG_REQUEST_H
#define FG_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "hw/gpu.h"

/* Which job option carries the GPU count (suggestions are spelled the same way). */
enum fg_req_via {
    FG_VIA_NONE,          /* the job asks for no GPU */
    FG_VIA_GRES,          /* --gres=gpu[:type]:N, N per node */
    FG_VIA_GPUS,          /* --gpus=[type:]N, N per job */
    FG_VIA_GPUS_PER_NODE, /* --gpus-per-node=[type:]N */
    FG_VIA_PLUGIN,        /* only fitgate's own --ft-gpus / --ft-gpu */
};

struct fg_request {
    const struct fg_gpu *gpu; /* the card; NULL when unknown (borrowed from a GPU table) */
    char type[32];            /* gres type as the job spells it ("t4"); "" when untyped */
    enum fg_req_via via;
    uint32_t count;           /* the number in that option (per node, or per job for GPUS) */
    uint32_t nodes;           /* >= 1 */
    char partition[64];       /* "" when the default partition */
    char model[160];          /* for messages */
    char note[160];           /* how the card was chosen when the job named none ("" none) */
};

/* An empty request (no GPU, one node). */
void fg_request_init(struct fg_request *q);

/* GPUs of the whole job. */
uint32_t fg_request_total(const struct fg_request *q);

/* GPUs on each node: count for a per-node spelling, count / nodes (rounded up) for --gpus. */
uint32_t fg_request_per_node(const struct fg_request *q);

/* The request in the job's own syntax: "--gres=gpu:t4:4", "--nodes=2 --gpus-per-node=h100:8". */
void fg_request_spell(const struct fg_request *q, uint32_t count, uint32_t nodes, char *buf,
                      size_t cap);

/* The request and its total, for people: "--nodes=16 --gpus=8: 8 GPUs in all (--gpus is per
 * job; --gpus-per-node and --gres are per node)"; a one-node per-node request is its
 * spelling alone. */
void fg_request_describe(const struct fg_request *q, char *buf, size_t cap);

/*
 * t GPUs arranged on nodes within per_node_max (0: 8) and per_node_min GPUs a node, keeping
 * the request's node count when it divides t: *nodes and *count in the request's own units
 * (the job's total for --gpus, per node otherwise).  Returns the GPUs of the arrangement
 * (>= t when per_node_min raises it).
 */
uint32_t fg_request_arrange(const struct fg_request *q, uint32_t per_node_max,
                            uint32_t per_node_min, uint32_t t, uint32_t *count, uint32_t *nodes);

/* Whole decimal count in s[0..n) within 1..65535. */
bool fg_gpu_count_parse(const char *s, size_t n, uint32_t *out);

/*
 * The GPU entry of a gres list ("gres:gpu:h100:2,gres:mps:100"; "gpu", "gpu:4",
 * "gpu:t4") when gres, else of a --gpus value ("h100:2", "2").  Returns true when one was
 * found; type "" when untyped, count 1 when the entry has none.
 */
bool fg_gpu_spec_parse(const char *spec, bool gres, char *type, size_t cap, uint32_t *count);

/*
 * A request from one of Slurm's GPU options as the job spelled it: opt is "gres",
 * "gpus" or "gpus-per-node", value its value; nodes >= 1 (0 reads as 1).  The card is
 * looked up in table (NULL when the type is unknown or absent: see fg_request.gpu).  false
 * when the value names no GPU (q's request fields are then untouched).
 */
bool fg_request_from_option(struct fg_request *q, const char *opt, const char *value,
                            uint32_t nodes, const struct fg_gpu_table *table);

/* fitgate's own --ft-gpus=N (the job spec's count, already parsed strictly), when the job
 * asks for GPUs no other way; nothing when count is 0. */
void fg_request_from_plugin(struct fg_request *q, uint32_t count);

/*
 * The card the request is judged on, into q->gpu, in this order: the request's gres type
 * (FG_E_NOTFOUND when table does not know it: the detail says so and what to do), else
 * ft_gpu (--ft-gpu / --gpu; FG_E_NOTFOUND when unknown; *count, when not NULL, gets an
 * alias's count, "h100:4"), else for a GPU request the partition's default_gpu
 * (DefaultGPU=), else the smallest card of part_types (the gres types the nodes of
 * partition part_name have, comma-separated, as the controller lists them; NULL or "" none),
 * with a note in q->note naming it when there were several.  No card at all is not an error: q->gpu
 * stays NULL (fitgate then sizes the job without judging it).
 */
int fg_request_card(struct fg_request *q, const struct fg_gpu_table *table, const char *ft_gpu,
                    const char *default_gpu, const char *part_name, const char *part_types,
                    unsigned *count, struct fg_err *err);

#endif
