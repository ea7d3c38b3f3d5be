/*
 * memory_stage.h - internal to the estimator (memory.c, memory_stage.c): the sums over the
 * nodes of one pipeline stage of a model (model.h segments: a run of equal blocks counted
 * once), for training (struct stage_sums) and serving (struct serve_part), and the
 * planner's per-block prefix table that answers a stage without the walk.
 *
 * Ownership: a struct part_set belongs to its caller (zeroed before first use); the table
 * fg__table_build returns belongs to the caller, freed with fg__table_free (NULL-safe).
 * Nothing fails: fg__table_build returns NULL when it cannot serve the model or has no
 * memory, and the walk (fg__sum_stage) then answers with the same bytes.
 */
#ifndef FG_MEMORY_STAGE_H
#define FG_MEMORY_STAGE_H

#include "memory/memory_node.h"

/* The training estimate's sums over the nodes on the job's stage. */
struct stage_sums {
    uint64_t sum[SUMS], largest;
    uint64_t act_block_max, act_other, layers; /* per token */
    bool has_head;
};

/* Block parts met in one estimate (or kept across estimates by a planner, fg__parts):
 * the first CACHED distinct blocks; more are recomputed where met. */
enum { CACHED = 16 };
struct block_table;
struct part_set {
    unsigned n;
    struct { uint32_t rep; struct part p; } seen[CACHED];
    struct block_table *table; /* a planner's (fg__parts), built on first use; or NULL */
    bool table_tried;
};

/* The training sums over the nodes on job's stage, block parts kept in set. */
void fg__sum_stage(const struct fg_model *m, const struct fg_job *job, const struct act *a,
                   struct part_set *set, struct stage_sums *t);

/* The table of m under job's part key, or NULL (see above); fg__table_sums is what
 * fg__sum_stage gives for job's stage, from it. */
struct block_table *fg__table_build(const struct fg_model *m, const struct fg_job *job,
                                    const struct act *a, struct part_set *set);
void fg__table_free(struct block_table *t);
void fg__table_sums(const struct block_table *b, const struct fg_job *job,
                    struct stage_sums *t);

/*
 * What a block's part reads of the job (add_node and node_act_per_token): the mode (LoRA
 * or not), TP, EP, the LoRA targets and rank, the precision, the attention's K/V expansion,
 * and struct act (compute and residual bytes, the kept tensors: QLoRA's, the adapters',
 * dropout's).  Two jobs equal in these have equal block parts.
 */
struct part_key {
    bool lora;
    enum fg_attention attention;
    uint32_t tp, ep, rank;
    enum fg_lora_targets targets;
    enum fg_precision precision;
    struct act act;  /* compute / residual bytes and the kept tensors' switches */
    bool lora_fused_qkv, kv_expanded, head_4bit, head_untied;
    char list[sizeof ((struct fg_job *)0)->lora_list];
};

/* A few part sets under their keys, replaced in turn: a planner goes through a handful of
 * (TP, EP) shapes, and the same ones again at each GPU count. */
enum { PART_SETS = 8 };
struct fg__parts {
    struct part_key key[PART_SETS];
    struct part_set set[PART_SETS];
    unsigned used, next;
};

/* The part set of parts for job's part key: the one its key already has, else one taken
 * for it (the oldest replaced), with the planner's table built on first use. */
struct part_set *fg__parts_set(struct fg__parts *parts, const struct fg_model *m,
                               const struct fg_job *job);

/* The serving sums over job's stage at seq tokens, the weights in scheme wq. */
void fg__sum_served(const struct fg_model *m, const struct fg_job *job, uint64_t seq,
                    const struct fg_wquant *wq, struct serve_part *t);

/* A quantized checkpoint whose safetensors headers were read (fg_model.stored_bytes): here,
 * this GPU's weight bytes in scheme wq, scaled to what the whole checkpoint stores. */
uint64_t fg__served_from_headers(const struct fg_model *m, const struct fg_job *job,
                                 const struct fg_wquant *wq, uint64_t here);

#endif
