/*
 * jobfile_apply.c - a job's config files onto its spec (fg_jobfile_apply, jobfile.h),
 * through the rows of jobfile_rows.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "job/jobfile_rows.h"
#include "job/jobspec.h"
#include "stack/trainer.h"

#define END {NULL, NULL}

/* ---- applying a job's files to its spec ---------------------------------------------- */

/*
 * How strongly a file says a value.  A default (what the config class does when the key is
 * left out) yields to everything.  A key states its value; "+" refines what another key of
 * the same file stated (the more specific statement wins there).  "~" is a value fitgate
 * infers from what the file states (axolotl's bf16: true as bf16 weights, the trainer from
 * its keys): among the files it counts as a key, but an option on the command line, the
 * more specific statement of the two, replaces it without a conflict.
 */
enum { S_DEFAULT = 0, S_KEY = 1, S_REFINE = 2, S_IMPLIED = 4 };

struct owner {
    int file, strength; /* S_DEFAULT, S_KEY or S_REFINE */
    bool implied;       /* the value is an inference (S_IMPLIED) */
    char where[200];
};

struct apply {
    struct fg_jobspec *s;
    const char *base;
    uint64_t cli; /* options the command line gave */
    struct fg_jobfile *files[FG_JOBFILE_FILES];
    size_t n;
    struct owner own[FG_JOBOPT_COUNT];
    struct fg_jobspec *a, *b; /* scratch: does a value mean what another does */
    char tt_builder[200], tt_where[200];
    int tt_file;
    const struct fg_trainer_row *trainer; /* the job's preference / RL trainer; NULL: SFT */
    struct fg_err *err;
};



static void add_unknown(struct apply *ap, const char *where, const char *why)
{
    struct fg_jobspec *s = ap->s;
    if (s->n_unknown < FG_JOBSPEC_UNKNOWN)
        snprintf(s->unknown[s->n_unknown++], sizeof s->unknown[0], "%.160s: %.93s", where, why);
}

static void add_from(struct apply *ap, const char *where, const char *set)
{
    struct fg_jobspec *s = ap->s;
    if (s->n_from >= FG_JOBSPEC_FROM)
        return;
    snprintf(s->from[s->n_from].where, sizeof s->from[0].where, "%s", where);
    snprintf(s->from[s->n_from++].set, sizeof s->from[0].set, "%.119s", set);
}

/* Whether two values of option id set the job alike ("yes" and "" for a flag). */
static bool same_effect(struct apply *ap, unsigned id, const char *va, const char *vb)
{
    fg_jobspec_init(ap->a, ap->s->spelling);
    fg_jobspec_init(ap->b, ap->s->spelling);
    if (fg_jobspec_set(ap->a, id, va, NULL) || fg_jobspec_set(ap->b, id, vb, NULL))
        return false;
    memset(ap->a->said, 0, sizeof ap->a->said);
    memset(ap->b->said, 0, sizeof ap->b->said);
    return !memcmp(ap->a, ap->b, sizeof *ap->a);
}

