#!/usr/bin/env python3
"""Write the hub fixtures under tests/fixtures/hub/ (run from the repo root).

Safetensors files for real checkpoints are written header-only: the 8-byte
length and the JSON header with shapes taken from the shipped config.json and
tensor names and shard assignment taken from the shipped
model.safetensors.index.json.  The data part is left out to keep the
repository small; manifest.tsv gives each file's real size, and the tests
extend the files to it (sparse, with truncate) before serving or reading them,
so the data_offsets stay inside the file as in the real checkpoint.  Every
generated checkpoint is checked against its index (metadata total_size) or
truth.tsv before anything is written, so the headers are as the hub serves
them, not guesses.

acme/tiny is a complete, real safetensors file (F32, random values) of a
tiny llama, for the local-checkout path.  acme/llama-buffers is SmolLM2-135M
with a checkpoint that stores the tied lm_head and per-layer rotary
inv_freq buffers, so verify has differences to name.

Only the Python standard library is used; the outputs are committed, so the
tests do not need Python.
"""
import json
import os
import random
import shutil
import struct
import sys

MODELS = "tests/fixtures/models"
OUT = "tests/fixtures/hub"
REPOS = os.path.join(OUT, "repos")

DTYPE_BYTES = {"BF16": 2, "F16": 2, "F32": 4}


def load(path):
    with open(path) as f:
        return json.load(f)


def truth(hf_id):
    with open(os.path.join(MODELS, "truth.tsv")) as f:
        next(f)
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if cols[0] == hf_id and cols[2]:
                return int(cols[2])
    return None


def llama_shape(cfg, name):
    """Shape of a llama-family tensor (LlamaForCausalLM / GemmaForCausalLM names)."""
    h = cfg["hidden_size"]
    nh = cfg["num_attention_heads"]
    kv = cfg.get("num_key_value_heads") or nh
    hd = cfg.get("head_dim") or h // nh
    inter = cfg["intermediate_size"]
    vocab = cfg["vocab_size"]
    leaf = name.rsplit(".", 2)
    mod, kind = leaf[-2], leaf[-1]
    if name.endswith("inv_freq"):
        return [hd // 2]
    if mod in ("embed_tokens", "lm_head"):
        return [vocab, h]
    if "norm" in mod:
        return [h]
    out_in = {
        "q_proj": (nh * hd, h), "k_proj": (kv * hd, h), "v_proj": (kv * hd, h),
        "o_proj": (h, nh * hd), "gate_proj": (inter, h), "up_proj": (inter, h),
        "down_proj": (h, inter),
    }[mod]
    return [out_in[0]] if kind == "bias" else list(out_in)


def header_bytes(tensors):
    """tensors: [(name, dtype, shape)] -> (bytes of length+header, data size)."""
    hdr = {"__metadata__": {"format": "pt"}}
    off = 0
    for name, dtype, shape in sorted(tensors):
        n = 1
        for d in shape:
            n *= d
        size = n * DTYPE_BYTES[dtype]
        hdr[name] = {"dtype": dtype, "shape": shape, "data_offsets": [off, off + size]}
        off += size
    js = json.dumps(hdr, separators=(",", ":")).encode()
    js += b" " * (-len(js) % 8)  # safetensors pads the header to 8 bytes
    return struct.pack("<Q", len(js)) + js, off


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def write_repo(hf_id, files, config, index=None, manifest=None):
    d = os.path.join(REPOS, hf_id)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    if index is not None:
        with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
            json.dump(index, f, indent=2)
            f.write("\n")
    for fname, (blob, full_size) in files.items():
        with open(os.path.join(d, fname), "wb") as f:
            f.write(blob)
        if manifest is not None:
            manifest.append((hf_id + "/" + fname, full_size))


def from_index(model_dir, hf_id, dtype, manifest):
    cfg = load(os.path.join(MODELS, model_dir, "config.json"))
    idx = load(os.path.join(MODELS, model_dir, "model.safetensors.index.json"))
    shards = {}
    for name, shard in idx["weight_map"].items():
        shards.setdefault(shard, []).append((name, dtype, llama_shape(cfg, name)))
    files, total = {}, 0
    for shard, tensors in shards.items():
        blob, data = header_bytes(tensors)
        files[shard] = (blob, len(blob) + data)
        total += sum(numel(s) for _, _, s in tensors)
    want = idx["metadata"]["total_size"] // DTYPE_BYTES[dtype]
    if total != want:
        sys.exit("%s: generated %d parameters, index says %d" % (hf_id, total, want))
    write_repo(hf_id, files, cfg, idx, manifest)
    return total


def single(model_dir, hf_id, tensors, cfg, manifest, want):
    blob, data = header_bytes(tensors)
    total = sum(numel(s) for _, _, s in tensors)
    if want is not None and total != want:
        sys.exit("%s: generated %d parameters, want %d" % (hf_id, total, want))
    write_repo(hf_id, {"model.safetensors": (blob, len(blob) + data)}, cfg, None, manifest)
    return total


def llama_names(cfg, head=True, bias=False, inv_freq=False):
    names = ["model.embed_tokens.weight", "model.norm.weight"]
    if head:
        names.append("lm_head.weight")
    for i in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % i
        names += [p + "input_layernorm.weight", p + "post_attention_layernorm.weight"]
        for m in ("q_proj", "k_proj", "v_proj", "o_proj"):
            names.append(p + "self_attn.%s.weight" % m)
            if bias:
                names.append(p + "self_attn.%s.bias" % m)
        for m in ("gate_proj", "up_proj", "down_proj"):
            names.append(p + "mlp.%s.weight" % m)
        if inv_freq:
            names.append(p + "self_attn.rotary_emb.inv_freq")
    return names


def tiny(manifest):
    """A complete safetensors file with real data: the local-checkout case."""
    cfg = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 16,
        "intermediate_size": 32, "num_attention_heads": 2, "num_key_value_heads": 1,
        "num_hidden_layers": 2, "vocab_size": 64, "max_position_embeddings": 128,
        "rms_norm_eps": 1e-5, "tie_word_embeddings": False, "torch_dtype": "float32",
    }
    rng = random.Random(6)
    tensors = [(n, "F32", llama_shape(cfg, n)) for n in llama_names(cfg)]
    blob, data = header_bytes(tensors)
    hdr = json.loads(blob[8:])
    payload = bytearray(data)
    for name, meta in hdr.items():
        if name == "__metadata__":
            continue
        b, e = meta["data_offsets"]
        for o in range(b, e, 4):
            payload[o:o + 4] = struct.pack("<f", rng.uniform(-0.1, 0.1))
    d = os.path.join(REPOS, "acme/tiny")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    with open(os.path.join(d, "model.safetensors"), "wb") as f:
        f.write(blob + bytes(payload))
    manifest.append(("acme/tiny/model.safetensors", len(blob) + data))
    return sum(numel(s) for _, _, s in tensors)


