/*
 * safetensors.h - what a checkpoint stores, read from its safetensors
 * headers (never the weights), and how that compares with the graph.
 *
 * A safetensors file is an 8-byte little-endian header length N, N bytes
 * of JSON {"name": {"dtype", "shape", "data_offsets"}, "__metadata__"},
 * then the data.  Sharded checkpoints add model.safetensors.index.json
 * (weight_map: tensor name -> shard file; metadata.total_size bytes and,
 * in newer ones, total_parameters).  Headers are read with two small reads
 * per shard: pread on a local checkout, HTTP range requests on the hub.
 *
 * Element counts are shape products per dtype as stored: packed formats
 * (U8 nibbles of 4-bit weights, I32-packed GPTQ) are reported as stored;
 * unpacking them is the model readers' job (params rules), not verify's.
 *
 * Error contract: see error.h.  A header length over the cap
 * (opts.max_header_bytes, 100 MB by default), over the file, or under 2 is
 * FG_E_RANGE; malformed JSON, an unknown dtype, a shape that does not match
 * its data_offsets is FG_E_PARSE; each names the file.
 *
 * Bounded (the controller's check reads a job's own directory within its
 * 800 ms): one model's headers hold at most FG_ST_MAX_TENSORS tensors in at
 * most FG_ST_MAX_HEADER_BYTES of JSON, its index at most as many weight_map
 * entries.  Past either the scan fails FG_E_LIMIT naming the file and the
 * bound, and fast: a header's length is checked before it is read, its tensors
 * counted (its JSON objects, one pass, no allocation) before it is parsed.  The
 * largest published checkpoints hold about 140,000 tensors (Kimi K2 in fp8, its
 * block scales beside every expert) in about 20 MB of headers; a header of 100
 * MiB naming 1.4 million tensors is refused in tens of milliseconds, where
 * parsing it took 4.8 s.
 */
#ifndef FG_SAFETENSORS_H
#define FG_SAFETENSORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "source/st_dtype.h"
#include "util/error.h"

struct fg_model;
struct fg_source_repo;

#define FG_ST_MAX_TENSORS 200000u            /* tensors in one model's headers (index too) */
#define FG_ST_MAX_HEADER_BYTES (64u << 20)   /* JSON of one model's headers, all shards */

/* Tensor groups, by name pattern on the checkpoint side and node kind on the graph side. */
enum fg_st_group {
    FG_ST_EMBED,      /* embed_tokens, wte, word_embeddings */
    FG_ST_POS_EMBED,  /* wpe, position / token-type embeddings */
    FG_ST_ATTN,       /* layers.N.self_attn (q/k norms inside), MLA */
    FG_ST_MLP,        /* layers.N.mlp, experts, router */
    FG_ST_MIXER,      /* Mamba / SSM / short-conv mixers */
    FG_ST_NORM,       /* layer norms outside attention */
    FG_ST_HEAD,       /* lm_head and task heads */
    FG_ST_VISION,     /* vision / audio towers, projectors */
    FG_ST_BUFFER,     /* stored buffers: rotary inv_freq, attn.bias masks, position_ids */
    FG_ST_OTHER,
    FG_ST_GROUP_COUNT
};

/* What a checkpoint holds, summed over shards. */
struct fg_st_summary {
    uint64_t tensors;                         /* from headers */
    uint64_t total;                           /* elements, from headers */
    uint64_t by_dtype[FG_ST_DTYPE_COUNT];
    uint64_t by_group[FG_ST_GROUP_COUNT];     /* elements per group, from headers */
    uint64_t names[FG_ST_GROUP_COUNT];        /* tensor names per group (headers, else index) */
    char example[FG_ST_GROUP_COUNT][96];      /* one tensor name per group, for messages */
    bool has_index;                           /* model.safetensors.index.json was read */
    uint64_t index_total_size;                /* metadata.total_size (bytes); 0 absent */
    uint64_t index_total_params;              /* metadata.total_parameters; 0 absent */
    size_t files;                             /* shard files named */
    size_t headers_read, headers_remote;      /* shard headers read (of which by HTTP) */
    uint64_t header_bytes;                    /* their JSON, summed (FG_ST_MAX_HEADER_BYTES) */
    bool headers;                             /* every shard header was read */
    char no_headers[FG_ERR_DETAIL_MAX];        /* why not, when !headers */
    int no_headers_code;                      /* the same as an FG_E_* code: NOTFOUND (a
                                                 shard absent), RANGE (over max_shards),
                                                 TIMEDOUT or NET (fg_st_scan_opts) */
    struct fg_st_layout *layout;              /* borrowed, may be NULL: when set, the headers
                                                 parsed add every tensor to it (st_layout.h;
                                                 fg_st_scan_opts.layout sets it for a scan) */
};

