/*
 * test_arch_legacy.c - the legacy decoder readers (engine/arch/decoder/gpt2_bloom_falcon.c:
 * gpt2, gptj, bloom, falcon, phi, mixformer-sequential, chatglm, qwen) and
 * the encoder / encoder-decoder readers (engine/arch/encoder/bert_family.c: bert,
 * nomic_bert, t5, whisper): graph shape on the configs of
 * tests/fixtures/models, the stored-buffer and checkpoint rules, and the
 * errors bad values get.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support.h"
#include <stdio.h>
#include <string.h>

#include "source/config.h"
#include "model/model.h"

#define FIXTURES "tests/fixtures/models/"

static const struct fg_node *node_named(const struct fg_model *m, const char *name)
{
    for (size_t i = 0; i < m->n_nodes; i++)
        if (strcmp(m->nodes[i].name, name) == 0)
            return &m->nodes[i];
    return NULL;
}

/* ---- legacy decoders ------------------------------------------------------ */

static void gpt2_reader_should_store_causal_masks_as_attention_buffers(void **state)
{
    (void)state;
    struct fg_model *m = load(FIXTURES "openai-community--gpt2");
    assert_non_null(rule_with(m, "attn.bias"));
    assert_int_equal(m->params_buffers, 12ull * 1024 * 1024);
    for (size_t i = 0; i < m->n_nodes; i++)
        if (m->nodes[i].kind == FG_NODE_ATTN)
            assert_int_equal(m->nodes[i].buffers, 1024ull * 1024);
    /* learned wpe, tied lm_head not stored */
    const struct fg_node *pos = node_named(m, "Position embedding");
    assert_non_null(pos);
    assert_int_equal(pos->kind, FG_NODE_POS_EMBED);
    assert_int_equal(pos->params, 1024ull * 768);
    assert_true(m->tied);
    assert_int_equal(fg_model_params_of(m, FG_NODE_HEAD), 0);
    assert_int_equal(m->params_total, 137022720ull);
    assert_int_equal(m->params_total - m->params_buffers, 124439808ull);
    fg_model_free(m);
}

static void gpt2_reader_should_name_the_keys_when_heads_do_not_divide(void **state)
{
    (void)state;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    int rc = build("{\"model_type\":\"gpt2\",\"n_embd\":770,\"n_head\":12}", &m, &err);
    assert_int_equal(rc, FG_E_RANGE);
    assert_null(m);
    assert_non_null(strstr(err.detail, "'n_embd'"));
    assert_non_null(strstr(err.detail, "'n_head'"));
}

static void gpt2_reader_should_reject_cross_attention(void **state)
{
    (void)state;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    int rc = build("{\"model_type\":\"gpt2\",\"add_cross_attention\":true}", &m, &err);
    assert_int_equal(rc, FG_E_UNSUPPORTED);
    assert_non_null(strstr(err.detail, "add_cross_attention"));
}

static void falcon_reader_should_use_kv_heads_and_two_norms_in_new_architecture(void **state)
{
    (void)state;
    struct fg_model *m = load(FIXTURES "tiiuae--falcon-180B-chat");
    assert_int_equal(m->kv_heads, 8);
    assert_int_equal(m->head_dim, 64);
    /* ln_attn + ln_mlp per layer, plus ln_f */
    assert_int_equal(count_kind(m, FG_NODE_NORM), 2 * 80 + 1);
    const struct fg_node *a = node_named(m, "Attention_1");
    assert_non_null(a);
    assert_int_equal(lin(a, "qkv")->out, (232 + 2 * 8) * 64);
    /* tied by default, lm_head still written */
    assert_true(m->tied);
    assert_int_equal(fg_model_params_of(m, FG_NODE_HEAD), 65024ull * 14848);
    assert_int_equal(m->params_total, 179522565120ull);
    fg_model_free(m);
}

static void falcon_reader_should_use_one_kv_head_for_old_multi_query(void **state)
{
    (void)state;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    /* FalconConfig defaults: falcon-7b, multi_query, one input_layernorm. */
    assert_int_equal(build("{\"model_type\":\"falcon\"}", &m, &err), 0);
    assert_int_equal(m->kv_heads, 1);
    assert_int_equal(count_kind(m, FG_NODE_NORM), 32 + 1);
    assert_int_equal(m->params_total, 6921720704ull + 65024ull * 4544);
    fg_model_free(m);

    /* The remote-code spellings: RefinedWebModel = old, RefinedWeb = new layout. */
    assert_int_equal(build("{\"model_type\":\"RefinedWebModel\",\"n_head\":71,"
                           "\"n_layer\":32}", &m, &err), 0);
    assert_int_equal(m->params_total, 7217189760ull);
    fg_model_free(m);
    assert_int_equal(build("{\"model_type\":\"RefinedWeb\",\"hidden_size\":8192,"
                           "\"n_head\":128,\"n_head_kv\":8,\"n_layer\":60}", &m, &err), 0);
    assert_int_equal(m->kv_heads, 8);
    assert_int_equal(m->params_total, 41835970560ull); /* falcon-40b index total_size / 2 */
    fg_model_free(m);
}

