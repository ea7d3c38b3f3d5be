/*
 * gen_lists.c - the lists users read, generated from the option and key tables.
 *
 *   gen_lists FILE...           rewrite FILE's generated sections in place
 *   gen_lists --check FILE...   exit 1, naming the file and section, where one is stale
 *
 * A section lies between a line holding "BEGIN GENERATED NAME" and one holding
 * "END GENERATED NAME" (in the file's comment syntax); the marker lines are
 * kept and what is between them is written from engine/job/jobopts.def (through
 * the engine itself: fg_jobopt_at, fg_jobopt_values), engine/stack/framework.c's
 * table and the CLI's spellings (cli/jobopts.c), so each list has one source.
 * `make lists` runs the first form on every such file; `make unit` the second
 * (as curl's test 1139 holds its man page to its option table): a row added to
 * jobopts.def without `make lists` fails the tests, naming the command.
 *
 * Sections (NAME):
 *   man1-jobopts  fitgate(1) JOB OPTIONS: .TP entries, the text of each from
 *                 man/fitgate.1.jobopts when it has a block there, else the row's help
 *   man8-jobopts  spank_fitgate(8) OPTIONS, the same from man/spank_fitgate.8.jobopts
 *   bash-jobopts  the completion's option list; bash-values: the value words of each
 *                 option that has them; bash-args: the options taking any value
 *   lua-options   contrib/job_submit.lua's OPTIONS and FLAGS
 *   md-jobopts    docs/cli.md's option table
 *   man5-keys     fitgate.conf(5)'s KEYS table, from policies/policy.c's key table
 * A text block is "@NAME" on a line of its own (roff: .\" @NAME) followed by its lines;
 * @FRAMEWORKS@ in it becomes the framework table's names.  A block naming no option
 * fails: a renamed option cannot keep a stale text.  Exit 0, 1 (stale / bad input), 2 (usage).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/fileio.h"
#include "stack/framework.h"
#include "jobopts.h"
#include "job/jobspec.h"
#include "policy.h"

#define MAX_WORDS 32

/* "--seq-len" as roff writes it: every '-' as "\-". */
static void roff_flag(FILE *f, const char *s)
{
    for (; *s; s++)
        fputs(*s == '-' ? "\\-" : (char[2]){*s, 0}, f);
}

/* ---- text blocks ----------------------------------------------------------------- */

struct blocks {
    char *text;          /* the file, NUL-split into blocks */
    const char *name[FG_JOBOPT_COUNT + 1];
    const char *body[FG_JOBOPT_COUNT + 1];
    size_t n;
};

static const char *block_of(const struct blocks *b, const char *name)
{
    for (size_t i = 0; i < b->n; i++)
        if (!strcmp(b->name[i], name))
            return b->body[i];
    return NULL;
}

static int read_blocks(const char *path, const char *lead, struct blocks *b)
{
    size_t len, ll = strlen(lead);
    memset(b, 0, sizeof *b);
    if (fg__read_file(path, 1 << 20, &b->text, &len)) {
        fprintf(stderr, "gen_lists: cannot read %s: %s\n", path, strerror(errno));
        return 1;
    }
    for (char *line = b->text; *line;) {
        char *next = strchr(line, '\n');
        next = next ? next + 1 : line + strlen(line);
        if (!strncmp(line, lead, ll) && line[ll] == '@') {
            if (next[-1] == '\n')
                next[-1] = '\0';
            if (b->n == FG_JOBOPT_COUNT || fg_jobopt_find(line + ll + 1) < 0 ||
                block_of(b, line + ll + 1)) {
                fprintf(stderr, "gen_lists: %s: block @%s names no option of "
                        "engine/job/jobopts.def (or one twice)\n", path, line + ll + 1);
                return 1;
            }
            b->name[b->n] = line + ll + 1;
            b->body[b->n++] = next;
            line[0] = '\0'; /* ends the block before */
        }
        line = next;
    }
    return 0;
}

/* A row's help as a man page sentence: "The card, when ... none." */
static void put_help(FILE *f, const char *help)
{
    size_t n = strlen(help), w = strcspn(help, " |");
    bool word = help[w] != '|'; /* not "none|optimizer|params: ..." */
    fprintf(f, "%c%s%s\n", word && help[0] >= 'a' && help[0] <= 'z' ? help[0] - 'a' + 'A' : help[0],
            help + 1, n && help[n - 1] != '.' ? "." : "");
}

/* The first row after row i that names another framework (a framework's releases are
 * adjacent rows of the table). */
