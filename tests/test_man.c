/*
 * test_man.c - man/fitgate.conf.5 against the policy parser, so the page
 * and the parser's key table (policies/policy.c) cannot drift apart.
 *
 * Everything is asked of the parser through its public functions
 * (policy.h), never read from its source:
 *   - which keys exist where: the parser's own "unknown key ... (known: ...)"
 *     message for a fitgate.conf line, a PartitionName= line and a plugstack
 *     argument, against the page's Where column (F, P, A);
 *   - defaults: applying the documented default changes nothing after
 *     fg_policy_init();
 *   - ranges: both documented bounds are taken, one step outside either is
 *     refused and leaves the policy as it was;
 *   - choices: every value on a key's tag line (".BI Action= off|warn|...")
 *     is taken, and the parser's error for a bad value lists the same set.
 * The page's KEYS table is the tbl block after ".SH KEYS"; each key also
 * has a ".TP" entry whose tag is ".BI Key= VALUES".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

#define PAGE "man/fitgate.conf.5"
#define MAX_KEYS 64
#define PAGE_MAX (1 << 17)

enum { W_F = 1, W_P = 2, W_A = 4 };

struct doc_key {
    char name[40];
    char def[128];
    bool has_range;
    char min[24], max[24];
    unsigned where;
    char tag[128];      /* what follows "Key=" on the .TP tag line */
};

