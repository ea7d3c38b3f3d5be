#!/usr/bin/env python3
"""fitgate calibration harness: measure the real GPU memory of fine-tuning and serving steps.

Builds each model of a grid from its config.json with random weights (no checkpoint, no download,
no remote code), runs 3 real steps and records torch.cuda memory counters to a TSV, one line per
grid row, written and flushed after every row so that a killed run keeps what it measured.

    PYTHONUNBUFFERED=1 python3 tests/calibration/measure.py \
        --grid tests/calibration/grid.tsv --out measured.tsv

    python3 tests/calibration/measure.py --cpu-smoke --out smoke.tsv   # same code path, tiny models, CPU
    python3 tests/calibration/measure.py --grid tests/calibration/grid.tsv --dry-run   # no torch needed

QLoRA rows load the model 4-bit through transformers' BitsAndBytesConfig (from random bf16 weights
saved once per model); vllm rows run vLLM offline in a process of their own (vllm_row.py).  A row
whose package is missing is written skipped:no-bitsandbytes / skipped:no-vllm at no cost.
tests/calibration/run-gpu.sh runs the sixth run's rows as one command with a deadline.

See tests/calibration/README.md for the meaning of every column.
"""

import argparse
import contextlib
import gc
import importlib.util
import json
import math
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

T0 = time.time()
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# No network on the measuring machine: make every hub access fail fast instead of retrying.
for _k, _v in (
    ("HF_HUB_OFFLINE", "1"),
    ("TRANSFORMERS_OFFLINE", "1"),
    ("HF_HUB_DISABLE_TELEMETRY", "1"),
    ("TOKENIZERS_PARALLELISM", "false"),
    ("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1"),
):
    os.environ.setdefault(_k, _v)

GRID_COLS = ["name", "config_dir", "mode", "precision", "batch", "seq", "grad_ckpt", "lora_rank", "layers_override"]
# Optional trailing grid columns, in this order; a row may stop before any of them (defaults below).
OPT_COLS = ["lora_targets", "optimizer", "attn", "quant", "bnb_compute", "kbit_prepare", "gpu_util", "gen_tokens"]
OPT_DEFAULTS = {"lora_targets": "all-linear", "optimizer": "adamw", "attn": "sdpa",
                "quant": "nf4", "bnb_compute": "bf16", "kbit_prepare": "0", "gpu_util": "0.9", "gen_tokens": "32"}
QLORA_COLS = ("quant", "bnb_compute", "kbit_prepare")  # given on qlora rows only
VLLM_COLS = ("gpu_util", "gen_tokens")                 # given on vllm rows only
OPTIMIZERS = ("adamw", "adamw-fused")
ATTNS = ("sdpa", "eager")
QUANTS = ("nf4", "nf4-dq")                             # bnb_4bit_use_double_quant = (quant == "nf4-dq")
BNB_COMPUTE = ("bf16", "fp32", "fp16")                 # BitsAndBytesConfig bnb_4bit_compute_dtype
OUT_COLS = GRID_COLS + OPT_COLS + [
    "status",
    "model_class", "attn_impl", "experts_impl", "param_dtypes", "adapter_dtype",
    "n_params", "n_state_dict", "n_trainable", "n_layers",
    "mem_base", "mem_weights", "peak_build", "mem_setup", "mem_static",
    "peak_alloc_step1", "peak_reserved_step1",
    "peak_alloc", "peak_reserved", "peak_active",
    "mem_after_fwd", "peak_fwd", "peak_bwd",
    "reserved_end", "device_used_end", "device_total",
    "kv_cache_bytes", "kv_cache_tokens",
    "step_ms", "build_s", "row_s", "loss",
    "gpu", "torch", "transformers", "peft", "bitsandbytes", "vllm", "alloc_conf",
    "notes", "config_json",
]
MODES = ("full", "lora", "qlora", "serve", "vllm")
TRAIN_MODES = ("full", "lora", "qlora")
# The precision words each mode takes (README "The grid" says what each one runs).
PRECISIONS = {
    "full": ("bf16-mixed", "bf16", "fp32"),
    "lora": ("bf16-mixed", "bf16", "fp32"),
    "qlora": ("bf16-mixed", "bf16", "fp16"),
    "serve": ("bf16-mixed", "bf16"),  # always runs bf16; notes say so for bf16-mixed
    "vllm": ("bf16", "fp16"),
}
ABSOLUTE_POSITION_TYPES = ("bert", "roberta", "xlm-roberta", "camembert", "electra", "distilbert")
# per-layer lists that must shrink with layers_override
PER_LAYER_LIST_KEYS = ("layer_types", "layers_block_type", "block_types")
# Dropout keys transformers reads from config.json and applies in train mode (recorded in notes).
DROPOUT_KEYS = ("attention_probs_dropout_prob", "hidden_dropout_prob", "attention_dropout", "hidden_dropout",
                "dropout", "attn_pdrop", "resid_pdrop", "embd_pdrop")
# Deadline check: time guessed for the first row of a model, by row kind (torch: --default-row-s).
# A QLoRA model's first row also builds and saves its random bf16 checkpoint; a vLLM row imports
# vLLM, profiles and allocates its KV pool in a process of its own.
DEFAULT_ROW_S = {"qlora": 60.0, "vllm": 150.0}
VLLM_ROW_TIMEOUT_S = 300.0
HERE = os.path.dirname(os.path.abspath(__file__))


class RowTimeout(BaseException):
    """Raised by SIGALRM when a row runs past its time; BaseException so library code can't swallow it."""


def _on_alarm(signum, frame):
    raise RowTimeout()


# ----------------------------------------------------------------------------------------------
# grid and configs (no torch needed)
# ----------------------------------------------------------------------------------------------

