#!/bin/bash
# tools/bench.sh - fitgate's benchmarks (`make bench`), written to build/bench.txt:
#   1. estimator throughput in-process (build/bench/bench_plan, every fixture model):
#      graph-from-text, full plans (the brief's definition) and CLI-equivalent plans per
#      second per core, medians of 7 runs, then the same per model;
#   2. whole-process time and peak RSS of `fitgate plan` (build/bench/bench_exec: median of
#      31 interleaved runs): the README example by path and by hub id from a Hugging Face
#      cache (offline), --json, a small model, the process start-up alone, and every fixture
#      model (11 runs each, summarised);
#   3. what a fresh process pays to dlopen the plugin's engine part (libcurl and hwloc come
#      with it) and the thin plugin;
#   4. the plugin inside sbatch on the loopback Slurm cluster (tools/bench_slurm.sh; root,
#      101 interleaved rounds: sbatch is cheap and the machine noisy);
#   5. enforcing at the controller (tools/bench_ctld.sh): the command job_submit.lua runs per
#      tagged job (fork + exec included, median and p99 of 201 runs), and as root sbatch with
#      vs without JobSubmitPlugins=lua;
#   6. the node-side GPU sampler (GpuSampler=, build/bench/bench_sampler) against the fake
#      libnvidia-ml.so.1: a tagged job's cost without NVML, and CPU per sample of 8 GPUs;
#   7. `fitgate learn` at site scale (tools/gen_learn.sh: 500k jobs, 1M audit lines, 1.5M
#      sacct rows): wall time and peak RSS against the targets, 30 s and 500 MB.
# "lean" rows are an experiment (bench/lean_stubs.c): the same binaries without libcurl and
# hwloc linked in, i.e. what loading them only when needed would give.
# The machine is shared and noisy: every figure is a median with its spread, never one run.
# BENCH_QUICK=1 runs fewer repetitions (a smoke test of the scripts, not figures to quote).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
B=$ROOT/build
OUT=${BENCH_TXT:-$B/bench.txt}
for f in fitgate bench/bench_plan bench/bench_exec bench/bench_dlopen; do
    [ -x "$B/$f" ] || { echo "bench.sh: $B/$f missing: run make bench" >&2; exit 2; }
done
RUNS=31 PLAN_RUNS=7 PLAN_MS=500 MODEL_RUNS=11 SLURM_RUNS=101 CTLD_RUNS=201 SBATCH_RUNS=51
[ -n "${BENCH_QUICK:-}" ] && RUNS=5 PLAN_RUNS=3 PLAN_MS=100 MODEL_RUNS=3 SLURM_RUNS=5 \
    CTLD_RUNS=11 SBATCH_RUNS=5
EXEC=$B/bench/bench_exec
WORK=$(mktemp -d /tmp/fitgate-bench.XXXXXX) || exit 2
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$(dirname "$OUT")"
exec > >(tee "$OUT") 2>&1

section() { printf '\n## %s\n\n' "$*"; }
echo "# fitgate benchmarks ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
echo "commit $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet HEAD -- engine cli policies plugin 2>/dev/null || echo ' + uncommitted changes')"
echo "machine: $(nproc) cores, $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "compiler: $(${CC:-cc} --version | head -1); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

section "1. Estimator throughput, in-process (bench_plan)"
"$B/bench/bench_plan" --runs "$PLAN_RUNS" --min-ms "$PLAN_MS"
echo
echo "# per model (3 runs each), slowest first:"
"$B/bench/bench_plan" --runs 3 --min-ms "$((PLAN_MS / 5))" --per-model --op full |
    grep -v '^#' | grep -v 'all [0-9]* models' |
    awk '{for (i = 1; i <= NF; i++) if ($i == "us/op)") print $(i - 1), $3}' |
    sort -rn | awk '{us[NR] = $1; name[NR] = $2}
        END {
            for (i = 1; i <= 8 && i <= NR; i++) printf "  %10.1f us  %s\n", us[i], name[i]
            printf "  ...\n"
            for (i = NR - 2; i <= NR; i++) if (i > 8) printf "  %10.1f us  %s\n", us[i], name[i]
            printf "  median model: %.1f us per full plan (%.0f plans/s/core); %d models\n",
                   us[int((NR + 1) / 2)], 1e6 / us[int((NR + 1) / 2)], NR
        }'

