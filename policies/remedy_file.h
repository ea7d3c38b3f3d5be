/*
 * remedy_file.h - a remedy (remedy.h) of a job read from its own config files, as the edits
 * of those files that make it (engine/job/jobfile_edit.h), and their words.  The CLI prints
 * them under the remedies and writes them (--write-fit); the plugin says them at sbatch.
 *
 * Ownership: plain data the caller owns.  Never prints.
 * Error contract: error.h; FG_E_UNSUPPORTED when the remedy is not an edit of the files (it
 * changes the GPU request or the framework, or an option no key of theirs says).
 */
#ifndef FG_REMEDY_FILE_H
#define FG_REMEDY_FILE_H

#include <stddef.h>

#include "job/jobfile_edit.h"
#include "remedy.h"

/* Remedy x of the job of spec (files relative to base_dir) as edits, into *out. */
int fg_remedy_file_edits(const struct fg_remedy *x, const struct fg_jobspec *spec,
                         const char *base_dir, struct fg_jobfile_edits *out,
                         struct fg_err *err);

/* "qlora.yml:46 gradient_checkpointing: false -> true", "f.yaml:47 add deepspeed: ds.json". */
void fg_remedy_file_words(const struct fg_jobfile_edit *e, char *buf, size_t cap);

#endif