static int assign_one(struct apply *ap, int fi, int strength, const char *where, const char *opt,
                      const char *val, bool soft)
{
    struct fg_jobspec *s = ap->s;
    char msg[160];
    bool implied = strength & S_IMPLIED;
    strength &= ~S_IMPLIED;
    int id = fg_jobopt_find(opt);
    if (id < 0) {
        snprintf(msg, sizeof msg, "fitgate has no %s%s to say it with", s->spelling, opt);
        if (!soft)
            add_unknown(ap, where, msg);
        return 0;
    }
    const char *name = fg_jobopt_at((unsigned)id)->name;
    if ((ap->cli >> id) & 1) {
        if (strength == 0)
            return 0; /* a framework's default yields to the command line */
        if (id == FG_JOBOPT_MODEL) {
            add_from(ap, where, "not used: the command line names the model");
            return 0;
        }
        if (implied && !same_effect(ap, (unsigned)id, s->said[id], val)) {
            snprintf(msg, sizeof msg, "%s%s=%.60s inferred; the command line's %s%s=%.40s stands",
                     s->spelling, name, val, s->spelling, name, s->said[id]);
            add_from(ap, where, msg);
            return 0;
        }
        if (!same_effect(ap, (unsigned)id, s->said[id], val))
            return fg_err_set(ap->err, FG_E_INVAL, "%s%s=%.40s on the command line and %.150s "
                              "say different things: give one of them", s->spelling, name,
                              s->said[id], where);
        add_from(ap, where, "agrees with the command line");
        return 0;
    }
    struct owner *o = &ap->own[id];
    if ((s->from_file >> id) & 1) {
        if (strength == 0)
            return 0;
        bool refine = o->file == fi && strength != o->strength;
        bool differ = !same_effect(ap, (unsigned)id, s->said[id], val);
        /* an inference yields to what another file states (in its own file, a refining
         * inference still refines) */
        if (differ && implied && !o->implied && o->file != fi) {
            snprintf(msg, sizeof msg, "%s%s=%.30s inferred; not used: %.60s states it",
                     s->spelling, name, val, o->where);
            add_from(ap, where, msg);
            return 0;
        }
        if (differ && o->implied && !implied && o->file != fi)
            refine = true, strength = S_REFINE;
        if (refine && strength < o->strength) {
            snprintf(msg, sizeof msg, "%s (refined by %.100s)",
                     same_effect(ap, (unsigned)id, s->said[id], val) ? "agrees" : "not used",
                     o->where);
            add_from(ap, where, msg);
            return 0;
        }
        if (!refine && differ)
            return fg_err_set(ap->err, FG_E_INVAL, "%.150s and %.150s say different things "
                              "(%s%s): give one of them", o->where, where, s->spelling, name);
        if (!refine) {
            add_from(ap, where, "agrees");
            return 0;
        }
    }
    if (fg_jobspec_set(s, (unsigned)id, val, ap->err)) {
        fg_err_prefix(ap->err, "%.150s", where);
        return ap->err->code;
    }
    s->from_file |= 1ull << id;
    *o = (struct owner){.file = fi, .strength = strength, .implied = implied};
    snprintf(o->where, sizeof o->where, "%s", where);
    snprintf(msg, sizeof msg, "%s%s%s%.60s", s->spelling, name, *val ? "=" : "", val);
    add_from(ap, where, msg);
    return 0;
}

/*
 * A key's option under the job's trainer: under a preference / RL trainer the file's LoRA
 * or QLoRA is what that trainer trains (--adapter), and a generating trainer's sequence
 * length is its prompt's unless a key states that (axolotl sequence_len beside max_prompt_len,
 * LLaMA-Factory cutoff_len: the completion is max_completion_length / max_new_tokens).  A trainer's key another trainer does not read
 * sets nothing: the reason, or NULL with *opt the option to set.
 */
static const char *for_trainer(struct apply *ap, char **opt, const char *val)
{
    static const struct {
        const char *opt;
        bool generating, vllm; /* read by a generating trainer only, one through vLLM only */
    } only[] = {
        {"beta", true, true},                {"num-generations", true, true},
        {"vllm-mode", true, true},           {"vllm-gpu-util", true, true},
        {"max-prompt-length", true, false},  {"max-completion-length", true, false},
        {"ref-model", false, false},
    };
    const struct fg_trainer_row *t = ap->trainer;
    if (t && !strcmp(*opt, "mode") && fg__jf_match("full|lora|qlora", val))
        *opt = "adapter";
    if (t && t->generates && !strcmp(*opt, "seq-len"))
        *opt = "max-prompt-length";
    for (size_t i = 0; i < sizeof only / sizeof only[0]; i++) {
        if (strcmp(*opt, only[i].opt))
            continue;
        if (!t)
            return "not used: the job is not a preference / RL trainer's (no key says which, "
                   "nor --mode)";
        if ((only[i].generating && !t->generates) || (only[i].vllm && t->value_model))
            return "understood: no memory of its own under this trainer";
    }
    return NULL;
}

/* "opt=value;+opt=value;~opt=value" with $ the key's value (the prefixes: S_REFINE and
 * S_IMPLIED above). */