CKPT = "tests/fixtures/ckpt"


def exaone(manifest):
    """EXAONE-3.0-7.8B-Instruct: model_type exaone has no family reader (remote code), so
    fitgate reads its structure from these headers.  Names and shapes are the modules of
    ExaoneForCausalLM as the release prints them (tests/fixtures/ckpt/.../PROVENANCE.txt):
    nn.Linear weights [out, in], ExaoneRMSNorm weights [hidden]; one BF16 file."""
    hf_id = "LGAI-EXAONE/EXAONE-3.0-7.8B-Instruct"
    cfg = load(os.path.join(CKPT, "LGAI-EXAONE--EXAONE-3.0-7.8B-Instruct", "config.json"))
    h, inter, vocab = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    kv = cfg["num_key_value_heads"] * h // cfg["num_attention_heads"]
    t = [("transformer.wte.weight", [vocab, h]), ("transformer.ln_f.weight", [h]),
         ("lm_head.weight", [vocab, h])]
    for i in range(cfg["num_layers"]):
        p = "transformer.h.%d." % i
        t += [(p + "ln_1.weight", [h]), (p + "ln_2.weight", [h]),
              (p + "attn.attention.q_proj.weight", [h, h]),
              (p + "attn.attention.k_proj.weight", [kv, h]),
              (p + "attn.attention.v_proj.weight", [kv, h]),
              (p + "attn.attention.out_proj.weight", [h, h]),
              (p + "mlp.c_fc_0.weight", [inter, h]), (p + "mlp.c_fc_1.weight", [inter, h]),
              (p + "mlp.c_proj.weight", [h, inter])]
    tensors = [(n, "BF16", s) for n, s in t]
    blob, data = header_bytes(tensors)
    total = sum(numel(s) for _, _, s in tensors)
    if total != 7818448896:  # the sum of the printed module shapes (PROVENANCE.txt)
        sys.exit("%s: generated %d parameters" % (hf_id, total))
    write_repo(hf_id, {"model.safetensors": (blob, len(blob) + data)}, cfg, None, manifest)
    return total


def main():
    if os.path.isdir(REPOS):
        shutil.rmtree(REPOS)
    manifest = []
    report = []
    for model_dir, hf_id in [("google--gemma-2b-it", "google/gemma-2b-it"),
                             ("instructlab--granite-7b-lab", "instructlab/granite-7b-lab")]:
        report.append((hf_id, from_index(model_dir, hf_id, "BF16", manifest)))

    smol_dir = "HuggingFaceTB--SmolLM2-135M-Instruct"
    smol = load(os.path.join(MODELS, smol_dir, "config.json"))
    t = [(n, "BF16", llama_shape(smol, n)) for n in llama_names(smol, head=False)]
    report.append(("HuggingFaceTB/SmolLM2-135M-Instruct",
                   single(smol_dir, "HuggingFaceTB/SmolLM2-135M-Instruct", t, smol, manifest,
                          truth("HuggingFaceTB/SmolLM2-135M-Instruct"))))

    # Tied in the config, yet the checkpoint writes lm_head and rotary inv_freq (F32) per layer.
    t = [(n, "F32" if n.endswith("inv_freq") else "BF16", llama_shape(smol, n))
         for n in llama_names(smol, head=True, inv_freq=True)]
    report.append(("acme/llama-buffers", single(smol_dir, "acme/llama-buffers", t, smol, manifest,
                                                None)))
    report.append(("acme/tiny", tiny(manifest)))
    report.append(("LGAI-EXAONE/EXAONE-3.0-7.8B-Instruct", exaone(manifest)))

    # Config-only repositories served by the loopback hub.
    for model_dir, hf_id in [("nvidia--NVIDIA-Nemotron-Nano-9B-v2",
                              "nvidia/NVIDIA-Nemotron-Nano-9B-v2"),
                             ("Qwen--Qwen3-0.6B", "acme/gated"),
                             ("Qwen--Qwen3-0.6B", "acme/forbidden")]:
        write_repo(hf_id, {}, load(os.path.join(MODELS, model_dir, "config.json")))
    d = os.path.join(REPOS, "acme/malformed")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        f.write("<html><body>Welcome to our captive portal</body></html>\n")

    with open(os.path.join(OUT, "manifest.tsv"), "w") as f:
        f.write("# file (under repos/)\tfull size in bytes (extend header-only files to it)\n")
        for path, size in manifest:
            f.write("%s\t%d\n" % (path, size))
    for hf_id, n in report:
        print("%-40s %15d parameters" % (hf_id, n))


if __name__ == "__main__":
    main()
