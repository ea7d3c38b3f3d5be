/*
 * fitgate frameworks: the framework table (engine/stack/framework.c), one row per stack and
 * release: its version, what it keeps by default and where each fact was read (repository,
 * file, commit and the commit's date).
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "format.h"
#include "stack/framework.h"

static void usage(FILE *f)
{
    fputs("usage: fitgate frameworks [--json | --names]\n"
          "  --json   the rows as a JSON array (name, version, aliases, modes, keeps, source,\n"
          "           repo, file, commit, date; dated: where the date comes from when no\n"
          "           snapshot of the repository could be read, only stored files)\n"
          "  --names  the framework names, one a line (NAME@VERSION picks an older release)\n"
          "Exit status: 0 success, 2 error.\n",
          f);
}

static const char *modes_of(const struct fg_framework *f)
{
    return f->trains && f->serves ? "train, serve" : f->trains ? "train" : "serve";
}

static cJSON *row_json(const struct fg_framework *f)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", f->name);
    cJSON_AddStringToObject(o, "version", f->version);
    cJSON_AddBoolToObject(o, "newest", fg_framework_is_newest(f));
    cJSON_AddStringToObject(o, "aliases", f->aliases ? f->aliases : "");
    cJSON_AddStringToObject(o, "label", f->label);
    cJSON_AddStringToObject(o, "modes", modes_of(f));
    cJSON_AddStringToObject(o, "keeps", f->keeps ? f->keeps : "");
    struct fg_job loss = {.loss = f->loss, .chunked_ce = f->chunked_ce};
    cJSON_AddStringToObject(o, "loss", fg_loss_name(&loss));
    cJSON_AddStringToObject(o, "source", f->source ? f->source : "");
    cJSON_AddStringToObject(o, "repo", f->repo ? f->repo : "");
    cJSON_AddStringToObject(o, "file", f->file ? f->file : "");
    cJSON_AddStringToObject(o, "commit", f->commit ? f->commit : "");
    if (f->date)
        cJSON_AddStringToObject(o, "date", f->date);
    else
        cJSON_AddNullToObject(o, "date");
    if (f->dated)
        cJSON_AddStringToObject(o, "dated", f->dated);
    else
        cJSON_AddStringToObject(o, "dated", "the commit's date in a fetched snapshot");
    return o;
}

int fg_cli_frameworks(int argc, char **argv)
{
    bool json = false, names = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (!strcmp(argv[i], "--names")) {
            names = true;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "fitgate frameworks: unknown argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    int rc = 0;
    const struct fg_framework *f;
    if (json) {
        cJSON *a = cJSON_CreateArray();
        for (size_t i = 0; (f = fg_framework_at(i)); i++)
            cJSON_AddItemToArray(a, row_json(f));
        char *s = fg_cli_json_print(a);
        if (s)
            printf("%s\n", s);
        else
            rc = 2;
        free(s);
        cJSON_Delete(a);
        return rc;
    }
    for (size_t i = 0; (f = fg_framework_at(i)); i++) {
        if (names) {
            if (fg_framework_is_newest(f))
                printf("%s\n", f->name);
            continue;
        }
        printf("%s@%s%s  (%s; %s)%s%s\n  keeps:  %s\n  source: %s\n  read:   %s %s at %s, "
               "%s%s%s%s\n",
               f->name, f->version, fg_framework_is_newest(f) ? "" : " (older release)",
               f->label, modes_of(f), f->aliases && *f->aliases ? "  aliases: " : "",
               f->aliases ? f->aliases : "", f->keeps ? f->keeps : "-",
               f->source ? f->source : "-", f->repo ? f->repo : "-", f->file ? f->file : "-",
               f->commit ? f->commit : "-",
               f->date ? f->date : "undated", f->dated ? " (" : "", f->dated ? f->dated : "",
               f->dated ? ")" : "");
    }
    return rc;
}