static void bloom_reader_should_norm_the_embedding_and_have_no_positions(void **state)
{
    (void)state;
    struct fg_model *m = load(FIXTURES "bigscience--bloomz-560m");
    assert_non_null(node_named(m, "Embedding norm"));
    assert_int_equal(count_kind(m, FG_NODE_POS_EMBED), 0);
    assert_int_equal(m->hidden, 1024);
    assert_int_equal(m->inter, 4096);
    assert_int_equal(m->params_total, 559214592ull);
    fg_model_free(m);
}

static void qwen_reader_should_split_intermediate_size_into_two_branches(void **state)
{
    (void)state;
    struct fg_model *m = load(FIXTURES "Qwen--Qwen-72B");
    assert_int_equal(m->inter, 24576);
    const struct fg_node *f = node_named(m, "MLP_1");
    assert_non_null(f);
    assert_int_equal(lin(f, "gate")->out, 24576);
    assert_int_equal(lin(f, "up")->out, 24576);
    assert_int_equal(m->params_total, 72287920128ull);
    fg_model_free(m);

    struct fg_err err = {0};
    assert_int_equal(build("{\"model_type\":\"qwen\",\"intermediate_size\":22017}", &m, &err),
                     FG_E_RANGE);
    assert_non_null(strstr(err.detail, "intermediate_size"));
}

static void chatglm_reader_should_store_rotary_inv_freq(void **state)
{
    (void)state;
    struct fg_model *m = load(FIXTURES "THUDM--chatglm3-6b");
    assert_int_equal(m->params_buffers, 32);
    assert_int_equal(m->kv_heads, 2);
    assert_int_equal(m->vocab, 65024);
    const struct fg_node *a = node_named(m, "Attention_1");
    assert_int_equal(lin(a, "qkv")->out, 4096 + 2 * 2 * 128);
    assert_false(m->tied);
    assert_int_equal(m->params_total, 6243584000ull + 32);
    fg_model_free(m);
}

static void mixformer_reader_should_count_like_phi(void **state)
{
    (void)state;
    struct fg_model *mix = load(FIXTURES "microsoft--phi-2");
    struct fg_model *phi = NULL;
    struct fg_err err = {0};
    assert_int_equal(build("{\"model_type\":\"phi\",\"hidden_size\":2560,\"intermediate_size\":"
                           "10240,\"num_hidden_layers\":32,\"num_attention_heads\":32,"
                           "\"vocab_size\":51200}", &phi, &err), 0);
    assert_int_equal(mix->params_total, 2779683840ull);
    assert_int_equal(phi->params_total, mix->params_total);
    fg_model_free(phi);
    fg_model_free(mix);

    struct fg_model *m = NULL;
    assert_int_equal(build("{\"model_type\":\"mixformer-sequential\",\"architecture\":"
                           "{\"block_cls\":\"sequential\"}}", &m, &err), FG_E_UNSUPPORTED);
    assert_non_null(strstr(err.detail, "architecture.block_cls"));
}

static void legacy_readers_should_read_every_fixture_of_their_types(void **state)
{
    (void)state;
    static const char *const dirs[] = {
        "openai-community--gpt2-large", "bigscience--bloom", "EleutherAI--gpt-j-6b",
        "BAAI--bge-large-zh-v1.5", "Xenova--whisper-tiny.en", NULL};
    for (int i = 0; dirs[i]; i++) {
        char path[256];
        snprintf(path, sizeof path, FIXTURES "%s", dirs[i]);
        struct fg_model *m = load(path);
        assert_false(m->generic);
        assert_true(m->params_total > 0);
        fg_model_free(m);
    }
}

/* ---- encoders ------------------------------------------------------------- */

