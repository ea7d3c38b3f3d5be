/*
 * job.c - the job's spellings, parsers and defaults (job.h).
 */
#include "job/job.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/fmt.h"

/* ---- option spellings ---------------------------------------------------- */

static const char *const mode_names[] = {"full", "lora", "qlora", "serve"};
static const char *const prec_names[] = {"bf16-mixed", "bf16", "fp16-mixed", "fp32"};
static const char *const opt_names[] = {"adamw",       "adamw-8bit", "sgd",
                                        "adamw-fused", "paged-adamw", "paged-adamw-8bit"};
#define N_OPT (int)(sizeof opt_names / sizeof opt_names[0])
static const char *const quant_names[] = {"none", "nf4", "nf4-dq", "int8"};
static const char *const attn_names[] = {"sdpa", "eager"};
static const char *const offload_names[] = {"none", "optimizer", "params"};
static const char *const ref_names[] = {"auto", "none", "copy", "adapter-disabled"};
static const char *const vllm_names[] = {"none", "colocate", "server"};
/* torch.distributed.pipelining schedules.py get_schedule_class's spellings, enum order */
static const char *const pp_sched_names[] = {"1F1B", "GPipe", "Interleaved1F1B", "LoopedBFS"};
static const char *const reshard_names[] = {"default", "always", "never"};
/* --loss: "plain" and "chunked" are FG_LOSS_DEFAULT (chunked_ce no / yes), then enum fg_loss
 * from FG_LOSS_LIGER in its order */
static const char *const loss_names[] = {"plain", "chunked", "liger", "cce", "chunked-nll",
                                         "vocab-parallel", "chunked-wrapper", "unsloth",
                                         "linear-ce"};
#define N_LOSS (sizeof loss_names / sizeof loss_names[0])
static const char *const dtype_names[] = {"fp32", "bf16"};

/* enum fg_lora_targets' keywords (FG_LORA_LIST is any other comma list) */
static const char *const lora_names[] = {"all-linear", "attn", "qv"};

/* The option each list of words belongs to, by its name in jobopts.def. */
static const struct {
    const char *option;
    const char *const *words;
    size_t n;
} option_words[] = {
    {"mode", mode_names, 4},         {"precision", prec_names, 4},
    {"optimizer", opt_names, 4},     {"quant", quant_names, 4},
    {"attention", attn_names, 2},    {"offload", offload_names, 3},
    {"lora-targets", lora_names, 3},  {"adapter", mode_names, 3}, /* full|lora|qlora */
    {"ref-model", ref_names + 1, 3},  {"vllm-mode", vllm_names, 3}, /* "auto": not given */
    {"loss", loss_names, N_LOSS},    {"grad-reduce-dtype", dtype_names, 2},
    {"optimizer-state-dtype", dtype_names, 2}, {"pp-schedule", pp_sched_names, 4},
    {"reshard-after-forward", reshard_names, 3},
};

const char *const *fg_job_words(const char *option, size_t *n)
{
    for (size_t i = 0; option && i < sizeof option_words / sizeof option_words[0]; i++)
        if (!strcmp(option_words[i].option, option)) {
            *n = option_words[i].n;
            return option_words[i].words;
        }
    *n = 0;
    return NULL;
}

static int parse_enum(const char *s, const char *const *names, int n, const char *what, int *out,
                      struct fg_err *err)
{
    for (int i = 0; s && i < n; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = i;
            return 0;
        }
    char list[128] = "";
    for (int i = 0; i < n; i++) {
        strncat(list, names[i], sizeof list - strlen(list) - 1);
        if (i + 1 < n)
            strncat(list, "|", sizeof list - strlen(list) - 1);
    }
    return fg_err_set(err, FG_E_INVAL, "%s '%.60s' is not one of %s", what, s ? s : "(none)",
                      list);
}

