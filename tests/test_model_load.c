/*
 * test_model_load.c - a model as the front ends load it (engine/model/model_load.c): the graph
 * from config.json, then weighed against the checkpoint beside it, whose tensor names and
 * exact total decide the parts a config declares and not every checkpoint stores
 * (stored_parts): a tied head written or not, a vision tower and MTP layers a pruned or
 * text-only release leaves out.  And where the headers are looked for: the model's own
 * directory, a huggingface_hub cache snapshot laid out as huggingface_hub writes it (refs/,
 * snapshots/ links to blobs/), a site model directory; a type without a reader built from
 * them.
 *
 * The checkpoints are written here: a model.safetensors header naming a few BF16 tensors
 * (sparse zero data), so the names and the total are the test's, not the reader's; or the
 * loopback hub's real headers (tests/fixtures/hub, staged by ckpt_fixture.h); the hub route
 * itself runs against lighttpd in tests/integration/hub.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <unistd.h>

#include "ckpt_fixture.h"
#include "model/model.h"
#include "model/model_load.h"
#include "source/safetensors.h"
#include "source/source.h"
#include "support.h"
#include "util/fileio.h"

/* Qwen3-4B's shape fields, tied (its Hub total 4,022,468,096 is the modules alone) */
#define QWEN3_4B_TIED                                                                          \
    "{\"model_type\": \"qwen3\", \"architectures\": [\"Qwen3ForCausalLM\"], "               \
    "\"hidden_size\": 2560, \"intermediate_size\": 9728, \"num_hidden_layers\": 36, "        \
    "\"num_attention_heads\": 32, \"num_key_value_heads\": 8, \"head_dim\": 128, "           \
    "\"vocab_size\": 151936, \"tie_word_embeddings\": true, \"use_sliding_window\": false}"
/* its modules: q 2560 -> 4096, k/v 2560 -> 1024, o 4096 -> 2560, q/k norms, MLP, two norms
 * per layer; the embedding and the final norm */
#define QWEN3_4B_LAYER                                                                         \
    (2560ull * 4096 + 2 * 2560ull * 1024 + 4096ull * 2560 + 256 + 3ull * 2560 * 9728 + 2 * 2560)
#define QWEN3_4B_MODULES (151936ull * 2560 + 36 * QWEN3_4B_LAYER + 2560)

/* A directory with config text and a model.safetensors whose header holds the named BF16
 * tensors (1-D, of the given sizes) and zeroed data. */
