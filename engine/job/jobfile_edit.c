/*
 * jobfile_edit.c - an option change as an edit of the job's own file (jobfile_edit.h).
 *
 * The rows say what a key's value sets ("micro_batch_size" -> batch=$; gradient_checkpointing
 * true -> grad-ckpt=yes); read backwards, they say which key of the file holds an option and
 * which value of it says the new one.  The key the file already has wins (its line is
 * edited); otherwise the format's own key for the option is inserted.  A format whose
 * layout lives in another file (TrainingArguments' deepspeed: ds.json) gets that key with
 * the framework's shipped config (the insertion table below), marked names_file.
 *
 * The edit itself is text: the value span of one line replaced, or one line added, so the
 * file keeps its comments, order and quoting.
 */
#include "job/jobfile_edit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "job/jobfile_rows.h"
#include "job/jobspec.h"
#include "util/fileio.h"

/* Options a format sets through a key naming another file: the config the framework ships
 * for it (axolotl deepspeed_configs/, LLaMA-Factory examples/deepspeed/). */
static const struct {
    enum fg_jobfile_format fmt;
    const char *set, *key, *value;
} file_keys[] = {
    {FG_JF_AXOLOTL, "zero=3", "deepspeed", "deepspeed_configs/zero3_bf16.json"},
    {FG_JF_AXOLOTL, "zero=2", "deepspeed", "deepspeed_configs/zero2.json"},
    {FG_JF_AXOLOTL, "zero=1", "deepspeed", "deepspeed_configs/zero1.json"},
    {FG_JF_LLAMA_FACTORY, "zero=3", "deepspeed", "examples/deepspeed/ds_z3_config.json"},
    {FG_JF_LLAMA_FACTORY, "zero=2", "deepspeed", "examples/deepspeed/ds_z2_config.json"},
};

/* "name=value" is one of list's ';' segments (a leading '+' ignored; $ any value). */
static bool sets(const char *list, const char *name, const char *value, bool *dollar)
{
    size_t nl = strlen(name);
    for (const char *p = list; p && *p;) {
        size_t l = strcspn(p, ";");
        const char *seg = p + (*p == '+');
        size_t sl = l - (size_t)(seg - p);
        p += l + (p[l] == ';');
        if (sl <= nl || strncmp(seg, name, nl) || seg[nl] != '=')
            continue;
        const char *v = seg + nl + 1;
        size_t vl = sl - nl - 1;
        if (vl == 1 && *v == '$') {
            *dollar = true;
            return true;
        }
        if (vl == strlen(value) && !strncasecmp(v, value, vl)) {
            *dollar = false;
            return true;
        }
    }
    return false;
}

/* Whether row r can say name=value, and the value of its key that says it (to); *more
 * whether that value sets other options too (axolotl gradient_checkpointing: offload). */
static bool row_says(const struct fg__jf_row *r, const char *name, const char *value,
                          char *to, size_t cap, bool *more)
{
    bool dollar = false;
    *more = false;
    if (r->hook)
        return false;
    if (r->assign && sets(r->assign, name, value, &dollar)) {
        snprintf(to, cap, "%s", dollar ? value : "");
        return dollar;
    }
    for (const struct fg__jf_vmap *m = r->map; m && m->match; m++) {
        if (!sets(m->assign, name, value, &dollar))
            continue;
        *more = strchr(m->assign, ';') != NULL;
        if (dollar || !strcmp(m->match, "*")) {
            snprintf(to, cap, "%s", value);
            return true;
        }
        snprintf(to, cap, "%.*s", (int)strcspn(m->match, "|"), m->match);
        return true;
    }
    return false;
}

/* Whether row r sets option name at all (with any value). */
static bool row_touches(const struct fg__jf_row *r, const char *name)
{
    char probe[160];
    snprintf(probe, sizeof probe, "%s=", name);
    if (r->assign && strstr(r->assign, probe))
        return true;
    for (const struct fg__jf_vmap *m = r->map; m && m->match; m++)
        if (strstr(m->assign, probe))
            return true;
    return false;
}

struct files {
    struct fg_jobfile *f[FG_JOBFILE_FILES];
    unsigned lines[FG_JOBFILE_FILES]; /* each file's lines of text */
    size_t n;
};

static int read_text(const char *path, char **text, size_t *len, struct fg_err *err);
static int files_open_named(struct files *fs, const struct fg_jobfile *by, const char *val,
                            const char *base, struct fg_err *err);

static void files_free(struct files *fs)
{
    for (size_t i = 0; i < fs->n; i++)
        fg_jobfile_free(fs->f[i]);
}

