/*
 * model_load.h - a model as every front end reads it: from a path or a hub
 * id, its graph built by the family readers and its count weighed against
 * the checkpoint when one is at hand.
 *
 * Ownership: every *out model is the caller's, freed with fg_model_free;
 * *res (fg_model_load_id) with fg_source_result_free.  Functions return 0 or
 * a negative FG_E_* code with err set (util/error.h).
 */
#ifndef FG_MODEL_LOAD_H
#define FG_MODEL_LOAD_H

#include <stdbool.h>

#include "model/model.h"
#include "source/source.h"
#include "util/error.h"

/* Load path (a directory or a config.json) and build the graph; no checkpoint is read. */
int fg_model_load(const char *path, struct fg_model **out, struct fg_err *err);

/* A model at a path (a directory or a config.json), its count weighed against the
 * checkpoint beside it (fg_model_weigh_checkpoint).  The caller frees *out with fg_model_free. */
int fg_model_load_path(const char *path, struct fg_model **out, struct fg_err *err);

/*
 * The model a hub id names, as every front end builds it (fg_gate_load_model, the CLI):
 * o's sources give the config (*res says where from; the caller frees it with
 * fg_source_result_free, set whenever the config was found, even if the graph then fails),
 * the graph is built (arg names it) and its count is weighed against the checkpoint: the
 * local directory the config came from (fg_model_weigh_checkpoint), else the checkpoint's
 * inventory (ckpt.h): fitgate's cache, or, when scan and o is not offline, the hub's
 * safetensors headers by HTTP range requests (at most FG_MODEL_CKPT_MAX_SHARDS shards, the
 * index's metadata standing past that), then cached.  The whole lookup, config and headers,
 * stays within o->timeout_ms.  A checkpoint that cannot be read never fails the load: the
 * graph's count stands, with a note saying why; a read one names its origin in a note.
 */
#define FG_MODEL_CKPT_MAX_SHARDS 64
int fg_model_load_id(const struct fg_source_opts *o, const struct fg_model_id *id,
                     const char *arg, bool scan, struct fg_model **out,
                     struct fg_source_result **res, struct fg_err *err);

/*
 * The checkpoint is the truth when it is at hand: dir (a local directory: the model's own,
 * a site directory or an HF cache snapshot; never the network) is scanned for safetensors
 * headers (or an index with total_parameters).  When they give an exact count it goes to
 * m->params_checkpoint beside the graph's; within FG_MODEL_CKPT_TOLERANCE of it the count is
 * FG_CERT_CHECKPOINT, further off FG_CERT_UNSURE with a note giving both numbers (OnUnknown
 * then decides).  No shards, a malformed one, or no exact count: nothing changes (0).
 * Returns 0; the scan's own errors are noted on the model, never fatal.
 */
#define FG_MODEL_CKPT_TOLERANCE 0.01
int fg_model_weigh_checkpoint(struct fg_model *m, const char *dir);

#endif