static size_t next_framework(size_t i)
{
    size_t j = i + 1;
    while (fg_framework_at(j) && !strcmp(fg_framework_at(j)->name, fg_framework_at(i)->name))
        j++;
    return j;
}

/* A block's text with @FRAMEWORKS@ as ".BR hf , ..." lines, each framework once. */
static void put_block(FILE *f, const char *body)
{
    const char *at;
    while ((at = strstr(body, "@FRAMEWORKS@\n"))) {
        fwrite(body, 1, (size_t)(at - body), f);
        for (size_t i = 0; fg_framework_at(i); i = next_framework(i)) {
            size_t n = next_framework(i);
            bool more = fg_framework_at(n) != NULL;
            fputs(more ? ".BR " : ".B ", f);
            roff_flag(f, fg_framework_at(i)->name);
            fputs(more ? " ,\n" : "\n", f);
            if (more && !fg_framework_at(next_framework(n)))
                fputs("or\n", f);
        }
        body = at + strlen("@FRAMEWORKS@\n");
    }
    fputs(body, f);
    if (*body && body[strlen(body) - 1] != '\n')
        fputc('\n', f);
}

/* ---- sections --------------------------------------------------------------------- */

/* One .TP entry a row: fitgate(1)'s as the CLI spells the option (".BI \-\-mode " full|..."),
 * spank_fitgate(8)'s as the plugin does (".BI \-\-ft\-mode= MODE"), with the row's block
 * from the page's .jobopts file, else its help. */
static int man_entries(FILE *f, const char *blocks_path, bool plugin)
{
    struct blocks b;
    if (read_blocks(blocks_path, ".\\\" ", &b))
        return 1;
    for (unsigned id = 0; id < FG_JOBOPT_COUNT; id++) {
        const struct fg_jobopt *r = fg_jobopt_at(id);
        char flag[64], arg[256];
        const char *a = r->arg;
        if (plugin)
            snprintf(flag, sizeof flag, "--ft-%s", r->name);
        else if (!fg_cli_jobopt_flag(id, flag, sizeof flag))
            continue;
        else
            a = fg_cli_jobopt_arg(id, arg, sizeof arg);
        fputs(a ? ".TP\n.BI " : ".TP\n.B ", f);
        roff_flag(f, flag);
        if (a)
            fprintf(f, plugin ? "= %s" : " \" %s\"", a);
        fputc('\n', f);
        const char *body = block_of(&b, r->name);
        if (body)
            put_block(f, body);
        else
            put_help(f, r->help);
    }
    free(b.text);
    return 0;
}

static int man1(FILE *f)
{
    return man_entries(f, "man/fitgate.1.jobopts", false);
}

static int man8(FILE *f)
{
    return man_entries(f, "man/spank_fitgate.8.jobopts", true);
}

/* Words in lines of at most 92 columns, each line after the first led by indent and each
 * line but the last ended by eol ("" or bash's " \\"); col: where the first word goes. */
struct wrap {
    FILE *f;
    const char *indent, *eol;
    size_t col;
    bool started;
};

static void wrap_word(struct wrap *w, const char *word)
{
    size_t n = strlen(word);
    if (w->started && w->col + 1 + n + strlen(w->eol) > 92) {
        fprintf(w->f, "%s\n", w->eol);
        w->col = (size_t)fprintf(w->f, "%s%s", w->indent, word);
    } else {
        w->col += (size_t)fprintf(w->f, "%s%s", w->started ? " " : "", word);
    }
    w->started = true;
}

static int bash_jobopts(FILE *f)
{
    struct wrap w = {f, "        ", "", 0, false};
    char flag[64], opt[64];
    bool has_arg;
    fputs("    local job_opts=\"", f);
    w.col = strlen("    local job_opts=\"");
    for (unsigned id = 0; id < FG_JOBOPT_COUNT; id++)
        if (fg_cli_jobopt_flag(id, flag, sizeof flag))
            wrap_word(&w, flag);
    for (size_t i = 0; fg_cli_opt_at(i, &has_arg); i++) {
        snprintf(opt, sizeof opt, "--%s", fg_cli_opt_at(i, &has_arg));
        wrap_word(&w, opt);
    }
    fputs("\"\n", f);
    return 0;
}

static int bash_values(FILE *f)
{
    for (unsigned id = 0; id < FG_JOBOPT_COUNT; id++) {
        const char *words[MAX_WORDS];
        char flag[64];
        size_t n = fg_jobopt_values(id, words, MAX_WORDS);
        if (!n || n > MAX_WORDS || !fg_cli_jobopt_flag(id, flag, sizeof flag))
            continue;
        struct wrap w = {f, "                ", "", 0, false};
        fprintf(f, "        %s)\n            COMPREPLY=($(compgen -W \"", flag);
        w.col = strlen("            COMPREPLY=($(compgen -W \"");
        for (size_t i = 0; i < n; i++)
            wrap_word(&w, words[i]);
        fputs("\" -- \"$cur\"))\n            return ;;\n", f);
    }
    return 0;
}

