/*
 * graph.c - the architecture registry and the graph built from a config
 * (fg_model_from_config, fg_model_load: model.h declares them, model.c
 * holds the graph they fill).  The readers it dispatches to build with the
 * shared blocks of blocks.c; parameter shapes follow the transformers
 * modeling classes named in each reader.
 */
#include "arch/graph.h"
#include "arch/arch.h"
#include "arch/keys.h"
#include "arch/tensors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "source/config_classes.h"
#include "source/wquant.h"
#include "util/classtype.h"
#include "util/fmt.h"
#include "util/log.h"

static const struct fg_arch *const tables[] = {
    fg__arch_decoder_table, fg__arch_moe_table,    fg__arch_legacy_table,
    fg__arch_encoder_table, fg__arch_encdec_table, fg__arch_nomic_table,
    fg__arch_eurobert_table,
    fg__arch_hybrid_table,  fg__arch_mamba_table,  fg__arch_multimodal_table,
    fg__arch_llama4_table,  fg__arch_classic_table, fg__arch_mllama_table,
    fg__arch_enc1_table,    fg__arch_enc1b_table,
    fg__arch_enc2_table,    fg__arch_enc2b_table,  fg__arch_enc2c_table,
    fg__arch_seq_table,     fg__arch_seq_dec_table, fg__arch_seq_mm_table,
    fg__arch_ssm_table,
    fg__arch_vl_table,      fg__arch_vl_glm_table, fg__arch_vl_blip_table,
    fg__arch_vl_aria_table, fg__arch_vl_deepseek_table, fg__arch_vl_kosmos_table,
    fg__arch_vl_idefics_table, fg__arch_vl_janus_table, fg__arch_vl_phi4mm_table,
    fg__arch_vl_ovis_table, fg__arch_vl_evolla_table, fg__arch_vl_gemma4_table,
    fg__arch_vl_fast_vlm_table, fg__arch_vl_ernie_table, fg__arch_vl_minicpm_table,
    fg__arch_dec_table,     fg__arch_dec2_table,    fg__arch_dsv4_table,
    fg__arch_step3p7_table, fg__arch_minimax_m3_table,
};

const struct fg_arch *fg__arch_find(const char *model_type)
{
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
        for (const struct fg_arch *a = tables[t]; a->model_type; a++)
            if (strcmp(a->model_type, model_type) == 0)
                return a;
    return NULL;
}