/* Group of one tensor name (pattern rules in safetensors.c). */
enum fg_st_group fg_safetensors_group(const char *tensor_name);

/* "embed", "lm_head", "layers.N.self_attn", ... */
const char *fg_safetensors_group_name(enum fg_st_group g);

/* "BF16" ...; NULL for an out-of-range value. */
const char *fg_safetensors_dtype_name(enum fg_st_dtype d);

/* The bytes s's tensors take as stored (elements x their dtype's bits / 8, packed formats
 * as packed), and whether any is narrower than 16 bits or an integer packing (F8, F6, F4,
 * U8, I8, I32: a quantized checkpoint).  0 / false when no header was read. */
uint64_t fg_safetensors_bytes(const struct fg_st_summary *s, bool *quantized);

/*
 * Validate the 8-byte length prefix: *len in [2, cap] and, when file_size
 * is known (non-zero), 8 + *len <= file_size.  origin names the file.
 */
int fg_safetensors_header_len(const unsigned char prefix[8], uint64_t file_size, uint64_t cap,
                              const char *origin, uint64_t *len, struct fg_err *err);

/*
 * Parse one header's JSON (len bytes) and add its tensors to s.  data_size
 * (0 unknown) is the data part's size, to check data_offsets against.
 */
int fg_safetensors_parse_header(const char *json, size_t len, uint64_t data_size,
                                const char *origin, struct fg_st_summary *s, struct fg_err *err);

/*
 * Read what repo stores: the index (or a single model.safetensors) and
 * every shard header.  Shards absent from a local directory with no hub to
 * ask leave s->headers false with s->no_headers saying why (the index alone
 * still gives names and metadata); network and format errors fail.
 * header_cap bounds one header (0 = 100 MB).
 */
int fg_safetensors_scan(struct fg_source_repo *repo, uint64_t header_cap, struct fg_st_summary *s,
                        struct fg_err *err);

/* How far fg_safetensors_scan_with goes (fg_safetensors_scan: header_cap, the rest 0). */
struct fg_st_scan_opts {
    uint64_t header_cap;   /* one header at most; 0 = 100 MB */
    size_t max_shards;     /* an index naming more shards: no header is read (0: no cap) */
    bool keep_index;       /* a shard the hub did not give in time (FG_E_TIMEDOUT, FG_E_NET)
                              leaves the index's view, s->no_headers saying why, instead of
                              failing the scan */
    struct fg_st_layout *layout; /* borrowed, may be NULL: emptied, then filled with every
                              tensor of the headers (emptied again when not all were read);
                              s->layout points to it */
};

/* fg_safetensors_scan within so's limits: the index alone stands past them. */
int fg_safetensors_scan_with(struct fg_source_repo *repo, const struct fg_st_scan_opts *so,
                             struct fg_st_summary *s, struct fg_err *err);

#define FG_ST_MAX_FINDINGS 10

struct fg_st_compare {
    uint64_t graph_total;       /* m->params_total */
    uint64_t ckpt_total;        /* headers' sum, total_parameters, or total_size / bytes */
    bool ckpt_known;            /* false: neither headers nor index sizes */
    bool exact;                 /* ckpt_total is a count, not a size divided by a width */
    unsigned bytes_per_param;   /* when derived from total_size */
    char basis[320];            /* how ckpt_total was obtained */
    bool agree;
    uint64_t graph_group[FG_ST_GROUP_COUNT];
    int64_t graph_rules;        /* rule scalars not attributed to a node */
    size_t n_findings;
    char findings[FG_ST_MAX_FINDINGS][240]; /* which groups differ and the likely reason */
};

/*
 * Compare what s says the checkpoint stores with the graph m.  m may be NULL
 * (no reader could build the graph): then only the checkpoint side (ckpt_total,
 * basis) is filled and agree stays false.
 */
int fg_safetensors_compare(const struct fg_st_summary *s, const struct fg_model *m,
                           struct fg_st_compare *c, struct fg_err *err);

#endif