static int files_open(struct files *fs, const char *spec, enum fg_jobfile_format fmt,
                      const char *base, struct fg_err *err)
{
    const char *colon = strchr(spec, ':');
    struct fg_jobfile *f = NULL;
    if (fs->n >= FG_JOBFILE_FILES)
        return 0;
    if (colon && fmt == FG_JF_AUTO &&
        (fmt = fg_jobfile_format_find(spec, (size_t)(colon - spec))) != FG_JF_AUTO)
        spec = colon + 1;
    int rc = fg_jobfile_read(spec, base, &f, err);
    if (!rc && fmt == FG_JF_AUTO)
        rc = fg_jobfile_detect_format(f, &fmt, err);
    if (rc) {
        fg_jobfile_free(f);
        return rc;
    }
    f->format = fmt;
    char full[1100], *text = NULL;
    size_t len = 0;
    unsigned lines = 0;
    snprintf(full, sizeof full, "%s%s%s", spec[0] != '/' && base ? base : "",
             spec[0] != '/' && base ? "/" : "", spec);
    if ((rc = read_text(full, &text, &len, err))) {
        fg_jobfile_free(f);
        return rc;
    }
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    lines += len && text[len - 1] != '\n'; /* an unterminated last line */
    free(text);
    fs->lines[fs->n] = lines;
    fs->f[fs->n++] = f;
    /* a file it names (deepspeed: ds.json) holds keys of the job too */
    for (size_t k = 0; k < f->n; k++) {
        const struct fg__jf_row *r = fg__jf_row_for(fmt, f->keys[k].path);
        if (r && r->hook == H_FILE && !f->keys[k].null &&
            !strchr("{", f->keys[k].value[0]) && f->keys[k].value[0] &&
            strcasecmp(f->keys[k].value, "auto") && strcasecmp(f->keys[k].value, "none") &&
            strcasecmp(f->keys[k].value, "false") &&
            (rc = files_open_named(fs, f, f->keys[k].value, base, err)))
            return rc;
    }
    return 0;
}

/* The file by names: from base, else beside by (as fg_jobfile_apply reads it). */
static int files_open_named(struct files *fs, const struct fg_jobfile *by, const char *val,
                            const char *base, struct fg_err *err)
{
    char beside[1100];
    const char *slash = strrchr(by->name, '/');
    int rc = files_open(fs, val, FG_JF_DEEPSPEED, base, err);
    if (rc != FG_E_NOTFOUND || val[0] == '/' || !slash)
        return rc;
    snprintf(beside, sizeof beside, "%.*s/%s", (int)(slash - by->name), by->name, val);
    return files_open(fs, beside, FG_JF_DEEPSPEED, base, err);
}

static int add_edit(struct fg_jobfile_edits *out, const struct fg_jobfile *f, unsigned line,
                    const char *key, const char *from, const char *to, bool insert,
                    bool names_file, struct fg_err *err)
{
    if (out->n >= FG_JOBFILE_EDITS)
        return fg_err_set(err, FG_E_RANGE, "more than %d edits", FG_JOBFILE_EDITS);
    struct fg_jobfile_edit *e = &out->e[out->n++];
    memset(e, 0, sizeof *e);
    snprintf(e->file, sizeof e->file, "%s", f->name);
    snprintf(e->key, sizeof e->key, "%s", key);
    snprintf(e->from, sizeof e->from, "%s", from);
    snprintf(e->to, sizeof e->to, "%s", to);
    e->line = line;
    e->insert = insert;
    e->names_file = names_file;
    return 0;
}

/* The line an insertion into f becomes: after the last line of a YAML file (lines: its
 * count), the first key's line of a JSON object (the new key goes before it). */
static unsigned insert_line(const struct fg_jobfile *f, bool json, unsigned lines)
{
    unsigned first = ~0u;
    for (size_t k = 0; k < f->n; k++)
        if (f->keys[k].line < first)
            first = f->keys[k].line;
    return json ? (first == ~0u ? 2 : first) : lines + 1;
}

static bool is_json(const struct fg_jobfile *f)
{
    size_t n = strlen(f->name);
    return n > 5 && !strcasecmp(f->name + n - 5, ".json");
}

