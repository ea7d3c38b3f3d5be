/*
 * safetensors.c - checkpoint headers, summed by dtype and tensor group, and
 * the comparison with the graph that `fitgate verify` prints.
 */
#include "source/safetensors.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "source/source.h"
#include "util/jsonscan.h"
#include "source/st_layout.h"

/* Big MoE indexes (DeepSeek-V3: ~90k tensors) run to ~10 MB, Kimi K2's to about 14 MB. */
#define INDEX_MAX_BYTES (32u << 20)
/* One read usually gets the whole header: real ones are 10-200 KB for big shards. */
#define FIRST_READ 65536u

static const char *const dtype_names[FG_ST_DTYPE_COUNT] = {
#define FG__ST_DT_NAME(name, bits) #name,
    FG_ST_DTYPE_MAP(FG__ST_DT_NAME)
#undef FG__ST_DT_NAME
};

static const unsigned dtype_bits[FG_ST_DTYPE_COUNT] = {
#define FG__ST_DT_BITS(name, bits) bits,
    FG_ST_DTYPE_MAP(FG__ST_DT_BITS)
#undef FG__ST_DT_BITS
};

static const char *const group_names[FG_ST_GROUP_COUNT] = {
    [FG_ST_EMBED] = "embed",
    [FG_ST_POS_EMBED] = "pos_embed",
    [FG_ST_ATTN] = "layers.N.self_attn",
    [FG_ST_MLP] = "layers.N.mlp/experts",
    [FG_ST_MIXER] = "layers.N.mixer (ssm/conv)",
    [FG_ST_NORM] = "norms",
    [FG_ST_HEAD] = "lm_head",
    [FG_ST_VISION] = "vision/audio",
    [FG_ST_BUFFER] = "buffers",
    [FG_ST_OTHER] = "other",
};

const char *fg_safetensors_group_name(enum fg_st_group g)
{
    return (unsigned)g < FG_ST_GROUP_COUNT ? group_names[g] : "?";
}

const char *fg_safetensors_dtype_name(enum fg_st_dtype d)
{
    return (unsigned)d < FG_ST_DTYPE_COUNT ? dtype_names[d] : NULL;
}

uint64_t fg_safetensors_bytes(const struct fg_st_summary *s, bool *quantized)
{
    static const unsigned bits[] = {
#define FG__ST_DT_BITS(name, b) b,
        FG_ST_DTYPE_MAP(FG__ST_DT_BITS)
#undef FG__ST_DT_BITS
    };
    static const enum fg_st_dtype packed[] = {FG_ST_F8_E4M3, FG_ST_F8_E5M2, FG_ST_F8_E8M0,
                                              FG_ST_F6_E2M3, FG_ST_F6_E3M2, FG_ST_F4,
                                              FG_ST_U8,      FG_ST_I8,      FG_ST_I32};
    double t = 0;
    *quantized = false;
    for (size_t d = 0; s->headers && d < FG_ST_DTYPE_COUNT; d++)
        t += (double)s->by_dtype[d] * bits[d] / 8;
    for (size_t i = 0; s->headers && i < sizeof packed / sizeof packed[0]; i++)
        *quantized |= s->by_dtype[packed[i]] != 0;
    return t >= 1.8e19 ? UINT64_MAX : (uint64_t)t;
}

/* ---- grouping ------------------------------------------------------------------- */

static bool has(const char *s, const char *sub)
{
    return strstr(s, sub) != NULL;
}

