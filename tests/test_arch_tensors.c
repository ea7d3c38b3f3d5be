/*
 * test_arch_tensors.c - a model's structure from its checkpoint's tensors
 * (engine/arch/tensors.c), on real safetensors headers: the loopback hub's checkpoints
 * (tests/fixtures/hub: granite-7b-lab's three shards, EXAONE-3.0-7.8B) and WizardLM-2-8x22B's
 * published weight_map (tests/fixtures/models) with its config's shapes.  Where a family
 * reader exists, the tensors' structure must equal it, estimate included: the reader is
 * the reference the route is held to.
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

#include "arch/tensors.h"
#include "ckpt_fixture.h"
#include "job/job.h"
#include "memory/memory.h"
#include "model/model_int.h"
#include "source/safetensors.h"
#include "source/source.h"
#include "support.h"
#include "util/fileio.h"

#define EXAONE "LGAI-EXAONE/EXAONE-3.0-7.8B-Instruct"
#define GRANITE "instructlab/granite-7b-lab"
#define WIZARD "tests/fixtures/models/microsoft--WizardLM-2-8x22B"

/* A staged checkout of repo (ckpt_fixture.h) scanned with its rows into l; the directory
 * is left in dir for the caller to read its config from and remove. */
static void scan_staged(const char *repo, char *dir, size_t cap, struct fg_st_layout *l)
{
    struct fg_source_opts o;
    struct fg_source_repo *r = NULL;
    struct fg_st_scan_opts so = {.layout = l};
    struct fg_st_summary s;
    struct fg_err err = {0};
    stage_repo(repo, stage_tmpdir(dir, cap));
    fg_source_opts_init(&o);
    o.offline = true;
    assert_int_equal(fg_source_repo_open(&o, dir, NULL, &r, &err), 0);
    assert_int_equal(fg_safetensors_scan_with(r, &so, &s, &err), 0);
    assert_true(s.headers);
    fg_source_repo_free(r);
}

/* The tensors' model of l under the config at path (its model_type kept: the route is run
 * on its own, whatever reader the type has). */
static struct fg_model *from_rows(const char *path, const struct fg_st_layout *l)
{
    struct fg_config *doc = NULL;
    struct fg_err err = {0};
    assert_int_equal(fg_config_load(path, &doc, &err), 0);
    struct fg_cfg root = fg_config_root(doc);
    struct fg_model *m = calloc(1, sizeof *m);
    assert_non_null(m);
    snprintf(m->model_type, sizeof m->model_type, "test");
    int rc = fg__arch_read_tensors(&root, m, l, &err);
    if (!rc)
        rc = fg__model_finalize(m, &err);
    if (rc)
        print_message("%s\n", err.detail);
    assert_int_equal(rc, 0);
    fg_config_free(doc);
    return m;
}

static struct fg_estimate est(const struct fg_model *m, enum fg_mode mode)
{
    struct fg_job j;
    struct fg_estimate e;
    struct fg_err err = {0};
    fg_job_defaults(&j, mode);
    j.seq_len = 2048;
    if (fg_memory_estimate(m, &j, &e, &err))
        fail_msg("estimate: %s", err.detail);
    return e;
}

/* The structure the activations and LoRA need, equal in both models. */
static void same_structure(const struct fg_model *t, const struct fg_model *r,
                           enum fg_mode last)
{
    assert_int_equal(t->params_total, r->params_total);
    assert_int_equal(t->hidden, r->hidden);
    assert_int_equal(t->vocab, r->vocab);
    assert_int_equal(fg_model_main_layers(t), fg_model_main_layers(r));
    const struct fg_node *ta = first_of(t, FG_NODE_ATTN), *ra = first_of(r, FG_NODE_ATTN);
    assert_non_null(ta);
    assert_int_equal(ta->heads, ra->heads);
    assert_int_equal(ta->kv_heads, ra->kv_heads);
    assert_int_equal(ta->head_dim, ra->head_dim);
    for (enum fg_mode mode = FG_MODE_FULL; mode <= last; mode++) {
        struct fg_estimate a = est(t, mode), b = est(r, mode);
        print_message("mode %d: tensors %llu B, reader %llu B\n", (int)mode,
                      (unsigned long long)a.total_bytes, (unsigned long long)b.total_bytes);
        assert_int_equal(a.act_per_token_layer_max, b.act_per_token_layer_max);
        assert_int_equal(a.adapter_params, b.adapter_params);
        assert_int_equal(a.total_bytes, b.total_bytes);
    }
}