int fg_mode_parse(const char *s, enum fg_mode *out, struct fg_err *err)
{
    int v, rc = parse_enum(s, mode_names, 4, "mode", &v, err);
    if (!rc)
        *out = (enum fg_mode)v;
    return rc;
}

int fg_precision_parse(const char *s, enum fg_precision *out, struct fg_err *err)
{
    int v, rc = parse_enum(s, prec_names, 4, "precision", &v, err);
    if (!rc)
        *out = (enum fg_precision)v;
    return rc;
}

int fg_optimizer_parse(const char *s, enum fg_optimizer *out, struct fg_err *err)
{
    int v, rc = parse_enum(s, opt_names, N_OPT, "optimizer", &v, err);
    if (!rc)
        *out = (enum fg_optimizer)v;
    return rc;
}

int fg_quant_parse(const char *s, enum fg_quant *out, struct fg_err *err)
{
    int v, rc = parse_enum(s, quant_names, 4, "quantization", &v, err);
    if (!rc)
        *out = (enum fg_quant)v;
    return rc;
}

int fg_attention_parse(const char *s, enum fg_attention *out, struct fg_err *err)
{
    int v, rc = parse_enum(s, attn_names, 2, "attention", &v, err);
    if (!rc)
        *out = (enum fg_attention)v;
    return rc;
}

int fg_ref_model_parse(const char *s, enum fg_ref_model *out, struct fg_err *err)
{
    /* "auto" is the unset value, not a spelling */
    int v, rc = parse_enum(s, ref_names + 1, 3, "reference model", &v, err);
    if (!rc)
        *out = (enum fg_ref_model)(v + 1);
    return rc;
}

int fg_vllm_mode_parse(const char *s, enum fg_vllm_mode *out, struct fg_err *err)
{
    int v, rc = parse_enum(s, vllm_names, 3, "vLLM mode", &v, err);
    if (!rc)
        *out = (enum fg_vllm_mode)v;
    return rc;
}

int fg_offload_parse(const char *s, enum fg_offload *out, struct fg_err *err)
{
    int v, rc = parse_enum(s, offload_names, 3, "offload", &v, err);
    if (!rc)
        *out = (enum fg_offload)v;
    return rc;
}

int fg_pp_schedule_parse(const char *s, enum fg_pp_schedule *out, struct fg_err *err)
{
    int v, rc = parse_enum(s, pp_sched_names, 4, "pp-schedule", &v, err);
    if (!rc)
        *out = (enum fg_pp_schedule)v;
    return rc;
}

int fg_reshard_parse(const char *s, enum fg_reshard *out, struct fg_err *err)
{
    int v, rc = parse_enum(s, reshard_names, 3, "reshard-after-forward", &v, err);
    if (!rc)
        *out = (enum fg_reshard)v;
    return rc;
}

int fg_loss_parse(const char *s, struct fg_job *job, struct fg_err *err)
{
    int v, rc = parse_enum(s, loss_names, (int)N_LOSS, "loss", &v, err);
    if (!rc) {
        job->chunked_ce = v == 1;
        job->loss = v < 2 ? FG_LOSS_DEFAULT : (enum fg_loss)(v - 2 + FG_LOSS_LIGER);
    }
    return rc;
}

int fg_dtype_bytes_parse(const char *s, unsigned *out, struct fg_err *err)
{
    int v, rc = parse_enum(s, dtype_names, 2, "dtype", &v, err);
    if (!rc)
        *out = v == 0 ? 4 : 2;
    return rc;
}

/*
 * peft's target_modules names -> the graph's roles (model.h fg_node.role).  peft matches a
 * name against the last component of each module's path (tuners/tuners_utils.py
 * check_target_module_exists), so one name can reach several roles: GPT-2's c_proj is the
 * attention output and the MLP's down projection.  The module names are transformers'
 * (modeling_llama.py, modeling_gpt2.py, modeling_bert.py, modeling_falcon.py,
 * modeling_mixtral.py, modeling_deepseek_v3.py, modeling_phi3.py, modeling_mamba2.py).
 */