static void write_checkpoint(const char *dir, const char *config, const char *const *names,
                             const uint64_t *sizes, size_t n)
{
    char path[512], header[4096];
    size_t len = 0;
    uint64_t off = 0;
    len += (size_t)snprintf(header + len, sizeof header - len, "{");
    for (size_t i = 0; i < n; i++) {
        len += (size_t)snprintf(header + len, sizeof header - len,
                                "%s\"%s\": {\"dtype\": \"BF16\", \"shape\": [%llu], "
                                "\"data_offsets\": [%llu, %llu]}", i ? ", " : "", names[i],
                                (unsigned long long)sizes[i], (unsigned long long)off,
                                (unsigned long long)(off + 2 * sizes[i]));
        off += 2 * sizes[i];
    }
    len += (size_t)snprintf(header + len, sizeof header - len, "}");
    assert_true(len < sizeof header);
    snprintf(path, sizeof path, "%s/config.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(config, f);
    fclose(f);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    unsigned char prefix[8];
    for (int i = 0; i < 8; i++)
        prefix[i] = (unsigned char)((uint64_t)len >> (8 * i));
    assert_int_equal(fwrite(prefix, 1, 8, f), 8);
    assert_int_equal(fwrite(header, 1, len, f), len);
    if (off) { /* sparse zeros up to the data's end */
        assert_int_equal(fseek(f, (long)off - 1, SEEK_CUR), 0);
        assert_int_equal(fputc(0, f), 0);
    }
    fclose(f);
}

static void remove_checkpoint(const char *dir)
{
    char path[600];
    snprintf(path, sizeof path, "%s/config.json", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    unlink(path);
    rmdir(dir);
}

/* With the checkpoint at hand its tensor names decide the tied head: an embedding release
 * that writes none (Qwen3-Embedding-0.6B's case) and a release that writes one (Qwen3-0.6B's)
 * are each counted as stored and no longer unsure. */
static void load_path_should_take_the_tied_head_from_the_checkpoint_names(void **state)
{
    (void)state;
    char dir[] = "/tmp/fg-tied-XXXXXX";
    assert_non_null(mkdtemp(dir));
    const char *cfg = QWEN3_4B_TIED;
    const uint64_t embed = 151936ull * 2560, rest = QWEN3_4B_MODULES - embed;
    static const char *const without[] = {"model.embed_tokens.weight", "model.layers.0.mlp.w"};
    const uint64_t sizes[] = {embed, rest, embed};
    write_checkpoint(dir, cfg, without, sizes, 2);
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(fg_model_load_path(dir, &m, &err), 0);
    assert_int_equal(m->params_total, QWEN3_4B_MODULES);
    assert_int_equal(m->params_checkpoint, QWEN3_4B_MODULES);
    assert_int_equal(m->certainty, FG_CERT_CHECKPOINT);
    fg_model_free(m);
    static const char *const with[] = {"model.embed_tokens.weight", "model.layers.0.mlp.w",
                                       "lm_head.weight"};
    write_checkpoint(dir, cfg, with, sizes, 3);
    assert_int_equal(fg_model_load_path(dir, &m, &err), 0);
    assert_int_equal(m->params_total, QWEN3_4B_MODULES + embed);
    assert_int_equal(m->certainty, FG_CERT_CHECKPOINT);
    fg_model_free(m);
    remove_checkpoint(dir);
}

/* xlm-roberta-base's config (no transformers_version, XLMRobertaForMaskedLM) is unsure of
 * whether its file holds the base model's pooler; the headers, which hold it (the fairseq
 * conversion's 278,885,778), settle the count as the checkpoint's. */
static void load_path_should_settle_the_pooler_of_an_unversioned_head_class(void **state)
{
    (void)state;
    char dir[] = "/tmp/fg-pooler-XXXXXX";
    assert_non_null(mkdtemp(dir));
    const char *cfg = "{\"architectures\": [\"XLMRobertaForMaskedLM\"], \"hidden_size\": 768, "
                      "\"intermediate_size\": 3072, \"max_position_embeddings\": 514, "
                      "\"model_type\": \"xlm-roberta\", \"num_attention_heads\": 12, "
                      "\"num_hidden_layers\": 12, \"type_vocab_size\": 1, "
                      "\"vocab_size\": 250002}";
    const uint64_t pooler = 768ull * 768 + 768, stored = 278885778ull;
    static const char *const names[] = {"roberta.embeddings.word_embeddings.weight",
                                        "roberta.pooler.dense.weight"};
    const uint64_t sizes[] = {stored - pooler, pooler};
    write_checkpoint(dir, cfg, names, sizes, 0); /* config.json alone */
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(fg_model_load_path(dir, &m, &err), 0);
    assert_int_equal(m->params_total, stored - pooler);
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    assert_true(m->unsure_count_only);
    fg_model_free(m);
    write_checkpoint(dir, cfg, names, sizes, 2);
    assert_int_equal(fg_model_load_path(dir, &m, &err), 0);
    assert_int_equal(m->params_checkpoint, stored);
    assert_int_equal(m->certainty, FG_CERT_CHECKPOINT);
    fg_model_free(m);
    remove_checkpoint(dir);
}

/* Qwen3-Embedding-0.6B: Qwen3-0.6B's config with vocab_size 151669, naming Qwen3ForCausalLM,
 * and a model.safetensors of 1,191,586,416 B that holds the modules alone: Qwen3-0.6B's
 * 596,049,920 unique parameters less 267 vocabulary rows of 1024, in BF16 (2 x 595,776,512 =
 * 1,191,553,024, the rest its header).  config.json alone counts the head Qwen3-0.6B writes
 * and is unsure; its checkpoint's names make it exact (issue 25's +26%). */
static void load_path_should_count_the_qwen3_embedding_release_without_its_head(void **state)
{
    (void)state;
    char *cfg = fixture_config_with("Qwen--Qwen3-0.6B", "vocab_size", 151669);
    const uint64_t modules = 596049920ull - 267ull * 1024, embed = 151669ull * 1024;
    assert_int_equal(modules, 595776512ull);
    char dir[] = "/tmp/fg-embed-XXXXXX";
    assert_non_null(mkdtemp(dir));
    static const char *const names[] = {"embed_tokens.weight", "layers.0.mlp.down_proj.weight"};
    write_checkpoint(dir, cfg, names, (const uint64_t[]){embed, modules - embed}, 0);
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(fg_model_load(dir, &m, &err), 0);
    assert_int_equal(m->params_total, modules + embed); /* the head as Qwen3-0.6B writes it */
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    assert_true(m->unsure_count_only);
    fg_model_free(m);
    write_checkpoint(dir, cfg, names, (const uint64_t[]){embed, modules - embed}, 2);
    assert_int_equal(fg_model_load_path(dir, &m, &err), 0);
    assert_int_equal(m->params_total, modules);
    assert_int_equal(m->certainty, FG_CERT_CHECKPOINT);
    fg_model_free(m);
    free(cfg);
    remove_checkpoint(dir);
}

/* An expert-pruned Qwen3.5-MoE release saved from the text class: its config keeps the
 * vision_config and mtp_num_hidden_layers of the original, its checkpoint holds neither.
 * config.json alone: unsure, naming vision_config; with the checkpoint: its count, the
 * dropped parts named as rules. */
static void load_path_should_drop_the_vision_tower_and_mtp_a_pruned_checkpoint_lacks(void **s)
{
    (void)s;
    char *buf = NULL;
    size_t len = 0;
    assert_int_equal(fg__read_file("tests/fixtures/models/Qwen--Qwen3.5-35B-A3B/config.json",
                                   1 << 20, &buf, &len), 0);
    cJSON *j = cJSON_Parse(buf);
    free(buf);
    assert_non_null(j);
    cJSON_ReplaceItemInObject(j, "architectures", cJSON_Parse("[\"Qwen3_5MoeForCausalLM\"]"));
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(j, "text_config"), "num_experts",
                              cJSON_CreateNumber(128));
    char *cfg = cJSON_Print(j);
    cJSON_Delete(j);
    char dir[] = "/tmp/fg-pruned-XXXXXX";
    assert_non_null(mkdtemp(dir));
    static const char *const none[] = {"x"};
    write_checkpoint(dir, cfg, none, (const uint64_t[]){1}, 0);
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(fg_model_load(dir, &m, &err), 0);
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    assert_string_equal(m->unsure_key, "vision_config");
    uint64_t vision = fg_model_params_of(m, FG_NODE_VISION), mtp = 0;
    for (size_t i = 0; i < m->n_rules; i++)
        mtp += m->rules[i].optional ? (uint64_t)m->rules[i].scalars : 0;
    assert_true(vision > 0 && mtp > 0);
    const uint64_t stored = m->params_total - vision - mtp;
    fg_model_free(m);
    static const char *const text[] = {"model.language_model.embed_tokens.weight",
                                       "model.language_model.layers.0.mlp.experts.down_proj",
                                       "lm_head.weight"};
    const uint64_t sizes[] = {248320ull * 2048, stored - 2 * 248320ull * 2048, 248320ull * 2048};
    write_checkpoint(dir, cfg, text, sizes, 3);
    assert_int_equal(fg_model_load_path(dir, &m, &err), 0);
    assert_int_equal(m->params_total, stored);
    assert_int_equal(m->certainty, FG_CERT_CHECKPOINT);
    bool named_v = false, named_m = false;
    for (size_t i = 0; i < m->n_rules; i++) {
        const struct fg_rule *r = &m->rules[i];
        named_v |= strstr(r->name, "vision tower") && r->scalars == -(int64_t)vision;
        named_m |= strstr(r->name, "MTP layers: not in") && r->scalars == -(int64_t)mtp;
    }
    assert_true(named_v && named_m);
    fg_model_free(m);
    free(cfg);
    remove_checkpoint(dir);
}


#define EXAONE "LGAI-EXAONE/EXAONE-3.0-7.8B-Instruct"
#define SMOL "HuggingFaceTB/SmolLM2-135M-Instruct"
#define SNAP "0123456789abcdef0123456789abcdef01234567"

static void fg_model_load_path_should_build_an_unread_type_from_the_headers_beside_it(
    void **state)
{
    (void)state;
    char dir[64];
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    stage_repo(EXAONE, stage_tmpdir(dir, sizeof dir));
    assert_int_equal(fg_model_load_path(dir, &m, &err), 0);
    assert_string_equal(m->reader, "checkpoint tensors");
    assert_int_equal(m->certainty, FG_CERT_CHECKPOINT);
    assert_int_equal(m->params_total, 7818448896ull);
    assert_int_equal(m->params_checkpoint, 7818448896ull);
    assert_true(m->ckpt.structure);
    assert_non_null(strstr(m->ckpt.where, "(local)"));
    assert_int_equal(m->ckpt.tensors, 291);
    assert_int_equal(m->ckpt.bytes, 2 * 7818448896ull);
    assert_string_equal(m->ckpt.dtypes, "BF16 7818448896");
    fg_model_free(m);
    stage_remove(dir);
}

static void fg_model_load_path_should_read_an_unread_type_generically_without_headers(
    void **state)
{
    (void)state;
    char dir[64], cfg[96];
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    stage_repo(EXAONE, stage_tmpdir(dir, sizeof dir));
    snprintf(cfg, sizeof cfg, "%s/model.safetensors", dir);
    assert_int_equal(unlink(cfg), 0);
    assert_int_equal(fg_model_load_path(dir, &m, &err), 0);
    assert_true(m->generic); /* no headers: the generic reader, as before */
    assert_int_equal(m->certainty, FG_CERT_GENERIC);
    assert_string_equal(m->ckpt.where, "");
    fg_model_free(m);
    stage_remove(dir);
}

/* A huggingface_hub cache under root holding repo at commit SNAP, refs/main pointing to it,
 * each file of the snapshot a relative link to its blob, as huggingface_hub writes them. */
static void hf_cache(const char *root, const char *repo)
{
    char staged[64], base[512], p[1024], q[1024];
    stage_repo(repo, stage_tmpdir(staged, sizeof staged));
    const char *slash = strchr(repo, '/');
    snprintf(base, sizeof base, "%s/models--%.*s--%s", root, (int)(slash - repo), repo,
             slash + 1);
    mkdir(base, 0700);
    snprintf(p, sizeof p, "%s/refs", base);
    mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/refs/main", base);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(SNAP, f);
    fclose(f);
    snprintf(p, sizeof p, "%s/blobs", base);
    mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/snapshots", base);
    mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/snapshots/" SNAP, base);
    mkdir(p, 0700);
    DIR *d = opendir(staged);
    assert_non_null(d);
    int blob = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(p, sizeof p, "%s/%s", staged, e->d_name);
        snprintf(q, sizeof q, "%s/blobs/blob%d", base, blob);
        assert_int_equal(rename(p, q), 0);
        snprintf(p, sizeof p, "%s/snapshots/" SNAP "/%s", base, e->d_name);
        snprintf(q, sizeof q, "../../blobs/blob%d", blob++);
        assert_int_equal(symlink(q, p), 0);
    }
    closedir(d);
    stage_remove(staged);
}