echo
echo "# the gate on 4,096 H200 for DeepSeek-V3 full under Megatron (budget: 50 ms):"
"$B/bench/bench_plan" --runs 3 --min-ms 200 --op large --only deepseek-ai--DeepSeek-V3 |
    grep -v '^#'
echo
echo "# a rejected check on 16,384 A100 40 GB, its remedies searched (budget: 50 ms):"
echo "# DPO LoRA at 16,384 tokens under transformers (granite-4.0-h-small, Llama-3.1-70B)"
for m in ibm-granite--granite-4.0-h-small meta-llama--Llama-3.1-70B; do
    "$B/bench/bench_plan" --runs 3 --min-ms 200 --op reject --only "$m" | grep -v '^#'
done

section "2. fitgate plan, whole process (bench_exec, $RUNS interleaved runs)"
NEMO=tests/fixtures/models/nvidia--NVIDIA-Nemotron-Nano-9B-v2
QWEN=tests/fixtures/models/Qwen--Qwen3-0.6B
# a Hugging Face cache holding the README model: hub id -> config without the network
SHA=0123456789abcdef0123456789abcdef01234567
HC=$WORK/hf/hub/models--nvidia--NVIDIA-Nemotron-Nano-9B-v2
mkdir -p "$HC/refs" "$HC/snapshots/$SHA" && printf '%s' "$SHA" >"$HC/refs/main" &&
    cp "$NEMO/config.json" "$HC/snapshots/$SHA/"
CACHED="HF_HUB_CACHE=$WORK/hf/hub HF_HUB_OFFLINE=1 XDG_CACHE_HOME=$WORK/xdg"
"$EXEC" -n "$RUNS" -w 3 -o "$WORK/cli.tsv" \
    "startup=$B/fitgate" \
    "nemo-h200=$B/fitgate plan $NEMO --gpu h200" \
    "nemo-cached-id=$CACHED $B/fitgate plan nvidia/NVIDIA-Nemotron-Nano-9B-v2 --gpu h200" \
    "nemo-json=$B/fitgate plan $NEMO --json" \
    "qwen0.6b-h200=$B/fitgate plan $QWEN --gpu h200" \
    "nemo-check-lora=$B/fitgate check $NEMO --mode lora --gpu h100 --gpus 1"
echo "(startup: the usage message, exit 2: the dynamic loader and libc start-up alone)"
echo
echo "# reading the job's own config (--config): a check from the framework's file against the"
echo "# same check from the flags it reads to (target: at most 0.2 ms more), interleaved"
FX=$ROOT/tests/fixtures
PHI="$FX/models/microsoft--phi-2 --gres=gpu:a100_40g:1"
"$EXEC" -n "$RUNS" -w 3 \
    "phi2-flags=$B/fitgate check $PHI --seq-len=2048 --grad-accum=1 --batch=2 --optimizer=adamw-fused --precision=bf16 --grad-ckpt=yes --attention=sdpa --framework=axolotl" \
    "phi2-config=$B/fitgate check --config $FX/configs/axolotl/examples/phi/phi2-ft.yml $PHI" \
    "gemma3-regex-config=$B/fitgate check --config $FX/configs/axolotl/examples/gemma3/gemma-3-4b-vision-qlora.yml $FX/models/google--gemma-3-4b-it --gres=gpu:a100_40g:1" \
    "grpo-config=$B/fitgate check --config $FX/configs/trl/open-r1/recipes/DeepSeek-R1-Distill-Qwen-1.5B/grpo/config_demo.yaml $FX/models/Qwen--Qwen2.5-3B-Instruct --gres=gpu:h100:8"