static const struct {
    const char *module, *roles;
} peft_names[] = {
    {"q_proj", "q"}, {"k_proj", "k"}, {"v_proj", "v"}, {"o_proj", "o"},
    {"out_proj", "o,out_proj"}, {"dense", "o"}, {"query", "q"}, {"key", "k"},
    {"value", "v"}, {"query_key_value", "qkv"}, {"c_attn", "qkv"}, {"wqkv", "qkv"},
    {"qkv_proj", "qkv"}, {"c_proj", "o,down"}, {"gate_proj", "gate"}, {"up_proj", "up"},
    {"down_proj", "down"}, {"gate_up_proj", "gate_up"}, {"w1", "gate"}, {"w3", "up"},
    {"w2", "down"}, {"fc1", "up"}, {"fc2", "down"}, {"c_fc", "up"},
    {"dense_h_to_4h", "up,gate_up"}, {"dense_4h_to_h", "down"}, {"q_a_proj", "q_a"},
    {"q_b_proj", "q_b"}, {"kv_a_proj_with_mqa", "kv_a"}, {"kv_b_proj", "kv_b"},
    {"in_proj_qkvz", "in_proj"}, {"in_proj_ba", "in_proj_ba"}, {"in_proj", "in_proj"},
};

/* roles appended to out ("q,v"), each once. */
static int add_roles(const char *roles, char *out, size_t cap, struct fg_err *err)
{
    for (const char *p = roles; *p;) {
        size_t n = strcspn(p, ","), have = strlen(out);
        bool dup = false;
        for (const char *q = out; *q && !dup;) {
            size_t m = strcspn(q, ",");
            dup = m == n && !strncmp(q, p, n);
            q += m + (q[m] == ',');
        }
        if (!dup) {
            if (have + n + 2 > cap)
                return fg_err_set(err, FG_E_RANGE, "LoRA target list longer than %zu characters",
                                  cap - 1);
            if (have)
                out[have++] = ',';
            memcpy(out + have, p, n);
            out[have + n] = '\0';
        }
        p += n + (p[n] == ',');
    }
    return 0;
}

/* The roles of a module's own name (its last path component) under a parent: peft's names
 * (peft_names), "shared_" before them under a shared expert (Qwen's mlp.shared_expert). */
static void module_roles(const char *name, size_t n, bool shared, char *out, size_t cap)
{
    char low[48];
    snprintf(low, sizeof low, "%.*s", (int)(n < sizeof low ? n : sizeof low - 1), name);
    for (char *c = low; *c; c++)
        *c = *c >= 'A' && *c <= 'Z' ? (char)(*c - 'A' + 'a') : *c == '-' ? '_' : *c;
    const char *roles = !strcmp(low, "all_linear") ? "*" : low;
    for (size_t i = 0; i < sizeof peft_names / sizeof peft_names[0]; i++)
        if (!strcmp(low, peft_names[i].module))
            roles = peft_names[i].roles;
    size_t o = 0;
    out[0] = '\0';
    for (const char *p = roles; *p && o < cap;) {
        size_t l = strcspn(p, ",");
        o += (size_t)snprintf(out + o, cap - o, "%s%s%.*s", o ? "," : "", shared ? "shared_" : "",
                              (int)l, p);
        p += l + (p[l] == ',');
    }
}

/* One name of a target list (a role, or a peft module name) appended as roles to out.  A
 * dotted name ("self_attn.q_proj") is matched as peft matches a list entry, by the end of
 * the module's path: its last component gives the role. */