static void fg_model_load_id_should_read_the_headers_of_an_hf_cache_snapshot(void **state)
{
    (void)state;
    char root[64];
    struct fg_source_opts o;
    struct fg_model_id id;
    struct fg_source_result *res = NULL;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    hf_cache(stage_tmpdir(root, sizeof root), EXAONE);
    fg_source_opts_init(&o);
    o.offline = true; /* nothing but the cache: the hub is never asked */
    snprintf(o.hf_cache, sizeof o.hf_cache, "%s", root);
    assert_int_equal(fg_source_set_order(&o, "hf-cache", &err), 0);
    assert_int_equal(fg_source_parse_id(EXAONE, &id, &err), 0);
    int rc = fg_model_load_id(&o, &id, EXAONE, true, &m, &res, &err);
    if (rc)
        print_message("%s\n", err.detail);
    assert_int_equal(rc, 0);
    assert_int_equal(res->kind, FG_SRC_HF_CACHE);
    assert_string_equal(m->reader, "checkpoint tensors");
    assert_int_equal(m->params_total, 7818448896ull);
    assert_non_null(strstr(m->ckpt.where, "snapshots/" SNAP));
    fg_model_free(m);
    fg_source_result_free(res);
    stage_remove(root);
}

static void fg_model_load_id_should_read_the_headers_in_a_site_model_directory(void **state)
{
    (void)state;
    char root[64], dir[128];
    struct fg_source_opts o;
    struct fg_model_id id;
    struct fg_source_result *res = NULL;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    /* ModelDirs= / FITGATE_MODEL_DIRS in the org--name layout */
    stage_tmpdir(root, sizeof root);
    snprintf(dir, sizeof dir, "%s/LGAI-EXAONE--EXAONE-3.0-7.8B-Instruct", root);
    stage_repo(EXAONE, dir);
    fg_source_opts_init(&o);
    o.offline = true;
    assert_int_equal(fg_source_add_site_dirs(&o, root, &err), 0);
    assert_int_equal(fg_source_set_order(&o, "site", &err), 0);
    assert_int_equal(fg_source_parse_id(EXAONE, &id, &err), 0);
    assert_int_equal(fg_model_load_id(&o, &id, EXAONE, true, &m, &res, &err), 0);
    assert_int_equal(res->kind, FG_SRC_SITE_DIR);
    assert_string_equal(m->reader, "checkpoint tensors");
    assert_non_null(strstr(m->ckpt.where, dir));
    fg_model_free(m);
    fg_source_result_free(res);
    stage_remove(root);
}

