#!/usr/bin/env bash
# run-gpu.sh - the sixth calibration run (grid.tsv, "Sixth run") as one command on a machine
# with one CUDA GPU, inside a hard time limit:
#
#   bash tests/calibration/run-gpu.sh [OUTDIR]
#
# 1. bitsandbytes and vLLM, where they do not import: wheels carried in .whl/ are installed
#    (pip --no-index --no-deps into /tmp/fitgate-site, put on PYTHONPATH); else bitsandbytes
#    alone is tried from the package index (--no-deps, so pip never replaces torch), cut off
#    after PIP_S seconds: a machine without a network fails it at once.  vLLM is never fetched
#    (it pins its own torch); without it the vllm rows are written skipped:no-vllm.
# 2. measure.py on the rows matching ONLY, with a deadline that leaves the whole script inside
#    LIMIT_S seconds: rows that would start too late are written skipped:deadline.
# 3. the result split into its halves: OUTDIR/measured-h200-s6.tsv (tuning rows, s6_*) and
#    OUTDIR/measured-h200-s6-heldout.tsv (val_s6_*), beside OUTDIR/measure.log.
#
# OUTDIR: default $OUT (the device tool's folder), else build/calibration.  Environment:
# LIMIT_S (420), PIP_S (40), ONLY ('^(val_)?s6_'), PYTHON (python3).  Exit status: measure.py's
# (0 when it ran to the end, whatever each row's status), 124 when the limit cut it.
set -uo pipefail
cd "$(dirname "$0")/../.."

OUTDIR=${1:-${OUT:-build/calibration}}
LIMIT_S=${LIMIT_S:-420}
PIP_S=${PIP_S:-40}
ONLY=${ONLY:-'^(val_)?s6_'}
PY=${PYTHON:-python3}
SITE=/tmp/fitgate-site
mkdir -p "$OUTDIR"
LOG="$OUTDIR/measure.log"
: > "$LOG"
say() { echo "run-gpu.sh: $*" | tee -a "$LOG"; }
has() { "$PY" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('$1') is None)"; }

say "limit ${LIMIT_S}s, rows '$ONLY', out $OUTDIR"
{ nvidia-smi -L
  "$PY" -m pip list 2>/dev/null | grep -Ei '^(torch|transformers|peft|bitsandbytes|vllm) '
} >> "$LOG" 2>&1

# ---- 1. packages ----------------------------------------------------------------------------
if compgen -G ".whl/*.whl" > /dev/null; then
    say "installing the carried wheels: $(ls .whl | tr '\n' ' ')"
    timeout "$PIP_S" "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
        --upgrade --target "$SITE" .whl/*.whl >> "$LOG" 2>&1 || say "carried wheels: install failed"
    export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
fi
if ! has bitsandbytes; then
    say "bitsandbytes missing: trying the package index for ${PIP_S}s"
    timeout "$PIP_S" "$PY" -m pip install -q --no-deps --no-cache-dir --target "$SITE" \
        --retries 0 --timeout 10 bitsandbytes >> "$LOG" 2>&1 || say "bitsandbytes: not installed"
    export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
fi
has bitsandbytes && say "bitsandbytes: there" || say "bitsandbytes: none (qlora rows skipped)"
has vllm && say "vllm: there" || say "vllm: none (vllm rows skipped)"

# ---- 2. the run ------------------------------------------------------------------------------
left=$((LIMIT_S - SECONDS))
# rows start until left - 45 s; one started then is cut at its own deadline (measure.py alarm)
deadline=$((left - 45))
if [ "$deadline" -lt 30 ]; then
    say "no time left for a row (${left}s)"
    exit 124
fi
say "measure.py: deadline ${deadline}s, hard limit $((left - 5))s"
PYTHONUNBUFFERED=1 timeout -k 10 $((left - 5)) "$PY" tests/calibration/measure.py \
    --grid tests/calibration/grid.tsv --only "$ONLY" --out "$OUTDIR/measured-s6.tsv" \
    --deadline-s "$deadline" --row-timeout-s 120 --work-dir /tmp 2>&1 | tee -a "$LOG"
rc=${PIPESTATUS[0]}

# ---- 3. the halves ---------------------------------------------------------------------------
if [ -s "$OUTDIR/measured-s6.tsv" ]; then
    all="$OUTDIR/measured-s6.tsv"
    awk -F'\t' 'NR == 1 || $1 !~ /^val_/' "$all" > "$OUTDIR/measured-h200-s6.tsv"
    awk -F'\t' 'NR == 1 || $1 ~ /^val_/' "$all" > "$OUTDIR/measured-h200-s6-heldout.tsv"
    say "statuses: $(awk -F'\t' '
        NR == 1 { for (i = 1; i <= NF; i++) if ($i == "status") c = i; next }
        { s = $c; sub(/:.*/, "", s); n[s]++ }
        END { for (s in n) printf "%s=%d ", s, n[s] }' "$all")"
fi
say "done in ${SECONDS}s, measure.py exit $rc"
exit "$rc"