static int bash_args(FILE *f)
{
    struct wrap w = {f, "            ", " \\", 0, false};
    char flag[64], opt[72];
    bool has_arg, first = true;
    fputs("        ", f);
    w.col = 8;
    for (unsigned id = 0; id < FG_JOBOPT_COUNT; id++) {
        const char *words[MAX_WORDS];
        if (!fg_jobopt_at(id)->arg || fg_jobopt_values(id, words, MAX_WORDS) ||
            !fg_cli_jobopt_flag(id, flag, sizeof flag))
            continue;
        snprintf(opt, sizeof opt, "%s%s", first ? "" : "| ", flag);
        wrap_word(&w, opt);
        first = false;
    }
    for (size_t i = 0; fg_cli_opt_at(i, &has_arg); i++) {
        const char *name = fg_cli_opt_at(i, &has_arg);
        if (!has_arg)
            continue;
        snprintf(opt, sizeof opt, "%s--%s", first ? "" : "| ", name);
        wrap_word(&w, opt);
        first = false;
    }
    fputs(")\n            return ;;\n", f);
    return 0;
}

/* "seq-len" as a Lua key: "seq_len" */
static const char *lua_name(const char *s, char *buf, size_t cap)
{
    size_t i = 0;
    for (; s[i] && i + 1 < cap; i++)
        buf[i] = s[i] == '-' ? '_' : s[i];
    buf[i] = '\0';
    return buf;
}

static int lua_options(FILE *f)
{
    struct wrap w = {f, "   ", "", 0, false};
    char name[64], word[72];
    fputs("local OPTIONS = {\n   ", f);
    w.col = 3;
    for (unsigned id = 0; id < FG_JOBOPT_COUNT; id++) {
        snprintf(word, sizeof word, "\"%s\",", lua_name(fg_jobopt_at(id)->name, name, sizeof name));
        wrap_word(&w, word);
    }
    fputs("\n}\nlocal FLAGS = {", f);
    const char *sep = " ";
    for (unsigned id = 0; id < FG_JOBOPT_COUNT; id++)
        if (!fg_jobopt_at(id)->arg) {
            fprintf(f, "%s%s = true", sep, lua_name(fg_jobopt_at(id)->name, name, sizeof name));
            sep = ", ";
        }
    fputs(" }\n", f);
    return 0;
}

/* s with '|' as "\|" (a table cell) */
static void md_cell(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n && s[i]; i++)
        fputs(s[i] == '|' ? "\\|" : (char[2]){s[i], 0}, f);
}

static int md_jobopts(FILE *f)
{
    fputs("| option | default | what |\n|---|---|---|\n", f);
    for (unsigned id = 0; id < FG_JOBOPT_COUNT; id++) {
        const struct fg_jobopt *r = fg_jobopt_at(id);
        char flag[64], arg[256];
        const char *fl = fg_cli_jobopt_flag(id, flag, sizeof flag);
        const char *a = fl ? fg_cli_jobopt_arg(id, arg, sizeof arg) : r->arg;
        /* "... (default X)": the default in its own column */
        const char *d = strstr(r->help, " (default ");
        if (!d)
            d = strstr(r->help, " (default: ");
        size_t what = d ? (size_t)(d - r->help) : strlen(r->help), skip = d && d[9] == ':' ? 11 : 10;
        fputs("| `", f);
        if (fl)
            md_cell(f, fl, strlen(fl));
        else
            fprintf(f, "MODEL`, `--ft-%s", r->name);
        if (a) {
            fputc(' ', f);
            md_cell(f, a, strlen(a));
        }
        fputs("` | ", f);
        if (d)
            md_cell(f, d + skip, strlen(d + skip) - 1);
        else
            fputs(r->arg ? "–" : "off", f);
        fputs(" | ", f);
        md_cell(f, r->help, what);
        fputs(" |\n", f);
    }
    return 0;
}