/* One option: the key that set it, else an insertion into the job's main file. */
static int edit_one(const struct files *fs, unsigned id, const char *value,
                    struct fg_jobfile_edits *out, struct fg_err *err)
{
    const struct fg_jobopt *o = fg_jobopt_at(id);
    const char *v = !o->arg && !*value ? "yes" : value;
    char to[96];
    /* the last key that sets it, in the order the files are read */
    const struct fg_jobfile *hf = NULL;
    const struct fg_jobfile_key *hk = NULL;
    const struct fg__jf_row *hr = NULL;
    for (size_t i = 0; i < fs->n; i++)
        for (size_t k = 0; k < fs->f[i]->n; k++) {
            const struct fg__jf_row *r = fg__jf_row_for(fs->f[i]->format, fs->f[i]->keys[k].path);
            if (r && row_touches(r, o->name)) {
                hf = fs->f[i];
                hk = &fs->f[i]->keys[k];
                hr = r;
            }
        }
    if (hk && hk->list)
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s:%u %s is a list: edit it by hand (--%s=%s)",
                          hf->name, hk->line, hk->path, o->name, value);
    /* the key the file has, unless its value for this would set more than the option (then
     * the format's own key for it alone, where it has one) */
    bool more = false;
    char had[96];
    bool says = hk && row_says(hr, o->name, v, had, sizeof had, &more);
    if (says && !more)
        return add_edit(out, hf, hk->line, hk->path, hk->value, had, false, false, err);
    /* the main file: the first named (a trainer's before the files it names) */
    const struct fg_jobfile *m = fs->f[0];
    unsigned at = insert_line(m, is_json(m), fs->lines[0]);
    const struct fg__jf_row *r;
    for (size_t i = 0; (r = fg__jf_row_at(i)); i++)
        if ((r->fmts & (1u << m->format)) && !strchr(r->key, '.') &&
            !fg_jobfile_get(m, r->key) && row_says(r, o->name, v, to, sizeof to, &more) &&
            !more)
            return add_edit(out, m, at, r->key, "", to, true, false, err);
    if (says)
        return add_edit(out, hf, hk->line, hk->path, hk->value, had, false, false, err);
    char want[160];
    snprintf(want, sizeof want, "%s=%s", o->name, v);
    for (size_t i = 0; i < sizeof file_keys / sizeof file_keys[0]; i++)
        if (file_keys[i].fmt == m->format && !strcmp(file_keys[i].set, want) &&
            !fg_jobfile_get(m, file_keys[i].key))
            return add_edit(out, m, at, file_keys[i].key, "",
                            file_keys[i].value, true, true, err);
    return fg_err_set(err, FG_E_UNSUPPORTED, "--%s%s%s is not a key of %s (%s)", o->name,
                      o->arg ? "=" : "", o->arg ? value : "", hf ? hf->name : m->name,
                      fg_jobfile_format_name(hf ? hf->format : m->format));
}

int fg_jobfile_edits_for(const struct fg_jobspec *spec, const char *base_dir, size_t n,
                         const unsigned *ids, const char *const *values,
                         struct fg_jobfile_edits *out, struct fg_err *err)
{
    struct files fs = {0};
    int rc = 0;
    memset(out, 0, sizeof *out);
    if (!spec->n_configs)
        return fg_err_set(err, FG_E_UNSUPPORTED, "the job names no config file");
    for (size_t i = 0; i < spec->n_configs && !rc; i++)
        rc = files_open(&fs, spec->configs[i], FG_JF_AUTO, base_dir, err);
    for (size_t i = 0; i < n && !rc; i++)
        rc = edit_one(&fs, ids[i], values[i], out, err);
    files_free(&fs);
    return rc;
}

/* ---- the text edit ------------------------------------------------------------------- */

static int read_text(const char *path, char **text, size_t *len, struct fg_err *err)
{
    struct stat st;
    int fd = fg__openat_regular(AT_FDCWD, path, 0, &st);
    if (fd < 0)
        return fg_err_set(err, FG_E_IO, "%s: %s", path, strerror(errno));
    int rc = fg__read_fd(fd, &st, path, FG_JOBFILE_MAX_BYTES, text, len, err);
    close(fd);
    return rc;
}

/* Is the value a JSON number, boolean or null (written bare)? */
static bool json_bare(const char *v)
{
    char *end;
    if (!strcmp(v, "true") || !strcmp(v, "false") || !strcmp(v, "null"))
        return true;
    (void)strtod(v, &end);
    return *v && !*end;
}

/* Line [s, e) with the value of key leaf replaced by to; 0, or -1 when the line does not
 * hold the key. */