echo
echo "# the same for a DeepSpeed JSON, and both summed up as medians of the per-run times"
echo "# (YAML maps libyaml on its first use)"
L8=tests/fixtures/models/meta-llama--Llama-3.1-8B CF=tests/fixtures/configs
"$EXEC" -n "$RUNS" -w 3 -o "$WORK/config.tsv" \
    "qlora-flags=$B/fitgate check $L8 --gres=gpu:a100_40g:1 --mode qlora --seq-len 4096 \
--lora-rank 32 --lora-targets all-linear --batch 2 --optimizer adamw --precision bf16-mixed \
--grad-ckpt --attention sdpa --framework axolotl" \
    "qlora-yaml=$B/fitgate check --config $CF/axolotl/qlora.yml $L8 --gres=gpu:a100_40g:1" \
    "ds-flags=$B/fitgate check $L8 --gres=gpu:h100:8 --zero 3 --offload params --framework deepspeed" \
    "ds-json=$B/fitgate check --config $CF/deepspeed/ds_z3_offload_config.json $L8 --gres=gpu:h100:8"
# medians of the per-run wall and CPU times (columns 3 and 4, us), per label
med() { awk -F'\t' -v l="$1" -v k="$2" '$1 == l {print $k}' "$WORK/config.tsv" | sort -n |
        awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)] / 1000}'; }
awk -v qf="$(med qlora-flags 3)" -v qy="$(med qlora-yaml 3)" -v df="$(med ds-flags 3)" \
    -v dj="$(med ds-json 3)" -v cqf="$(med qlora-flags 4)" -v cqy="$(med qlora-yaml 4)" \
    -v cdf="$(med ds-flags 4)" -v cdj="$(med ds-json 4)" 'BEGIN {
    printf "  config cost (medians): YAML %+.3f ms wall, %+.3f ms CPU; JSON %+.3f ms wall, %+.3f ms CPU\n",
           qy - qf, cqy - cqf, dj - df, cdj - cdf}'
if [ -x "$B/bench/fitgate_lean" ]; then
    echo
    echo "# the same CLI without libcurl and hwloc linked in (bench/lean_stubs.c), interleaved"
    L=$B/bench/fitgate_lean
    "$EXEC" -n "$RUNS" -w 3 \
        "startup=$B/fitgate" "lean-startup=$L" \
        "nemo-h200=$B/fitgate plan $NEMO --gpu h200" "lean-nemo-h200=$L plan $NEMO --gpu h200" \
        "lean-nemo-cached-id=$CACHED $L plan nvidia/NVIDIA-Nemotron-Nano-9B-v2 --gpu h200" \
        "lean-qwen0.6b-h200=$L plan $QWEN --gpu h200"