static struct doc_key doc[MAX_KEYS];
static size_t ndoc;

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("cannot open %s (tests run from the repository root)", path);
    static char buf[PAGE_MAX];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* roff escapes used in the table: \- is "-", \(em is "" (no default) */
static void unroff(const char *in, char *out, size_t cap)
{
    size_t o = 0;
    while (*in && o + 1 < cap) {
        if (!strncmp(in, "\\(em", 4)) {
            in += 4;
        } else if (!strncmp(in, "\\-", 2)) {
            out[o++] = '-';
            in += 2;
        } else if (!strncmp(in, "\\:", 2)) {
            in += 2;
        } else {
            out[o++] = *in++;
        }
    }
    out[o] = '\0';
}

static int load_page(void **state)
{
    (void)state;
    char *text = slurp(PAGE);
    static char table[PAGE_MAX];
    memcpy(table, text, strlen(text) + 1); /* the table is cut up in place */
    char *keys = strstr(table, "\n.SH KEYS\n");
    if (!keys)
        fail_msg(PAGE ": no .SH KEYS section");
    char *ts = strstr(keys, "\n.TS\n"), *te = ts ? strstr(ts, "\n.TE\n") : NULL;
    if (!ts || !te)
        fail_msg(PAGE ": no .TS/.TE table in KEYS");
    *te = '\0';
    char *line = ts + 5;
    /* format lines end with '.'; then the header row */
    while (line && *line) {
        char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        bool last_format = len && line[len - 1] == '.';
        line = nl ? nl + 1 : NULL;
        if (last_format)
            break;
    }
    bool header = true;
    for (; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        if (header) {
            header = false;
        } else if (*line && line[0] != '.') {
            char *col[4] = {0};
            int n = 0;
            for (char *c = line; n < 4; n++) {
                col[n] = c;
                char *tab = strchr(c, '\t');
                if (!tab) {
                    n++;
                    break;
                }
                *tab = '\0';
                c = tab + 1;
            }
            if (n != 4)
                fail_msg(PAGE ": KEYS row '%s' has %d columns, not 4", line, n);
            assert_true(ndoc < MAX_KEYS);
            struct doc_key *k = &doc[ndoc++];
            unroff(col[0], k->name, sizeof k->name);
            unroff(col[1], k->def, sizeof k->def);
            char range[64];
            unroff(col[2], range, sizeof range);
            char *dots = strstr(range, "..");
            if (dots) {
                k->has_range = true;
                snprintf(k->min, sizeof k->min, "%.*s", (int)(dots - range), range);
                snprintf(k->max, sizeof k->max, "%s", dots + 2);
            } else if (strcmp(range, "-")) {
                fail_msg(PAGE ": %s: range '%s' is neither MIN..MAX nor \\-", k->name, range);
            }
            for (const char *w = col[3]; *w; w++)
                k->where |= *w == 'F' ? W_F : *w == 'P' ? W_P : *w == 'A' ? W_A : 0;
        }
        line = nl ? nl + 1 : NULL;
    }
    if (ndoc < 10)
        fail_msg(PAGE ": only %zu rows read from the KEYS table", ndoc);

    /* the .TP tag of each key: ".BI Key= VALUES" right after .TP or .TQ */
    for (size_t i = 0; i < ndoc; i++) {
        char want[64];
        snprintf(want, sizeof want, "\n.BI %.40s= ", doc[i].name);
        const char *p = text;
        bool found = false;
        while ((p = strstr(p, want))) {
            const char *prev = p - 1;
            while (prev > text && prev[-1] != '\n')
                prev--;
            if (!strncmp(prev, ".TP", 3) || !strncmp(prev, ".TQ", 3)) {
                const char *v = p + strlen(want);
                size_t len = strcspn(v, "\n");
                char raw[128];
                snprintf(raw, sizeof raw, "%.*s", (int)len, v);
                unroff(raw, doc[i].tag, sizeof doc[i].tag);
                found = true;
                break;
            }
            p++;
        }
        if (!found)
            fail_msg(PAGE ": %s is in the KEYS table but has no '.TP' entry '.BI %s= ...'",
                     doc[i].name, doc[i].name);
    }
    return 0;
}

static struct doc_key *doc_find(const char *name)
{
    for (size_t i = 0; i < ndoc; i++)
        if (!strcmp(doc[i].name, name))
            return &doc[i];
    return NULL;
}

/* ---- asking the parser --------------------------------------------------- */

/* Apply "Key=value" in the first place the page allows (an argument, else a file line). */
static int apply(struct fg_policy *p, const struct doc_key *k, const char *value,
                 struct fg_err *err)
{
    char kv[256];
    snprintf(kv, sizeof kv, "%s=%s", k->name, value);
    if (k->where & W_A) {
        char *argv[] = {kv};
        return fg_policy_args(p, 1, argv, "test", err);
    }
    return fg_policy_parse(p, kv, strlen(kv), "test", err);
}

/* The policy after applying value, compared with the defaults (bookkeeping cleared). */
static bool changes(const struct doc_key *k, const char *value, int *rc, struct fg_err *err)
{
    struct fg_policy *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    assert_non_null(a);
    assert_non_null(b);
    fg_policy_init(a);
    fg_policy_init(b);
    *rc = apply(b, k, value, err);
    memset(a->key_line, 0, sizeof a->key_line);
    memset(b->key_line, 0, sizeof b->key_line);
    bool changed = memcmp(a, b, sizeof *a) != 0;
    free(a);
    free(b);
    return changed;
}

/* The parser's key list for one place, from its unknown-key message. */
static void parser_keys(unsigned where, char *out, size_t cap)
{
    struct fg_policy *p = calloc(1, sizeof *p);
    struct fg_err err = {0};
    fg_policy_init(p);
    int rc;
    if (where == W_A) {
        char arg[] = "nosuchkeyxyz=1";
        char *argv[] = {arg};
        rc = fg_policy_args(p, 1, argv, "test", &err);
    } else {
        const char *t = where == W_P ? "PartitionName=p1 NoSuchKeyXyz=1" : "NoSuchKeyXyz=1";
        rc = fg_policy_parse(p, t, strlen(t), "test", &err);
    }
    free(p);
    assert_int_not_equal(rc, 0);
    const char *k = strstr(err.detail, "(known: ");
    const char *end = k ? strchr(k, ')') : NULL;
    if (!k || !end)
        fail_msg("cannot read the parser's key list from its message: %s", err.detail);
    k += 8;
    snprintf(out, cap, "%.*s", (int)(end - k), k);
}

/* ---- the checks ------------------------------------------------------------ */

static void man_keys_should_be_the_parsers_keys_in_the_same_places(void **state)
{
    (void)state;
    static const struct {
        unsigned bit;
        const char *place;
    } places[] = {{W_F, "a fitgate.conf line"},
                  {W_P, "a PartitionName= line"},
                  {W_A, "a plugstack argument"}};
    for (size_t i = 0; i < 3; i++) {
        char known[1024];
        parser_keys(places[i].bit, known, sizeof known);
        print_message("parser, %s: %s\n", places[i].place, known);
        size_t nparser = 0;
        for (char *s = strtok(known, " "); s; s = strtok(NULL, " ")) {
            nparser++;
            const struct doc_key *k = doc_find(s);
            if (!k)
                fail_msg("the parser knows %s (%s) but " PAGE " has no row for it", s,
                         places[i].place);
            if (!(k->where & places[i].bit))
                fail_msg("%s may be set on %s but " PAGE " does not say so", s,
                         places[i].place);
        }
        size_t ndocs = 0;
        for (size_t j = 0; j < ndoc; j++)
            ndocs += (doc[j].where & places[i].bit) != 0;
        if (ndocs != nparser)
            fail_msg(PAGE " lists %zu keys for %s, the parser %zu (a documented key the "
                     "parser does not take there)", ndocs, places[i].place, nparser);
    }
}

static void man_defaults_should_be_the_parsers_defaults(void **state)
{
    (void)state;
    for (size_t i = 0; i < ndoc; i++) {
        struct fg_err err = {0};
        int rc;
        bool changed = changes(&doc[i], doc[i].def, &rc, &err);
        if (rc)
            fail_msg("%s: documented default '%s' is refused: %s", doc[i].name, doc[i].def,
                     err.detail);
        if (changed)
            fail_msg("%s: documented default '%s' is not the parser's default", doc[i].name,
                     doc[i].def);
    }
}

/* One step outside a bound: integers by 1, decimals in the next decimal place. */
static void outside(const char *bound, int dir, bool integer, char *out, size_t cap)
{
    const char *dot = strchr(bound, '.');
    int places = dot ? (int)strlen(dot + 1) + 1 : 2;
    double v = strtod(bound, NULL);
    if (integer)
        snprintf(out, cap, "%.0f", v + dir);
    else
        snprintf(out, cap, "%.*f", places, v + dir * pow(10, -places));
}

static void man_ranges_should_be_the_parsers_bounds(void **state)
{
    (void)state;
    size_t checked = 0;
    for (size_t i = 0; i < ndoc; i++) {
        const struct doc_key *k = &doc[i];
        if (!k->has_range)
            continue;
        bool integer = !strchr(k->min, '.') && !strchr(k->max, '.') && !strcmp(k->tag, "N");
        const char *inside[2] = {k->min, k->max};
        for (int b = 0; b < 2; b++) {
            struct fg_err err = {0};
            int rc;
            bool changed = changes(k, inside[b], &rc, &err);
            /* taken: applied (a cross-key check such as Conservative >= Headroom may still
             * object to the combination), or equal to the default and no error at all */
            if (!changed && (rc || strcmp(inside[b], k->def)))
                fail_msg("%s=%s (documented bound) is refused: %s", k->name, inside[b],
                         err.detail);
            char out[32];
            outside(inside[b], b ? +1 : -1, integer, out, sizeof out);
            if (b == 0 && strtod(out, NULL) < 0)
                continue;
            changed = changes(k, out, &rc, &err);
            if (changed || rc != FG_E_RANGE)
                fail_msg("%s=%s (outside the documented %s..%s) is %s", k->name, out, k->min,
                         k->max, changed ? "taken" : "refused, but not as out of range");
            checked++;
        }
        if (integer) {
            struct fg_err err = {0};
            int rc;
            if (changes(k, "1.5", &rc, &err) || !rc)
                fail_msg("%s is documented as a whole number but takes 1.5", k->name);
        }
    }
    assert_true(checked >= 10);
}

static void man_choices_should_be_the_parsers_values(void **state)
{
    (void)state;
    size_t checked = 0;
    for (size_t i = 0; i < ndoc; i++) {
        const struct doc_key *k = &doc[i];
        if (!strchr(k->tag, '|'))
            continue;
        char list[128];
        snprintf(list, sizeof list, "%s", k->tag);
        for (char *v = strtok(list, "|"); v; v = strtok(NULL, "|")) {
            struct fg_err err = {0};
            int rc;
            bool changed = changes(k, v, &rc, &err);
            if (rc || (!changed && strcmp(v, k->def)))
                fail_msg("%s=%s (documented) is not taken: %s", k->name, v, err.detail);
            checked++;
        }
        struct fg_err err = {0};
        int rc;
        if (changes(k, "bogus-value", &rc, &err) || !rc)
            fail_msg("%s takes a value that is not documented", k->name);
        /* the parser's list of accepted values is exactly the documented one */
        const char *hit = strstr(err.detail, k->tag);
        size_t tl = strlen(k->tag);
        if (!hit || (hit > err.detail && (hit[-1] == '|' || isalnum((unsigned char)hit[-1]))) ||
            hit[tl] == '|' || isalnum((unsigned char)hit[tl]))
            fail_msg("%s: the parser accepts '%s', the page says '%s'", k->name, err.detail,
                     k->tag);
    }
    assert_true(checked >= 10);
}

/* The modes list and the path keys: what the prose promises. */
static void man_lists_and_paths_should_parse_as_described(void **state)
{
    (void)state;
    const struct {
        const char *key, *good, *bad;
    } cases[] = {
        {"AllowedModes", "lora,serve", "lora,train"},
        {"AllowedModes", "full", ""},
        {"ModelDirs", "/srv/models:/opt/hf", "relative/dir"},
        {"CacheDir", "/var/cache/fitgate/%u", "cache"},
        {"HubEndpoint", "none", "ftp://example.org"},
        {"GpuTable", "/etc/slurm/gpus.conf", "gpus.conf"},
        {"LogFile", "/var/log/fitgate/%u.log", "fitgate.log"},
        {"LogFile", "syslog", "sys log"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct doc_key *k = doc_find(cases[i].key);
        if (!k)
            fail_msg(PAGE " has no row for %s", cases[i].key);
        struct fg_err err = {0};
        int rc;
        if (!changes(k, cases[i].good, &rc, &err) || rc)
            fail_msg("%s=%s is not taken: %s", k->name, cases[i].good, err.detail);
        if (changes(k, cases[i].bad, &rc, &err) || !rc)
            fail_msg("%s=%s is taken", k->name, cases[i].bad);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(man_keys_should_be_the_parsers_keys_in_the_same_places),
        cmocka_unit_test(man_defaults_should_be_the_parsers_defaults),
        cmocka_unit_test(man_ranges_should_be_the_parsers_bounds),
        cmocka_unit_test(man_choices_should_be_the_parsers_values),
        cmocka_unit_test(man_lists_and_paths_should_parse_as_described),
    };
    return cmocka_run_group_tests(tests, load_page, NULL);
}