static int add_target(const char *name, size_t n, char *out, size_t cap, struct fg_err *err)
{
    if (n == 0)
        return 0;
    if (n >= 48 * 4)
        return fg_err_set(err, FG_E_INVAL, "LoRA target '%.*s' is too long", (int)n, name);
    const char *leaf = name;
    bool shared = false;
    for (size_t i = 0; i < n; i++)
        if (name[i] == '.') {
            shared = (size_t)(name + i - leaf) >= 13 && !strncmp(leaf, "shared_expert", 13);
            leaf = name + i + 1;
        }
    size_t ln = n - (size_t)(leaf - name);
    for (size_t i = 0; i < ln; i++) {
        char ch = leaf[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '_' || ch == '-') || ln >= 48)
            return fg_err_set(err, FG_E_INVAL,
                              "LoRA target list: '%.*s' is no module name; use all-linear, attn, "
                              "qv, roles like q,k,v,o,gate,up,down, peft names like "
                              "q_proj,v_proj, or one regular expression", (int)n, name);
    }
    if (ln == 0)
        return 0;
    char roles[96];
    module_roles(leaf, ln, shared, roles, sizeof roles);
    return add_roles(roles, out, cap, err);
}

/* Python's re syntax as the POSIX extended expression regcomp takes: \d, \w and \s in and
 * out of brackets, (?: groups, a lazy quantifier as the greedy one (a full match exists for
 * both or neither); 0, or -1 for what ERE cannot say (look-arounds) and for what would make
 * glibc's regcomp copy its tree past any bound (a job's file reaches it at the controller):
 * a quantifier on a quantifier, a count above RE_MAX_COUNT, more than RE_MAX_GROUP_REPEATS
 * quantified groups. */
#define RE_MAX_COUNT 16
#define RE_MAX_GROUP_REPEATS 4
static int py_to_ere(const char *re, char *out, size_t cap)
{
    size_t o = 0;
    bool bracket = false, quantified = false;
    unsigned group_repeats = 0;
#define PUT(str)                                                                               \
    do {                                                                                       \
        size_t l_ = strlen(str);                                                               \
        if (o + l_ + 1 >= cap)                                                                 \
            return -1;                                                                         \
        memcpy(out + o, str, l_);                                                              \
        o += l_;                                                                               \
    } while (0)
    PUT("^(");
    for (const char *p = re; *p; p++) {
        char one[2] = {*p, 0};
        if (*p == '\\' && p[1]) {
            char c = *++p;
            const char *cls = c == 'd' ? "0-9" : c == 'w' ? "A-Za-z0-9_" : c == 's' ? " \t" : NULL;
            if (cls) {
                if (!bracket)
                    PUT("[");
                PUT(cls);
                if (!bracket)
                    PUT("]");
            } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
                return -1;
            } else {
                char esc[3] = {'\\', c, 0};
                PUT(bracket ? esc + 1 : esc);
            }
            continue;
        }
        if (!bracket && *p == '(' && p[1] == '?') {
            if (p[2] != ':')
                return -1;
            PUT("(");
            p += 2;
            continue;
        }
        bool quant = !bracket && (*p == '*' || *p == '+' || *p == '?' || *p == '{');
        if (quant && quantified) {
            if (*p != '?')
                return -1; /* a repeat of a repeat */
            quantified = false;
            continue;      /* lazy: as greedy */
        }
        if (quant && p > re && p[-1] == ')' && (*p == '+' || *p == '{') &&
            ++group_repeats > RE_MAX_GROUP_REPEATS)
            return -1;
        if (!bracket && *p == '{') {
            /* {m}, {m,}, {m,n}: copied whole, each count at most RE_MAX_COUNT */
            const char *q = p + 1;
            while ((*q >= '0' && *q <= '9') || *q == ',')
                q++;
            if (*q != '}' || q == p + 1)
                return -1;
            for (const char *d = p + 1; d < q; d++)
                if (*d >= '0' && *d <= '9' && strtoul(d, NULL, 10) > RE_MAX_COUNT)
                    return -1;
            char rep[24];
            if ((size_t)(q - p + 1) >= sizeof rep)
                return -1;
            memcpy(rep, p, (size_t)(q - p + 1));
            rep[q - p + 1] = '\0';
            PUT(rep);
            p = q;
            quantified = true;
            continue;
        }
        quantified = quant;
        if (*p == '[' && !bracket)
            bracket = true;
        else if (*p == ']' && bracket)
            bracket = false;
        PUT(one);
    }
    PUT(")$");
    out[o] = '\0';
