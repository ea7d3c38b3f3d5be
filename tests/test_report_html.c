/*
 * test_report_html.c - `fitgate plan --html`: every section is there, the
 * page loads nothing from outside, strings from configs are escaped, the
 * stacked bars add up to the estimate's phases, the file is replaced
 * atomically, and every fixture model gets a report.
 * (tests/integration/html.sh renders the page in a real browser.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/model_load.h"
#include "jobopts.h"
#include "memory/memory.h"
#include "report_html.h"

#define MODELS "tests/fixtures/models"
#define NEMOTRON MODELS "/nvidia--NVIDIA-Nemotron-Nano-9B-v2"

static struct fg_model *load(const char *dir)
{
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    if (fg_model_load(dir, &m, &err))
        fail_msg("%s: %s", dir, err.detail);
    return m;
}

/* Options as the plan command parses them: argv = {"plan", MODEL, extra...}. */
static void opts(struct fg_cli_opts *o, const char *model, const char *const *extra)
{
    char *argv[32];
    int argc = 0;
    argv[argc++] = (char *)"plan";
    argv[argc++] = (char *)model;
    for (; extra && *extra && argc < 31; extra++)
        argv[argc++] = (char *)*extra;
    argv[argc] = NULL;
    assert_int_equal(fg_cli_parse_opts(argc, argv, o), 0);
}

/* The report as a string; caller frees. */
static char *render(const struct fg_model *m, const struct fg_cli_opts *o, int want_rc)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    struct fg_err err = {0};
    int rc = fg_report_html_write(f, m, o, NULL, &err);
    fclose(f);
    if (rc != want_rc)
        fail_msg("report rc %d (%s), wanted %d", rc, err.detail, want_rc);
    return buf;
}

static size_t occurrences(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* The value of attribute name after position p ("data-bytes" -> 123). */
static unsigned long long attr_after(const char *p, const char *name)
{
    char pat[64];
    snprintf(pat, sizeof pat, "%s=\"", name);
    const char *a = strstr(p, pat);
    assert_non_null(a);
    return strtoull(a + strlen(pat), NULL, 10);
}

/* Each bar's segments sum to its data-total; the largest bar is the estimate's total. */
static void check_bars(const char *html, const struct fg_estimate *e, size_t want_bars)
{
    const char *p = html;
    size_t bars = 0;
    unsigned long long top = 0;
    while ((p = strstr(p, "<g class=\"bar\""))) {
        unsigned long long total = attr_after(p, "data-total"), sum = 0;
        const char *end = strstr(p + 1, "<g class=\"bar\"");
        const char *svg_end = strstr(p, "</svg>");
        if (!end || end > svg_end)
            end = svg_end;
        for (const char *s = p; (s = strstr(s, "<g class=\"segment\"")) && s < end; s++)
            sum += attr_after(s, "data-bytes");
        assert_int_equal(sum, total);
        if (total > top)
            top = total;
        bars++;
        p++;
    }
    assert_int_equal(bars, want_bars);
    assert_int_equal(top, e->total_bytes);
}

static void report_should_hold_every_section_for_nemotron(void **state)
{
    (void)state;
    struct fg_model *m = load(NEMOTRON);
    struct fg_cli_opts o;
    /* the fp32 + autocast full fine-tune of transformers 4.57 with foreach AdamW (the seed):
     * a 2-card PP split on H200 */
    opts(&o, NEMOTRON, (const char *const[]){"--framework", "transformers@4.57", "--optimizer",
                                            "adamw", NULL});
    char *html = render(m, &o, 0);
    assert_true(!strncmp(html, "<!DOCTYPE html>", 15));
    assert_non_null(strstr(html, "</html>\n"));
    const char *ids[] = {"summary", "breakdown", "batch", "cards", "layouts", "structure"};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        char want[64];
        snprintf(want, sizeof want, "<section id=\"%s\">", ids[i]);
        assert_non_null(strstr(html, want));
    }
    /* one segment per breakdown key that has bytes, each with its lines' sources */
    const char *segs[] = {"weights", "gradients", "optimizer", "activations", "logits",
                          "overhead"};
    for (size_t i = 0; i < sizeof segs / sizeof segs[0]; i++) {
        char want[64];
        snprintf(want, sizeof want, "data-key=\"%s\"", segs[i]);
        assert_non_null(strstr(html, want));
    }
    assert_non_null(strstr(html, "[source: torch AdamW; Transformer Math 101]"));
    assert_non_null(strstr(html, "[source: transformers ForCausalLMLoss fp32 upcast]"));
    /* full fine-tune: the backward peak and the optimizer step */
    struct fg_estimate e;
    struct fg_err err = {0};
    assert_int_equal(fg_memory_estimate(m, &o.job, &e, &err), 0);
    check_bars(html, &e, 2);
    /* chart: a line per table mode, a limit per card; card table: five cards */
    assert_int_equal(occurrences(html, "<g class=\"mode\""), 3);
    assert_non_null(strstr(html, "data-mode=\"full\""));
    assert_non_null(strstr(html, "data-mode=\"serve\""));
    assert_int_equal(occurrences(html, "<g class=\"card-limit\">"), 5 + 1);
    const char *tbl = strstr(html, "<table id=\"card-table\">");
    assert_non_null(tbl);
    assert_non_null(strstr(tbl, "H200 141 GB"));
    assert_non_null(strstr(tbl, "split: 2 cards"));
    /* layouts on H200 by default: the seed's 2 x H200 PP=2 split first */
    const char *lay = strstr(html, "<section id=\"layouts\">");
    assert_non_null(strstr(lay, "Suggested layouts on H200 141 GB"));
    assert_non_null(strstr(lay, "0-27,28-55"));
    assert_non_null(strstr(lay, "FITGATE_NEMO_OVERRIDES"));
    /* structure: a row per node */
    const char *st = strstr(html, "<table id=\"structure-table\"");
    assert_non_null(st);
    char *end = strstr(st, "</table>");
    char save = *end;
    *end = '\0';
    assert_int_equal(occurrences(st, "<tr><td class=\"num\">"), m->n_nodes);
    *end = save;
    free(html);
    fg_model_free(m);
}

