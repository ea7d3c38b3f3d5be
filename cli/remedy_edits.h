/* remedy_edits.h - remedies as edits to the job's own config files (remedy_edits.c).
 * Borrowed arguments only; the JSON is added to arr, which the caller owns. */
#ifndef FG_CLI_REMEDY_EDITS_H
#define FG_CLI_REMEDY_EDITS_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "gate.h"
#include "jobopts.h"
#include "remedy.h"

/* Under the first `shown` remedies, each as "qlora.yml:46 gradient_checkpointing: false ->
 * true" (a job with no --config: nothing). */
void fg_cli_remedy_edits_print(const struct fg_cli_opts *o, const struct fg_remedies *rem,
                               size_t shown);

/* "edits": [{file, line, key, from, to}] on each remedy object of arr (fg_cli_remedies_json's
 * array, in rem's order); from is null for an insertion. */
void fg_cli_remedy_edits_json(const struct fg_cli_opts *o, const struct fg_remedies *rem,
                              cJSON *arr);

/* --write-fit OUT: the job's file with the first remedy that is an edit of it alone.
 * Returns the exit status: 0 written (or nothing to write: the job fits), 1 none is, 2 an
 * error; messages on stderr. */
int fg_cli_write_fit(const struct fg_cli_opts *o, const struct fg_gate *g);

#endif