static bool ends(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

static bool starts(const char *s, const char *pre)
{
    return strncmp(s, pre, strlen(pre)) == 0;
}

/* Any of a NULL-terminated list of substrings. */
static bool has_any(const char *s, const char *const *subs)
{
    for (; *subs; subs++)
        if (strstr(s, *subs))
            return true;
    return false;
}

/* The module a parameter belongs to: "model.layers.0.input_layernorm" of "...weight". */
static void module_of(const char *name, char *out, size_t cap)
{
    const char *dot = strrchr(name, '.');
    size_t n = dot ? (size_t)(dot - name) : strlen(name);
    const char *start = name;
    for (const char *p = name; p < name + n; p++)
        if (*p == '.')
            start = p + 1;
    size_t len = (size_t)(name + n - start);
    if (len >= cap)
        len = cap - 1;
    memcpy(out, start, len);
    out[len] = '\0';
}

/*
 * Names follow transformers' module names.  Order matters: buffers and
 * towers first (they contain "attn"/"mlp" too), then the head, then the
 * block sub-modules (q/k norms stay with attention, as the graph counts
 * them), then norms and embeddings.
 */
enum fg_st_group fg_safetensors_group(const char *tensor_name)
{
    static const char *const vision[] = {
        "vision_tower", "vision_model", "visual.", "vision_encoder", "multi_modal_projector",
        "mm_projector", "audio_tower", "audio_encoder", "image_newline", "vision_embed",
        "vpm.", "resampler.", "patch_embed", NULL};
    static const char *const attn[] = {
        "self_attn.", "self_attention.", ".attn.", ".attention.", "cross_attn", "encoder_attn.",
        "linear_attn.", ".attn_", NULL};
    static const char *const mlp[] = {
        "experts.", ".mlp.", "feed_forward", "block_sparse_moe", ".ffn.", ".moe.", ".fc1.",
        ".fc2.", "intermediate.dense", ".output.dense", ".w1.", ".w2.", ".w3.", "shared_expert",
        ".router.", NULL};
    char s[512], mod[128];
    size_t n = strlen(tensor_name);
    if (n >= sizeof s)
        n = sizeof s - 1;
    for (size_t i = 0; i < n; i++)
        s[i] = (char)tolower((unsigned char)tensor_name[i]);
    s[n] = '\0';

    if (ends(s, "inv_freq") || ends(s, ".attn.bias") || ends(s, ".attn.masked_bias") ||
        ends(s, ".masked_bias") || ends(s, "position_ids") || ends(s, "_float_tensor") ||
        ends(s, "rotary_emb.cos_cached") || ends(s, "rotary_emb.sin_cached"))
        return FG_ST_BUFFER;
    if (has_any(s, vision))
        return FG_ST_VISION;
    if (starts(s, "lm_head") || has(s, ".lm_head.") || strcmp(s, "output.weight") == 0 ||
        starts(s, "embed_out") || starts(s, "score.") || has(s, "classifier") ||
        starts(s, "qa_outputs") || starts(s, "cls.") || has(s, "shared_head.head"))
        return FG_ST_HEAD;
    if (has(s, ".mixer.")) {
        /* Nemotron-H names every block's module "mixer" */
        if (has(s, "q_proj") || has(s, "k_proj") || has(s, "v_proj") || has(s, "o_proj"))
            return FG_ST_ATTN;
        if (has(s, "up_proj") || has(s, "down_proj") || has(s, "gate_proj") || has(s, "experts"))
            return FG_ST_MLP;
        return FG_ST_MIXER;
    }
    if (has_any(s, attn))
        return FG_ST_ATTN;
    if (has_any(s, mlp))
        return FG_ST_MLP;
    if (has(s, ".conv.") || has(s, "mamba") || has(s, ".ssm."))
        return FG_ST_MIXER;
    module_of(s, mod, sizeof mod);
    if (has(mod, "norm") || starts(mod, "ln"))
        return FG_ST_NORM;
    if (has(s, "wpe") || has(s, "position_embedding") || has(s, "embed_positions") ||
        has(s, "token_type_embeddings"))
        return FG_ST_POS_EMBED;
    if (has(s, "embed_tokens") || has(s, ".wte.") || starts(s, "wte.") ||
        has(s, "word_embeddings") || has(s, "tok_embeddings") || strcmp(mod, "shared") == 0 ||
        has(s, "embedding") || has(s, "embeddings"))
        return FG_ST_EMBED;
    return FG_ST_OTHER;
}

/* ---- headers ------------------------------------------------------------------- */

int fg_safetensors_header_len(const unsigned char prefix[8], uint64_t file_size, uint64_t cap,
                              const char *origin, uint64_t *len, struct fg_err *err)
{
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = (n << 8) | prefix[i];
    *len = 0;
    if (n < 2)
        return fg_err_set(err, FG_E_RANGE, "%.300s: header length %llu; not a safetensors file",
                          origin, (unsigned long long)n);
    if (n > cap)
        return fg_err_set(err, FG_E_RANGE, "%.300s: header length %llu is over the %llu-byte cap; "
                          "not a safetensors file (or a corrupt one)", origin,
                          (unsigned long long)n, (unsigned long long)cap);
    if (file_size && (file_size < 8 || n > file_size - 8))
        return fg_err_set(err, FG_E_RANGE, "%.300s: header length %llu is past the end of the "
                          "%llu-byte file", origin, (unsigned long long)n,
                          (unsigned long long)file_size);
    *len = n;
    return 0;
}

static int dtype_of(const char *s)
{
    for (int i = 0; i < FG_ST_DTYPE_COUNT; i++)
        if (strcmp(s, dtype_names[i]) == 0)
            return i;
    return -1;
}

/* A JSON number that is a whole value in [0, 2^53]: exact in a double. */
static bool json_u64(const cJSON *j, uint64_t *out)
{
    if (!cJSON_IsNumber(j))
        return false;
    double d = j->valuedouble;
    if (!(d >= 0) || d > 9007199254740992.0 || floor(d) != d)
        return false;
    *out = (uint64_t)d;
    return true;
}

static void count_name(uint64_t *names, char (*example)[96], const char *name)
{
    enum fg_st_group g = fg_safetensors_group(name);
    if (!names[g]++)
        snprintf(example[g], sizeof example[g], "%s", name);
}

int fg_safetensors_parse_header(const char *json, size_t len, uint64_t data_size,
                                const char *origin, struct fg_st_summary *s, struct fg_err *err)
{
    const char *end = NULL;
    uint64_t objects, pairs, room = FG_ST_MAX_TENSORS - (s->tensors < FG_ST_MAX_TENSORS
                                                             ? s->tensors : FG_ST_MAX_TENSORS);
    fg__json_count(json, len, &objects, &pairs);
    if (objects > room + 2) /* the header itself and its __metadata__ are objects too */
        return fg_err_set(err, FG_E_LIMIT, "%.300s: a header of %llu objects (tensors), more "
                          "than a model's checkpoint holds (%u in all its headers): not read",
                          origin, (unsigned long long)objects, FG_ST_MAX_TENSORS);
    cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
    if (!root || !cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return fg_err_set(err, FG_E_PARSE, "%.300s: header is not a JSON object", origin);
    }
    int rc = 0;
    uint64_t sum = 0, by_dtype[FG_ST_DTYPE_COUNT] = {0}, tensors = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, root) {
        if (strcmp(t->string, "__metadata__") == 0)
            continue;
        const cJSON *dt = cJSON_GetObjectItemCaseSensitive(t, "dtype");
        const cJSON *shape = cJSON_GetObjectItemCaseSensitive(t, "shape");
        const cJSON *offs = cJSON_GetObjectItemCaseSensitive(t, "data_offsets");
        int d = cJSON_IsString(dt) ? dtype_of(dt->valuestring) : -1;
        if (!cJSON_IsObject(t) || !cJSON_IsArray(shape) || !cJSON_IsArray(offs) ||
            cJSON_GetArraySize(offs) != 2) {
            rc = fg_err_set(err, FG_E_PARSE, "%.300s: tensor '%.100s' lacks dtype, shape or "
                            "data_offsets", origin, t->string);
            break;
        }
        if (d < 0) {
            rc = fg_err_set(err, FG_E_PARSE, "%.300s: tensor '%.100s' has unknown dtype '%.20s'",
                            origin, t->string, cJSON_IsString(dt) ? dt->valuestring : "?");
            break;
        }
        uint64_t numel = 1, b, e, dims[FG_ST_ROW_DIMS] = {0};
        size_t nd = 0;
        const cJSON *dim;
        cJSON_ArrayForEach(dim, shape) {
            uint64_t v;
            if (!json_u64(dim, &v)) {
                rc = fg_err_set(err, FG_E_PARSE, "%.300s: tensor '%.100s' has a bad shape",
                                origin, t->string);
                break;
            }
            if (v && numel > UINT64_MAX / v) {
                rc = fg_err_set(err, FG_E_OVERFLOW, "%.300s: tensor '%.100s': shape product "
                                "overflows", origin, t->string);
                break;
            }
            numel *= v;
            if (nd < FG_ST_ROW_DIMS)
                dims[nd++] = v;
            else
                dims[FG_ST_ROW_DIMS - 1] *= v; /* folded as st_layout.h says */
        }
        if (rc)
            break;
        if (!json_u64(cJSON_GetArrayItem(offs, 0), &b) ||
            !json_u64(cJSON_GetArrayItem(offs, 1), &e) || e < b) {
            rc = fg_err_set(err, FG_E_PARSE, "%.300s: tensor '%.100s' has bad data_offsets",
                            origin, t->string);
            break;
        }
        /* bytes the shape needs, sub-byte types packed (F4: 2 per byte) */
        if (numel > UINT64_MAX / 64) {
            rc = fg_err_set(err, FG_E_OVERFLOW, "%.300s: tensor '%.100s' is absurdly large",
                            origin, t->string);
            break;
        }
        uint64_t need = (numel * dtype_bits[d] + 7) / 8;
        if (e - b != need) {
            rc = fg_err_set(err, FG_E_PARSE, "%.300s: tensor '%.100s': shape needs %llu bytes of "
                            "%s but data_offsets span %llu", origin, t->string,
                            (unsigned long long)need, dtype_names[d],
                            (unsigned long long)(e - b));
            break;
        }
        if (data_size && e > data_size) {
            rc = fg_err_set(err, FG_E_PARSE, "%.300s: tensor '%.100s' ends at byte %llu of a "
                            "%llu-byte data part (file truncated?)", origin, t->string,
                            (unsigned long long)e, (unsigned long long)data_size);
            break;
        }
        if (sum > UINT64_MAX - numel) {
            rc = fg_err_set(err, FG_E_OVERFLOW, "%.300s: element count overflows", origin);
            break;
        }
        sum += numel;
        by_dtype[d] += numel;
        if (++tensors > room) {
            rc = fg_err_set(err, FG_E_LIMIT, "%.300s: more than %u tensors in a model's "
                            "headers: not a checkpoint fitgate reads", origin,
                            FG_ST_MAX_TENSORS);
            break;
        }
        enum fg_st_group g = fg_safetensors_group(t->string);
        s->by_group[g] += numel;
        count_name(s->names, s->example, t->string);
        if (s->layout && (rc = fg_st_layout_add(s->layout, t->string, d, dims, nd, err)))
            break;
    }
    cJSON_Delete(root);
    if (rc)
        return rc;
    if (s->total > UINT64_MAX - sum)
        return fg_err_set(err, FG_E_OVERFLOW, "%.300s: element count overflows", origin);
    s->total += sum;
    s->tensors += tensors;
    for (int i = 0; i < FG_ST_DTYPE_COUNT; i++)
        s->by_dtype[i] += by_dtype[i];
    return 0;
}

