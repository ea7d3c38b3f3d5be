/*
 * families.c - the families table behind 'fitgate families' (arch/graph.h): one row per
 * model_type of transformers' three auto-mapping lists that fine-tuning jobs load
 * (MODEL_FOR_CAUSAL_LM_MAPPING_NAMES, MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES,
 * MODEL_FOR_MASKED_LM_MAPPING_NAMES, read from FAMILIES_SOURCE) with its class in each, and
 * one row per type fitgate reads that those lists do not name (remote code, seq2seq, types
 * newer than that tree) with the class its reader follows.  Whether a type has a reader is
 * the registry's answer (arch.c), not a column here; tests/test_arch_families.c compares
 * the table with the vendored lists (tests/fixtures/transformers/) and the registry.
 */
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/graph.h"

#define FAMILIES_SOURCE                                                                   \
    "huggingface/transformers@001002320fa01a489bb9b93976a7e4cd1a46291c "                  \
    "src/transformers/models/auto/modeling_auto.py"

struct family_row {
    const char *model_type;
    const char *clm, *itt, *mlm;  /* class in each mapping list, NULL when not listed */
    const char *other;            /* the class followed, for a type none of them lists */
};

static const struct family_row rows[] = {
    {"RefinedWeb", NULL, NULL, NULL, "RWForCausalLM (remote code)"},
    {"RefinedWebModel", NULL, NULL, NULL, "RWForCausalLM (remote code)"},
    {"afmoe", "AfmoeForCausalLM", NULL, NULL, NULL},
    {"albert", NULL, NULL, "AlbertForMaskedLM", NULL},
    {"apertus", "ApertusForCausalLM", NULL, NULL, NULL},
    {"arcee", "ArceeForCausalLM", NULL, NULL, NULL},
    {"aria", NULL, "AriaForConditionalGeneration", NULL, NULL},
    {"aria_text", "AriaTextForCausalLM", NULL, NULL, NULL},
    {"aya_vision", NULL, "AyaVisionForConditionalGeneration", NULL, NULL},
    {"baichuan", NULL, NULL, NULL, "BaichuanForCausalLM (remote code)"},
    {"bamba", "BambaForCausalLM", NULL, NULL, NULL},
    {"bart", "BartForCausalLM", NULL, "BartForConditionalGeneration", NULL},
    {"bert", "BertLMHeadModel", NULL, "BertForMaskedLM", NULL},
    {"bert-generation", "BertGenerationDecoder", NULL, NULL, NULL},
    {"big_bird", "BigBirdForCausalLM", NULL, "BigBirdForMaskedLM", NULL},
    {"bigbird_pegasus", "BigBirdPegasusForCausalLM", NULL, NULL, NULL},
    {"biogpt", "BioGptForCausalLM", NULL, NULL, NULL},
    {"bitnet", "BitNetForCausalLM", NULL, NULL, NULL},
    {"blenderbot", "BlenderbotForCausalLM", NULL, NULL, NULL},
    {"blenderbot-small", "BlenderbotSmallForCausalLM", NULL, NULL, NULL},
    {"blip", NULL, "BlipForConditionalGeneration", NULL, NULL},
    {"blip-2", NULL, "Blip2ForConditionalGeneration", NULL, NULL},
    {"bloom", "BloomForCausalLM", NULL, NULL, NULL},
    {"blt", "BltForCausalLM", NULL, NULL, NULL},
    {"camembert", "CamembertForCausalLM", NULL, "CamembertForMaskedLM", NULL},
    {"chameleon", NULL, "ChameleonForConditionalGeneration", NULL, NULL},
    {"chatglm", NULL, NULL, NULL, "ChatGLMForConditionalGeneration (remote code)"},
    {"code_llama", "LlamaForCausalLM", NULL, NULL, NULL},
    {"codegen", "CodeGenForCausalLM", NULL, NULL, NULL},
    {"cohere", "CohereForCausalLM", NULL, NULL, NULL},
    {"cohere2", "Cohere2ForCausalLM", NULL, NULL, NULL},
    {"cohere2_vision", NULL, "Cohere2VisionForConditionalGeneration", NULL, NULL},
    {"convbert", NULL, NULL, "ConvBertForMaskedLM", NULL},
    {"cpmant", "CpmAntForCausalLM", NULL, NULL, NULL},
    {"ctrl", "CTRLLMHeadModel", NULL, NULL, NULL},
    {"cwm", "CwmForCausalLM", NULL, NULL, NULL},
    {"data2vec-text", "Data2VecTextForCausalLM", NULL, "Data2VecTextForMaskedLM", NULL},
    {"dbrx", "DbrxForCausalLM", NULL, NULL, NULL},
    {"deberta", NULL, NULL, "DebertaForMaskedLM", NULL},
    {"deberta-v2", NULL, NULL, "DebertaV2ForMaskedLM", NULL},
    {"deepseek", NULL, NULL, NULL, "DeepseekForCausalLM (remote code)"},
    {"deepseek_v2", "DeepseekV2ForCausalLM", NULL, NULL, NULL},
    {"deepseek_v3", "DeepseekV3ForCausalLM", NULL, NULL, NULL},
    {"deepseek_v32", NULL, NULL, NULL, "DeepseekV32ForCausalLM"},
    {"deepseek_vl", NULL, "DeepseekVLForConditionalGeneration", NULL, NULL},
    {"deepseek_vl_hybrid", NULL, "DeepseekVLHybridForConditionalGeneration", NULL, NULL},
    {"diffllama", "DiffLlamaForCausalLM", NULL, NULL, NULL},
    {"distilbert", NULL, NULL, "DistilBertForMaskedLM", NULL},
    {"doge", "DogeForCausalLM", NULL, NULL, NULL},
    {"dots1", "Dots1ForCausalLM", NULL, NULL, NULL},
    {"electra", "ElectraForCausalLM", NULL, "ElectraForMaskedLM", NULL},
    {"emu3", "Emu3ForCausalLM", "Emu3ForConditionalGeneration", NULL, NULL},
    {"ernie", "ErnieForCausalLM", NULL, "ErnieForMaskedLM", NULL},
    {"ernie4_5", "Ernie4_5ForCausalLM", NULL, NULL, NULL},
    {"ernie4_5_moe", "Ernie4_5_MoeForCausalLM", NULL, NULL, NULL},
    {"esm", NULL, NULL, "EsmForMaskedLM", NULL},
    {"evolla", NULL, "EvollaForProteinText2Text", NULL, NULL},
    {"exaone4", "Exaone4ForCausalLM", NULL, NULL, NULL},
    {"falcon", "FalconForCausalLM", NULL, NULL, NULL},
    {"falcon_h1", "FalconH1ForCausalLM", NULL, NULL, NULL},
    {"falcon_mamba", "FalconMambaForCausalLM", NULL, NULL, NULL},
    {"flaubert", NULL, NULL, "FlaubertWithLMHeadModel", NULL},
    {"flex_olmo", "FlexOlmoForCausalLM", NULL, NULL, NULL},
    {"florence2", NULL, "Florence2ForConditionalGeneration", NULL, NULL},
    {"fnet", NULL, NULL, "FNetForMaskedLM", NULL},
    {"funnel", NULL, NULL, "FunnelForMaskedLM", NULL},
    {"fuyu", "FuyuForCausalLM", "FuyuForCausalLM", NULL, NULL},
    {"gemma", "GemmaForCausalLM", NULL, NULL, NULL},
    {"gemma2", "Gemma2ForCausalLM", NULL, NULL, NULL},
    {"gemma3", "Gemma3ForConditionalGeneration", "Gemma3ForConditionalGeneration", NULL, NULL},
    {"gemma3_text", "Gemma3ForCausalLM", NULL, NULL, NULL},
    {"gemma3n", "Gemma3nForConditionalGeneration", "Gemma3nForConditionalGeneration", NULL, NULL},
    {"gemma3n_text", "Gemma3nForCausalLM", NULL, NULL, NULL},
    {"git", "GitForCausalLM", "GitForCausalLM", NULL, NULL},
    {"glm", "GlmForCausalLM", NULL, NULL, NULL},
    {"glm4", "Glm4ForCausalLM", NULL, NULL, NULL},
    {"glm46v", NULL, "Glm46VForConditionalGeneration", NULL, NULL},
    {"glm4_moe", "Glm4MoeForCausalLM", NULL, NULL, NULL},
    {"glm4v", NULL, "Glm4vForConditionalGeneration", NULL, NULL},
    {"glm4v_moe", NULL, "Glm4vMoeForConditionalGeneration", NULL, NULL},
    {"glm_moe_dsa", NULL, NULL, NULL, "GlmMoeDsaForCausalLM"},
    {"got_ocr2", "GotOcr2ForConditionalGeneration", "GotOcr2ForConditionalGeneration", NULL, NULL},
    {"gpt-sw3", "GPT2LMHeadModel", NULL, NULL, NULL},
    {"gpt2", "GPT2LMHeadModel", NULL, NULL, NULL},
    {"gpt_bigcode", "GPTBigCodeForCausalLM", NULL, NULL, NULL},
    {"gpt_neo", "GPTNeoForCausalLM", NULL, NULL, NULL},
    {"gpt_neox", "GPTNeoXForCausalLM", NULL, NULL, NULL},
    {"gpt_neox_japanese", "GPTNeoXJapaneseForCausalLM", NULL, NULL, NULL},
    {"gpt_oss", "GptOssForCausalLM", NULL, NULL, NULL},
    {"gptj", "GPTJForCausalLM", NULL, NULL, NULL},
    {"granite", "GraniteForCausalLM", NULL, NULL, NULL},
    {"granitemoe", "GraniteMoeForCausalLM", NULL, NULL, NULL},
    {"granitemoehybrid", "GraniteMoeHybridForCausalLM", NULL, NULL, NULL},
    {"granitemoeshared", "GraniteMoeSharedForCausalLM", NULL, NULL, NULL},
    {"helium", "HeliumForCausalLM", NULL, NULL, NULL},
    {"hunyuan_v1_dense", "HunYuanDenseV1ForCausalLM", NULL, NULL, NULL},
    {"hunyuan_v1_moe", "HunYuanMoEV1ForCausalLM", NULL, NULL, NULL},
    {"ibert", NULL, NULL, "IBertForMaskedLM", NULL},
    {"idefics", NULL, "IdeficsForVisionText2Text", NULL, NULL},
    {"idefics2", NULL, "Idefics2ForConditionalGeneration", NULL, NULL},
    {"idefics3", NULL, "Idefics3ForConditionalGeneration", NULL, NULL},
    {"instructblip", NULL, "InstructBlipForConditionalGeneration", NULL, NULL},
    {"internlm2", NULL, NULL, NULL, "InternLM2ForCausalLM (remote code)"},
    {"internvl", NULL, "InternVLForConditionalGeneration", NULL, NULL},
    {"jais2", "Jais2ForCausalLM", NULL, NULL, NULL},
    {"jamba", "JambaForCausalLM", NULL, NULL, NULL},
    {"janus", NULL, "JanusForConditionalGeneration", NULL, NULL},
    {"jetmoe", "JetMoeForCausalLM", NULL, NULL, NULL},
    {"kimi_k2", NULL, NULL, NULL, "DeepseekV3ForCausalLM (remote code)"},
    {"kimi_k25", NULL, NULL, NULL, "KimiK25ForConditionalGeneration (remote code)"},
    {"kosmos-2", NULL, "Kosmos2ForConditionalGeneration", NULL, NULL},
    {"kosmos-2.5", NULL, "Kosmos2_5ForConditionalGeneration", NULL, NULL},
    {"layoutlm", NULL, NULL, "LayoutLMForMaskedLM", NULL},
    {"lfm2", "Lfm2ForCausalLM", NULL, NULL, NULL},
    {"lfm2_moe", "Lfm2MoeForCausalLM", NULL, NULL, NULL},
    {"lfm2_vl", NULL, "Lfm2VlForConditionalGeneration", NULL, NULL},
    {"llama", "LlamaForCausalLM", NULL, NULL, NULL},
    {"llama4", "Llama4ForCausalLM", "Llama4ForConditionalGeneration", NULL, NULL},
    {"llama4_text", "Llama4ForCausalLM", NULL, NULL, NULL},
    {"llava", NULL, "LlavaForConditionalGeneration", NULL, NULL},
    {"llava_next", NULL, "LlavaNextForConditionalGeneration", NULL, NULL},
    {"llava_next_video", NULL, "LlavaNextVideoForConditionalGeneration", NULL, NULL},
    {"llava_onevision", NULL, "LlavaOnevisionForConditionalGeneration", NULL, NULL},
    {"longcat_flash", "LongcatFlashForCausalLM", NULL, NULL, NULL},
    {"longformer", NULL, NULL, "LongformerForMaskedLM", NULL},
    {"luke", NULL, NULL, "LukeForMaskedLM", NULL},
    {"mamba", "MambaForCausalLM", NULL, NULL, NULL},
    {"mamba2", "Mamba2ForCausalLM", NULL, NULL, NULL},
    {"marian", "MarianForCausalLM", NULL, NULL, NULL},
    {"mbart", "MBartForCausalLM", NULL, "MBartForConditionalGeneration", NULL},
    {"megatron-bert", "MegatronBertForCausalLM", NULL, "MegatronBertForMaskedLM", NULL},
    {"minicpm", NULL, NULL, NULL, "MiniCPMForCausalLM (remote code)"},
    {"minimax", "MiniMaxForCausalLM", NULL, NULL, NULL},
    {"minimax_m1", NULL, NULL, NULL, "MiniMaxM1ForCausalLM (remote code)"},
    {"minimax_m2", NULL, NULL, NULL, "MiniMaxM2ForCausalLM"},
    {"minimax_text_01", NULL, NULL, NULL, "MiniMaxText01ForCausalLM (remote code)"},
    {"ministral", "MinistralForCausalLM", NULL, NULL, NULL},
    {"ministral3", "Ministral3ForCausalLM", NULL, NULL, NULL},
    {"mistral", "MistralForCausalLM", NULL, NULL, NULL},
    {"mistral3", NULL, "Mistral3ForConditionalGeneration", NULL, NULL},
    {"mixformer-sequential", NULL, NULL, NULL, "MixFormerSequentialForCausalLM (remote code)"},
    {"mixtral", "MixtralForCausalLM", NULL, NULL, NULL},
    {"mllama", "MllamaForCausalLM", "MllamaForConditionalGeneration", NULL, NULL},
    {"mobilebert", NULL, NULL, "MobileBertForMaskedLM", NULL},
    {"modernbert", NULL, NULL, "ModernBertForMaskedLM", NULL},
    {"modernbert-decoder", "ModernBertDecoderForCausalLM", NULL, NULL, NULL},
    {"moshi", "MoshiForCausalLM", NULL, NULL, NULL},
    {"mpnet", NULL, NULL, "MPNetForMaskedLM", NULL},
    {"mpt", "MptForCausalLM", NULL, NULL, NULL},
    {"mra", NULL, NULL, "MraForMaskedLM", NULL},
    {"mt5", NULL, NULL, NULL, "MT5ForConditionalGeneration"},
    {"musicgen", "MusicgenForCausalLM", NULL, NULL, NULL},
    {"musicgen_melody", "MusicgenMelodyForCausalLM", NULL, NULL, NULL},
    {"mvp", "MvpForCausalLM", NULL, "MvpForConditionalGeneration", NULL},
    {"nanochat", "NanoChatForCausalLM", NULL, NULL, NULL},
    {"nemotron", "NemotronForCausalLM", NULL, NULL, NULL},
    {"nemotron_h", NULL, NULL, NULL, "NemotronHForCausalLM"},
    {"nomic_bert", NULL, NULL, NULL, "NomicBertModel (remote code)"},
    {"nystromformer", NULL, NULL, "NystromformerForMaskedLM", NULL},
    {"olmo", "OlmoForCausalLM", NULL, NULL, NULL},
    {"olmo2", "Olmo2ForCausalLM", NULL, NULL, NULL},
    {"olmo3", "Olmo3ForCausalLM", NULL, NULL, NULL},
    {"olmoe", "OlmoeForCausalLM", NULL, NULL, NULL},
    {"openai-gpt", "OpenAIGPTLMHeadModel", NULL, NULL, NULL},
    {"opt", "OPTForCausalLM", NULL, NULL, NULL},
    {"ovis2", NULL, "Ovis2ForConditionalGeneration", NULL, NULL},
    {"paligemma", NULL, "PaliGemmaForConditionalGeneration", NULL, NULL},
    {"pegasus", "PegasusForCausalLM", NULL, NULL, NULL},
    {"perceiver", NULL, NULL, "PerceiverForMaskedLM", NULL},
    {"perception_lm", NULL, "PerceptionLMForConditionalGeneration", NULL, NULL},
    {"persimmon", "PersimmonForCausalLM", NULL, NULL, NULL},
    {"phi", "PhiForCausalLM", NULL, NULL, NULL},
    {"phi3", "Phi3ForCausalLM", NULL, NULL, NULL},
    {"phi4_multimodal", "Phi4MultimodalForCausalLM", NULL, NULL, NULL},
    {"phimoe", "PhimoeForCausalLM", NULL, NULL, NULL},
    {"pix2struct", NULL, "Pix2StructForConditionalGeneration", NULL, NULL},
    {"pixtral", NULL, "LlavaForConditionalGeneration", NULL, NULL},
    {"plbart", "PLBartForCausalLM", NULL, NULL, NULL},
    {"prophetnet", "ProphetNetForCausalLM", NULL, NULL, NULL},
    {"qwen", NULL, NULL, NULL, "QWenLMHeadModel (remote code)"},
    {"qwen2", "Qwen2ForCausalLM", NULL, NULL, NULL},
    {"qwen2_5_vl", NULL, "Qwen2_5_VLForConditionalGeneration", NULL, NULL},
    {"qwen2_moe", "Qwen2MoeForCausalLM", NULL, NULL, NULL},
    {"qwen2_vl", NULL, "Qwen2VLForConditionalGeneration", NULL, NULL},
    {"qwen3", "Qwen3ForCausalLM", NULL, NULL, NULL},
    {"qwen3_5", NULL, NULL, NULL, "Qwen3_5ForConditionalGeneration"},
    {"qwen3_5_moe", NULL, NULL, NULL, "Qwen3_5MoeForConditionalGeneration"},
    {"qwen3_5_moe_text", NULL, NULL, NULL, "Qwen3_5MoeForCausalLM"},
    {"qwen3_5_text", NULL, NULL, NULL, "Qwen3_5ForCausalLM"},
    {"qwen3_moe", "Qwen3MoeForCausalLM", NULL, NULL, NULL},
    {"qwen3_next", "Qwen3NextForCausalLM", NULL, NULL, NULL},
    {"qwen3_vl", NULL, "Qwen3VLForConditionalGeneration", NULL, NULL},
    {"qwen3_vl_moe", NULL, "Qwen3VLMoeForConditionalGeneration", NULL, NULL},
    {"qwen3_vl_moe_text", NULL, NULL, NULL, "Qwen3VLMoeTextModel"},
    {"qwen3_vl_text", NULL, NULL, NULL, "Qwen3VLTextModel"},
    {"recurrent_gemma", "RecurrentGemmaForCausalLM", NULL, NULL, NULL},
    {"reformer", "ReformerModelWithLMHead", NULL, "ReformerForMaskedLM", NULL},
    {"rembert", "RemBertForCausalLM", NULL, "RemBertForMaskedLM", NULL},
    {"roberta", "RobertaForCausalLM", NULL, "RobertaForMaskedLM", NULL},
    {"roberta-prelayernorm", "RobertaPreLayerNormForCausalLM", NULL, "RobertaPreLayerNormForMaskedLM", NULL},
    {"roc_bert", "RoCBertForCausalLM", NULL, "RoCBertForMaskedLM", NULL},
    {"roformer", "RoFormerForCausalLM", NULL, "RoFormerForMaskedLM", NULL},
    {"rwkv", "RwkvForCausalLM", NULL, NULL, NULL},
    {"seed_oss", "SeedOssForCausalLM", NULL, NULL, NULL},
    {"shieldgemma2", NULL, "Gemma3ForConditionalGeneration", NULL, NULL},
    {"smollm3", "SmolLM3ForCausalLM", NULL, NULL, NULL},
    {"smolvlm", NULL, "SmolVLMForConditionalGeneration", NULL, NULL},
    {"squeezebert", NULL, NULL, "SqueezeBertForMaskedLM", NULL},
    {"stablelm", "StableLmForCausalLM", NULL, NULL, NULL},
    {"starcoder2", "Starcoder2ForCausalLM", NULL, NULL, NULL},
    {"t5", NULL, NULL, NULL, "T5ForConditionalGeneration"},
    {"t5gemma2", NULL, "T5Gemma2ForConditionalGeneration", NULL, NULL},
    {"tapas", NULL, NULL, "TapasForMaskedLM", NULL},
    {"trocr", "TrOCRForCausalLM", NULL, NULL, NULL},
    {"udop", NULL, "UdopForConditionalGeneration", NULL, NULL},
    {"umt5", NULL, NULL, NULL, "UMT5ForConditionalGeneration"},
    {"vaultgemma", "VaultGemmaForCausalLM", NULL, NULL, NULL},
    {"video_llama_3", NULL, "VideoLlama3ForConditionalGeneration", NULL, NULL},
    {"vipllava", NULL, "VipLlavaForConditionalGeneration", NULL, NULL},
    {"vision-encoder-decoder", NULL, "VisionEncoderDecoderModel", NULL, NULL},
    {"wav2vec2", NULL, NULL, "Wav2Vec2ForMaskedLM", NULL},
    {"whisper", "WhisperForCausalLM", NULL, NULL, NULL},
    {"xglm", "XGLMForCausalLM", NULL, NULL, NULL},
    {"xlm", "XLMWithLMHeadModel", NULL, "XLMWithLMHeadModel", NULL},
    {"xlm-roberta", "XLMRobertaForCausalLM", NULL, "XLMRobertaForMaskedLM", NULL},
    {"xlm-roberta-xl", "XLMRobertaXLForCausalLM", NULL, "XLMRobertaXLForMaskedLM", NULL},
    {"xlnet", "XLNetLMHeadModel", NULL, NULL, NULL},
    {"xlstm", "xLSTMForCausalLM", NULL, NULL, NULL},
    {"xmod", "XmodForCausalLM", NULL, "XmodForMaskedLM", NULL},
    {"yoso", NULL, NULL, "YosoForMaskedLM", NULL},
    {"zamba", "ZambaForCausalLM", NULL, NULL, NULL},
    {"zamba2", "Zamba2ForCausalLM", NULL, NULL, NULL},
};

