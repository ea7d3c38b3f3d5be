#!/usr/bin/env python3
"""One `vllm` row of the calibration grid, in a process of its own (measure.py starts it).

    python3 tests/calibration/vllm_row.py SPEC.json RESULT.json

SPEC.json (written by measure.py attempt_vllm): model_dir (a folder holding the row's config.json
and nothing else), dtype, batch, seq, gen_tokens, gpu_util, max_model_len, vocab_size.

vLLM runs offline and in this process: LLM(load_format="dummy") makes random weights from the
config (nothing is downloaded), skip_tokenizer_init=True takes prompts as token ids,
enforce_eager=True keeps CUDA graphs out, and VLLM_ENABLE_V1_MULTIPROCESSING=0 (set by measure.py)
keeps the engine core in this process, so torch.cuda's counters here are the engine's.  Then
`batch` sequences of `seq` random prompt tokens each generate `gen_tokens` tokens (ignore_eos).

RESULT.json holds the measure.py output columns it could fill (tests/calibration/README.md) and
`notes`; it is written after the engine is up and again at the end, so a row killed at its
timeout still tells how far it got.  Exit status 0 whenever RESULT.json was written.
"""

import json
import logging
import os
import re
import sys
import time
import traceback

# vLLM's own log lines this row reads (vllm/v1/worker/gpu_model_runner.py, gpu_worker.py,
# v1/core/kv_cache_utils.py); a line a version words otherwise costs its column, not the row.
LOG_PATTERNS = {
    "weights_gib": re.compile(r"Model loading took ([\d.]+) ?GiB"),
    "kv_gib": re.compile(r"Available KV cache memory: ([\d.]+) ?GiB"),
    "kv_tokens": re.compile(r"GPU KV cache size: ([\d,]+) tokens"),
    "concurrency": re.compile(r"Maximum concurrency for ([\d,]+) tokens per request: ([\d.]+)x"),
    "backend": re.compile(r"Using (\S+(?: \S+)?) backend"),
}
GIB = 1 << 30