static int assign_list(struct apply *ap, int fi, int strength, const char *where,
                       const char *list, const char *value, bool soft)
{
    for (const char *p = list; p && *p;) {
        size_t l = strcspn(p, ";");
        char seg[160], val[1024];
        snprintf(seg, sizeof seg, "%.*s", (int)l, p);
        p += l + (p[l] == ';');
        int st = strength;
        char *opt = seg, *eq = strchr(seg, '=');
        if (*opt == '~' && strength) {
            st = S_KEY | S_IMPLIED;
            opt++;
        }
        if (*opt == '+') {
            st = strength ? S_REFINE | (st & S_IMPLIED) : S_DEFAULT;
            opt++;
        }
        if (*opt == '~')
            opt++;
        if (!eq)
            continue;
        *eq = '\0';
        snprintf(val, sizeof val, "%s", strcmp(eq + 1, "$") ? eq + 1 : value);
        bool seq = !strcmp(opt, "seq-len");
        const char *skip = for_trainer(ap, &opt, val);
        if (seq && strcmp(opt, "seq-len"))
            st = S_DEFAULT; /* the prompt's length as a fallback: max_prompt_len states it */
        if (skip) {
            if (strength)
                add_from(ap, where, skip);
            continue;
        }
        int rc = assign_one(ap, fi, st, where, opt, val, soft);
        if (rc)
            return rc;
    }
    return 0;
}

static int open_file(struct apply *ap, const char *spec, enum fg_jobfile_format fmt)
{
    struct fg_jobfile *f = NULL;
    const char *colon = strchr(spec, ':');
    if (ap->n >= FG_JOBFILE_FILES)
        return fg_err_set(ap->err, FG_E_RANGE, "config %.200s: a job reads at most %d files",
                          spec, FG_JOBFILE_FILES);
    if (colon && fmt == FG_JF_AUTO &&
        (fmt = fg_jobfile_format_find(spec, (size_t)(colon - spec))) != FG_JF_AUTO)
        spec = colon + 1;
    int rc = fg_jobfile_read(spec, ap->base, &f, ap->err);
    if (rc)
        return rc;
    if (fmt == FG_JF_AUTO && (rc = fg_jobfile_detect_format(f, &fmt, ap->err))) {
        /* a file the frameworks keep beside their jobs says what it is instead */
        const char *what = fg__jf_not_a_job(f, FG_JF_AUTO);
        if (what)
            rc = fg_err_set(ap->err, FG_E_UNSUPPORTED, "config %.200s: %s, not a training job: "
                            "give the config the job trains with", spec, what);
        fg_jobfile_free(f);
        return rc;
    }
    const char *what = fg__jf_not_a_job(f, fmt);
    if (what) {
        fg_jobfile_free(f);
        /* a file its framework runs, for something fitgate does not judge: the job cannot be
         * checked (OnError), not a value the framework would refuse (the job's error) */
        return fg_err_set(ap->err, FG_E_UNSUPPORTED, "config %.200s: %s, not a training job: "
                          "give the config the job trains with", spec, what);
    }
    f->format = fmt;
    ap->files[ap->n++] = f;
    return 0;
}

static int hook_fsdp(struct apply *ap, int fi, const char *where, const char *val)
{
    static const struct fg__jf_vmap tokens[] = {
        {"full_shard", "zero=3"},       {"shard_grad_op", "zero=2"},   {"no_shard", "zero=0"},
        {"offload", "+offload=params"}, {"auto_wrap|true|false|", ""}, END};
    char buf[512];
    snprintf(buf, sizeof buf, "%.511s", val);
    for (char *save = NULL, *t = strtok_r(buf, " ,", &save); t; t = strtok_r(NULL, " ,", &save)) {
        const struct fg__jf_vmap *m = tokens;
        while (m->match && !fg__jf_match(m->match, t))
            m++;
        if (!m->match) {
            add_unknown(ap, where, "an FSDP strategy fitgate does not model (hybrid shards "
                        "within a node)");
            continue;
        }
        int rc = assign_list(ap, fi, 1, where, m->assign, t, false);
        if (rc)
            return rc;
    }
    return 0;
}