/* Types config.json cannot size, refused by name instead of read as a generic decoder. */
static const struct {
    const char *model_type, *why;
} refused[] = {
    {"encoder-decoder", "EncoderDecoderModel pairs an encoder and a decoder of any two types "
                        "(encoder / decoder sub-configs): size each part by its own type"},
    {"vision-encoder-decoder", "VisionEncoderDecoderModel pairs a vision encoder and a text "
                               "decoder of any two types (encoder / decoder sub-configs): size "
                               "each part by its own type"},
    {"speech-encoder-decoder", "SpeechEncoderDecoderModel pairs a speech encoder and a text "
                               "decoder of any two types (encoder / decoder sub-configs)"},
    {"timm_wrapper", "TimmWrapperModel builds a timm architecture named by 'architecture': "
                     "its shapes are in timm, not in config.json"},
    {"timm_backbone", "TimmBackbone builds a timm architecture named by 'backbone': its "
                      "shapes are in timm, not in config.json"},
    /* transformers models/gemma3n/modeling_gemma3n.py Gemma3nModel: vision_tower =
     * AutoModel.from_config(vision_config), a TimmWrapperModel */
    {"gemma3n", "Gemma3nForConditionalGeneration's vision tower is the timm model "
                "vision_config.architecture names (mobilenetv5_300m_enc): its shapes are in "
                "timm, not in config.json; the text model alone is model_type gemma3n_text"},
    /* MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES maps pixtral to LlavaForConditionalGeneration,
     * which needs a LlavaConfig: a root of type pixtral is a PixtralVisionConfig alone */
    {"pixtral", "a config of model_type 'pixtral' is PixtralVisionConfig, the vision tower "
                "alone, which LlavaForConditionalGeneration cannot be built from; Pixtral "
                "checkpoints (Pixtral-12B) are model_type 'llava' with a pixtral vision_config, "
                "read by the llava reader"},
    /* PerceptionLMConfig (models/perception_lm/configuration_perception_lm.py): vision_config
     * is a TimmWrapperConfig, the Perception Encoder built by timm */
    {"perception_lm", "PerceptionLMForConditionalGeneration's vision tower is a timm model "
                      "(vision_config is a TimmWrapperConfig naming a timm 'architecture'): its "
                      "shapes are in timm, not in config.json"},
    /* The listed types below have no family reader; each holds parts the generic decoder
     * reader would leave out or misread, so they are refused by name rather than counted. */
    /* MusicgenConfig (models/musicgen/configuration_musicgen.py): text_encoder (T5),
     * audio_encoder (EnCodec) and decoder sub-configs; MusicgenMelodyConfig the same with
     * a chroma conditioning projection */
    {"musicgen", "MusicGen composes a T5 text encoder (text_encoder), the EnCodec audio codec "
                 "(audio_encoder) and a decoder of num_codebooks heads: fitgate has no reader for "
                 "the EnCodec convolution stack or the codebook heads, and a generic count would "
                 "leave them out"},
    {"musicgen_melody", "MusicGen-Melody composes a T5 text encoder, the EnCodec audio codec "
                        "and a decoder with chroma conditioning: fitgate has no reader for "
                        "the codec or the codebook heads, and a generic count would leave "
                        "them out"},
    /* MoshiConfig (models/moshi/configuration_moshi.py): audio_encoder_config (Mimi) and
     * depth_decoder_config beside the temporal transformer */
    {"moshi", "Moshi holds the Mimi audio codec (audio_encoder_config) and a depth decoder "
              "(depth_decoder_config) with per-codebook weights beside its temporal "
              "transformer: fitgate has no reader for either, and a generic count would leave "
              "them out"},
    /* Kosmos2_5Config (models/kosmos2_5): a Pix2Struct-style vision encoder and latent-query
     * projector feeding a Kosmos-2.5 text decoder */
    {"kosmos-2.5", "Kosmos-2.5 joins a Pix2Struct-style vision encoder (vision_config), a "
                   "latent-query projector and its own text decoder (text_config): fitgate has "
                   "no reader for this layout, and a generic count would size the text model "
                   "alone"},
    /* T5Gemma2Config (models/t5gemma2): a Gemma-3 encoder with a SigLIP tower and a decoder
     * whose self- and cross-attention are merged */
    {"t5gemma2", "T5Gemma 2 is a Gemma-3 encoder-decoder with a SigLIP vision tower in the "
                 "encoder and merged self / cross-attention in the decoder: fitgate has no "
                 "reader for it yet, and a generic count would size one stack alone"},
    /* IBertModel (models/ibert/quant_modules.py): QuantLinear / QuantEmbedding / QuantAct
     * register integer weights, scaling factors and activation ranges as buffers */
    {"ibert", "I-BERT stores, beside RoBERTa's weights, the buffers of its quant modules "
              "(QuantLinear weight_integer and scaling factors, QuantAct x_min / x_max ...), "
              "whose set depends on quant_mode and the transformers release that wrote the "
              "file: config.json cannot say what a checkpoint holds"},
};

const char *fg__family_refused(const char *model_type)
{
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        if (!strcmp(refused[i].model_type, model_type))
            return refused[i].why;
    return NULL;
}

const char *fg__family_refused_at(size_t i)
{
    return i < sizeof refused / sizeof refused[0] ? refused[i].model_type : NULL;
}

const struct fg_arch *fg__arch_at(size_t i)
{
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
        for (const struct fg_arch *a = tables[t]; a->model_type; a++)
            if (i-- == 0)
                return a;
    return NULL;
}

/* ---- the graph of a config ---------------------------------------------------- */

int fg_model_from_config(const struct fg_config *doc, const char *id, struct fg_model **out,
                         struct fg_err *err)
{
    return fg__model_from_config(doc, id, false, out, err);
}

/* The checkpoint's quantization (source/wquant.h), for the serving estimate; a scheme
 * fitgate cannot size leaves the weights at the checkpoint dtype (more bytes, never fewer)
 * and says so. */