/* Add n tensors (a block past the class's) to dir/model.safetensors: its header rewritten,
 * the data part grown by their bytes (sparse). */
static uint64_t add_block(const char *dir, int layer, uint64_t hidden, uint64_t inter)
{
    char p[256], *text = NULL;
    size_t len = 0;
    unsigned char pre[8];
    snprintf(p, sizeof p, "%s/model.safetensors", dir);
    FILE *f = fopen(p, "rb");
    assert_non_null(f);
    assert_int_equal(fread(pre, 1, 8, f), 8);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = n << 8 | pre[i];
    text = calloc(1, n + 1);
    assert_int_equal(fread(text, 1, n, f), n);
    fclose(f);
    cJSON *h = cJSON_Parse(text), *t;
    uint64_t end = 0, added = 0;
    cJSON_ArrayForEach(t, h) {
        cJSON *o = cJSON_GetObjectItem(t, "data_offsets");
        if (o && (uint64_t)cJSON_GetArrayItem(o, 1)->valuedouble > end)
            end = (uint64_t)cJSON_GetArrayItem(o, 1)->valuedouble;
    }
    static const char *const mods[] = {"mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"};
    for (int i = 0; i < 3; i++) {
        char name[96];
        snprintf(name, sizeof name, "model.layers.%d.%s.weight", layer, mods[i]);
        cJSON *e = cJSON_AddObjectToObject(h, name);
        double sh[2] = {(double)(i == 2 ? hidden : inter), (double)(i == 2 ? inter : hidden)};
        cJSON_AddStringToObject(e, "dtype", "BF16");
        cJSON_AddItemToObject(e, "shape", cJSON_CreateDoubleArray(sh, 2));
        double off[2] = {(double)end, (double)(end + 2 * hidden * inter)};
        cJSON_AddItemToObject(e, "data_offsets", cJSON_CreateDoubleArray(off, 2));
        end += 2 * hidden * inter;
        added += hidden * inter;
    }
    char *out = cJSON_PrintUnformatted(h);
    len = strlen(out);
    for (int i = 0; i < 8; i++)
        pre[i] = (unsigned char)((uint64_t)len >> (8 * i));
    f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(pre, 1, 8, f), 8);
    assert_int_equal(fwrite(out, 1, len, f), len);
    fclose(f);
    assert_int_equal(truncate(p, (off_t)(8 + len + end)), 0);
    free(out);
    free(text);
    cJSON_Delete(h);
    return added;
}