class Row:
    def __init__(self, fields, lineno):
        if not len(GRID_COLS) <= len(fields) <= len(GRID_COLS) + len(OPT_COLS):
            raise ValueError(f"grid line {lineno}: expected {len(GRID_COLS)} to {len(GRID_COLS) + len(OPT_COLS)} "
                             f"fields, got {len(fields)}: {fields}")
        given = {k: v for k, v in zip(OPT_COLS, fields[len(GRID_COLS):]) if v not in ("-", "")}
        d = dict(OPT_DEFAULTS)
        d.update(given)
        d.update(zip(GRID_COLS, fields))

        def bad(msg):
            return ValueError(f"grid line {lineno}: {msg}")

        self.name = d["name"]
        self.config_dir = d["config_dir"]
        self.mode = d["mode"]
        self.precision = d["precision"]
        if self.mode not in MODES:
            raise bad(f"mode {self.mode!r} not in {MODES}")
        if self.precision not in PRECISIONS[self.mode]:
            raise bad(f"precision {self.precision!r} not in {PRECISIONS[self.mode]} for {self.mode} rows")
        try:
            self.batch = int(d["batch"])
            self.seq = int(d["seq"])
            self.lora_rank = 0 if d["lora_rank"] in ("-", "") else int(d["lora_rank"])
            self.layers_override = None if d["layers_override"] in ("-", "") else int(d["layers_override"])
            self.gpu_util = float(d["gpu_util"])
            self.gen_tokens = int(d["gen_tokens"])
        except ValueError as e:
            raise bad(str(e)) from None
        self.grad_ckpt = d["grad_ckpt"].lower() in ("1", "true", "yes", "on")
        self.lora_targets = d["lora_targets"]
        self.optimizer = d["optimizer"]
        self.attn = d["attn"]
        self.quant = d["quant"]
        self.bnb_compute = d["bnb_compute"]
        if d["kbit_prepare"] not in ("0", "1"):
            raise bad(f"kbit_prepare {d['kbit_prepare']!r} is not 0 or 1")
        self.kbit_prepare = d["kbit_prepare"] == "1"
        if self.optimizer not in OPTIMIZERS:
            raise bad(f"optimizer {self.optimizer!r} not in {OPTIMIZERS}")
        if self.attn not in ATTNS:
            raise bad(f"attn {self.attn!r} not in {ATTNS}")
        if self.quant not in QUANTS:
            raise bad(f"quant {self.quant!r} not in {QUANTS}")
        if self.bnb_compute not in BNB_COMPUTE:
            raise bad(f"bnb_compute {self.bnb_compute!r} not in {BNB_COMPUTE}")
        # a column that only one kind of row reads must not be given (and ignored) elsewhere
        for cols, mode in ((QLORA_COLS, "qlora"), (VLLM_COLS, "vllm")):
            extra = [c for c in cols if c in given and self.mode != mode]
            if extra:
                raise bad(f"{', '.join(extra)} only for {mode} rows")
        if self.mode in ("lora", "qlora") and self.lora_rank <= 0:
            raise bad(f"{self.mode} row needs lora_rank > 0")
        if self.mode == "vllm":
            wrong = [c for c in ("lora_targets", "optimizer", "attn") if c in given]
            if self.grad_ckpt or self.lora_rank or wrong:
                raise bad("a vllm row takes no grad_ckpt, lora_rank, lora_targets, optimizer or attn "
                          "(vLLM picks its own attention backend)")
            if not 0.0 < self.gpu_util <= 1.0:
                raise bad(f"gpu_util {self.gpu_util} not in (0, 1]")
            if self.gen_tokens <= 0:
                raise bad("gen_tokens must be positive")
        if self.batch <= 0 or self.seq <= 0:
            raise bad("batch and seq must be positive")

    @property
    def kind(self):
        """How the row runs: 'vllm' (a child process), 'qlora' (a saved checkpoint), 'torch'."""
        return self.mode if self.mode in ("vllm", "qlora") else "torch"

    def grid_fields(self):
        q, v = self.mode == "qlora", self.mode == "vllm"
        return {
            "name": self.name, "config_dir": self.config_dir, "mode": self.mode, "precision": self.precision,
            "batch": self.batch, "seq": self.seq, "grad_ckpt": int(self.grad_ckpt),
            "lora_rank": self.lora_rank if self.lora_rank else "-",
            "layers_override": self.layers_override if self.layers_override is not None else "-",
            "lora_targets": self.lora_targets if self.mode in ("lora", "qlora") else "-",
            "optimizer": self.optimizer if self.mode in TRAIN_MODES else "-",
            "attn": self.attn if not v else "-",
            "quant": self.quant if q else "-",
            "bnb_compute": self.bnb_compute if q else "-",
            "kbit_prepare": int(self.kbit_prepare) if q else "-",
            "gpu_util": self.gpu_util if v else "-",
            "gen_tokens": self.gen_tokens if v else "-",
        }


def parse_grid(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n").rstrip("\r")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            fields = [x.strip() for x in (line.split("\t") if "\t" in line else line.split())]
            if fields[0] == "name":
                continue  # header
            rows.append(Row(fields, lineno))
    names = [r.name for r in rows]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"duplicate row names in grid: {dup}")
    return rows