/* torchtune's attention modules in peft's names; the MLP and output from their own keys. */
static int hook_tt_targets(struct apply *ap, int fi, const char *where, const char *val)
{
    const struct fg_jobfile *f = ap->files[fi];
    const struct fg_jobfile_key *mlp = fg_jobfile_get(f, "model.apply_lora_to_mlp");
    const struct fg_jobfile_key *outp = fg_jobfile_get(f, "model.apply_lora_to_output");
    char list[512] = "", buf[512];
    size_t o = 0;
    snprintf(buf, sizeof buf, "%.511s", val);
    for (char *save = NULL, *t = strtok_r(buf, " ,[]'\"", &save); t;
         t = strtok_r(NULL, " ,[]'\"", &save)) {
        const char *peft = !strcmp(t, "output_proj") ? "o_proj" : t;
        o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", o ? "," : "", peft);
        if (o >= sizeof list)
            return fg_err_set(ap->err, FG_E_RANGE, "%.150s: too many modules", where);
    }
    if (mlp && fg__jf_match("true|yes|1", mlp->value))
        o += (size_t)snprintf(list + o, sizeof list - o, "%sgate_proj,up_proj,down_proj",
                              o ? "," : "");
    if (outp && fg__jf_match("true|yes|1", outp->value))
        add_unknown(ap, where, "LoRA on the output projection (apply_lora_to_output)");
    char assign[600];
    snprintf(assign, sizeof assign, "lora-targets=%s", list);
    return o ? assign_list(ap, fi, 1, where, assign, "", false) : 0;
}

/*
 * The DeepSpeed file a config names: from the directory the job is launched in (the base),
 * as the framework opens it, else beside the file that names it (accelerate's examples,
 * launched from their own folder, name "../deepspeed_config_templates/zero_stage1_config.json"
 * and "sp-alst.ds-config.json" from there).
 */
static int open_named(struct apply *ap, const struct fg_jobfile *by, const char *val)
{
    char beside[1100];
    const char *slash = strrchr(by->name, '/');
    int rc = open_file(ap, val, FG_JF_DEEPSPEED);
    if (rc != FG_E_NOTFOUND || val[0] == '/' || !slash)
        return rc;
    snprintf(beside, sizeof beside, "%.*s/%s", (int)(slash - by->name), by->name, val);
    struct fg_err first = *ap->err;
    if ((rc = open_file(ap, beside, FG_JF_DEEPSPEED)) == FG_E_NOTFOUND)
        *ap->err = first; /* not there either: say where the framework looks */
    return rc;
}