/* Read and parse one shard's header through repo. */
static int read_header(struct fg_source_repo *repo, const char *file, uint64_t cap,
                       struct fg_st_summary *s, struct fg_err *err)
{
    unsigned char *first = malloc(FIRST_READ);
    if (!first)
        return fg_err_set(err, FG_E_NOMEM, "out of memory");
    size_t got = 0;
    uint64_t fsize = 0;
    bool remote = false;
    int rc = fg_source_repo_read(repo, file, 0, FIRST_READ, first, &got, &fsize, &remote, err);
    if (!rc && got < 8)
        rc = fg_err_set(err, FG_E_PARSE, "%s: %zu bytes; not a safetensors file", file, got);
    uint64_t len = 0, room = FG_ST_MAX_HEADER_BYTES - (s->header_bytes < FG_ST_MAX_HEADER_BYTES
                                                           ? s->header_bytes
                                                           : FG_ST_MAX_HEADER_BYTES);
    for (int i = 7; !rc && i >= 0; i--)
        len = (len << 8) | first[i];
    /* before the format's own checks: a length past the bound is refused as the job's, not
     * read (a 100 MiB header took 4.8 s to parse) */
    if (!rc && len > room)
        rc = fg_err_set(err, FG_E_LIMIT, "%s: a header of %llu bytes%s, more than a model's "
                        "checkpoint holds (%u MiB in all its headers): not read", file,
                        (unsigned long long)len, s->header_bytes ? " after the others" : "",
                        FG_ST_MAX_HEADER_BYTES >> 20);
    if (!rc)
        rc = fg_safetensors_header_len(first, fsize, cap, file, &len, err);
    char *json = NULL;
    if (!rc) {
        json = malloc((size_t)len + 1);
        if (!json)
            rc = fg_err_set(err, FG_E_NOMEM, "out of memory for a %llu-byte header",
                            (unsigned long long)len);
    }
    if (!rc) {
        size_t have = got - 8 < len ? got - 8 : (size_t)len;
        memcpy(json, first + 8, have);
        if (have < len) {
            size_t more = 0;
            rc = fg_source_repo_read(repo, file, 8 + have, (size_t)len - have, json + have, &more,
                                     NULL, NULL, err);
            if (!rc && more != len - have)
                rc = fg_err_set(err, FG_E_PARSE, "%s: header truncated (%zu of %llu bytes)", file,
                                have + more, (unsigned long long)len);
        }
    }
    if (!rc) {
        json[len] = '\0';
        uint64_t data = fsize ? fsize - 8 - len : 0;
        rc = fg_safetensors_parse_header(json, (size_t)len, data, file, s, err);
    }
    if (!rc) {
        s->headers_read++;
        s->headers_remote += remote;
        s->header_bytes += len;
    }
    free(json);
    free(first);
    return rc;
}