def effective_config(config_dir, layers_override):
    """The exact config dict handed to transformers (and recorded, minified, in the last column)."""
    path = config_dir if os.path.isabs(config_dir) else os.path.join(REPO, config_dir)
    with open(os.path.join(path, "config.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    notes = []
    if "auto_map" in cfg:
        # remote-code pointers: we never run remote code; the native class is used
        cfg.pop("auto_map")
        notes.append("auto_map-dropped")
    if layers_override is not None:
        n = int(layers_override)
        key = "num_hidden_layers"
        for alt in ("num_hidden_layers", "num_layers", "n_layer"):
            if alt in cfg:
                key = alt
                break
        old = cfg.get(key)
        if old is not None and n > int(old):
            raise ValueError(f"layers_override {n} > {key} {old}")
        cfg[key] = n
        if isinstance(cfg.get("hybrid_override_pattern"), str):
            cfg["hybrid_override_pattern"] = cfg["hybrid_override_pattern"][:n]
        for k in PER_LAYER_LIST_KEYS:
            if isinstance(cfg.get(k), list):
                cfg[k] = cfg[k][:n]
        if isinstance(cfg.get("mlp_only_layers"), list):
            cfg["mlp_only_layers"] = [i for i in cfg["mlp_only_layers"] if isinstance(i, int) and i < n]
        notes.append(f"layers {old}->{n}")
    return cfg, notes


def minified(cfg):
    return json.dumps(cfg, separators=(",", ":"), ensure_ascii=True)


# ----------------------------------------------------------------------------------------------
# output
# ----------------------------------------------------------------------------------------------

def _fmt(v):
    if v is None:
        return ""
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return str(v)
        return f"{v:.6g}" if abs(v) < 1e6 else str(int(round(v)))
    s = str(v)
    return s.replace("\t", " ").replace("\r", " ").replace("\n", " ")


class TsvWriter:
    def __init__(self, path):
        self.path = path
        d = os.path.dirname(os.path.abspath(path))
        os.makedirs(d, exist_ok=True)
        self.f = open(path, "w", encoding="utf-8")
        self._write("\t".join(OUT_COLS))

    def _write(self, line):
        self.f.write(line + "\n")
        self.f.flush()
        try:
            os.fsync(self.f.fileno())
        except OSError:
            pass

    def row(self, rec):
        self._write("\t".join(_fmt(rec.get(c)) for c in OUT_COLS))

    def close(self):
        self.f.close()


def gib(x):
    return "-" if not x else f"{x / 2**30:.2f}GiB"


def elapsed():
    return time.time() - T0


def say(msg):
    print(f"[{elapsed():6.1f}s] {msg}", flush=True)


# ----------------------------------------------------------------------------------------------
# measuring (torch)
# ----------------------------------------------------------------------------------------------

def dist_version(name):
    """An installed distribution's version without importing it, '-' when absent."""
    try:
        from importlib.metadata import version

        return version(name)
    except Exception:
        return "-"


class Env:
    """Imported libraries and device helpers, so that --dry-run never imports torch."""

    def __init__(self, cpu, work_dir=None):
        import torch
        import transformers
        from transformers import AutoConfig, AutoModel, AutoModelForCausalLM

        self.torch = torch
        self.transformers = transformers
        self.AutoConfig = AutoConfig
        self.AutoModel = AutoModel
        self.AutoModelForCausalLM = AutoModelForCausalLM
        try:
            transformers.utils.logging.set_verbosity_error()
        except Exception:
            pass
        import warnings

        warnings.filterwarnings("ignore")
        if cpu:
            self.device = torch.device("cpu")
        else:
            if not torch.cuda.is_available():
                raise SystemExit("no CUDA device visible (use --cpu-smoke to test on CPU)")
            torch.cuda.set_device(0)
            self.device = torch.device("cuda", 0)
        self.cuda = self.device.type == "cuda"
        self.peft_version = dist_version("peft")
        self.gpu = torch.cuda.get_device_name(0) if self.cuda else "cpu"
        self.alloc_conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF") or os.environ.get("PYTORCH_ALLOC_CONF") or "-"
        self.work_dir = work_dir        # QLoRA checkpoints, vLLM model folders (None: the system's temp)
        self.ckpts = {}                 # (config_dir, layers_override) -> (folder, causal): QLoRA checkpoints
        self._bnb = None

    def bitsandbytes(self):
        """(version, None) once bitsandbytes imports, else (None, why); tried once per run."""
        if self._bnb is None:
            try:
                import bitsandbytes

                self._bnb = (str(bitsandbytes.__version__), None)
            except Exception as e:  # not installed, or its CUDA library does not load
                self._bnb = (None, re.sub(r"\s+", " ", f"{type(e).__name__}: {e}")[:160])
        return self._bnb

    def missing(self, row):
        """'skipped:<reason>' when this machine cannot run the row at all, else None (costs no GPU time)."""
        if row.kind == "qlora":
            if not self.cuda:
                return "skipped:no-cuda"  # bitsandbytes' 4-bit kernels are CUDA ones
            if self.bitsandbytes()[0] is None:
                return "skipped:no-bitsandbytes"
        if row.kind == "vllm":
            if not self.cuda:
                return "skipped:no-cuda"
            if importlib.util.find_spec("vllm") is None:
                return "skipped:no-vllm"
        return None

    def drop_checkpoints(self):
        for path, _ in self.ckpts.values():
            shutil.rmtree(path, ignore_errors=True)
        self.ckpts.clear()

    # counters: all 0 on CPU
    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()

    def alloc(self):
        return self.torch.cuda.memory_allocated() if self.cuda else 0

    def max_alloc(self):
        return self.torch.cuda.max_memory_allocated() if self.cuda else 0

    def max_reserved(self):
        return self.torch.cuda.max_memory_reserved() if self.cuda else 0

    def reserved(self):
        return self.torch.cuda.memory_reserved() if self.cuda else 0

    def peak_active(self):
        if not self.cuda:
            return 0
        return int(self.torch.cuda.memory_stats().get("active_bytes.all.peak", 0))

    def reset_peak(self):
        if self.cuda:
            self.torch.cuda.reset_peak_memory_stats()

    def device_used(self):
        if not self.cuda:
            return 0, 0
        free, total = self.torch.cuda.mem_get_info()
        return total - free, total

    def cleanup(self):
        gc.collect()
        gc.collect()
        if self.cuda:
            self.torch.cuda.synchronize()
            self.torch.cuda.empty_cache()
            self.torch.cuda.reset_peak_memory_stats()


def is_causal(cfg):
    archs = cfg.get("architectures") or []
    if not archs:
        return None  # decide by trying
    return any(("CausalLM" in a) or ("LMHead" in a) for a in archs)


def build_model(env, config, causal, dtype, experts_impl, notes, attn="sdpa"):
    torch = env.torch
    kw = {"attn_implementation": attn}
    if experts_impl:
        kw["experts_implementation"] = experts_impl

    def make(auto, kw):
        with torch.device(env.device):
            try:
                # transformers 5: `dtype` (the old `torch_dtype` is deprecated); without it the config's dtype is used
                return auto.from_config(config, dtype=dtype, **kw)
            except TypeError as e:
                if "dtype" not in str(e):
                    raise
                notes.append("dtype-kw-rejected:torch_dtype")
                return auto.from_config(config, torch_dtype=dtype, **kw)

    def make_any(kw):
        if causal is None:
            try:
                return make(env.AutoModelForCausalLM, kw), True
            except ValueError as e:
                if "Unrecognized configuration class" not in str(e):
                    raise
                return make(env.AutoModel, kw), False
        return make(env.AutoModelForCausalLM if causal else env.AutoModel, kw), causal

    try:
        return make_any(kw)
    except ValueError as e:
        msg = str(e)
        if "scaled_dot_product_attention" in msg or "sdpa" in msg.lower():
            notes.append("sdpa-unsupported:eager")
            kw["attn_implementation"] = "eager"
            return make_any(kw)
        raise


def count_state_dict(model):
    seen = set()
    total = 0
    for t in model.state_dict().values():
        key = (t.data_ptr(), t.numel(), str(t.dtype), tuple(t.shape))
        if key in seen:
            continue
        seen.add(key)
        total += t.numel()
    return total


def dtype_histogram(model):
    counts = {}
    for p in model.parameters():
        k = str(p.dtype).replace("torch.", "")
        counts[k] = counts.get(k, 0) + p.numel()
    return counts


def make_optimizer(torch, row, params, lr):
    """torch AdamW: the foreach default, or fused=True (one kernel per step, no sqrt(v) temporary)."""
    if row.optimizer == "adamw-fused":
        return torch.optim.AdamW(params, lr=lr, fused=True)
    return torch.optim.AdamW(params, lr=lr)


def weight_dtype(torch, row):
    """The dtype the model is built or loaded in (README "The grid", precision)."""
    if row.precision == "fp32" or (row.mode == "full" and row.precision == "bf16-mixed"):
        return torch.float32  # fp32 training, or fp32 master weights under autocast
    if row.mode == "qlora" and row.precision == "fp16":
        return torch.float16  # the non-4-bit parameters and so the activations
    return torch.bfloat16  # full bf16; the LoRA / QLoRA base; serving


def logical_numel(p):
    """Parameter count as the checkpoint has it: a bitsandbytes Params4bit packs two values a byte."""
    shape = getattr(getattr(p, "quant_state", None), "shape", None)
    return int(math.prod(shape)) if shape is not None else p.numel()


def qlora_checkpoint(env, row, config, causal):
    """A folder with the model's random bf16 weights saved by save_pretrained, made once per model and
    layer cut: bitsandbytes quantizes while from_pretrained loads, so a 4-bit model needs weights to load."""
    key = (row.config_dir, row.layers_override)
    if key not in env.ckpts:
        path = tempfile.mkdtemp(prefix="fitgate_ckpt_", dir=env.work_dir)
        try:
            env.torch.manual_seed(0)
            model, causal = build_model(env, config, causal, env.torch.bfloat16, None, [], "sdpa")
            model.save_pretrained(path)
            del model
        except BaseException:
            shutil.rmtree(path, ignore_errors=True)
            raise
        finally:
            env.cleanup()
        env.ckpts[key] = (path, causal)
    return env.ckpts[key]


def load_qlora(env, row, causal, wdtype, notes):
    """transformers + bitsandbytes as a QLoRA recipe loads a model: 4-bit linears, the rest in wdtype."""
    torch = env.torch
    from transformers import BitsAndBytesConfig

    compute = {"bf16": torch.bfloat16, "fp32": torch.float32, "fp16": torch.float16}[row.bnb_compute]
    qc = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                            bnb_4bit_use_double_quant=row.quant == "nf4-dq", bnb_4bit_compute_dtype=compute)
    auto = env.AutoModelForCausalLM if causal else env.AutoModel
    kw = {"quantization_config": qc, "dtype": wdtype, "device_map": {"": env.device.index or 0},
          "attn_implementation": row.attn}
    path = env.ckpts[(row.config_dir, row.layers_override)][0]
    try:
        return auto.from_pretrained(path, **kw)
    except TypeError as e:
        if "dtype" not in str(e):
            raise
        notes.append("dtype-kw-rejected:torch_dtype")
        kw["torch_dtype"] = kw.pop("dtype")
        return auto.from_pretrained(path, **kw)


def dropout_note(mcfg):
    """'dropout:key=p,...' for the config's non-zero dropouts (applied: train rows run model.train())."""
    got = [f"{k}={getattr(mcfg, k)}" for k in DROPOUT_KEYS
           if isinstance(getattr(mcfg, k, None), (int, float)) and getattr(mcfg, k) > 0]
    return "dropout:" + ",".join(got) if got else None


def build_row_model(env, row, cfg, rec, experts_impl):
    """Build (or, for QLoRA, load) the row's model and record what was built; returns (model, causal)."""
    torch = env.torch
    notes = rec["_notes"]
    tmpdir = tempfile.mkdtemp(prefix="fitgate_cfg_")
    try:
        with open(os.path.join(tmpdir, "config.json"), "w", encoding="utf-8") as f:
            json.dump(cfg, f)
        config = env.AutoConfig.from_pretrained(tmpdir)
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)

    model_type = cfg.get("model_type", "")
    max_pos = cfg.get("max_position_embeddings")
    if model_type in ABSOLUTE_POSITION_TYPES and max_pos and row.seq > int(max_pos):
        raise ValueError(f"seq {row.seq} > max_position_embeddings {max_pos}")
    wdtype = weight_dtype(torch, row)
    if row.mode == "serve" and row.precision != "bf16":
        notes.append("serve-runs-bf16")
    causal = is_causal(cfg)
    if row.mode == "qlora":
        rec["bitsandbytes"] = env.bitsandbytes()[0]  # bitsandbytes.__version__, as imported
        _, causal = qlora_checkpoint(env, row, config, causal)  # before mem_base: not part of the row

    torch.manual_seed(0)
    env.sync()
    rec["mem_base"] = env.alloc()
    env.reset_peak()
    t = time.time()
    if row.mode == "qlora":
        model = load_qlora(env, row, causal, wdtype, notes)
    else:
        model, causal = build_model(env, config, causal, wdtype, experts_impl, notes, row.attn)
    env.sync()
    rec["build_s"] = time.time() - t
    rec["mem_weights"] = env.alloc()
    rec["peak_build"] = env.max_alloc()  # QLoRA: with the bf16 staging of each weight before quantizing
    rec["model_class"] = type(model).__name__
    mcfg = model.config
    rec["attn_impl"] = getattr(mcfg, "_attn_implementation", None)
    rec["experts_impl"] = getattr(mcfg, "_experts_implementation", None)
    rec["n_layers"] = getattr(mcfg, "num_hidden_layers", None)
    hist = dtype_histogram(model)
    rec["param_dtypes"] = ",".join(f"{k}:{v}" for k, v in sorted(hist.items(), key=lambda kv: -kv[1]))
    want = str(wdtype).replace("torch.", "")
    if row.mode != "qlora" and hist and max(hist, key=hist.get) != want:
        notes.append(f"dtype-not-honoured:{max(hist, key=hist.get)}->cast-{want}")
        model.to(wdtype)
        env.sync()
        rec["mem_weights"] = env.alloc()
    rec["n_params"] = sum(logical_numel(p) for p in model.parameters())
    # a 4-bit state dict also holds the quantization states (absmax, quant_map, ...): not parameters
    rec["n_state_dict"] = count_state_dict(model) if row.mode != "qlora" else None
    mod = sys.modules.get(type(model).__module__)
    if mod is not None and hasattr(mod, "is_fast_path_available"):
        notes.append(f"mamba_fast_path={bool(getattr(mod, 'is_fast_path_available'))}")
    if row.mode in TRAIN_MODES and dropout_note(mcfg):
        notes.append(dropout_note(mcfg))
    return model, causal