static void report_should_load_nothing_from_outside(void **state)
{
    (void)state;
    struct fg_model *m = load(NEMOTRON);
    struct fg_cli_opts o;
    opts(&o, NEMOTRON, NULL);
    char *html = render(m, &o, 0);
    const char *banned[] = {"<script", "<link", "<img", "<iframe", "<object", "<embed",
                            "@import", "@font-face", "src=", "href=", "https://", "url(http",
                            "url(/", "url(data"};
    for (size_t i = 0; i < sizeof banned / sizeof banned[0]; i++)
        if (strstr(html, banned[i]))
            fail_msg("report holds '%s'", banned[i]);
    /* the only http:// is the SVG namespace, which is a name, not a fetch */
    size_t http = occurrences(html, "http://"), ns = occurrences(html, "http://www.w3.org/2000/svg");
    assert_int_equal(http, ns);
    free(html);
    fg_model_free(m);
}

static void report_should_escape_strings_from_the_config(void **state)
{
    (void)state;
    struct fg_model *m = load(NEMOTRON);
    snprintf(m->id, sizeof m->id, "evil/<script>alert(\"x\")</script>&'");
    snprintf(m->notes[0], sizeof m->notes[0], "<b>note</b>");
    if (!m->n_notes)
        m->n_notes = 1;
    snprintf(m->nodes[0].desc, sizeof m->nodes[0].desc, "<img src=x>");
    struct fg_cli_opts o;
    opts(&o, NEMOTRON, NULL);
    char *html = render(m, &o, 0);
    assert_null(strstr(html, "<script"));
    assert_null(strstr(html, "<b>note"));
    assert_null(strstr(html, "<img"));
    assert_non_null(strstr(html, "evil/&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;"));
    assert_non_null(strstr(html, "&lt;img src=x&gt;"));
    free(html);
    fg_model_free(m);
}

static void report_should_draw_one_bar_and_the_users_card_for_lora(void **state)
{
    (void)state;
    struct fg_model *m = load(NEMOTRON);
    struct fg_cli_opts o;
    const char *extra[] = {"--mode", "lora", "--gpu", "a100_80g", NULL};
    opts(&o, NEMOTRON, extra);
    char *html = render(m, &o, 0);
    struct fg_estimate e;
    struct fg_err err = {0};
    assert_int_equal(fg_memory_estimate(m, &o.job, &e, &err), 0);
    check_bars(html, &e, 1);
    assert_non_null(strstr(html, "data-key=\"adapters\""));
    assert_null(strstr(html, "data-key=\"gradients\""));
    /* A100 80 GB is not a default row: it is added to the table and planned on */
    assert_non_null(strstr(html, "Suggested layouts on A100 80 GB"));
    assert_int_equal(occurrences(html, "<g class=\"card-limit\">"), 6 + 1);
    assert_non_null(strstr(html, "lora (this job)"));
    free(html);
    fg_model_free(m);
}