/* Index: names by group, unique shard files, metadata sizes. */
static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int parse_index(const char *text, size_t len, struct fg_st_summary *s, uint64_t *names,
                       char (*example)[96], char ***files, size_t *nfiles, struct fg_err *err)
{
    const char *origin = "model.safetensors.index.json";
    uint64_t objects, pairs;
    fg__json_count(text, len, &objects, &pairs);
    if (pairs > FG_ST_MAX_TENSORS + 64) /* weight_map's entries, and metadata's few */
        return fg_err_set(err, FG_E_LIMIT, "%s: %llu entries, more than a model's checkpoint "
                          "names (%u tensors): not read", origin, (unsigned long long)pairs,
                          FG_ST_MAX_TENSORS);
    cJSON *root = cJSON_ParseWithLength(text, len);
    const cJSON *wm = root ? cJSON_GetObjectItemCaseSensitive(root, "weight_map") : NULL;
    if (!cJSON_IsObject(wm)) {
        cJSON_Delete(root);
        return fg_err_set(err, FG_E_PARSE, "%s: not JSON with a weight_map object", origin);
    }
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(root, "metadata");
    const cJSON *v;
    if ((v = cJSON_GetObjectItemCaseSensitive(meta, "total_size")) &&
        !json_u64(v, &s->index_total_size)) {
        cJSON_Delete(root);
        return fg_err_set(err, FG_E_PARSE, "%s: metadata.total_size is not a whole number",
                          origin);
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(meta, "total_parameters")) &&
        !json_u64(v, &s->index_total_params)) {
        cJSON_Delete(root);
        return fg_err_set(err, FG_E_PARSE, "%s: metadata.total_parameters is not a whole number",
                          origin);
    }
    int rc = 0;
    char **list = NULL;
    size_t n = 0, cap = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, wm) {
        if (!cJSON_IsString(e)) {
            rc = fg_err_set(err, FG_E_PARSE, "%s: weight_map['%.100s'] is not a file name",
                            origin, e->string);
            break;
        }
        if ((rc = fg_source_check_file(e->valuestring, err))) {
            fg_err_prefix(err, "%s: weight_map['%.100s']", origin, e->string);
            break;
        }
        count_name(names, example, e->string);
        /* Tensors of one shard mostly come together: skip a repeat of the
         * last name here; the sort below removes the rest in O(n log n)
         * (a name-by-name search was quadratic in hostile indexes). */
        if (n && strcmp(list[n - 1], e->valuestring) == 0)
            continue;
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 16;
            char **nl = realloc(list, nc * sizeof *nl);
            if (!nl) {
                rc = fg_err_set(err, FG_E_NOMEM, "out of memory");
                break;
            }
            list = nl;
            cap = nc;
        }
        if (!(list[n] = strdup(e->valuestring))) {
            rc = fg_err_set(err, FG_E_NOMEM, "out of memory");
            break;
        }
        n++;
    }
    cJSON_Delete(root);
    if (!rc && n > 1) {
        qsort(list, n, sizeof *list, cmp_name);
        size_t u = 1;
        for (size_t i = 1; i < n; i++) {
            if (strcmp(list[i], list[u - 1]) == 0)
                free(list[i]);
            else
                list[u++] = list[i];
        }
        n = u;
    }
    if (!rc && n == 0)
        rc = fg_err_set(err, FG_E_PARSE, "%s: weight_map is empty", origin);
    if (rc) {
        for (size_t i = 0; i < n; i++)
            free(list[i]);
        free(list);
        return rc;
    }
    *files = list;
    *nfiles = n;
    return 0;
}