const char *fg_families_source(void)
{
    return FAMILIES_SOURCE;
}

static const struct family_row *row_of(const char *model_type)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (!strcmp(rows[i].model_type, model_type))
            return &rows[i];
    return NULL;
}

/* The real config of model_type (arch.h), or NULL. */
static const struct fg__real_config *real_config(const char *model_type)
{
    for (const struct fg__real_config *c = fg__real_configs; c->model_type; c++)
        if (!strcmp(c->model_type, model_type))
            return c;
    return NULL;
}

static void fill(struct fg_family *f, const char *model_type, const struct family_row *r)
{
    const struct fg_arch *a = fg__arch_find(model_type);
    const char *why = fg__family_refused(model_type);
    memset(f, 0, sizeof *f);
    f->model_type = model_type;
    f->reader = a ? a->family : why ? "" : "generic decoder";
    f->certainty = a ? "exact" : why ? "refused" : "generic";
    f->why = a ? NULL : why;
    f->reader_file = a ? a->file : NULL;
    const struct fg__real_config *rc = real_config(model_type);
    f->real_config = rc ? rc->folder : NULL;
    f->real_config_via = rc ? rc->via : NULL;
    f->config_class = fg_config_class(model_type);
    if (r) {
        f->causal_lm = r->clm;
        f->image_text_to_text = r->itt;
        f->masked_lm = r->mlm;
        f->follows = r->clm ? r->clm : r->itt ? r->itt : r->mlm ? r->mlm : r->other;
    }
    if (!f->follows)
        f->follows = "";
}