static int hook(struct apply *ap, int fi, const struct fg__jf_row *r, const char *where,
                const char *val) {
    const struct fg_jobfile *f = ap->files[fi];
    char assign[160];
    switch (r->hook) {
    case H_FILE:
        if (fg__jf_match("|auto|none|false", val))
            return 0;
        if (*val == '{') {
            add_unknown(ap, where, "a DeepSpeed config written inline: give it as a file");
            return 0;
        }
        add_from(ap, where, "read as a DeepSpeed config");
        return open_named(ap, f, val);
    case H_FSDP:
        return hook_fsdp(ap, fi, where, val);
    case H_TT_MODEL: {
        const char *b = strrchr(val, '.') ? strrchr(val, '.') + 1 : val;
        snprintf(ap->tt_builder, sizeof ap->tt_builder, "%.199s", val);
        snprintf(ap->tt_where, sizeof ap->tt_where, "%s", where);
        ap->tt_file = fi;
        return assign_list(ap, fi, 1, where, !strncmp(b, "qlora_", 6)  ? "mode=qlora"
                                             : !strncmp(b, "lora_", 5) ? "mode=lora"
                                                                       : "mode=full",
                           val, false);
    }
    case H_TT_TARGETS:
        return hook_tt_targets(ap, fi, where, val);
    case H_EP: {
        if (!fg__jf_match("true|yes|1", val))
            return 0;
        const struct fg_jobfile_key *tp = fg_jobfile_get(f, "tensor-parallel-size");
        const struct fg_jobfile_key *dp = fg_jobfile_get(f, "data-parallel-size");
        long ep = (tp ? atol(tp->value) : 1) * (dp ? atol(dp->value) : 1);
        snprintf(assign, sizeof assign, "ep=%ld", ep > 0 ? ep : 1);
        return assign_list(ap, fi, 1, where, assign, val, false);
    }
    case H_LF_QUANT: {
        const struct fg_jobfile_key *dq = fg_jobfile_get(f, "double_quantization");
        bool dbl = !dq || fg__jf_match("true|yes|1", dq->value);
        if (!strcmp(val, "4"))
            return assign_list(ap, fi, 1, where, dbl ? "+mode=qlora;quant=nf4-dq"
                                                      : "+mode=qlora;quant=nf4", val, false);
        if (!strcmp(val, "8"))
            return assign_list(ap, fi, 1, where, "+mode=qlora;quant=int8", val, false);
        add_unknown(ap, where, "fitgate models 4- and 8-bit bitsandbytes bases only");
        return 0;
    }
    case H_ACC_PROCS: {
        /* accelerate's processes are every rank: ParallelismConfig (parallelism_config.py)
         * takes TP and CP out of them, and data parallel is what is left */
        const struct fg_jobfile_key *tp =
            fg_jobfile_get(f, "parallelism_config.parallelism_config_tp_size");
        const struct fg_jobfile_key *cp =
            fg_jobfile_get(f, "parallelism_config.parallelism_config_cp_size");
        long split = (tp ? atol(tp->value) : 1) * (cp ? atol(cp->value) : 1);
        long procs = atol(val);
        snprintf(assign, sizeof assign, "dp=%ld",
                 split > 0 && procs >= split ? procs / split : procs > 0 ? procs : 1);
        return assign_list(ap, fi, 1, where, assign, val, false);
    }
    case H_NONE: break;
    }
    return 0;
}

/*
 * A ${...} in a value fitgate reads: an error naming the key, never expanded.  torchtune's
 * OmegaConf would expand ${oc.env:VAR} from the environment, and the check runs in the
 * controller's: an expansion there could put slurmctld's secrets into the job's numbers and
 * messages.  A job whose memory hangs on its environment cannot be judged before it runs, so
 * it is refused as its own error (the value is not repeated either).
 */
static int interpolation(struct apply *ap, const struct fg_jobfile *f,
                         const struct fg_jobfile_key *k)
{
    return fg_err_set(ap->err, FG_E_INVAL, "%.120s:%u %.60s: an interpolation (${...}): fitgate "
                      "reads the job's files as written and expands nothing, from the "
                      "environment or other keys; write the value itself", f->name, k->line,
                      k->path);
}

