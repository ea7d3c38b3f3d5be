/*
 * test_model_load.c - where a model's checkpoint headers are looked for and what they
 * decide (engine/model_load.c): the model's own directory, a huggingface_hub cache
 * snapshot laid out as huggingface_hub writes it (refs/, snapshots/ links to blobs/), and
 * a checkpoint that stores more than its class loads.  The checkpoints are the loopback
 * hub's real headers (tests/fixtures/hub, staged by ckpt_fixture.h); the hub route itself
 * runs against lighttpd in tests/integration/hub.sh.
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

#include "ckpt_fixture.h"
#include "model_load.h"
#include "source/source.h"
#include "support.h"
#include "util/fileio.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(
            fg_model_load_path_should_build_an_unread_type_from_the_headers_beside_it),
        cmocka_unit_test(
            fg_model_load_path_should_read_an_unread_type_generically_without_headers),
        cmocka_unit_test(fg_model_load_id_should_read_the_headers_of_an_hf_cache_snapshot),
        cmocka_unit_test(fg_model_load_id_should_read_the_headers_in_a_site_model_directory),
        cmocka_unit_test(fg_model_weigh_checkpoint_should_name_what_is_stored_and_not_loaded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
