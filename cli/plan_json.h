/*
 * plan_json.h - the JSON of a layout, of the remedies and of what the checkpoint's headers
 * said (docs/cli.md "JSON output").
 * Ownership: each function returns a new cJSON item the caller adds to a tree or frees with
 * cJSON_Delete.
 */
#ifndef FG_CLI_PLAN_JSON_H
#define FG_CLI_PLAN_JSON_H

#include <cjson/cJSON.h>

#include "decide.h"
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

#endif