static void fg_model_weigh_checkpoint_should_name_what_is_stored_and_not_loaded(void **state)
{
    (void)state;
    char dir[64];
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    stage_repo(SMOL, stage_tmpdir(dir, sizeof dir));
    /* SmolLM2-135M: 30 blocks; a 31st MLP stored past them, as GLM-4.5's MTP layer is */
    uint64_t extra = add_block(dir, 30, 576, 1536);
    assert_int_equal(fg_model_load(dir, &m, &err), 0);
    uint64_t graph = m->params_total;
    assert_int_equal(fg_model_weigh_checkpoint(m, dir), 0);
    assert_int_equal(m->params_checkpoint, graph + extra);
    assert_true((double)extra / (double)graph > 0.01); /* past the tolerance alone */
    assert_int_equal(m->certainty, FG_CERT_CHECKPOINT);
    assert_non_null(strstr(m->ckpt.unused, "blocks 30-30 under 'model.layers.', beyond the 30"));
    assert_true(has_note(m, "stored but not loaded"));
    fg_model_free(m);
    stage_remove(dir);
}

/* A model directory whose safetensors file is no safetensors file: the graph's count stands,
 * and a note says the checkpoint was not read (not passed over in silence). */
static void load_path_should_note_a_malformed_header_it_could_not_read(void **state)
{
    (void)state;
    char dir[64], p[128];
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    stage_repo(SMOL, stage_tmpdir(dir, sizeof dir));
    snprintf(p, sizeof p, "%s/model.safetensors", dir);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    static const unsigned char bad[] = {16, 0, 0, 0, 0, 0, 0, 0, '{', '"', 'x', '"', ':', 'n',
                                        'o', 't', ' ', 'j', 's', 'o', 'n', ' ', ' ', ' '};
    assert_int_equal(fwrite(bad, 1, sizeof bad, f), sizeof bad);
    fclose(f);
    assert_int_equal(fg_model_load_path(dir, &m, &err), 0);
    assert_int_equal(m->params_checkpoint, 0);
    assert_true(has_note(m, "checkpoint not read, the graph's count stands: model.safetensors: "
                            "header is not a JSON object"));
    fg_model_free(m);
    stage_remove(dir);
}