#undef PUT
    return 0;
}

/* Whether a target string is one regular expression (peft full-matches a str target_modules
 * against every module's whole name) rather than a list of names. */
static bool is_regex(const char *s)
{
    return strpbrk(s, "\\()*+?{|^$") != NULL;
}

/*
 * A regular expression's roles: peft full-matches it (re.fullmatch, check_target_module_exists)
 * against each module's whole name, so it is tried on the names transformers gives a
 * decoder layer's linears: under each causal-LM and vision-language prefix, below the
 * attention and MLP parents, at layer 0, or the first of layers 1 to 7 where any name
 * matches (expressions that pick layers).  A role any name reaches counts on every layer:
 * an expression that adapts some layers only is sized as if it adapted all (an upper bound;
 * adapters are a few MB).
 */
static int add_regex(const char *re, char *out, size_t cap, struct fg_err *err)
{
    static const char *const prefixes[] = {
        "model.layers.",          "model.language_model.layers.", "language_model.model.layers.",
        "model.text_model.layers.", "model.language_model.model.layers.", "transformer.h.",
        "gpt_neox.layers.",       "model.decoder.layers.",
    };
    static const char *const layers[] = {"0.", "1.", "2.", "3.", "4.", "5.", "6.", "7."};
    static const struct {
        const char *parent;
        bool shared;
    } parents[] = {
        {"self_attn.", false}, {"mlp.", false}, {"attention.", false}, {"attn.", false},
        {"linear_attn.", false}, {"feed_forward.", false}, {"mixer.", false},
        {"mlp.experts.0.", false}, {"mlp.shared_expert.", true}, {"block_sparse_moe.experts.0.", false},
    };
    char ere[2200], name[200], roles[96];
    regex_t rx;
    if (py_to_ere(re, ere, sizeof ere) || regcomp(&rx, ere, REG_EXTENDED | REG_NOSUB))
        return fg_err_set(err, FG_E_INVAL, "LoRA target '%.80s': a regular expression fitgate "
                          "cannot read (look-arounds, back-references, a repeat of a repeat, a "
                          "count over 16, more than 4 repeated groups); give the module names "
                          "as a list", re);
    int rc = 0;
    size_t np = sizeof parents / sizeof parents[0], nm = sizeof peft_names / sizeof peft_names[0];
    for (size_t l = 0; l < sizeof layers / sizeof layers[0] && !rc && !out[0]; l++)
        for (size_t a = 0; a < sizeof prefixes / sizeof prefixes[0] && !rc; a++)
            for (size_t p = 0; p < np && !rc; p++)
                for (size_t m = 0; m < nm && !rc; m++) {
                    snprintf(name, sizeof name, "%s%s%s%s", prefixes[a], layers[l],
                             parents[p].parent, peft_names[m].module);
                    if (regexec(&rx, name, 0, NULL, 0))
                        continue;
                    module_roles(peft_names[m].module, strlen(peft_names[m].module),
                                 parents[p].shared, roles, sizeof roles);
                    rc = add_roles(roles, out, cap, err);
                }
    regfree(&rx);
    if (!rc && !out[0])
        rc = fg_err_set(err, FG_E_INVAL, "LoRA target '%.80s' matches no attention or MLP "
                        "linear of a decoder layer (model.layers.N.self_attn.q_proj ...); give "
                        "the module names as a list", re);
    return rc;
}