static void report_should_add_a_line_for_qlora(void **state)
{
    (void)state;
    struct fg_model *m = load(NEMOTRON);
    struct fg_cli_opts o;
    const char *extra[] = {"--mode", "qlora", NULL};
    opts(&o, NEMOTRON, extra);
    char *html = render(m, &o, 0);
    assert_int_equal(occurrences(html, "<g class=\"mode\""), 4);
    assert_non_null(strstr(html, "data-mode=\"qlora\""));
    free(html);
    fg_model_free(m);
}

static void report_should_name_an_unknown_card(void **state)
{
    (void)state;
    struct fg_model *m = load(NEMOTRON);
    struct fg_cli_opts o;
    const char *extra[] = {"--gpu", "voodoo5", NULL};
    opts(&o, NEMOTRON, extra);
    struct fg_err err = {0};
    FILE *f = fopen("/dev/null", "w");
    assert_int_equal(fg_report_html_write(f, m, &o, NULL, &err), FG_E_NOTFOUND);
    fclose(f);
    assert_non_null(strstr(err.detail, "voodoo5"));
    fg_model_free(m);
}

static void report_file_should_replace_atomically_and_name_bad_paths(void **state)
{
    (void)state;
    struct fg_model *m = load(NEMOTRON);
    struct fg_cli_opts o;
    opts(&o, NEMOTRON, NULL);
    char dir[] = "/tmp/fitgate-html-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/report.html", dir);
    FILE *f = fopen(path, "w");
    fputs("old", f);
    fclose(f);
    struct fg_err err = {0};
    assert_int_equal(fg_report_html_file(path, m, &o, NULL, &err), 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(st.st_size > 10000);
    mode_t mask = umask(0);
    umask(mask);
    assert_int_equal(st.st_mode & 0777, 0666 & ~mask);
    /* nothing left beside it */
    DIR *d = opendir(dir);
    struct dirent *de;
    int files = 0;
    while ((de = readdir(d)))
        files += de->d_name[0] != '.';
    closedir(d);
    assert_int_equal(files, 1);
    unlink(path);
    rmdir(dir);
    /* a directory that does not exist: FG_E_IO naming the path */
    assert_int_equal(fg_report_html_file("/nonexistent-dir/r.html", m, &o, NULL, &err), FG_E_IO);
    assert_non_null(strstr(err.detail, "/nonexistent-dir/r.html"));
    fg_model_free(m);
}

/* Every fixture model up to 150B parameters (the giants only cost planner time, which
 * test_plan covers), default job and LoRA: a report, bars that add up. */
static void report_should_render_every_fixture_model(void **state)
{
    (void)state;
    DIR *d = opendir(MODELS);
    assert_non_null(d);
    struct dirent *de;
    int n = 0;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char dir[512];
        snprintf(dir, sizeof dir, "%s/%s", MODELS, de->d_name);
        struct fg_model *m = NULL;
        struct fg_err err = {0};
        if (fg_model_load(dir, &m, &err))
            continue; /* test_params owns which fixtures load */
        if (m->params_total > 150000000000ull) {
            fg_model_free(m);
            continue;
        }
        for (int lora = 0; lora < 2; lora++) {
            struct fg_cli_opts o;
            const char *extra[] = {"--mode", "lora", NULL};
            opts(&o, dir, lora ? extra : NULL);
            struct fg_estimate e;
            if (fg_memory_estimate(m, &o.job, &e, &err))
                continue;
            char *html = render(m, &o, 0);
            check_bars(html, &e, e.step_bytes ? 2 : 1);
            assert_non_null(strstr(html, "</html>\n"));
            free(html);
        }
        fg_model_free(m);
        n++;
    }
    closedir(d);
    print_message("%d fixture models reported\n", n);
    assert_true(n >= 40);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(report_should_hold_every_section_for_nemotron),
        cmocka_unit_test(report_should_load_nothing_from_outside),
        cmocka_unit_test(report_should_escape_strings_from_the_config),
        cmocka_unit_test(report_should_draw_one_bar_and_the_users_card_for_lora),
        cmocka_unit_test(report_should_add_a_line_for_qlora),
        cmocka_unit_test(report_should_name_an_unknown_card),
        cmocka_unit_test(report_file_should_replace_atomically_and_name_bad_paths),
        cmocka_unit_test(report_should_render_every_fixture_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