static int by_type(const void *a, const void *b)
{
    return strcmp(((const struct fg_family *)a)->model_type,
                  ((const struct fg_family *)b)->model_type);
}

int fg_families(struct fg_family **out, size_t *n, struct fg_err *err)
{
    size_t cap = sizeof rows / sizeof rows[0];
    for (size_t i = 0; fg__family_refused_at(i); i++)
        cap++;
    for (size_t i = 0; fg__arch_at(i); i++)
        cap++;
    struct fg_family *v = calloc(cap, sizeof *v);
    *out = NULL;
    *n = 0;
    if (!v)
        return fg_err_set(err, FG_E_NOMEM, "out of memory listing the families");
    size_t k = 0;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        fill(&v[k++], rows[i].model_type, &rows[i]);
    for (size_t i = 0; fg__family_refused_at(i); i++)
        if (!row_of(fg__family_refused_at(i)))
            fill(&v[k++], fg__family_refused_at(i), NULL);
    /* a reader's type the table lacks still shows, with no class (the test asks for one) */
    for (size_t i = 0; fg__arch_at(i); i++)
        if (!row_of(fg__arch_at(i)->model_type) && !fg__family_refused(fg__arch_at(i)->model_type))
            fill(&v[k++], fg__arch_at(i)->model_type, NULL);
    qsort(v, k, sizeof *v, by_type);
    *out = v;
    *n = k;
    return 0;
}