def setup_adapters(env, row, model, causal, rec):
    """peft LoRA on a frozen base (lora), or on a 4-bit one (qlora, optionally through peft's
    prepare_model_for_kbit_training); returns the peft model and the AdamW over its adapters."""
    import peft
    from peft import LoraConfig, get_peft_model

    notes = rec["_notes"]
    rec["peft"] = peft.__version__
    if row.mode == "qlora" and row.kbit_prepare:
        from peft import prepare_model_for_kbit_training

        # fp32 casts of every non-4-bit parameter; checkpointing only when the row asks (peft's default
        # is on, which the grid's grad_ckpt column states explicitly instead)
        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=row.grad_ckpt,
                                                gradient_checkpointing_kwargs={"use_reentrant": False})
        hist = dtype_histogram(model)
        notes.append("prepared:" + "/".join(f"{k}:{v}" for k, v in sorted(hist.items(), key=lambda kv: -kv[1])))
    else:
        for p in model.parameters():
            p.requires_grad_(False)
        if row.grad_ckpt:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
            model.enable_input_require_grads()
    targets = row.lora_targets
    if targets != "all-linear":
        targets = [t for t in targets.split(",") if t]
    lcfg = LoraConfig(
        r=row.lora_rank,
        lora_alpha=2 * row.lora_rank,
        lora_dropout=0.0,
        target_modules=targets,
        bias="none",
        task_type="CAUSAL_LM" if causal else None,
    )
    model = get_peft_model(model, lcfg)
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    rec["n_trainable"] = sum(p.numel() for p in params)
    adapter = [p.dtype for n, p in model.named_parameters() if "lora_A" in n or "lora_B" in n]
    rec["adapter_dtype"] = str(adapter[0]).replace("torch.", "") if adapter else "none"
    n_targets = sum(1 for n, _ in model.named_parameters() if "lora_A" in n)
    notes.append(f"lora_targets={n_targets}")
    return model, make_optimizer(env.torch, row, params, 1e-4)