int fg_safetensors_scan(struct fg_source_repo *repo, uint64_t header_cap, struct fg_st_summary *s,
                        struct fg_err *err)
{
    struct fg_st_scan_opts so = {.header_cap = header_cap};
    return fg_safetensors_scan_with(repo, &so, s, err);
}

/*
 * Shard headers not read (rc: FG_E_NOTFOUND a shard absent, FG_E_RANGE over max_shards,
 * FG_E_TIMEDOUT / FG_E_NET the hub did not give one): with an index its view stands and why
 * is kept; false when the scan must fail instead (no index, or a network error not asked to
 * be kept).
 */
static bool index_stands(struct fg_st_summary *s, const struct fg_st_scan_opts *so, int rc,
                         const char *why)
{
    bool net = rc == FG_E_TIMEDOUT || rc == FG_E_NET;
    if (!s->has_index || (net && !so->keep_index))
        return false;
    snprintf(s->no_headers, sizeof s->no_headers, "%s", why);
    s->no_headers_code = rc;
    return true;
}

int fg_safetensors_scan_with(struct fg_source_repo *repo, const struct fg_st_scan_opts *so,
                             struct fg_st_summary *s, struct fg_err *err)
{
    struct fg_st_layout *layout = so->layout;
    memset(s, 0, sizeof *s);
    s->layout = layout;
    if (layout)
        fg_st_layout_free(layout);
    uint64_t header_cap = so->header_cap ? so->header_cap : FG_SOURCE_DEFAULT_MAX_HEADER;
    char *text = NULL;
    size_t len = 0;
    struct fg_err e = {0};
    int rc = fg_source_repo_read_all(repo, "model.safetensors.index.json", INDEX_MAX_BYTES, &text,
                                     &len, NULL, &e);
    char **files = NULL;
    size_t n = 0;
    uint64_t idx_names[FG_ST_GROUP_COUNT] = {0};
    char idx_example[FG_ST_GROUP_COUNT][96];
    memset(idx_example, 0, sizeof idx_example);
    static char single[] = "model.safetensors";
    char *one[1] = {single};
    if (rc == FG_E_NOTFOUND) {
        files = one;
        n = 1;
    } else if (rc) {
        if (rc == FG_E_RANGE) /* larger than INDEX_MAX_BYTES (fileio.h, hub.c) */
            rc = e.code = FG_E_LIMIT;
        if (err)
            *err = e;
        return rc;
    } else {
        s->has_index = true;
        rc = parse_index(text, len, s, idx_names, idx_example, &files, &n, err);
        free(text);
        if (rc)
            return rc;
    }
    s->files = n;
    size_t reading = n;
    if (so->max_shards && n > so->max_shards) {
        char why[160];
        snprintf(why, sizeof why, "%zu shards, over the cap of %zu: no header read", n,
                 so->max_shards);
        if (index_stands(s, so, FG_E_RANGE, why))
            reading = 0;
    }
    for (size_t i = 0; i < reading; i++) {
        fg_err_clear(&e);
        rc = read_header(repo, files[i], header_cap, s, &e);
        if ((rc == FG_E_NOTFOUND || rc == FG_E_TIMEDOUT || rc == FG_E_NET) &&
            index_stands(s, so, rc, e.detail)) {
            rc = 0;
            break;
        }
        if (rc) {
            if (rc == FG_E_NOTFOUND) {
                char why[FG_ERR_DETAIL_MAX];
                snprintf(why, sizeof why, "%s", e.detail);
                fg_err_set(&e, FG_E_NOTFOUND, "verify needs model.safetensors.index.json or "
                           "model.safetensors, and neither is at hand (%.360s)", why);
            }
            if (err)
                *err = e;
            break;
        }
    }
    if (files != one) {
        for (size_t i = 0; i < n; i++)
            free(files[i]);
        free(files);
    }
    if (rc)
        return rc;
    s->headers = s->headers_read == s->files;
    if (!s->headers) {
        /* partial header sums would mislead: fall back to the index's view */
        s->tensors = s->total = 0;
        memset(s->by_dtype, 0, sizeof s->by_dtype);
        memset(s->by_group, 0, sizeof s->by_group);
        memcpy(s->names, idx_names, sizeof idx_names);
        memcpy(s->example, idx_example, sizeof idx_example);
        if (layout)
            fg_st_layout_free(layout);
    }
    return 0;
}