static void fg__arch_read_tensors_should_rebuild_the_llama_readers_structure(void **state)
{
    (void)state;
    char dir[64], cfg[96];
    struct fg_st_layout l;
    fg_st_layout_init(&l);
    scan_staged(GRANITE, dir, sizeof dir, &l);
    snprintf(cfg, sizeof cfg, "%s/config.json", dir);
    struct fg_model *t = from_rows(cfg, &l), *r = load(cfg);
    assert_int_equal(t->certainty, FG_CERT_CHECKPOINT);
    assert_string_equal(t->reader, "checkpoint tensors");
    assert_int_equal(t->params_total, 6738481152ull); /* the index's total_size / 2 */
    same_structure(t, r, FG_MODE_LORA);
    const struct fg_node *mlp = first_of(t, FG_NODE_MLP);
    assert_true(mlp->gated);
    assert_int_equal(mlp->inter, 11008);
    fg_model_free(t);
    fg_model_free(r);
    fg_st_layout_free(&l);
    stage_remove(dir);
}

static void fg__arch_read_tensors_should_read_a_type_only_this_route_reads(void **state)
{
    (void)state;
    char dir[64], cfg[96];
    struct fg_st_layout l;
    fg_st_layout_init(&l);
    scan_staged(EXAONE, dir, sizeof dir, &l);
    snprintf(cfg, sizeof cfg, "%s/config.json", dir);
    struct fg_model *t = from_rows(cfg, &l);
    assert_int_equal(t->certainty, FG_CERT_CHECKPOINT);
    /* the sum of ExaoneForCausalLM's printed module shapes (PROVENANCE.txt) */
    assert_int_equal(t->params_total, 7818448896ull);
    assert_int_equal(fg_model_main_layers(t), 32);
    const struct fg_node *a = first_of(t, FG_NODE_ATTN), *mlp = first_of(t, FG_NODE_MLP);
    assert_int_equal(a->heads, 32);
    assert_int_equal(a->kv_heads, 8);
    assert_int_equal(a->head_dim, 128);
    assert_int_equal(mlp->inter, 14336);
    assert_true(mlp->gated); /* c_fc_0 / c_fc_1 / c_proj */
    assert_false(t->tied);   /* lm_head.weight is stored */
    assert_true(has_note(t, "read from the checkpoint's 291 tensors: no family reader"));
    assert_true(has_note(t, "taken from config.json: num_attention_heads 32 num_key_value_heads 8"));
    /* LoRA reaches its seven linears per block */
    struct fg_estimate e = est(t, FG_MODE_LORA);
    assert_true(e.adapter_params > 0);
    fg_model_free(t);
    fg_st_layout_free(&l);
    stage_remove(dir);
}

/* Mixtral's tensor shapes (MixtralForCausalLM) from the config, for a weight_map name. */
static void mixtral_shape(const cJSON *c, const char *name, uint64_t *sh, size_t *nd)
{
    uint64_t h = (uint64_t)cJSON_GetObjectItem(c, "hidden_size")->valuedouble;
    uint64_t inter = (uint64_t)cJSON_GetObjectItem(c, "intermediate_size")->valuedouble;
    uint64_t heads = (uint64_t)cJSON_GetObjectItem(c, "num_attention_heads")->valuedouble;
    uint64_t kv = (uint64_t)cJSON_GetObjectItem(c, "num_key_value_heads")->valuedouble;
    uint64_t vocab = (uint64_t)cJSON_GetObjectItem(c, "vocab_size")->valuedouble;
    uint64_t e = (uint64_t)cJSON_GetObjectItem(c, "num_local_experts")->valuedouble;
    uint64_t kvw = kv * (h / heads);
    *nd = 2;
    if (strstr(name, "norm")) {
        *nd = 1;
        sh[0] = h;
    } else if (strstr(name, "embed_tokens") || strstr(name, "lm_head")) {
        sh[0] = vocab, sh[1] = h;
    } else if (strstr(name, "k_proj") || strstr(name, "v_proj")) {
        sh[0] = kvw, sh[1] = h;
    } else if (strstr(name, "q_proj") || strstr(name, "o_proj")) {
        sh[0] = h, sh[1] = h;
    } else if (strstr(name, "block_sparse_moe.gate")) {
        sh[0] = e, sh[1] = h;
    } else if (strstr(name, ".w2.")) {
        sh[0] = h, sh[1] = inter;
    } else {
        sh[0] = inter, sh[1] = h; /* w1, w3 */
    }
}

