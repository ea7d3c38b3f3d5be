/*
 * jobfile_edit.h - a change to a job's options written as a change to the job's own files
 * (--config): the key, file and line to edit, in that file's spelling, as the format's rows
 * (jobfile_rows.c, jobfile_rows_launch.c) map the key to the option, read backwards.
 *
 *   fg_jobfile_edits_for()    options id = value -> edits: the key in the files that set
 *                             the option gets the value that says the new one (a line
 *                             replaced), or, where no key set it, the format's key for it is
 *                             added (an insertion, at the end of a YAML file or the top of a
 *                             JSON object).
 *   fg_jobfile_write_edited() the file with the edits made, line by line as text: comments,
 *                             order and spelling kept; the one file the edits name.
 *
 * Ownership: plain data the caller owns.  Never prints.
 * Error contract: error.h; FG_E_UNSUPPORTED when an option has no key in the files' formats
 * (err names it: "--zero=3 is not a key of train.yaml (trl)"), the I/O errors of the files.
 */
#ifndef FG_JOBFILE_EDIT_H
#define FG_JOBFILE_EDIT_H

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

struct fg_jobspec;

#define FG_JOBFILE_EDITS 8

struct fg_jobfile_edit {
    char file[512];     /* as the job names it ("qlora.yml", "ds.json") */
    unsigned line;      /* 1-based: the line changed, or the line an insertion becomes */
    char key[128];      /* the key as the file spells it, dotted when nested */
    char from[64];      /* the value now, as written; "" for an insertion */
    char to[96];        /* the value after, in the file's spelling */
    bool insert;        /* the key is not in the file */
    bool names_file;    /* to is another file the job then reads (a DeepSpeed config) */
};

struct fg_jobfile_edits {
    size_t n;
    struct fg_jobfile_edit e[FG_JOBFILE_EDITS];
};

/*
 * The edits to spec's files (spec->configs, relative paths from base_dir) that set option
 * ids[i] to values[i] ("" for a flag: on), i < n, into *out.  0, or FG_E_UNSUPPORTED /
 * FG_E_NOTFOUND / FG_E_IO (err says which option or file).
 */
int fg_jobfile_edits_for(const struct fg_jobspec *spec, const char *base_dir, size_t n,
                         const unsigned *ids, const char *const *values,
                         struct fg_jobfile_edits *out, struct fg_err *err);

/*
 * The file the edits name (all of one file), edited, written to out_path (created or
 * replaced, mode 0644).  FG_E_INVAL when the edits span files or a line does not hold its
 * key; FG_E_IO on a read or write failure.
 */
int fg_jobfile_write_edited(const struct fg_jobfile_edits *ed, const char *base_dir,
                            const char *out_path, struct fg_err *err);

#endif
