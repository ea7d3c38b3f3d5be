/*
 * model_arg.c - turn the MODEL argument of a subcommand into a model graph.
 * MODEL is a directory holding config.json, a path to a config.json, or a
 * hub id org/name[@revision] (resolved by engine/source with the settings
 * huggingface_hub users already have in their environment).
 */
#include <stdio.h>

#include "model/model_load.h"
#include "cli.h"
#include "gate.h"
#include "util/log.h"
#include "model/model.h"
#include "source/source.h"

/* One line on stderr: where the config came from (stdout stays the answer). */
static void say_source(const char *arg, const struct fg_source_result *r)
{
    if (r->kind == FG_SRC_CACHE_STALE) {
        fprintf(stderr, "fitgate: warning: %s: using a stale cached config (%lld s old, %s): %s\n",
                arg, (long long)r->age_s, r->note, r->where);
        return;
    }
    fprintf(stderr, "fitgate: %s: config from %s: %s%s%.12s%s\n", arg,
            fg_source_kind_name(r->kind), r->where, r->commit[0] ? " (commit " : "", r->commit,
            r->commit[0] ? ")" : "");
    if (r->note[0])
        fprintf(stderr, "fitgate: warning: %s\n", r->note);
}

int fg_cli_load_model(const char *arg, bool offline, struct fg_model **out, struct fg_err *err)
{
    *out = NULL;
    if (!arg || !*arg)
        return fg_err_set(err, FG_E_INVAL, "MODEL is empty; give a directory, a config.json or "
                          "org/name[@revision]");
    if (fg_source_arg_is_path(arg))
        return fg_model_load_path(arg, out, err); /* as the plugin reads it */

    struct fg_model_id id;
    int rc = fg_source_parse_id(arg, &id, err);
    if (rc) {
        fg_err_prefix(err, "MODEL is no file here and no model id");
        return rc;
    }
    struct fg_source_opts o;
    fg_source_opts_init(&o);
    if ((rc = fg_source_opts_from_env(&o, err)))
        return rc;
    if (offline)
        o.offline = true;
    struct fg_source_result *r = NULL;
    rc = fg_model_load_id(&o, &id, arg, true, out, &r, err);
    if (r)
        say_source(arg, r);
    fg_source_result_free(r);
    return rc;
}