static void fg__arch_read_tensors_should_read_routed_experts_from_per_expert_tensors(
    void **state)
{
    (void)state;
    char *text = NULL, *ctext = NULL;
    size_t len = 0;
    struct fg_st_layout l;
    fg_st_layout_init(&l);
    assert_int_equal(fg__read_file(WIZARD "/model.safetensors.index.json", 1u << 22, &text,
                                   &len), 0);
    assert_int_equal(fg__read_file(WIZARD "/config.json", 1u << 20, &ctext, &len), 0);
    cJSON *idx = cJSON_Parse(text), *cfg = cJSON_Parse(ctext), *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(idx, "weight_map")) {
        uint64_t sh[2];
        size_t nd;
        mixtral_shape(cfg, t->string, sh, &nd);
        assert_int_equal(fg_st_layout_add(&l, t->string, FG_ST_BF16, sh, nd, NULL), 0);
    }
    assert_int_equal(l.tensors, 1739);
    /* the index's total_size / 2: the weight_map and the shapes agree with the release */
    assert_int_equal(fg_st_layout_elements(&l), 140620634112ull);
    struct fg_model *m = from_rows(WIZARD "/config.json", &l), *r = load(WIZARD);
    const struct fg_node *moe = first_of(m, FG_NODE_MOE);
    assert_non_null(moe);
    assert_int_equal(moe->experts, 8);
    assert_int_equal(moe->top_k, 2);
    assert_int_equal(moe->inter, 16384);
    assert_true(has_note(m, "num_experts_per_tok 2"));
    /* LoRA differs on purpose: the checkpoint names one nn.Linear per expert, which a class
     * of its own (remote code) adapts one by one; transformers 5's MixtralExperts fuses them
     * into 3-D parameters, which the mixtral reader follows */
    assert_int_equal(moe->lora_experts, FG_LORA_EXPERTS_LINEAR);
    same_structure(m, r, FG_MODE_FULL);
    fg_model_free(m);
    fg_model_free(r);
    cJSON_Delete(idx);
    cJSON_Delete(cfg);
    free(text);
    free(ctext);
    fg_st_layout_free(&l);
}