static void nomic_bert_reader_should_put_moe_on_odd_layers(void **state)
{
    (void)state;
    struct fg_model *m = load(FIXTURES "nomic-ai--nomic-embed-text-v2-moe");
    assert_int_equal(count_kind(m, FG_NODE_MOE), 6);
    assert_int_equal(count_kind(m, FG_NODE_MLP), 6);
    assert_int_equal(count_kind(m, FG_NODE_HEAD), 0);
    assert_true(m->encoder_only);
    assert_int_equal(m->experts, 8);
    assert_int_equal(m->top_k, 2);
    for (size_t i = 0; i < m->n_nodes; i++) {
        const struct fg_node *n = &m->nodes[i];
        if (n->kind == FG_NODE_ATTN) {
            assert_true(n->bidirectional);
            assert_non_null(lin(n, "qkv"));
        }
        if (n->kind != FG_NODE_MOE)
            continue;
        assert_int_equal(n->layer % 2, 1);
        assert_int_equal(n->experts, 8);
        assert_int_equal(n->top_k, 2);
        assert_int_equal(n->inter, 3072);
        assert_int_equal(n->hidden, 768);
        assert_int_equal(n->width, 768);
        assert_int_equal(n->gated, 0);
        assert_int_equal(lin(n, "router")->out, 8);
        assert_int_equal(lin(n, "up")->count, 8);
        assert_int_equal(lin(n, "down")->in, 3072);
        /* router + 2 x experts x 3072 x 768 + one shared output bias */
        assert_int_equal(n->params, 768ull * 8 + 2ull * 8 * 3072 * 768 + 768);
    }
    assert_non_null(node_named(m, "MoE_2"));
    assert_int_equal(m->params_total, 475292928ull);
    fg_model_free(m);
}

static void bert_reader_should_count_the_stored_pretraining_heads(void **state)
{
    (void)state;
    struct fg_model *m = load(FIXTURES "google-bert--bert-base-uncased");
    assert_true(m->encoder_only);
    assert_non_null(rule_with(m, "pre-training heads"));
    const struct fg_node *h = node_named(m, "MLM head");
    assert_non_null(h);
    assert_int_equal(h->kind, FG_NODE_HEAD);
    assert_int_equal(h->params, 768ull * 768 + 768 + 2 * 768 + 30522);
    assert_int_equal(count_kind(m, FG_NODE_POS_EMBED), 2);
    assert_int_equal(m->params_buffers, 0); /* config written by 5.2.0 */
    assert_int_equal(m->params_total, 110106428ull);
    fg_model_free(m);
}

static void bert_reader_should_take_a_config_from_old_transformers_literally(void **state)
{
    (void)state;
    /* BertModel written by 4.30.0 with its weights: headless, position_ids
     * stored; 325,522,944 matches the 1,302,138,752 B fp32 file exactly. */
    struct fg_model *m = load(FIXTURES "BAAI--bge-large-zh-v1.5");
    assert_non_null(rule_with(m, "position_ids"));
    assert_int_equal(m->params_buffers, 512);
    assert_int_equal(count_kind(m, FG_NODE_HEAD), 0);
    assert_non_null(node_named(m, "Pooler"));
    assert_int_equal(m->params_total, 325522944ull);
    fg_model_free(m);
}

static void bert_reader_should_size_a_classifier_from_id2label(void **state)
{
    (void)state;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(build("{\"model_type\":\"bert\",\"architectures\":"
                           "[\"BertForSequenceClassification\"],\"id2label\":"
                           "{\"0\":\"a\",\"1\":\"b\",\"2\":\"c\"}}", &m, &err), 0);
    assert_null(node_named(m, "MLM head"));
    const struct fg_node *h = node_named(m, "Task head");
    assert_non_null(h);
    assert_int_equal(h->params, 768ull * 3 + 3);
    /* BertModel with pooler + classifier */
    assert_int_equal(m->params_total, 109482240ull + 768 * 3 + 3);
    fg_model_free(m);
}

static void t5_reader_should_share_the_embedding_and_keep_v1_bias_rule(void **state)
{
    (void)state;
    struct fg_model *m = load(FIXTURES "google-t5--t5-small");
    assert_true(m->enc_dec);
    assert_int_equal(count_kind(m, FG_NODE_EMBED), 1);
    assert_int_equal(fg_model_params_of(m, FG_NODE_HEAD), 0);
    const struct fg_rule *r = rule_with(m, "EncDecAttention.relative_attention_bias");
    assert_non_null(r);
    assert_int_equal(r->scalars, 32 * 8);
    size_t enc_attn = 0, cross = 0;
    for (size_t i = 0; i < m->n_nodes; i++) {
        const struct fg_node *n = &m->nodes[i];
        if (n->kind != FG_NODE_ATTN)
            continue;
        if (n->stack == FG_STACK_ENCODER) {
            enc_attn++;
            assert_true(n->bidirectional);
        }
        cross += n->cross;
    }
    assert_int_equal(enc_attn, 6);
    assert_int_equal(cross, 6);
    /* relative_attention_bias in block 0 of each stack */
    assert_int_equal(node_named(m, "Enc.Attention_1")->params, 4ull * 512 * 512 + 32 * 8);
    assert_int_equal(node_named(m, "Attention_2")->params, 4ull * 512 * 512);
    assert_int_equal(m->params_total, 60506880ull);
    fg_model_free(m);

    /* v1.1 layout (flan-t5-small shapes): gated, untied, no extra tensor */
    struct fg_err err = {0};
    assert_int_equal(build("{\"model_type\":\"t5\",\"d_ff\":1024,\"num_layers\":8,\"num_heads\":6,"
                           "\"feed_forward_proj\":\"gated-gelu\",\"tie_word_embeddings\":false}",
                           &m, &err), 0);
    assert_null(rule_with(m, "EncDecAttention"));
    assert_int_equal(m->params_total, 76961152ull);
    fg_model_free(m);

    assert_int_equal(build("{\"model_type\":\"t5\",\"feed_forward_proj\":\"fancy-gelu\"}", &m,
                           &err), FG_E_RANGE);
    assert_non_null(strstr(err.detail, "feed_forward_proj"));
    /* T5Config.__init__'s own ValueError text */
    assert_non_null(strstr(err.detail, "`feed_forward_proj`: fancy-gelu is not a valid "
                                       "activation function of the dense layer"));
}