def run_row(env, row, cfg, rec, experts_impl):
    torch = env.torch
    notes = rec["_notes"]
    dev = env.device
    mode = row.mode
    use_autocast = mode in TRAIN_MODES and row.precision == "bf16-mixed"
    model, causal = build_row_model(env, row, cfg, rec, experts_impl)
    vocab = int(getattr(model.config, "vocab_size", None) or cfg.get("vocab_size"))

    # ---- mode setup
    opt = None
    if mode == "serve":
        model.eval()
        for p in model.parameters():
            p.requires_grad_(False)
        rec["n_trainable"] = 0
    elif mode == "full":
        model.train()
        for p in model.parameters():
            p.requires_grad_(True)
        if row.grad_ckpt:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        params = [p for p in model.parameters() if p.requires_grad]
        rec["n_trainable"] = sum(p.numel() for p in params)
        opt = make_optimizer(torch, row, params, 1e-5)
        del params
    else:  # lora, qlora
        model, opt = setup_adapters(env, row, model, causal, rec)
    env.sync()
    rec["mem_setup"] = env.alloc()
    env.reset_peak()  # step-1 peak without the build transients (those are in peak_build)

    ids = torch.randint(0, vocab, (row.batch, row.seq), device=dev)

    if use_autocast:
        def ac():
            return torch.autocast(device_type=dev.type, dtype=torch.bfloat16)
    else:
        ac = contextlib.nullcontext

    serve_kw = {}
    if mode == "serve":
        import inspect

        try:
            fwd_params = inspect.signature(model.forward).parameters
        except (TypeError, ValueError):
            fwd_params = {}
        if "logits_to_keep" in fwd_params:
            serve_kw["logits_to_keep"] = 1  # what generate() does for the prefill
            notes.append("logits_to_keep=1")

    def train_step(phases):
        with ac():
            if causal:
                out = model(input_ids=ids, labels=ids, use_cache=False)
                loss = out.loss if hasattr(out, "loss") else out[0]
            else:
                out = model(input_ids=ids)
                h = out.last_hidden_state if hasattr(out, "last_hidden_state") else out[0]
                loss = h.float().pow(2).mean()
                del h
            del out  # like HF Trainer: only the loss survives to backward
        if phases:
            env.sync()
            rec["mem_after_fwd"] = env.alloc()  # static + saved activations + loss graph
            rec["peak_fwd"] = env.max_alloc()
        loss.backward()
        if phases:
            env.sync()
            rec["peak_bwd"] = env.max_alloc()  # max over forward and backward, before the optimizer step
        lv = float(loss.detach())
        del loss
        opt.step()
        opt.zero_grad(set_to_none=True)
        return lv

    def serve_step(measure):
        with torch.no_grad():
            out = model(input_ids=ids, use_cache=True, **serve_kw)
            env.sync()
            if measure:
                rec["mem_static"] = env.alloc()  # weights + KV/recurrent cache + last logits
            logits = out.logits if hasattr(out, "logits") else out[0]
            lv = float(logits[:, -1].float().mean())
            del logits, out
        return lv

    times = []
    lv = float("nan")
    peak2 = (0, 0, 0)
    for step in (1, 2, 3):
        if step in (2, 3):
            env.sync()
            if step == 3:  # step 3 alone for the phase counters; peak_alloc stays the max over steps 2-3
                peak2 = (env.max_alloc(), env.max_reserved(), env.peak_active())
            env.reset_peak()
        env.sync()
        t = time.perf_counter()
        lv = serve_step(step == 3) if mode == "serve" else train_step(step == 3)
        env.sync()
        dt = time.perf_counter() - t
        if step == 1:
            rec["peak_alloc_step1"] = env.max_alloc()
            rec["peak_reserved_step1"] = env.max_reserved()
            if mode != "serve":
                rec["mem_static"] = env.alloc()  # weights (+grads freed) + optimizer states
        else:
            times.append(dt)
    rec["peak_alloc"] = max(env.max_alloc(), peak2[0])
    rec["peak_reserved"] = max(env.max_reserved(), peak2[1])
    rec["peak_active"] = max(env.peak_active(), peak2[2])
    rec["reserved_end"] = env.reserved()
    rec["device_used_end"], rec["device_total"] = env.device_used()
    rec["step_ms"] = statistics.median(times) * 1000.0 if times else None
    rec["loss"] = lv
    del model, opt, ids