/* fitgate.conf(5)'s KEYS table: key, default, range, where (F file, P partition, A argument). */
static int man5_keys(FILE *f)
{
    struct fg_policy_key_info k;
    fputs(".TS\nlb lb lb lb\nl l l l.\nKey\tDefault\tRange\tWhere\n", f);
    for (size_t i = 0; fg_policy_key_at(i, &k); i++) {
        fprintf(f, "%s\t%s\t", k.name, k.def[0] ? k.def : "\\(em");
        if (k.bounded && k.real)
            fprintf(f, "%.1f..%.1f", k.min, k.max);
        else if (k.bounded)
            fprintf(f, "%g..%g", k.min, k.max);
        else
            fputs("\\-", f);
        fprintf(f, "\t%s%s%s\n", k.in_file ? "F" : "", k.in_part ? (k.in_file ? " P" : "P") : "",
                k.in_arg ? (k.in_file || k.in_part ? " A" : "A") : "");
    }
    fputs(".TE\n", f);
    return 0;
}

static const struct {
    const char *name;
    int (*write)(FILE *f);
} sections[] = {
    {"man1-jobopts", man1},   {"man8-jobopts", man8}, {"bash-jobopts", bash_jobopts},
    {"bash-values", bash_values}, {"bash-args", bash_args}, {"lua-options", lua_options},
    {"md-jobopts", md_jobopts}, {"man5-keys", man5_keys},
};

/* ---- files ------------------------------------------------------------------------ */

/* The section a marker line opens ("BEGIN GENERATED NAME"), or -1. */
static int section_of(const char *line, size_t len, const char *what)
{
    const char *m = memmem(line, len, what, strlen(what));
    if (!m)
        return -2;
    m += strlen(what);
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
        size_t n = strlen(sections[i].name);
        if ((size_t)(line + len - m) >= n && !strncmp(m, sections[i].name, n) &&
            (m + n == line + len || m[n] == ' ' || m[n] == ':' || m[n] == '\n' || m[n] == '-'))
            return (int)i;
    }
    return -1;
}

/* One file: the new text into out; 1 with a message on a bad marker. */
static int regenerate(const char *path, const char *text, FILE *out, unsigned *n)
{
    const char *p = text;
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p + 1) : strlen(p);
        int s = section_of(p, len, "BEGIN GENERATED ");
        fwrite(p, 1, len, out);
        p += len;
        if (s == -1) {
            fprintf(stderr, "gen_lists: %s: BEGIN GENERATED names no section\n", path);
            return 1;
        }
        if (s < 0)
            continue;
        const char *end = p;
        while (*end) {
            const char *e = strchr(end, '\n');
            size_t l = e ? (size_t)(e - end + 1) : strlen(end);
            if (section_of(end, l, "END GENERATED ") == s)
                break;
            end += l;
        }
        if (!*end) {
            fprintf(stderr, "gen_lists: %s: no END GENERATED %s\n", path, sections[s].name);
            return 1;
        }
        if (sections[s].write(out))
            return 1;
        p = end;
        (*n)++;
    }
    return 0;
}

static int one_file(const char *path, bool check)
{
    char *text = NULL, *fresh = NULL;
    size_t len, flen = 0;
    unsigned n = 0;
    int rc = 1;
    FILE *out = NULL;
    if (fg__read_file(path, 1 << 22, &text, &len)) {
        fprintf(stderr, "gen_lists: cannot read %s: %s\n", path, strerror(errno));
        goto done;
    }
    if (!(out = open_memstream(&fresh, &flen)) || regenerate(path, text, out, &n))
        goto done;
    fclose(out);
    out = NULL;
    if (!n) {
        fprintf(stderr, "gen_lists: %s has no BEGIN GENERATED section\n", path);
        goto done;
    }
    if (flen == len && !memcmp(fresh, text, len)) {
        rc = 0;
    } else if (check) {
        fprintf(stderr, "gen_lists: %s is stale (engine/job/jobopts.def or engine/stack/framework.c "
                "changed): run `make lists` and commit it\n", path);
    } else {
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        FILE *f = fopen(tmp, "w");
        if (!f || fwrite(fresh, 1, flen, f) != flen || fclose(f) || rename(tmp, path)) {
            fprintf(stderr, "gen_lists: cannot write %s: %s\n", path, strerror(errno));
            goto done;
        }
        printf("gen_lists: %s rewritten\n", path);
        rc = 0;
    }
done:
    if (out)
        fclose(out);
    free(text);
    free(fresh);
    return rc;
}

int main(int argc, char **argv)
{
    bool check = argc > 1 && !strcmp(argv[1], "--check");
    int rc = 0;
    if (argc < 2 + check) {
        fprintf(stderr, "usage: gen_lists [--check] FILE...\n");
        return 2;
    }
    for (int i = 1 + check; i < argc; i++)
        rc |= one_file(argv[i], check);
    return rc;
}