/* A header past safetensors.h's bounds is the job's to fix (FG_E_LIMIT), refused before it is
 * parsed: by its length, or by the objects it holds. */
static void load_path_should_refuse_a_header_past_the_bounds(void **state)
{
    (void)state;
    char dir[64], p[128];
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    stage_repo(SMOL, stage_tmpdir(dir, sizeof dir));
    snprintf(p, sizeof p, "%s/model.safetensors", dir);
    /* 100 MiB announced: not read at all */
    uint64_t n = 100u << 20;
    unsigned char len[8];
    for (int i = 0; i < 8; i++)
        len[i] = (unsigned char)(n >> (8 * i));
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(len, 1, 8, f), 8);
    fclose(f);
    assert_int_equal(truncate(p, (off_t)(8 + n)), 0);
    assert_int_equal(fg_model_load_path(dir, &m, &err), FG_E_LIMIT);
    assert_null(m);
    assert_non_null(strstr(err.detail, "a header of 104857600 bytes, more than a model's "
                                       "checkpoint holds (64 MiB"));
    /* 200,002 tensors in 8 MB (with the header object, two past the bound): counted, not parsed */
    size_t cap = (size_t)FG_ST_MAX_TENSORS * 40 + 64, o = 1;
    char *h = malloc(cap);
    assert_non_null(h);
    h[0] = '{';
    for (unsigned i = 0; i <= FG_ST_MAX_TENSORS + 1; i++)
        o += (size_t)snprintf(h + o, cap - o, "%s\"%u\":{\"dtype\":\"U8\"}", i ? "," : "", i);
    h[o++] = '}';
    n = o;
    for (int i = 0; i < 8; i++)
        len[i] = (unsigned char)(n >> (8 * i));
    f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(len, 1, 8, f), 8);
    assert_int_equal(fwrite(h, 1, o, f), o);
    fclose(f);
    free(h);
    assert_int_equal(fg_model_load_path(dir, &m, &err), FG_E_LIMIT);
    assert_non_null(strstr(err.detail, "a header of 200003 objects (tensors)"));
    stage_remove(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(load_path_should_take_the_tied_head_from_the_checkpoint_names),
        cmocka_unit_test(load_path_should_settle_the_pooler_of_an_unversioned_head_class),
        cmocka_unit_test(load_path_should_count_the_qwen3_embedding_release_without_its_head),
        cmocka_unit_test(load_path_should_drop_the_vision_tower_and_mtp_a_pruned_checkpoint_lacks),
        cmocka_unit_test(
            fg_model_load_path_should_build_an_unread_type_from_the_headers_beside_it),
        cmocka_unit_test(
            fg_model_load_path_should_read_an_unread_type_generically_without_headers),
        cmocka_unit_test(fg_model_load_id_should_read_the_headers_of_an_hf_cache_snapshot),
        cmocka_unit_test(fg_model_load_id_should_read_the_headers_in_a_site_model_directory),
        cmocka_unit_test(fg_model_weigh_checkpoint_should_name_what_is_stored_and_not_loaded),
        cmocka_unit_test(load_path_should_note_a_malformed_header_it_could_not_read),
        cmocka_unit_test(load_path_should_refuse_a_header_past_the_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