def classify(e, env):
    msg = f"{type(e).__name__}: {e}"
    oom_types = ()
    if env is not None and env.cuda:
        oom_types = (env.torch.cuda.OutOfMemoryError,)
    if (oom_types and isinstance(e, oom_types)) or "out of memory" in msg.lower():
        return "oom"
    msg = re.sub(r"\s+", " ", msg).strip()
    return "error:" + msg[:200]


def new_record(row, env, cfg_json, notes):
    rec = dict(row.grid_fields())
    rec["_notes"] = list(notes)
    rec["config_json"] = cfg_json
    if env is not None:
        rec["gpu"] = env.gpu
        rec["torch"] = env.torch.__version__
        rec["transformers"] = env.transformers.__version__
        rec["peft"] = env.peft_version
        rec["alloc_conf"] = env.alloc_conf
    rec["bitsandbytes"] = dist_version("bitsandbytes")
    rec["vllm"] = dist_version("vllm")
    return rec


def attempt(env, row, cfg, rec, experts_impl, alarm_s):
    t = time.time()
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(max(1, int(alarm_s)))
    try:
        run_row(env, row, cfg, rec, experts_impl)
        rec["status"] = "ok"
    except RowTimeout:
        rec["status"] = "timeout"
    except Exception as e:  # one bad row must never kill the run
        signal.alarm(0)
        rec["status"] = classify(e, env)
        if env.cuda:
            rec["_notes"].append(f"peak_at_fail={env.max_alloc()}")
        traceback.print_exc(limit=-8, file=sys.stderr)
        sys.stderr.flush()
    finally:
        signal.alarm(0)
    rec["row_s"] = time.time() - t
    env.cleanup()


# Filled by tests/calibration/vllm_row.py (its JSON result); anything else it returns goes to notes.
VLLM_RESULT_COLS = ("status", "model_class", "attn_impl", "param_dtypes", "n_params", "n_layers",
                    "mem_base", "mem_weights", "peak_build", "mem_static", "peak_reserved_step1",
                    "peak_alloc", "peak_reserved", "peak_active", "reserved_end", "device_used_end",
                    "device_total", "kv_cache_bytes", "kv_cache_tokens", "step_ms", "build_s", "torch",
                    "vllm")


def attempt_vllm(env, row, cfg, rec, timeout_s):
    """One vllm row in a process of its own (tests/calibration/vllm_row.py): vLLM's engine then runs in
    that process (VLLM_ENABLE_V1_MULTIPROCESSING=0), so its torch counters are the engine's, and
    whatever vLLM leaves behind (its KV pool, distributed state, compiled kernels) goes with the process.
    A child past timeout_s is killed with its process group."""
    t = time.time()
    rec["n_trainable"] = 0
    rec["n_layers"] = cfg.get("num_hidden_layers")
    work = tempfile.mkdtemp(prefix="fitgate_vllm_", dir=env.work_dir)
    try:
        model_dir = os.path.join(work, "model")
        os.makedirs(model_dir)
        with open(os.path.join(model_dir, "config.json"), "w", encoding="utf-8") as f:
            json.dump(cfg, f)
        spec = {"model_dir": model_dir, "dtype": "bfloat16" if row.precision == "bf16" else "float16",
                "batch": row.batch, "seq": row.seq, "gen_tokens": row.gen_tokens, "gpu_util": row.gpu_util,
                "max_model_len": row.seq + row.gen_tokens, "vocab_size": int(cfg.get("vocab_size") or 1000)}
        spec_path, out_path = os.path.join(work, "spec.json"), os.path.join(work, "result.json")
        with open(spec_path, "w", encoding="utf-8") as f:
            json.dump(spec, f)
        child_env = dict(os.environ, VLLM_ENABLE_V1_MULTIPROCESSING="0", VLLM_NO_USAGE_STATS="1",
                         DO_NOT_TRACK="1", PYTHONUNBUFFERED="1")
        # its log goes to our stderr; our stdout keeps one line per row
        p = subprocess.Popen([sys.executable, os.path.join(HERE, "vllm_row.py"), spec_path, out_path],
                             stdin=subprocess.DEVNULL, stdout=sys.stderr, stderr=sys.stderr, env=child_env,
                             start_new_session=True)
        try:
            rc = p.wait(timeout=max(1.0, timeout_s))
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            rc = None
        res = {}
        if os.path.exists(out_path):
            with open(out_path, encoding="utf-8") as f:
                res = json.load(f)
        for k, v in res.items():
            if k in VLLM_RESULT_COLS:
                rec[k] = v
            elif k == "notes":
                rec["_notes"].extend(v)
        if rc is None:
            rec["status"] = "timeout"
        elif "status" not in res:
            rec["status"] = f"error:vllm-child exit {rc} without a result"
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rec["row_s"] = time.time() - t


