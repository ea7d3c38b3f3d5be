/*
 * plan_json.h - the JSON of a model, an estimate, a layout, the remedies and of what the
 * checkpoint's headers said (docs/cli.md "JSON output").
 * Ownership: each function returns a new cJSON item the caller adds to a tree or frees with
 * cJSON_Delete.
 */
#ifndef FG_CLI_PLAN_JSON_H
#define FG_CLI_PLAN_JSON_H

#include <cjson/cJSON.h>

#include "decide.h"
#include "memory/memory.h"
#include "model/model.h"
#include "plan/plan.h"
#include "remedy.h"
#include "request.h"

/* gpus, tp, pp, ep, dp (cp), zero, pp_split, peak_bytes, micro_batch, grad_accum */
cJSON *fg_cli_layout_json(const struct fg_layout *l);

/* decision.remedies[]: kind, options (job option name: value), request (in q's spelling),
 * gpus, layout (from the re-check) and the line d printed for it */
cJSON *fg_cli_remedies_json(const struct fg_request *q, const struct fg_remedies *rem,
                            const struct fg_decision *d);

/* model.checkpoint: where the headers were read, whether the structure came from them,
 * tensors, elements, bytes as stored, dtypes {name: elements}, stored_not_loaded */
cJSON *fg_cli_ckpt_json(const struct fg_ckpt_seen *k);

/* model: id, model_type, reader, generic, certainty (unsure_key), assumptions, params
 * {total, buffers, checkpoint, active, rules[]}, layers, hidden, vocab, notes, checkpoint */
cJSON *fg_cli_model_json(const struct fg_model *m);

/* memory: total / static / per-sample / step bytes, breakdown {...}, lines[] {key, what,
 * source, bytes, per_sample} */
cJSON *fg_cli_memory_json(const struct fg_estimate *e);

#endif