static void read_wquant(const struct fg_cfg *root, struct fg_model *m)
{
    struct fg_err e = {0};
    if (fg_wquant_read(root, &m->wq, &e)) {
        memset(&m->wq, 0, sizeof m->wq);
        /* the detail opens with the file's path, which can fill a note: keep the key */
        const char *key = strstr(e.detail, "quantization_config");
        fg__model_note(m, "%.100s; served weights counted in the checkpoint dtype",
                       key ? key : e.detail);
    } else if (m->wq.method == FG_WQ_FP8 || m->wq.method == FG_WQ_MXFP4) {
        /* transformers utils/quantization_config.py: FineGrainedFP8Config and Mxfp4Config
         * take dequantize=True, which loads the weights as bf16 for training */
        fg__model_note(m, "%s checkpoint: served so; training loads it as bf16 "
                          "(transformers %s(dequantize=True)), counted so",
                       m->wq.label, m->wq.method == FG_WQ_FP8 ? "FineGrainedFP8Config"
                                                              : "Mxfp4Config");
    }
}

bool fg_model_type_known(const char *model_type)
{
    const char *alias = fg__type_alias(model_type);
    return model_type && (alias || fg__arch_find(model_type) || fg__family_refused(model_type));
}

/* A config.json without model_type: the type its first architectures class stands for
 * (util/classtype.h), as UMT5ForConditionalGeneration.from_pretrained builds its own config
 * class whatever the file says; into buf (n bytes), false (buf "") when the list is absent
 * or no reader has that type, which leaves the file to the generic reader. */
static bool type_of_class(const struct fg_cfg *root, char *buf, size_t n)
{
    const cJSON *a = fg__cfg_raw(root, "architectures");
    const cJSON *c = cJSON_IsArray(a) ? a->child : NULL;
    if (cJSON_IsString(c) && fg__class_type(c->valuestring, buf, n) && fg__arch_find(buf))
        return true;
    buf[0] = '\0';
    return false;
}

/* The i-th type a reader has, for fg__name_type; NULL past the last. */
static const char *reader_type_at(size_t i, const void *ctx)
{
    (void)ctx;
    const struct fg_arch *a = fg__arch_at(i);
    return a ? a->model_type : NULL;
}