int fg_lora_targets_parse(const char *s, struct fg_job *job, struct fg_err *err)
{
    if (!s || !*s)
        return fg_err_set(err, FG_E_INVAL, "empty LoRA target list");
    int kw = -1;
    for (int i = 0; i < 3 && kw < 0; i++)
        if (!strcmp(s, lora_names[i]))
            kw = i;
    if (kw >= 0)
        job->lora_targets = (enum fg_lora_targets)kw;
    else {
        /* "q_proj,v_proj", "[\"q_proj\", \"v_proj\"]" or "q, v": names between separators;
         * or one regular expression */
        char roles[sizeof job->lora_list] = "";
        const char *sep = " ,[]\"'";
        if (strlen(s) > 1000)
            return fg_err_set(err, FG_E_RANGE, "LoRA target list longer than 1000 characters");
        if (is_regex(s)) {
            int rc = add_regex(s, roles, sizeof roles, err);
            if (rc)
                return rc;
        }
        for (const char *p = s; *p && !is_regex(s);) {
            p += strspn(p, sep);
            size_t n = strcspn(p, sep);
            int rc = add_target(p, n, roles, sizeof roles, err);
            if (rc)
                return rc;
            p += n;
        }
        if (!roles[0])
            return fg_err_set(err, FG_E_INVAL, "empty LoRA target list");
        job->lora_targets = FG_LORA_LIST;
        fg__copy(job->lora_list, sizeof job->lora_list, roles);
    }
    return 0;
}

const char *fg_mode_name(enum fg_mode m) { return (unsigned)m < 4 ? mode_names[m] : "?"; }
const char *fg_precision_name(enum fg_precision p) { return (unsigned)p < 4 ? prec_names[p] : "?"; }
const char *fg_optimizer_name(enum fg_optimizer o)
{
    return (unsigned)o < (unsigned)N_OPT ? opt_names[o] : "?";
}
const char *fg_attention_name(enum fg_attention a) { return (unsigned)a < 2 ? attn_names[a] : "?"; }
const char *fg_offload_name(enum fg_offload o) { return (unsigned)o < 3 ? offload_names[o] : "?"; }
const char *fg_loss_name(const struct fg_job *job)
{
    if (job->loss != FG_LOSS_DEFAULT && (size_t)job->loss - FG_LOSS_LIGER + 2 < N_LOSS)
        return loss_names[job->loss - FG_LOSS_LIGER + 2];
    return loss_names[job->chunked_ce ? 1 : 0];
}

void fg_job_defaults(struct fg_job *job, enum fg_mode mode)
{
    memset(job, 0, sizeof *job);
    job->mode = mode;
    /* Full: bf16 autocast over fp32 parameters; LoRA / QLoRA: a bf16 base
     * (the seeds' defaults). */
    job->precision = mode == FG_MODE_FULL ? FG_PREC_BF16_MIXED : FG_PREC_BF16;
    job->optimizer = FG_OPT_ADAMW;
    job->quant = mode == FG_MODE_QLORA ? FG_QUANT_NF4 : FG_QUANT_NONE;
    job->lora_targets = FG_LORA_ALL_LINEAR;
    job->lora_rank = 16;
    job->batch = 1;
    job->dp = job->tp = job->pp = job->ep = 1;
    job->inflight = 1;
    job->attn_dropout = job->hidden_dropout = -1; /* config.json's */
}

void fg_job_on_gpus(struct fg_job *job, uint32_t gpus)
{
    if (job->zero && gpus > 1)
        job->dp = gpus;
}

const char *fg_ref_model_name(enum fg_ref_model r)
{
    return (unsigned)r < 4 ? ref_names[r] : "?";
}

const char *fg_vllm_mode_name(enum fg_vllm_mode v)
{
    return (unsigned)v < 3 ? vllm_names[v] : "?";
}

const char *fg_pp_schedule_name(enum fg_pp_schedule s)
{
    return (unsigned)s < 4 ? pp_sched_names[s] : "?";
}