/* A config of the given JSON text, written to a temporary file whose path goes to path. */
static void write_cfg(const char *json, char *path, size_t cap, char *dir, size_t dcap)
{
    stage_tmpdir(dir, dcap);
    snprintf(path, cap, "%s/config.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(json, f);
    fclose(f);
}

static void fg__arch_read_tensors_should_count_every_tensor_and_say_what_it_cannot_size(
    void **state)
{
    (void)state;
    char dir[64], cfg[96];
    struct fg_st_layout l;
    fg_st_layout_init(&l);
    /* EXAONE's tensors without the head count config.json gives: counted, not sized */
    scan_staged(EXAONE, dir, sizeof dir, &l);
    stage_remove(dir);
    write_cfg("{\"model_type\": \"exaone\", \"num_layers\": 32}", cfg, sizeof cfg, dir,
              sizeof dir);
    struct fg_model *m = from_rows(cfg, &l);
    assert_int_equal(m->params_total, 7818448896ull);
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    assert_string_equal(m->unsure_key, "checkpoint-structure");
    assert_true(has_note(m, "config.json gives no num_attention_heads"));
    fg_model_free(m);
    fg_st_layout_free(&l);

    /* names with no block index at all: one Other node, the count still exact */
    uint64_t a[2] = {1000, 64}, b[1] = {64};
    assert_int_equal(fg_st_layout_add(&l, "encoder.weight", FG_ST_F32, a, 2, NULL), 0);
    assert_int_equal(fg_st_layout_add(&l, "encoder.bias", FG_ST_F32, b, 1, NULL), 0);
    m = from_rows(cfg, &l);
    assert_int_equal(m->params_total, 64064);
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    assert_true(has_note(m, "no block stack"));
    fg_model_free(m);
    fg_st_layout_free(&l);
    stage_remove(dir);
}

static void fg__tensors_unused_should_name_blocks_past_the_graph_and_towers(void **state)
{
    (void)state;
    char dir[64], cfg[96], why[200];
    uint64_t unused = 0;
    struct fg_st_layout l;
    fg_st_layout_init(&l);
    scan_staged(GRANITE, dir, sizeof dir, &l);
    snprintf(cfg, sizeof cfg, "%s/config.json", dir);
    struct fg_model *r = load(cfg);
    fg__tensors_unused(&l, r, why, sizeof why, &unused);
    assert_int_equal(unused, 0);
    assert_string_equal(why, "");
    /* one block more than the class builds (an MTP layer) and a vision tower's patch stem */
    uint64_t sq[2] = {4096, 4096}, patch[4] = {1024, 3, 14, 14};
    assert_int_equal(fg_st_layout_add(&l, "model.layers.32.self_attn.q_proj.weight", FG_ST_BF16,
                                      sq, 2, NULL), 0);
    assert_int_equal(fg_st_layout_add(&l, "model.vision_tower.patch_embed.proj.weight",
                                      FG_ST_BF16, patch, 4, NULL), 0);
    fg__tensors_unused(&l, r, why, sizeof why, &unused);
    assert_int_equal(unused, 4096ull * 4096 + 1024 * 3 * 14 * 14);
    assert_non_null(strstr(why, "blocks 32-32 under 'model.layers.', beyond the 32"));
    assert_non_null(strstr(why, "vision / audio tower tensors a text-only class does not load"));
    fg_model_free(r);
    fg_st_layout_free(&l);
    stage_remove(dir);
}

static void fg_model_from_tensors_should_leave_a_known_type_to_its_reader(void **state)
{
    (void)state;
    char dir[64], cfg[96];
    struct fg_st_layout l;
    struct fg_config *doc = NULL;
    struct fg_model *m = NULL;
    fg_st_layout_init(&l);
    scan_staged(GRANITE, dir, sizeof dir, &l);
    snprintf(cfg, sizeof cfg, "%s/config.json", dir);
    assert_int_equal(fg_config_load(cfg, &doc, NULL), 0);
    assert_int_equal(fg_model_from_tensors(doc, "g", &l, &m, NULL), 0);
    assert_int_equal(m->certainty, FG_CERT_EXACT); /* llama has a reader: it reads */
    assert_string_not_equal(m->reader, "checkpoint tensors");
    fg_model_free(m);
    fg_config_free(doc);
    fg_st_layout_free(&l);
    stage_remove(dir);
}

static void fg_model_type_known_should_know_readers_and_refusals_only(void **state)
{
    (void)state;
    assert_true(fg_model_type_known("llama"));
    assert_true(fg_model_type_known("timm_wrapper")); /* refused by name */
    assert_false(fg_model_type_known("exaone"));
    assert_false(fg_model_type_known(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fg__arch_read_tensors_should_rebuild_the_llama_readers_structure),
        cmocka_unit_test(fg__arch_read_tensors_should_read_a_type_only_this_route_reads),
        cmocka_unit_test(
            fg__arch_read_tensors_should_read_routed_experts_from_per_expert_tensors),
        cmocka_unit_test(
            fg__arch_read_tensors_should_count_every_tensor_and_say_what_it_cannot_size),
        cmocka_unit_test(fg__tensors_unused_should_name_blocks_past_the_graph_and_towers),
        cmocka_unit_test(fg_model_from_tensors_should_leave_a_known_type_to_its_reader),
        cmocka_unit_test(fg_model_type_known_should_know_readers_and_refusals_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
