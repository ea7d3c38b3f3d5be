#!/bin/bash
# tests/integration/learn.sh - closing the loop on a real Slurm cluster (docs/learn.md): the
# loopback cluster of tests/integration/slurm/ (Slurm 22.05 here: no gres/gpumem, so the
# node's own sampler, GpuSampler=, is what measures), the fake libnvidia-ml.so.1
# (tests/fake_nvml.c) loaded by the plugin through nvml=PATH, 20 tagged jobs of mixed
# frameworks and modes, each "using" a scripted amount: ratio x (its FITGATE_ESTIMATE_BYTES
# + 777 MiB context, FG_CUDA_PROCESS_BYTES), written where the fake NVML reads device N (the file devN beside it)
# while the job runs.  One job prints PyTorch's out-of-memory message and fails.
#
#   - every job gets a start line and an end line (gpu_peak_bytes) from the node, joined to
#     its decision at sbatch (which records the model's model_type) by the submit id;
#   - fitgate learn gives each job's ratio back as scripted (to the MiB's rounding), in the
#     family of the recorded model_type, flags the admitted job that ran out, writes a
#     calibration;
#   - the plugin loads that calibration (Calibration=): a new job's message says
#     "site calibration: x..." and so does its audit line;
#   - untagged jobs: no sampler, no line.
#
# Run as root (make integration); SKIP otherwise.  Every daemon it starts is stopped on exit.
set -u
# shellcheck source=tests/integration/slurm/common.sh
source "$(dirname "$0")/slurm/common.sh"
slurm_begin fitgate-learn

[ -f build/tests/fake-nvml/libnvidia-ml.so.1 ] ||
    timeout 300 make -s build/tests/fake-nvml/libnvidia-ml.so.1 >/dev/null ||
    die "cannot build the fake NVML"
cp tests/fixtures/hwloc/mpibind-g4dnmetal.xml "$SROOT/t4x8.xml" || die "copy topology"
slurm_stage
mkdir -p "$SROOT/nvml" "$SROOT/audit"
cp build/tests/fake-nvml/libnvidia-ml.so.1 "$SROOT/nvml/" || die "copy the fake NVML"
chmod 1777 "$SROOT/nvml"         # jobs (nobody) write devN there
chmod 1733 "$SROOT/audit"        # docs/audit.md: a file per user
AUDIT=$SROOT/audit/nobody.log
policy() { printf '%s\n' "$@" > "$SROOT/fitgate.conf"; chmod 644 "$SROOT/fitgate.conf"; }
policy "LogFile=$SROOT/audit/%u.log" "GpuSampler=0.1"
PLUGSTACK="required $SROOT/spank_fitgate.so conf=$SROOT/fitgate.conf topology=$SROOT/t4x8.xml nvml=$SROOT/nvml/libnvidia-ml.so.1"
slurm_up

wait_all() {   # until the queue is empty (TMO_ALL seconds at most)
    local i
    for i in $(seq $((${TMO_ALL:-180} * 5))); do
        [ -z "$(timeout 5 squeue -h -o %i 2>/dev/null)" ] && return 0
        sleep 0.2
    done
    return 1
}

# The job: write its scripted MiB on each of its GPUs, hold it, give it back.
cat > "$SROOT/use.sh" <<'EOS'
#!/bin/bash
mib=$(awk -v e="${FITGATE_ESTIMATE_BYTES:-0}" -v r="$RATIO" \
    'BEGIN { printf "%d", r * (e + 814743552) / 1048576 + 0.5 }')