def finish(rec):
    rec["notes"] = ";".join(rec.pop("_notes", [])) or "-"
    return rec


# ----------------------------------------------------------------------------------------------
# CPU smoke grid
# ----------------------------------------------------------------------------------------------

SMOKE_CONFIGS = {
    "tiny-llama": {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64,
        "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
        "head_dim": 16, "vocab_size": 512, "max_position_embeddings": 256, "rms_norm_eps": 1e-5,
        "tie_word_embeddings": False,
    },
    "tiny-bert": {
        "architectures": ["BertModel"], "model_type": "bert", "hidden_size": 64, "intermediate_size": 128,
        "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 512, "max_position_embeddings": 128,
        "type_vocab_size": 2,
    },
    "tiny-qwen3moe": {
        "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 64,
        "intermediate_size": 128, "moe_intermediate_size": 32, "num_experts": 4, "num_experts_per_tok": 2,
        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
        "vocab_size": 512, "max_position_embeddings": 256, "mlp_only_layers": [], "decoder_sparse_step": 1,
        "tie_word_embeddings": False,
    },
}
SMOKE_ROWS = [
    ("smoke_llama_full_mx", "tiny-llama", "full", "bf16-mixed", 2, 32, 0, "-", "-"),
    ("smoke_llama_full_bf16_gc", "tiny-llama", "full", "bf16", 2, 32, 1, "-", "-"),
    ("smoke_llama_lora_gc_L1", "tiny-llama", "lora", "bf16-mixed", 2, 32, 1, "4", "1"),
    ("smoke_llama_lora_bf16", "tiny-llama", "lora", "bf16", 2, 32, 0, "4", "-"),
    ("smoke_llama_serve", "tiny-llama", "serve", "bf16", 2, 32, 0, "-", "-"),
    ("smoke_bert_full_mx", "tiny-bert", "full", "bf16-mixed", 2, 32, 0, "-", "-"),
    ("smoke_moe_full_bf16", "tiny-qwen3moe", "full", "bf16", 2, 32, 0, "-", "-"),
    ("smoke_moe_lora", "tiny-qwen3moe", "lora", "bf16-mixed", 2, 32, 1, "4", "-"),
    ("smoke_bert_full_fp32_eager", "tiny-bert", "full", "fp32", 2, 32, 0, "-", "-", "-", "-", "eager"),
    ("smoke_llama_lora_fp32", "tiny-llama", "lora", "fp32", 2, 32, 0, "4", "-"),
    # need CUDA: written as skipped:no-cuda on CPU, which exercises the skip path
    ("smoke_llama_qlora_prep", "tiny-llama", "qlora", "bf16-mixed", 2, 32, 1, "4", "-", "-", "-", "-",
     "nf4-dq", "bf16", "1"),
    ("smoke_llama_vllm", "tiny-llama", "vllm", "bf16", 2, 32, 0, "-", "-", "-", "-", "-", "-", "-", "-",
     "0.2", "8"),
]


def smoke_grid(tmproot):
    for name, cfg in SMOKE_CONFIGS.items():
        d = os.path.join(tmproot, name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "config.json"), "w", encoding="utf-8") as f:
            json.dump(cfg, f)
    rows = []
    for i, r in enumerate(SMOKE_ROWS):
        fields = [str(x) for x in r]
        fields[1] = os.path.join(tmproot, r[1])
        rows.append(Row(fields, i + 1))
    return rows


# ----------------------------------------------------------------------------------------------
# main
# ----------------------------------------------------------------------------------------------

def describe(row, cfg, cfg_json):
    """One line saying what the row would run (--dry-run)."""
    pat = cfg.get("hybrid_override_pattern")
    what = {"qlora": f" quant={row.quant} compute={row.bnb_compute} prepare={int(row.kbit_prepare)}",
            "vllm": f" util={row.gpu_util} gen={row.gen_tokens} max_model_len={row.seq + row.gen_tokens}"}
    layers = next((cfg[k] for k in ("num_hidden_layers", "num_layers", "n_layer", "n_layers") if k in cfg), None)
    return (f"{row.name} {cfg.get('model_type')} layers={layers} "
            f"{'pattern=' + pat + ' ' if pat else ''}{row.mode}/{row.precision} b={row.batch} s={row.seq} "
            f"gc={int(row.grad_ckpt)}{what.get(row.mode, '')} attn={row.attn if row.mode != 'vllm' else '-'} "
            f"json={len(cfg_json)}B")