static int replace_value(FILE *o, const char *s, const char *e, const char *leaf,
                         const char *to, bool json)
{
    size_t ll = strlen(leaf);
    const char *k = s;
    for (; k + ll <= e; k++)
        if (!strncmp(k, leaf, ll) && (k == s || strchr(" \t\"'{,", k[-1])) &&
            (k + ll < e && strchr("\"': \t", k[ll])))
            break;
    if (k + ll > e)
        return -1;
    const char *c = k + ll;
    while (c < e && (*c == '"' || *c == '\'' || *c == ' ' || *c == '\t'))
        c++;
    if (c >= e || *c != ':')
        return -1;
    c++;
    while (c < e && (*c == ' ' || *c == '\t'))
        c++;
    const char *vs = c, *ve = c;
    char q = (*c == '"' || *c == '\'') ? *c : 0;
    if (q) {
        ve = memchr(c + 1, q, (size_t)(e - c - 1));
        ve = ve ? ve + 1 : e;
    } else {
        /* to a ',' or '}' (JSON), a " #" comment (YAML), or the line's end */
        while (ve < e && *ve != '\r' &&
               !(json ? strchr(",}", *ve) != NULL : ve[0] == ' ' && ve + 1 < e && ve[1] == '#'))
            ve++;
        while (ve > vs && (ve[-1] == ' ' || ve[-1] == '\t'))
            ve--;
    }
    fwrite(s, 1, (size_t)(vs - s), o);
    if (q || (json && !json_bare(to)))
        fprintf(o, "%c%s%c", q ? q : '"', to, q ? q : '"');
    else
        fputs(to, o);
    fwrite(ve, 1, (size_t)(e - ve), o);
    return 0;
}

int fg_jobfile_write_edited(const struct fg_jobfile_edits *ed, const char *base_dir,
                            const char *out_path, struct fg_err *err)
{
    char path[1100], tmp[1100];
    char *text = NULL;
    size_t len = 0;
    FILE *o = NULL;
    int rc = 0;
    if (!ed->n)
        return fg_err_set(err, FG_E_INVAL, "no edits to write");
    const char *name = ed->e[0].file;
    for (size_t i = 1; i < ed->n; i++)
        if (strcmp(ed->e[i].file, name))
            return fg_err_set(err, FG_E_INVAL, "the edits change %s and %s: one file at a time",
                              name, ed->e[i].file);
    snprintf(path, sizeof path, "%s%s%s", name[0] != '/' && base_dir ? base_dir : "",
             name[0] != '/' && base_dir ? "/" : "", name);
    if ((rc = read_text(path, &text, &len, err)))
        return rc;
    bool json = strlen(name) > 5 && !strcasecmp(name + strlen(name) - 5, ".json");
    snprintf(tmp, sizeof tmp, "%s.tmp", out_path);
    if (!(o = fopen(tmp, "w"))) {
        rc = fg_err_set(err, FG_E_IO, "%s: %s", tmp, strerror(errno));
        goto out;
    }
    unsigned line = 1;
    for (const char *s = text; s < text + len || line == 1; line++) {
        const char *e = memchr(s, '\n', (size_t)(text + len - s));
        const char *next = e ? e + 1 : text + len;
        if (!e)
            e = text + len;
        bool done = false;
        for (size_t i = 0; i < ed->n && !rc; i++) {
            const struct fg_jobfile_edit *x = &ed->e[i];
            if (x->insert && json && x->line == line)
                fprintf(o, "  \"%s\": %s%s%s,\n", x->key, json_bare(x->to) ? "" : "\"", x->to,
                        json_bare(x->to) ? "" : "\"");
            if (x->insert || x->line != line || done)
                continue;
            const char *leaf = strrchr(x->key, '.') ? strrchr(x->key, '.') + 1 : x->key;
            if (replace_value(o, s, e, leaf, x->to, json))
                rc = fg_err_set(err, FG_E_INVAL, "%s:%u does not hold %s", name, line, x->key);
            done = true;
        }
        if (rc)
            goto out;
        if (!done)
            fwrite(s, 1, (size_t)(e - s), o);
        if (next > e)
            fputc('\n', o);
        s = next;
        if (s >= text + len)
            break;
    }
    bool open_line = len && text[len - 1] != '\n';
    for (size_t i = 0; i < ed->n; i++)
        if (ed->e[i].insert && !json) {
            fprintf(o, "%s%s: %s\n", open_line ? "\n" : "", ed->e[i].key, ed->e[i].to);
            open_line = false;
        }
    if (fclose(o)) {
        o = NULL;
        rc = fg_err_set(err, FG_E_IO, "%s: %s", tmp, strerror(errno));
        goto out;
    }
    o = NULL;
    if (rename(tmp, out_path))
        rc = fg_err_set(err, FG_E_IO, "%s: %s", out_path, strerror(errno));
out:
    if (o)
        fclose(o);
    if (rc)
        unlink(tmp);
    free(text);
    return rc;
}