static void whisper_reader_should_build_enc_dec_with_1500_encoder_positions(void **state)
{
    (void)state;
    struct fg_model *m = load(FIXTURES "NbAiLab--nb-whisper-small-beta");
    assert_true(m->enc_dec);
    assert_false(m->encoder_only);
    assert_int_equal(m->enc_positions, 1500);
    assert_int_equal(m->max_pos, 448);
    assert_int_equal(m->layers, 12);
    const struct fg_node *pos = node_named(m, "Enc.Position embedding");
    assert_non_null(pos);
    assert_int_equal(pos->stack, FG_STACK_ENCODER);
    assert_int_equal(pos->params, 1500ull * 768);
    assert_int_equal(pos->buffers, pos->params);
    assert_non_null(node_named(m, "Enc.Conv stem"));
    size_t cross = 0, enc = 0;
    for (size_t i = 0; i < m->n_nodes; i++) {
        const struct fg_node *n = &m->nodes[i];
        if (n->kind != FG_NODE_ATTN)
            continue;
        /* q, v and out biased, k not */
        assert_int_equal(n->params, 4ull * 768 * 768 + 3 * 768);
        if (n->stack == FG_STACK_ENCODER) {
            enc++;
            assert_true(n->bidirectional);
        } else if (n->cross) {
            cross++;
        }
    }
    assert_int_equal(enc, 12);
    assert_int_equal(cross, 12);
    assert_int_equal(fg_model_params_of(m, FG_NODE_HEAD), 0);
    assert_int_equal(m->params_total, 241734912ull);
    fg_model_free(m);
}

static void whisper_reader_should_name_the_keys_when_heads_do_not_divide(void **state)
{
    (void)state;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    int rc = build("{\"model_type\":\"whisper\",\"d_model\":384,\"encoder_attention_heads\":7}",
                   &m, &err);
    assert_int_equal(rc, FG_E_RANGE);
    assert_non_null(strstr(err.detail, "'d_model'"));
    assert_non_null(strstr(err.detail, "'encoder_attention_heads'"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gpt2_reader_should_store_causal_masks_as_attention_buffers),
        cmocka_unit_test(gpt2_reader_should_name_the_keys_when_heads_do_not_divide),
        cmocka_unit_test(gpt2_reader_should_reject_cross_attention),
        cmocka_unit_test(falcon_reader_should_use_kv_heads_and_two_norms_in_new_architecture),
        cmocka_unit_test(falcon_reader_should_use_one_kv_head_for_old_multi_query),
        cmocka_unit_test(bloom_reader_should_norm_the_embedding_and_have_no_positions),
        cmocka_unit_test(qwen_reader_should_split_intermediate_size_into_two_branches),
        cmocka_unit_test(chatglm_reader_should_store_rotary_inv_freq),
        cmocka_unit_test(mixformer_reader_should_count_like_phi),
        cmocka_unit_test(legacy_readers_should_read_every_fixture_of_their_types),
        cmocka_unit_test(nomic_bert_reader_should_put_moe_on_odd_layers),
        cmocka_unit_test(bert_reader_should_count_the_stored_pretraining_heads),
        cmocka_unit_test(bert_reader_should_take_a_config_from_old_transformers_literally),
        cmocka_unit_test(bert_reader_should_size_a_classifier_from_id2label),
        cmocka_unit_test(t5_reader_should_share_the_embedding_and_keep_v1_bias_rule),
        cmocka_unit_test(whisper_reader_should_build_enc_dec_with_1500_encoder_positions),
        cmocka_unit_test(whisper_reader_should_name_the_keys_when_heads_do_not_divide),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