def run_one(env, args, row, cfg, rec, cfg_json, notes):
    """Run one row on the device (deadline already checked); returns its record."""
    remaining = args.deadline_s - elapsed()
    if row.kind == "vllm":
        attempt_vllm(env, row, cfg, rec, min(VLLM_ROW_TIMEOUT_S, max(10.0, remaining)))
        return rec
    attempt(env, row, cfg, rec, None, min(args.row_timeout_s, max(10.0, remaining)))
    # MoE fused experts: the grouped_mm kernel may reject a dtype (e.g. fp32 master weights);
    # retry once with the per-expert loop so the row still yields a number.
    if rec["status"].startswith("error") and rec.get("experts_impl") == "grouped_mm":
        first = rec["status"]
        if elapsed() + (rec.get("row_s") or 0.0) * 1.5 <= args.deadline_s:
            say(f"{row.name} {first[:120]} -> retry experts_implementation=eager")
            rec = new_record(row, env, cfg_json, notes + ["retry-eager-after:" + first[6:100]])
            alarm_s = min(args.row_timeout_s, max(10.0, args.deadline_s - elapsed()))
            attempt(env, row, cfg, rec, "eager", alarm_s)
    return rec


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--grid", default=os.path.join(REPO, "tests", "calibration", "grid.tsv"))
    ap.add_argument("--out", default=None, help="result TSV (default measured.tsv, or smoke.tsv with --cpu-smoke; "
                                                "none with --dry-run)")
    ap.add_argument("--deadline-s", type=float, default=420.0,
                    help="skip rows that would start past this many seconds after launch (default 420)")
    ap.add_argument("--row-timeout-s", type=float, default=150.0, help="abort a single row after this long")
    ap.add_argument("--default-row-s", type=float, default=25.0,
                    help="time estimate for a model not yet measured in this run (deadline check)")
    ap.add_argument("--only", default=None, help="regex: run only rows whose name matches")
    ap.add_argument("--cpu-smoke", action="store_true", help="tiny built-in models on CPU, CUDA counters = 0")
    ap.add_argument("--dry-run", action="store_true", help="parse grid and cut configs; no torch, no run")
    ap.add_argument("--work-dir", default=None,
                    help="folder for QLoRA checkpoints and vLLM model folders (default: the system's temp)")
    args = ap.parse_args(argv)

    smoke_tmp = None
    try:
        if args.cpu_smoke:
            smoke_tmp = tempfile.mkdtemp(prefix="fitgate_smoke_")
            rows = smoke_grid(smoke_tmp)
            out = args.out or "smoke.tsv"
        else:
            rows = parse_grid(args.grid)
            out = args.out or (os.devnull if args.dry_run else "measured.tsv")
    except (OSError, ValueError) as e:
        print(f"measure.py: {args.grid}: {e}", file=sys.stderr)
        return 2
    if args.only:
        rows = [r for r in rows if re.search(args.only, r.name)]

    writer = TsvWriter(out)
    env = None
    if not args.dry_run:
        try:
            env = Env(cpu=args.cpu_smoke, work_dir=args.work_dir)
        except BaseException as e:  # no torch / transformers / GPU: say so in every row, then stop
            traceback.print_exc(file=sys.stderr)
            msg = "error:env: " + re.sub(r"\s+", " ", f"{type(e).__name__}: {e}")[:160]
            for row in rows:
                rec = new_record(row, None, "", [])
                rec["status"] = msg
                writer.row(finish(rec))
            writer.close()
            say(msg)
            return 2
        say(f"device={env.gpu} torch={env.torch.__version__} transformers={env.transformers.__version__} "
            f"peft={env.peft_version} bitsandbytes={dist_version('bitsandbytes')} vllm={dist_version('vllm')} "
            f"alloc_conf={env.alloc_conf} rows={len(rows)} deadline={args.deadline_s:.0f}s out={out}")
    else:
        say(f"dry run: {len(rows)} rows")

    est = {}  # (config_dir, layers_override, kind) -> longest row seconds seen
    counts = {}
    try:
        for row in rows:
            key = (row.config_dir, row.layers_override, row.kind)
            try:
                cfg, notes = effective_config(row.config_dir, row.layers_override)
                cfg_json = minified(cfg)
            except Exception as e:
                rec = new_record(row, env, "", [])
                rec["status"] = "error:config: " + re.sub(r"\s+", " ", str(e))[:160]
                writer.row(finish(rec))
                say(f"{row.name} {rec['status']}")
                counts["error"] = counts.get("error", 0) + 1
                continue
            rec = new_record(row, env, cfg_json, notes)

            if args.dry_run:
                rec["status"] = "dry-run"
                counts["dry-run"] = counts.get("dry-run", 0) + 1
                say(describe(row, cfg, cfg_json))
                writer.row(finish(rec))
                continue

            skip = env.missing(row)
            if skip is None:
                guess = est.get(key, DEFAULT_ROW_S.get(row.kind, args.default_row_s)) * (1.25 if key in est else 1.0)
                if elapsed() + guess > args.deadline_s:
                    skip = "skipped:deadline"
                    rec["_notes"].append(f"guess={guess:.1f}s")
            if skip is not None:
                rec["status"] = skip
                if skip == "skipped:no-bitsandbytes":
                    rec["_notes"].append("import:" + env.bitsandbytes()[1])
                writer.row(finish(rec))
                say(f"{row.name} {skip}")
                counts["skipped"] = counts.get("skipped", 0) + 1
                continue

            try:
                rec = run_one(env, args, row, cfg, rec, cfg_json, notes)
            except BaseException as e:  # bug in the harness itself, or Ctrl-C
                if isinstance(e, KeyboardInterrupt):
                    rec["status"] = "error:interrupted"
                    writer.row(finish(rec))
                    raise
                rec["status"] = "error:harness: " + re.sub(r"\s+", " ", f"{type(e).__name__}: {e}")[:160]
                traceback.print_exc(file=sys.stderr)
                try:
                    env.cleanup()
                except Exception:
                    pass
            est[key] = max(est.get(key, 0.0), rec.get("row_s") or 0.0)
            st = rec["status"]
            counts[st.split(":")[0]] = counts.get(st.split(":")[0], 0) + 1
            writer.row(finish(rec))
            say(f"{row.name} {st[:140]} weights={gib(rec.get('mem_weights'))} static={gib(rec.get('mem_static'))} "
                f"peak1={gib(rec.get('peak_alloc_step1'))} peak={gib(rec.get('peak_alloc'))} "
                f"reserved={gib(rec.get('peak_reserved'))} step={_fmt(rec.get('step_ms'))}ms "
                f"build={_fmt(rec.get('build_s'))}s row={_fmt(rec.get('row_s'))}s")
    finally:
        writer.close()
        if env is not None:
            env.drop_checkpoints()
        if smoke_tmp:
            shutil.rmtree(smoke_tmp, ignore_errors=True)
    say("done " + " ".join(f"{k}={v}" for k, v in sorted(counts.items())) + f" -> {out}")
    return 1 if args.dry_run and counts.get("error") else 0


if __name__ == "__main__":
    sys.exit(main())