fi
echo
echo "# every fixture model: fitgate plan M --gpu h200, median of $MODEL_RUNS runs each"
for m in tests/fixtures/models/*/; do
    [ -f "$m/config.json" ] || continue
    n=$(basename "$m")
    "$EXEC" -n "$MODEL_RUNS" -w 1 "m=$B/fitgate plan $m --gpu h200" |
        awk -v n="$n" '$1 == "m" {print $4, $8, $9, n}'
done | sort -n >"$WORK/models.txt"
awk '{ms[NR] = $1; rss[NR] = $3; name[NR] = $4; if ($3 > maxrss) {maxrss = $3; mr = $4}}
    END {
        printf "  models: %d; median of the per-model medians %.2f ms; fastest %.2f ms (%s)\n",
               NR, ms[int((NR + 1) / 2)], ms[1], name[1]
        printf "  under 5 ms: %d of %d; slowest:\n", under(ms, NR), NR
        for (i = NR; i > NR - 6 && i > 0; i--) printf "    %8.2f ms  %s\n", ms[i], name[i]
        printf "  largest peak RSS: %d KB (%s)\n", maxrss, mr
    }
    function under(v, n,   i, c) { c = 0; for (i = 1; i <= n; i++) if (v[i] <= 5) c++; return c }' \
    "$WORK/models.txt"

section "3. Loading the plugin's parts in a fresh process (bench_dlopen, $RUNS runs)"
SL=$(ls /usr/lib/x86_64-linux-gnu/slurm-wlm/libslurmfull.so 2>/dev/null | head -1)
if [ -n "$SL" ] && [ -f "$B/fitgate_engine.so" ]; then
    v=("slurm-only=$B/bench/bench_dlopen -g $SL"
       "thin-plugin=$B/bench/bench_dlopen -g $SL $B/spank_fitgate.so"
       "engine-part=$B/bench/bench_dlopen -g $SL $B/fitgate_engine.so")
    [ -f "$B/bench/fitgate_engine_lean.so" ] &&
        v+=("lean-engine=$B/bench/bench_dlopen -g $SL $B/bench/fitgate_engine_lean.so")
    "$EXEC" -n "$RUNS" -w 2 "${v[@]}"
    echo "(libslurmfull loaded first, RTLD_GLOBAL, as in sbatch; lean-engine: bench/lean_stubs.c)"
    echo "shared objects the engine part brings: $(ldd "$B/fitgate_engine.so" | wc -l)"
else
    echo "skipped: libslurmfull or build/fitgate_engine.so missing"
fi

section "4. The plugin inside sbatch (tools/bench_slurm.sh)"
BENCH_OUT=$B BENCH_RUNS=$SLURM_RUNS FITGATE_BUILD=$B bash "$ROOT/tools/bench_slurm.sh"

section "5. Enforcing at the controller: job_submit.lua (tools/bench_ctld.sh)"
BENCH_CTLD_RUNS=$CTLD_RUNS BENCH_SBATCH_RUNS=$SBATCH_RUNS FITGATE_BUILD=$B \
    bash "$ROOT/tools/bench_ctld.sh"

section "6. The node-side GPU sampler, GpuSampler= (bench_sampler, fake NVML)"
if [ -x "$B/bench/bench_sampler" ] && [ -f "$B/tests/fake-nvml/libnvidia-ml.so.1" ]; then
    "$B/bench/bench_sampler" "$B/tests/fake-nvml/libnvidia-ml.so.1" --ms "$([ -n "${BENCH_QUICK:-}" ] && echo 500 || echo 3000)"
    echo "(untagged jobs: nothing, the engine part is not loaded; the fake answers from memory,"
    echo " so a real NVML call's driver time comes on top)"
else
    echo "skipped: build/bench/bench_sampler or the fake NVML missing"
fi

section "7. fitgate learn at site scale (tools/gen_learn.sh)"
LJOBS=$([ -n "${BENCH_QUICK:-}" ] && echo 50000 || echo 500000)
bash "$ROOT/tools/gen_learn.sh" "$LJOBS" "$WORK/learn"
echo "$LJOBS jobs: $(wc -l < "$WORK/learn/audit.log") audit lines, $(($(wc -l < "$WORK/learn/sacct.txt") - 1)) sacct rows"
for r in 1 2 3; do
    /usr/bin/time -f "%e %M" -o "$WORK/learn/time.$r" "$B/fitgate" learn "$WORK/learn/audit.log" \
        --sacct "$WORK/learn/sacct.txt" > "$WORK/learn/out.$r" || echo "learn failed (run $r)"
done
cat "$WORK/learn/time".* | sort -n | awk -v n="$LJOBS" 'NR == 2 {
    printf "learn, text: median of 3 runs %.2f s, peak RSS %.0f MB (targets for 500k jobs: 30 s, 500 MB)\n", $1, $2 / 1024
    if (n == 500000 && ($1 >= 30 || $2 / 1024 >= 500)) print "OVER TARGET"
}'
head -1 "$WORK/learn/out.1"
echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