/* ---- comparison ---------------------------------------------------------------- */

static enum fg_st_group group_of_kind(enum fg_node_kind k)
{
    switch (k) {
    case FG_NODE_EMBED: return FG_ST_EMBED;
    case FG_NODE_POS_EMBED: return FG_ST_POS_EMBED;
    case FG_NODE_NORM: return FG_ST_NORM;
    case FG_NODE_ATTN:
    case FG_NODE_MLA: return FG_ST_ATTN;
    case FG_NODE_MLP:
    case FG_NODE_MOE: return FG_ST_MLP;
    case FG_NODE_MAMBA2:
    case FG_NODE_SHORTCONV: return FG_ST_MIXER;
    case FG_NODE_HEAD: return FG_ST_HEAD;
    case FG_NODE_VISION: return FG_ST_VISION;
    default: return FG_ST_OTHER;
    }
}

/* Bytes per parameter for a torch_dtype string; 0 unknown. */
static unsigned dtype_bytes(const char *t)
{
    if (!strcmp(t, "bfloat16") || !strcmp(t, "float16") || !strcmp(t, "half"))
        return 2;
    if (!strcmp(t, "float32") || !strcmp(t, "float"))
        return 4;
    if (starts(t, "float8"))
        return 1;
    return 0;
}

static void finding(struct fg_st_compare *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void finding(struct fg_st_compare *c, const char *fmt, ...)
{
    if (c->n_findings >= FG_ST_MAX_FINDINGS)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->findings[c->n_findings++], sizeof c->findings[0], fmt, ap);
    va_end(ap);
}