static int key_apply(struct apply *ap, int fi, const struct fg_jobfile_key *k)
{
    const struct fg_jobfile *f = ap->files[fi];
    const struct fg__jf_row *r = fg__jf_row_for(f->format, k->path);
    char val[1024], where[200];
    if (!r || (k->merged && fg_jobfile_get(f, k->path) != k))
        return 0;
    for (const char *c = k->value; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            return fg_err_set(ap->err, FG_E_INVAL, "%.120s:%u %.60s: a value with a control "
                              "character (a tab, a newline in quotes): not one its framework "
                              "takes", f->name, k->line, k->path);
    if (strstr(k->value, "${"))
        return interpolation(ap, f, k);
    snprintf(where, sizeof where, "%.80s:%u %.60s=%.50s", f->name, k->line, k->path, k->value);
    snprintf(val, sizeof val, "%s", k->value);
    if (k->null) {
        if (r->assign && r->note)
            add_unknown(ap, where, r->note);
        return 0;
    }
    if (r->hook)
        return hook(ap, fi, r, where, val);
    const char *assign = r->assign;
    if (r->map) {
        const struct fg__jf_vmap *m = r->map;
        while (m->match && !fg__jf_match(m->match, val))
            m++;
        assign = m->assign;
    }
    if (!assign) {
        add_unknown(ap, where, r->note ? r->note : "a value fitgate does not model");
        return 0;
    }
    return assign_list(ap, fi, 1, where, assign, val, r->soft);
}

/* torchtune builds its model in code: the shape is the checkpoint's config.json. */
static int torchtune_model(struct apply *ap)
{
    const struct fg_jobfile *f = ap->files[ap->tt_file];
    const struct fg_jobfile_key *d = fg_jobfile_get(f, "checkpointer.checkpoint_dir");
    char dir[1024] = "", cfg[1100], where[200];
    struct stat st;
    if (fg_jobspec_given(ap->s, FG_JOBOPT_MODEL))
        return 0;
    if (d && !d->null && strstr(d->value, "${"))
        return interpolation(ap, f, d);
    if (d && !d->null && (size_t)snprintf(dir, sizeof dir, "%s", d->value) < sizeof dir) {
        snprintf(cfg, sizeof cfg, "%s%s%s/config.json", dir[0] != '/' && ap->base ? ap->base : "",
                 dir[0] != '/' && ap->base ? "/" : "", dir);
        if (!stat(cfg, &st) && S_ISREG(st.st_mode)) {
            snprintf(where, sizeof where, "%.80s:%u checkpointer.checkpoint_dir=%.80s", f->name,
                     d->line, d->value);
            return assign_one(ap, ap->tt_file, 1, where, "model", dir, false);
        }
    }
    return fg_err_set(ap->err, FG_E_INVAL, "%.150s: torchtune builds this model in code; "
                      "fitgate reads its shape from the checkpoint's config.json, and "
                      "checkpointer.checkpoint_dir (%.200s) has none here: download the "
                      "checkpoint there, or give %smodel=ORG/NAME or a directory", ap->tt_where,
                      d && !d->null ? d->value : "not set", ap->s->spelling);
}

static int apply_defaults(struct apply *ap, int fi)
{
    const struct fg_jobfile *f = ap->files[fi];
    char where[200];
    size_t nd;
    const struct fg__jf_default *defaults = fg__jf_defaults(&nd);
    for (size_t i = 0; i < nd; i++) {
        bool adapters = ap->s->job.mode == FG_MODE_LORA || ap->s->job.mode == FG_MODE_QLORA;
        bool adapters_rl = ap->trainer && fg_jobspec_given(ap->s, FG_JOBOPT_ADAPTER) &&
                           ap->s->adapter != FG_MODE_FULL;
        if (!(defaults[i].fmts & (1u << f->format)) ||
            (defaults[i].key && fg_jobfile_get(f, defaults[i].key)) ||
            (defaults[i].adapters && !adapters && !adapters_rl) ||
            (ap->trainer && ap->trainer->generates && !strncmp(defaults[i].assign, "seq-len=", 8)))
            continue;
        snprintf(where, sizeof where, "%.80s: %s (%s)", f->name,
                 defaults[i].key ? defaults[i].key : "format", defaults[i].source);
        int rc = assign_list(ap, fi, 0, where, defaults[i].assign, "", false);
        if (rc)
            return rc;
    }
    return 0;
}

/*
 * A training job's files declare its layout: the sharding they name (a DeepSpeed config,
 * fsdp, accelerate's distributed_type and parallelism_config), or none, and then the job
 * runs DDP, which the framework does without a change to them (or its own sharding, where
 * it shards by default: torchtune); that is the layout judged (spec->layout_fixed), said on
 * the job's lines as --zero=0.  A serving engine's file is
 * not: vLLM and SGLang split a model over the GPUs their options give.
 */
static int declared_layout(struct apply *ap, int main_file)
{
    struct fg_jobspec *s = ap->s;
    const struct fg_jobfile *m = ap->files[main_file];
    char where[200];
    if (m->format == FG_JF_VLLM || m->format == FG_JF_SGLANG)
        return 0;
    s->layout_fixed = true;
    if (((s->from_file | s->given) >> FG_JOBOPT_ZERO) & 1)
        return 0;
    for (size_t i = 0; i < ap->n; i++) {
        const struct fg_jobfile_key *d = fg_jobfile_get(ap->files[i], "distributed_type");
        if (ap->files[i]->format == FG_JF_ACCELERATE && d && !strcmp(d->value, "DEEPSPEED")) {
            /* accelerate's DeepSpeedPlugin: zero_stage defaults to 2 */
            snprintf(where, sizeof where, "%.80s: distributed_type=DEEPSPEED names no stage "
                     "(DeepSpeedPlugin default)", ap->files[i]->name);
            return assign_one(ap, (int)i, 1, where, "zero", "2", false);
        }
    }
    /* a framework that shards by itself (torchtune's distributed recipes: FSDP2) runs its own
     * default there, which the check applies as for its options (fw->dp_zero) */
    const struct fg_framework *fw = fg_framework_find(fg__jf_framework(m->format));
    if (fw && fw->dp_zero)
        return 0;
    snprintf(where, sizeof where, "%.80s: names no DeepSpeed, FSDP or other sharding (DDP)",
             m->name);
    return assign_one(ap, main_file, 1, where, "zero", "0", false);
}

/*
 * A job whose files run DeepSpeed under a trainer that is not DeepSpeed's own row (TRL,
 * axolotl or LLaMA-Factory naming deepspeed: ds.json, TrainingArguments' deepspeed, accelerate's
 * distributed_type DEEPSPEED) keeps DeepSpeed's buffers: naming its reduce bucket says so
 * (jobspec.c).  Where no file sets reduce_bucket_size, DeepSpeed's default of 5e8 elements
 * stands (runtime/zero/config.py): transformers fills only an "auto"
 * (integrations/deepspeed.py HfTrainerDeepSpeedConfig.trainer_config_finalize), and
 * accelerate's DeepSpeedPlugin without a file writes no reduce_bucket_size (accelerate
 * 16cb6eb utils/dataclasses.py DeepSpeedPlugin.__post_init__).
 */
static int declared_deepspeed(struct apply *ap, int main_file)
{
    struct fg_jobspec *s = ap->s;
    const struct fg_framework *fw = fg_framework_find(fg__jf_framework(ap->files[main_file]->format));
    if ((fw && fw->ds_buffers) || fg_jobspec_given(s, FG_JOBOPT_DS_BUCKET))
        return 0;
    for (size_t i = 0; i < ap->n; i++) {
        const struct fg_jobfile *f = ap->files[i];
        const struct fg_jobfile_key *d = fg_jobfile_get(f, "distributed_type");
        if (f->format == FG_JF_DEEPSPEED ||
            (f->format == FG_JF_ACCELERATE && d && !strcmp(d->value, "DEEPSPEED"))) {
            char where[200];
            snprintf(where, sizeof where, "%.80s: DeepSpeed runs the ZeRO stage and no file sets "
                     "reduce_bucket_size (DeepSpeed's default)", f->name);
            return assign_one(ap, (int)i, 1, where, "ds-bucket", "500000000", false);
        }
    }
    return 0;
}

/* The folder a file sits in, when it names a trainer (recipes/MODEL/dpo/config_full.yaml, as
 * open-r1 and alignment-handbook keep them): its --mode spelling, "sft", or NULL. */
static const char *folder_trainer(const char *path)
{
    static const char *const names[][2] = {{"dpo", "dpo"}, {"orpo", "orpo"}, {"kto", "kto"},
                                           {"grpo", "grpo"}, {"rloo", "rloo"}, {"ppo", "ppo"},
                                           {"reward", "reward"}, {"rm", "reward"},
                                           {"sft", "sft"}, {"cpo", "orpo"}};
    const char *end = strrchr(path, '/'), *start = end;
    while (start && start > path && start[-1] != '/')
        start--;
    for (size_t i = 0; end && i < sizeof names / sizeof names[0]; i++)
        if ((size_t)(end - start) == strlen(names[i][0]) &&
            !strncasecmp(start, names[i][0], (size_t)(end - start)))
            return names[i][1];
    return NULL;
}

/*
 * The trainer the job's files are written for: a key only that trainer's config has, the
 * value of one that names it (axolotl rl, LLaMA-Factory stage), then the folder's name, then
 * a key several trainers share (beta: DPO).  It sets --mode as an inference: --mode on the
 * command line stands over it.
 */
static int decide_trainer(struct apply *ap)
{
    struct fg_jobspec *s = ap->s;
    bool cli = (ap->cli >> FG_JOBOPT_MODE) & 1;
    if (cli && s->job.trainer != FG_TRAINER_SFT)
        ap->trainer = fg_trainer_row(s->job.trainer);
    for (size_t fi = 0; fi < ap->n; fi++) {
        const struct fg_jobfile *f = ap->files[fi];
        if (fg__jf_rank(f->format) < 2 || f->format == FG_JF_VLLM || f->format == FG_JF_SGLANG)
            continue; /* a launcher's or a server's file names no trainer */
        const struct fg__jf_trainer *t = fg__jf_trainer_of(f, false);
        const char *name = t ? t->trainer : folder_trainer(f->name);
        char where[200];
        if (!t && !name && (t = fg__jf_trainer_of(f, true)))
            name = t->trainer;
        if (!name)
            continue;
        if (t) {
            const struct fg_jobfile_key *k = fg_jobfile_get(f, t->key);
            snprintf(where, sizeof where, "%.80s:%u %.60s=%.50s", f->name, k->line, k->path,
                     k->value);
        } else {
            snprintf(where, sizeof where, "%.120s: its folder names the trainer", f->name);
        }
        if (!strcmp(name, "sft"))
            return 0;
        if (!cli)
            ap->trainer = fg_trainer_find(name);
        return assign_one(ap, (int)fi, S_KEY | S_IMPLIED, where, "mode", name, false);
    }
    return 0;
}

static int apply_all(struct apply *ap)
{
    struct fg_jobspec *s = ap->s;
    int rc = 0, main_file = -1;
    for (size_t i = 0; i < s->n_configs && !rc; i++)
        rc = open_file(ap, s->configs[i], FG_JF_AUTO);
    if (!rc)
        rc = decide_trainer(ap);
    /* a file read may name another (deepspeed: ds.json): ap->n grows as they are read */
    for (size_t fi = 0; fi < ap->n && !rc; fi++)
        for (size_t k = 0; k < ap->files[fi]->n && !rc; k++)
            rc = key_apply(ap, (int)fi, &ap->files[fi]->keys[k]);
    for (size_t fi = 0; fi < ap->n && !rc; fi++)
        rc = apply_defaults(ap, (int)fi);
    if (!rc && ap->tt_builder[0])
        rc = torchtune_model(ap);
    if (rc)
        return rc;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t fi = 0; fi < ap->n; fi++) {
        const struct fg_jobfile *f = ap->files[fi];
        h = (h ^ f->digest) * 0x100000001b3ull;
        if (main_file < 0 || fg__jf_rank(f->format) > fg__jf_rank(ap->files[main_file]->format))
            main_file = (int)fi;
    }
    s->config_digest = h ? h : 1;
    const struct fg_jobfile *m = ap->files[main_file];
    if ((rc = declared_layout(ap, main_file)) || (rc = declared_deepspeed(ap, main_file)))
        return rc;
    const struct fg_framework *fw = fg_framework_find(fg__jf_framework(m->format));
    if (fw && !fg_jobspec_given(s, FG_JOBOPT_FRAMEWORK)) {
        char where[200];
        snprintf(where, sizeof where, "%.80s: read as %s", m->name,
                 fg_jobfile_format_name(m->format));
        rc = assign_one(ap, main_file, 1, where, "framework", fg__jf_framework(m->format), false);
    }
    return rc;
}

int fg_jobfile_apply(struct fg_jobspec *s, const char *base_dir, struct fg_err *err)
{
    if (!s->n_configs)
        return 0;
    struct apply *ap = calloc(1, sizeof *ap);
    struct fg_jobspec *scratch = calloc(2, sizeof *scratch);
    int rc;
    if (!ap || !scratch) {
        rc = fg_err_set(err, FG_E_NOMEM, "out of memory reading the job's config");
        goto out;
    }
    *ap = (struct apply){.s = s, .base = base_dir, .cli = s->given, .a = &scratch[0],
                         .b = &scratch[1], .err = err};
    rc = apply_all(ap);
    for (size_t i = 0; i < ap->n; i++)
        fg_jobfile_free(ap->files[i]);
out:
    free(ap);
    free(scratch);
    return rc;
}