echo "use: $mib MiB per GPU on ${SLURM_JOB_GPUS:-none} (estimate ${FITGATE_ESTIMATE_BYTES:-?})"
for g in ${SLURM_JOB_GPUS//,/ }; do echo "$mib" > "$NVML/dev$g"; done
sleep 1.5
if [ -n "${OOM:-}" ]; then
    echo "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 14.58 GiB" >&2
fi
for g in ${SLURM_JOB_GPUS//,/ }; do echo 0 > "$NVML/dev$g"; done
[ -z "${OOM:-}" ]
EOS
chmod 755 "$SROOT/use.sh"

# --- 1. 20 tagged jobs: framework mode ratio [oom] -------------------------------------------
JOBS="hf:lora:1.02 hf:lora:1.05 hf:lora:1.08 hf:lora:1.10 hf:lora:1.12 hf:lora:1.07 hf:lora:1.09
hf:lora:1.06 lightning:lora:0.95 lightning:lora:0.97 lightning:lora:0.93 lightning:lora:0.99
lightning:lora:0.96 torchtune:qlora:1.20 torchtune:qlora:1.25 torchtune:qlora:1.15
torchtune:full:0.90 torchtune:full:0.92 hf:qlora:1.10 hf:lora:1.30:oom"
: > "$SROOT/script.txt"
n=0
for j in $JOBS; do
    IFS=: read -r fw mode ratio oom <<< "$j"
    if TMO=30 as_user sbatch --parsable -J "learn" -o "$SROOT/jobs/slurm-%j.out" \
        --gres=gpu:t4:1 --export="ALL,RATIO=$ratio,NVML=$SROOT/nvml,OOM=$oom" \
        --ft-model="$QWEN" --ft-mode="$mode" --ft-framework="$fw" "$SROOT/use.sh"; then
        echo "$(cat "$SROOT/out") $fw $mode $ratio ${oom:-}" >> "$SROOT/script.txt"
        n=$((n + 1))
    else
        bad "sbatch $fw $mode $ratio refused: $(head -3 "$SROOT/err")"
    fi
done
[ "$n" = 20 ] && ok "20 tagged jobs submitted" || bad "only $n of 20 jobs submitted"
# one untagged job: no sampler, no line
TMO=30 as_user sbatch --parsable -J plain -o "$SROOT/jobs/plain-%j.out" --gres=gpu:t4:1 \
    --wrap 'sleep 0.5' || bad "untagged job refused"
TMO_ALL=240 wait_all || bad "jobs still queued after 240 s"

starts=$(grep -c '"where":"stepd"' "$AUDIT" 2>/dev/null)
ends=$(grep -c '"gpu_peak_bytes"' "$AUDIT" 2>/dev/null)
subs=$(grep -c '"where":"sbatch"' "$AUDIT" 2>/dev/null)
typed=$(grep -c '"where":"sbatch",.*"model_type":"qwen3"' "$AUDIT" 2>/dev/null)
if [ "$subs" = 20 ] && [ "$typed" = 20 ] && [ "$starts" = 40 ] && [ "$ends" = 20 ]; then
    ok "audit: 20 decisions with their model_type, 20 start and 20 end lines from the node"
else
    bad "audit: $subs decisions ($typed with model_type qwen3), $starts stepd lines (40 expected), $ends with a peak"
    tail -n 30 "$SROOT/log/slurmd.log" | grep -i fitgate | head -10
fi

# --- 2. fitgate learn: the ratios as scripted, the job that ran out ------------------------
build/fitgate learn "$AUDIT" --logs "$SROOT/jobs" --json > "$SROOT/learn.json" \
    2> "$SROOT/learn.err" || bad "fitgate learn failed: $(head -3 "$SROOT/learn.err")"
if python3 - "$SROOT/learn.json" "$SROOT/script.txt" <<'EOP'
import json, sys
r = json.load(open(sys.argv[1]))
script = {}
for line in open(sys.argv[2]):
    f = line.split()
    script[int(f[0])] = (f[1], f[2], float(f[3]), len(f) > 4)
jobs = {j["job_id"]: j for j in r["jobs"]}
bad = []
if len(jobs) != 20:
    bad.append("%d jobs joined" % len(jobs))
for jid, (fw, mode, ratio, oom) in script.items():
    j = jobs.get(jid)
    if not j:
        bad.append("job %d not joined" % jid)
        continue
    # the job wrote round(ratio x (estimate + context)) MiB: within half a MiB of the ratio
    tol = 0.5 * 2**20 / (j["estimate_bytes"] + 2**29) + 1e-12
    if abs(j["ratio"] - ratio) > tol or j["peak_source"] != "nvml":
        bad.append("job %d: ratio %.6f, scripted %.2f (%s)" % (jid, j["ratio"], ratio, j["peak_source"]))
    if (j["framework"], j["mode"]) != ({"lightning": "lit-gpt"}.get(fw, fw), mode):
        bad.append("job %d: %s %s" % (jid, j["framework"], j["mode"]))
    if j["family"] != "qwen3":  # the architecture the decision recorded
        bad.append("job %d: family %s" % (jid, j["family"]))
    if oom != (j["gpu_oom"] and j["admitted"]):
        bad.append("job %d: gpu_oom %s" % (jid, j["gpu_oom"]))
print("learn: %d jobs, ratios %s" % (len(jobs), " ".join("%.3f" % jobs[k]["ratio"] for k in sorted(jobs))))
if bad:
    print("\n".join(bad))
    sys.exit(1)
EOP
then ok "learn gives every job's ratio back as scripted and flags the one that ran out"
else bad "learn's figures"; fi
build/fitgate learn "$AUDIT" --logs "$SROOT/jobs" > "$SROOT/learn.txt" 2>/dev/null
if grep -q "admitted (allow) and died of GPU memory: slurm-.*\"CUDA out of memory\"" "$SROOT/learn.txt"
then ok "the text report names the job that died of GPU memory"
else bad "text report: $(grep -A3 Flags "$SROOT/learn.txt")"; fi

# --- 3. the calibration, written and loaded back by the plugin ------------------------------
CAL=$SROOT/calibration.conf
build/fitgate learn "$AUDIT" --logs "$SROOT/jobs" --min-jobs 5 --write-calibration "$CAL" \
    > /dev/null 2> "$SROOT/learn.err" || bad "learn --write-calibration: $(cat "$SROOT/learn.err")"
chmod 644 "$CAL" 2>/dev/null
if grep -q '^Framework=hf Mode=lora Factor=1\.' "$CAL" && grep -q '^Framework=lit-gpt Mode=lora' "$CAL"
then ok "calibration written: $(grep -c '^Framework=' "$CAL") rows"
else bad "calibration: $(cat "$CAL" 2>/dev/null)"; fi
policy "LogFile=$SROOT/audit/%u.log" "Calibration=$CAL"
if TMO=30 as_user sbatch --parsable --hold -J calibrated --gres=gpu:t4:1 \
    --ft-model="$QWEN" --ft-mode=lora --ft-framework=hf --wrap true &&
    err_has "site calibration: x1."; then
    ok "the plugin applies the calibration and says so: $(grep -o 'site calibration[^)]*' "$SROOT/err" | head -1)"
else
    bad "no calibration in the message: $(head -3 "$SROOT/err")"
fi
timeout 10 scancel -n calibrated
if tail -n 1 "$AUDIT" | grep -q '"where":"sbatch".*site calibration: x1\.'; then
    ok "the audit line of that decision keeps it"
else
    bad "audit line: $(tail -n 1 "$AUDIT" | cut -c1-300)"
fi

echo "$ME: $PASS passed, $FAIL failed in $(ms_since "$T_START") ms"
[ "$FAIL" = 0 ]