static const char *why_extra(enum fg_st_group g)
{
    switch (g) {
    case FG_ST_HEAD: return "the checkpoint stores a head the graph does not count "
                            "(tied but stored, or a task head)";
    case FG_ST_BUFFER: return "the checkpoint stores buffers (rotary inv_freq, attention "
                              "masks) the graph does not count";
    case FG_ST_VISION: return "the checkpoint holds a vision/audio tower the graph does not "
                              "count";
    default: return "the checkpoint stores tensors the graph does not count";
    }
}

int fg_safetensors_compare(const struct fg_st_summary *s, const struct fg_model *m,
                           struct fg_st_compare *c, struct fg_err *err)
{
    memset(c, 0, sizeof *c);
    if (!s)
        return fg_err_set(err, FG_E_INVAL, "no checkpoint summary to compare");
    /* without a graph only the checkpoint side is filled (and the config's dtype is unknown) */
    static const struct fg_model none;
    const bool have_graph = m != NULL;
    if (!m)
        m = &none;
    c->graph_total = m->params_total;
    for (size_t i = 0; i < m->n_nodes; i++) {
        const struct fg_node *n = &m->nodes[i];
        c->graph_group[group_of_kind(n->kind)] += n->params - n->buffers;
        c->graph_group[FG_ST_BUFFER] += n->buffers;
    }
    for (size_t i = 0; i < m->n_rules; i++)
        c->graph_rules += m->rules[i].scalars;