/* The graph of doc; for a model_type no reader knows, from the tensors l when given. */
static int build(const struct fg_config *doc, const char *id, bool node_by_node,
                 const struct fg_st_layout *l, struct fg_model **out, struct fg_err *err)
{
    *out = NULL;
    struct fg_cfg root = fg_config_root(doc);
    const char *mt = NULL, *dtype = NULL;
    int rc = fg_cfg_str(&root, "model_type", NULL, &mt, err);
    if (rc)
        return rc;
    char by_class[64] = "", by_name[64] = "";
    const char *name = id ? id : fg_config_origin(doc);
    const char *written = mt, *alias = fg__type_alias(mt); /* root.rules are alias's */
    if (alias)
        mt = alias;
    if (!mt && type_of_class(&root, by_class, sizeof by_class)) {
        mt = by_class;
        fg__cfg_class_rules(mt, &root.rules, &root.nrules);
    } else if (!mt && !fg_cfg_has(&root, "architectures") &&
               /* a model's sizes, so that another file under the name (a generation or
                * tokenizer config) is not read as the class's defaults */
               fg_cfg_has(&root, "hidden_size|n_embd|d_model|dim|num_hidden_layers|n_layer|"
                                 "num_layers|n_layers") &&
               fg__name_type(name, reader_type_at, NULL, by_name, sizeof by_name)) {
        mt = by_name;
        fg__cfg_class_rules(mt, &root.rules, &root.nrules);
    }
    rc = fg_cfg_str(&root, "torch_dtype|dtype", "", &dtype, err);
    if (rc)
        return rc;
    /* BertConfig / GPT2Config / FalconConfig spellings, in that order of precedence */
    double attn_drop = 0, hidden_drop = 0;
    if ((rc = fg_cfg_f64(&root, "attention_probs_dropout_prob|attn_pdrop|attention_dropout", 0.0,
                         0.0, 1.0, &attn_drop, err)) ||
        (rc = fg_cfg_f64(&root, "hidden_dropout_prob|resid_pdrop|hidden_dropout", 0.0, 0.0, 1.0,
                         &hidden_drop, err)))
        return rc;

    struct fg_model *m = calloc(1, sizeof *m);
    if (!m)
        return fg_err_set(err, FG_E_NOMEM, "out of memory");
    m->node_by_node = node_by_node;
    m->arch_find = fg__arch_find;
    fg__copy(m->id, sizeof m->id, id ? id : fg_config_origin(doc));
    fg__copy(m->model_type, sizeof m->model_type, mt ? mt : "");
    fg__copy(m->torch_dtype, sizeof m->torch_dtype, dtype);
    m->attn_dropout = attn_drop;
    m->hidden_dropout = hidden_drop;
    m->custom_code = fg_cfg_has(&root, "auto_map");
    if (by_class[0])
        fg__model_note(m, "config.json names no model_type: read as '%s', the type of its "
                          "architectures class (the class builds its own config class)", mt);
    if (alias)
        fg__model_note(m, "config.json names model_type '%s', which transformers' AutoConfig "
                          "reads as the config class of '%s': read as '%s'", written, mt, mt);

    const struct fg_arch *a = mt ? fg__arch_find(mt) : NULL;
    const char *refusal = mt && !a ? fg__family_refused(mt) : NULL;
    if (refusal) {
        rc = fg_err_set(err, FG_E_UNSUPPORTED, "%s: model_type '%s' is not supported: %s",
                        fg_config_origin(doc), mt, refusal);
    } else if (a) {
        fg__copy(m->reader, sizeof m->reader, a->family);
        /* exact unless the family reader hands a part to the generic one (a multimodal
         * wrapper's unknown text model), which then says so */
        m->certainty = FG_CERT_EXACT;
        rc = a->read(&root, m, a->spec, err);
        /* the name may be wrong, and a reader of another family reads few of the file's keys
         * under their spellings: unsure, and adding model_type makes it exact */
        if (rc == 0 && by_name[0])
            fg__model_unsure(m, "model_type", "no model_type or architectures in config.json: "
                             "read as '%s', the longest model type in its name, as transformers "
                             "4's AutoConfig does", mt);
        /* the quantization_config the serving read enters is checked as the reader's are */
        if (rc == 0) {
            read_wquant(&root, m);
            fg__family_check_unread(&root, m);
            fg__family_check_remote_defaults(&root, m);
        }
    } else if (l) {
        rc = fg__arch_read_tensors(&root, m, l, err); /* tensors.h: says so itself */
    } else {
        fg__model_note(m, "model_type '%s' is not known to fitgate: read as a generic decoder "
                          "from the common structural keys; check the count with 'fitgate "
                          "verify'", mt ? mt : "(none)");
        rc = fg__arch_read_generic(&root, m, NULL, err);
        if (rc == 0) {
            fg__copy(m->reader, sizeof m->reader, "generic decoder");
        } else if (rc == FG_E_MISSING) {
            char why[FG_ERR_DETAIL_MAX];
            fg__copy(why, sizeof why, err ? err->detail : "");
            rc = fg_err_set(err, FG_E_UNSUPPORTED,
                            "%s: model_type '%s' is not supported and the config lacks the "
                            "standard decoder keys (%s)", fg_config_origin(doc),
                            mt ? mt : "(none)", why);
        }
    }
    if (rc == 0 && !a)
        read_wquant(&root, m);
    if (rc == 0)
        rc = fg__model_finalize(m, err);
    if (rc) {
        fg_model_free(m);
        return rc;
    }
    if (m->layers == 0)
        m->layers = fg_model_main_layers(m);
    fg__log(FG_LOG_DEBUG, "%s: %s, %zu nodes, %llu params", m->id, m->reader, m->n_nodes,
            (unsigned long long)m->params_total);
    *out = m;
    return 0;
}

int fg__model_from_config(const struct fg_config *doc, const char *id, bool node_by_node,
                          struct fg_model **out, struct fg_err *err)
{
    return build(doc, id, node_by_node, NULL, out, err);
}

int fg_model_from_tensors(const struct fg_config *doc, const char *id,
                          const struct fg_st_layout *l, struct fg_model **out, struct fg_err *err)
{
    return build(doc, id, false, l, out, err);
}