class LogLines(logging.Handler):
    """Keeps the messages of the 'vllm' logger (vLLM's handlers do not propagate to the root)."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.lines = []

    def emit(self, record):
        try:
            self.lines.append(record.getMessage())
        except Exception:
            pass

    def find(self, key):
        for line in self.lines:
            m = LOG_PATTERNS[key].search(line)
            if m:
                return m.groups()
        return None


def write(path, res):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(res, f)
    os.replace(tmp, path)


def first_attr(obj, paths):
    """The first of the dotted attribute paths that obj has, else None (vLLM's internals move)."""
    for path in paths:
        cur = obj
        for part in path.split("."):
            cur = getattr(cur, part, None)
            if cur is None:
                break
        if cur is not None:
            return cur
    return None


def from_logs(log, res):
    """What vLLM said about its memory, into the result's columns and notes."""
    got = log.find("weights_gib")
    if got:
        res["mem_weights"] = int(float(got[0]) * GIB)
        res["notes"].append(f"weights_from_log={got[0]}GiB")
    got = log.find("kv_gib")
    if got:
        res["kv_cache_bytes"] = int(float(got[0]) * GIB)
        res["notes"].append(f"kv_from_log={got[0]}GiB")
    got = log.find("kv_tokens")
    if got:
        res["kv_cache_tokens"] = int(got[0].replace(",", ""))
    got = log.find("concurrency")
    if got:
        res["notes"].append(f"max_concurrency={got[1]}x{got[0].replace(',', '')}")
    got = log.find("backend")
    if got:
        res["attn_impl"] = got[0].replace(" ", "_")


def from_engine(llm, res):
    """What the engine's config says (more exact than the log where it is there)."""
    vc = first_attr(llm, ("llm_engine.vllm_config",))
    cc = getattr(vc, "cache_config", None)
    blocks, block = getattr(cc, "num_gpu_blocks", None), getattr(cc, "block_size", None)
    if blocks and block:
        res["notes"].append(f"kv_blocks={blocks}x{block}")
        res.setdefault("kv_cache_tokens", int(blocks) * int(block))
    sc = getattr(vc, "scheduler_config", None)
    for k in ("max_num_batched_tokens", "max_num_seqs"):
        if getattr(sc, k, None) is not None:
            res["notes"].append(f"{k}={getattr(sc, k)}")
    try:  # LLM.apply_model runs a function on the worker's model (here: in this process)
        counts = llm.apply_model(lambda m: (type(m).__name__, sum(p.numel() for p in m.parameters())))
        res["model_class"], res["n_params"] = counts[0]
    except Exception as e:
        res["notes"].append(f"apply_model:{type(e).__name__}")


def run(spec, res, out_path):
    import torch
    from vllm import LLM, SamplingParams

    log = LogLines()
    vlog = logging.getLogger("vllm")
    vlog.addHandler(log)
    if vlog.getEffectiveLevel() > logging.INFO:  # VLLM_LOGGING_LEVEL above INFO: the lines read here are INFO
        vlog.setLevel(logging.INFO)
    torch.cuda.reset_peak_memory_stats()
    res["mem_base"] = torch.cuda.memory_allocated()
    t = time.time()
    llm = LLM(model=spec["model_dir"], skip_tokenizer_init=True, load_format="dummy", dtype=spec["dtype"],
              gpu_memory_utilization=spec["gpu_util"], max_model_len=spec["max_model_len"], enforce_eager=True,
              seed=0, trust_remote_code=False)
    torch.cuda.synchronize()
    res["build_s"] = time.time() - t
    res["mem_static"] = torch.cuda.memory_allocated()       # weights + the KV pool
    res["peak_build"] = torch.cuda.max_memory_allocated()   # with the profile run's activations
    res["peak_reserved_step1"] = torch.cuda.max_memory_reserved()
    from_logs(log, res)
    from_engine(llm, res)
    res["status"] = "error:vllm-child: stopped during generate"
    write(out_path, res)

    g = torch.Generator().manual_seed(0)
    prompts = [{"prompt_token_ids": torch.randint(0, spec["vocab_size"], (spec["seq"],), generator=g).tolist()}
               for _ in range(spec["batch"])]
    sp = SamplingParams(max_tokens=spec["gen_tokens"], min_tokens=spec["gen_tokens"], ignore_eos=True,
                        temperature=0.0, detokenize=False)
    torch.cuda.reset_peak_memory_stats()
    t = time.perf_counter()
    outs = llm.generate(prompts, sp, use_tqdm=False)
    torch.cuda.synchronize()
    res["step_ms"] = (time.perf_counter() - t) * 1000.0
    res["peak_alloc"] = torch.cuda.max_memory_allocated()
    res["peak_reserved"] = torch.cuda.max_memory_reserved()
    res["peak_active"] = int(torch.cuda.memory_stats().get("active_bytes.all.peak", 0))
    res["reserved_end"] = torch.cuda.memory_reserved()
    free, total = torch.cuda.mem_get_info()
    res["device_used_end"], res["device_total"] = total - free, total
    res["notes"].append(f"generated={sum(len(o.outputs[0].token_ids) for o in outs)}")
    res["status"] = "ok"


def main(argv):
    if len(argv) != 3:
        print("usage: vllm_row.py SPEC.json RESULT.json", file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        spec = json.load(f)
    out_path = argv[2]
    res = {"notes": [], "status": "error:vllm-child: did not finish"}
    try:
        import torch
        import vllm
    except Exception as e:  # vLLM there but not importable (e.g. built for another torch)
        res["status"] = "skipped:no-vllm"
        res["notes"].append("import:" + re.sub(r"\s+", " ", f"{type(e).__name__}: {e}")[:160])
        write(out_path, res)
        return 0
    res["vllm"], res["torch"] = vllm.__version__, torch.__version__
    try:
        run(spec, res, out_path)
    except Exception as e:
        msg = re.sub(r"\s+", " ", f"{type(e).__name__}: {e}").strip()
        res["status"] = "oom" if isinstance(e, torch.cuda.OutOfMemoryError) or "out of memory" in msg.lower() \
            else "error:" + msg[:200]
        if torch.cuda.is_available():
            res["notes"].append(f"peak_at_fail={torch.cuda.max_memory_allocated()}")
        traceback.print_exc(limit=-8, file=sys.stderr)
    write(out_path, res)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
