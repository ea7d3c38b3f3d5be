/*
 * fuzz_safetensors.c - libFuzzer target: a safetensors file's start (the
 * 8-byte little-endian header length, then the JSON header) ->
 * fg_safetensors_header_len -> fg_safetensors_parse_header, once with the
 * data size unknown and once with the data part the input implies, then
 * fg_safetensors_compare against a small Llama graph built at start-up.
 *
 * Seeds: the header-only safetensors files of tests/fixtures/hub (tests/fuzz/run.sh).
 * Checks: the sanitizers, fuzz.h's error contract, the length stays in the input.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "arch/graph.h"
#include "source/config.h"
#include "fuzz.h"
#include "model/model.h"
#include "source/safetensors.h"

static struct fg_model *model;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_log_init();
    static const char cfg[] =
        "{\"model_type\": \"llama\", \"hidden_size\": 64, \"intermediate_size\": 128,"
        " \"num_hidden_layers\": 2, \"num_attention_heads\": 4, \"num_key_value_heads\": 2,"
        " \"vocab_size\": 1000, \"max_position_embeddings\": 512, \"tie_word_embeddings\": false}";
    struct fg_config *doc = NULL;
    struct fg_err err = {0};
    if (fg_config_parse(cfg, sizeof cfg - 1, "fuzz", &doc, &err) ||
        fg_model_from_config(doc, "fuzz/tiny", &model, &err))
        fuzz_fail("cannot build the comparison model", err.detail);
    fg_config_free(doc);
    return 0;
}

static void compare(const struct fg_st_summary *s)
{
    struct fg_st_compare c;
    struct fg_err err = {0};
    int rc = fg_safetensors_compare(s, model, &c, &err);
    fuzz_check_rc(rc, &err);
    for (size_t i = 0; !rc && i < c.n_findings && i < FG_ST_MAX_FINDINGS; i++)
        fuzz_check_text("compare finding", c.findings[i], sizeof c.findings[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 8)
        return 0;
    uint64_t len = 0;
    struct fg_err err = {0};
    int rc = fg_safetensors_header_len(data, size, size, "fuzz.safetensors", &len, &err);
    fuzz_check_rc(rc, &err);
    if (rc)
        return 0;
    if (len > size - 8)
        fuzz_fail("header length past the input", "");
    struct fg_st_summary s;
    for (int pass = 0; pass < 2; pass++) {
        memset(&s, 0, sizeof s);
        uint64_t data_size = pass ? size - 8 - len : 0;
        rc = fg_safetensors_parse_header((const char *)data + 8, (size_t)len, data_size,
                                         "fuzz.safetensors", &s, &err);
        fuzz_check_rc(rc, &err);
        if (!rc) {
            s.files = s.headers_read = 1;
            s.headers = true;
            for (int g = 0; g < FG_ST_GROUP_COUNT; g++)
                fuzz_check_text("tensor name example", s.example[g], sizeof s.example[g]);
            compare(&s);
        }
    }
    /* the index-only view: counts from metadata, no headers */
    memset(&s, 0, sizeof s);
    s.has_index = true;
    s.index_total_size = len * 1000003u;
    s.index_total_params = size;
    snprintf(s.no_headers, sizeof s.no_headers, "fuzz: index only");
    compare(&s);
    return 0;
}