    if (s->headers) {
        c->ckpt_total = s->total;
        c->ckpt_known = c->exact = true;
        snprintf(c->basis, sizeof c->basis, "safetensors headers of %zu file%s (%zu by HTTP range)",
                 s->files, s->files == 1 ? "" : "s", s->headers_remote);
    } else if (s->index_total_size &&
               (dtype_bytes(m->torch_dtype) || !s->index_total_params)) {
        /* total_size is what is stored; total_parameters may count a tied matrix twice */
        unsigned b = dtype_bytes(m->torch_dtype);
        bool assumed = b == 0;
        if (assumed)
            b = 2;
        c->bytes_per_param = b;
        c->ckpt_total = s->index_total_size / b;
        c->ckpt_known = true;
        c->exact = s->index_total_params == c->ckpt_total;
        snprintf(c->basis, sizeof c->basis, "index metadata total_size %llu bytes / %u bytes per "
                 "parameter (%s%s); headers not available%s",
                 (unsigned long long)s->index_total_size, b,
                 assumed ? "assumed: config names no torch_dtype" : "torch_dtype ",
                 assumed ? "" : m->torch_dtype, c->exact ? ", total_parameters agrees" :
                 ", exact only if every tensor has that dtype");
        if (s->index_total_size % b)
            finding(c, "total_size %llu is not a multiple of %u: the checkpoint mixes dtypes",
                    (unsigned long long)s->index_total_size, b);
        if (s->index_total_params && !c->exact) {
            int64_t d = (int64_t)(s->index_total_params - c->ckpt_total);
            finding(c, "index metadata total_parameters %llu differs from total_size / %u by "
                    "%+lld%s", (unsigned long long)s->index_total_params, b, (long long)d,
                    m->tied && (uint64_t)llabs(d) == m->vocab * m->hidden
                        ? ": it counts the tied embedding twice" : "");
        }
    } else if (s->index_total_params) {
        c->ckpt_total = s->index_total_params;
        c->ckpt_known = c->exact = true;
        snprintf(c->basis, sizeof c->basis, "index metadata total_parameters (headers not "
                 "available)");
    } else {
        snprintf(c->basis, sizeof c->basis, "nothing: no readable headers and no sizes in the "
                 "index metadata");
        return 0;
    }
    if (!have_graph)
        return 0;
    c->agree = c->ckpt_total == c->graph_total;
    int64_t diff = (int64_t)(c->ckpt_total - c->graph_total);

    if (s->headers) {
        for (int g = 0; g < FG_ST_GROUP_COUNT; g++) {
            uint64_t ck = s->by_group[g], gr = c->graph_group[g];
            if (ck == gr)
                continue;
            int64_t d = (int64_t)(ck - gr);
            if (gr == 0)
                finding(c, "%s: %+lld: %s (e.g. %s)", group_names[g], (long long)d,
                        why_extra((enum fg_st_group)g), s->example[g]);
            else if (ck == 0)
                finding(c, "%s: %+lld: the graph counts %s the checkpoint does not store",
                        group_names[g], (long long)d, group_names[g]);
            else
                finding(c, "%s: checkpoint %llu, graph %llu (%+lld)%s", group_names[g],
                        (unsigned long long)ck, (unsigned long long)gr, (long long)d,
                        c->agree ? ": attribution only, the totals agree" : "");
        }
    } else if (!c->agree) {
        /* Names without shapes: say which groups one side has and the other lacks. */
        for (int g = 0; g < FG_ST_GROUP_COUNT; g++) {
            uint64_t gr = c->graph_group[g];
            if (s->names[g] && gr == 0)
                finding(c, "%s: %s: %llu tensor%s such as %s", group_names[g],
                        why_extra((enum fg_st_group)g), (unsigned long long)s->names[g],
                        s->names[g] == 1 ? "" : "s", s->example[g]);
            else if (!s->names[g] && gr)
                finding(c, "%s: the graph counts %llu the index lists no tensor for",
                        group_names[g], (unsigned long long)gr);
        }
    }
    if (!c->agree && m->vocab && (uint64_t)llabs(diff) == m->vocab * m->hidden)
        finding(c, "the difference is exactly vocab x hidden = %llu: one embedding-sized matrix "
                "(%s)", (unsigned long long)(m->vocab * m->hidden),
                m->tied ? "a tied lm_head stored or counted twice?" : "a head or embedding one "
                "side lacks?");
    if (c->graph_rules)
        finding(c, "graph rules add %+lld scalars outside the node groups", (long long)c->graph_rules);
    return 0;
}
