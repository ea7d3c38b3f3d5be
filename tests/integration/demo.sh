#!/bin/bash
# tests/integration/demo.sh - `make demo` then `make demo-down` (tools/demo.sh), from a fresh
# clone of this repository's HEAD (DEMO_CLONE=0: from this tree, uncommitted changes and
# all): the three outcomes (a job that fits and runs with FITGATE_*, one rejected with the
# request that would fit, one resized that runs with its plan), the audit report, the line
# on how to go on, and after demo-down no daemon of it left and its directory gone.
#
# Run as root (make integration); the demo's directory is a fresh one under /tmp, not the
# default /tmp/fitgate-demo, so a demo someone left up is not touched.
set -u
REPO=$(cd "$(dirname "$0")/../.." && pwd)
ME=$(basename "$0")
if [ "$(id -u)" != 0 ]; then
    echo "$ME: SKIP: needs root (make demo runs munged, slurmctld and slurmd)"
    exit 0
fi
PASS=0
FAIL=0
ok() { echo "ok   $*"; PASS=$((PASS + 1)); }
bad() { echo "FAIL $*"; FAIL=$((FAIL + 1)); }
W=$(mktemp -d /tmp/fitgate-demo-test.XXXXXX) || exit 2
chmod 755 "$W"   # the demo's jobs run as nobody, under $W/demo
export FITGATE_DEMO=$W/demo
SRC=$REPO
cleanup() {
    # a demo that failed half-way: demo-down stops what its pid files name
    [ -d "$FITGATE_DEMO" ] && bash "$SRC/tools/demo.sh" down >/dev/null 2>&1
    rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ "${DEMO_CLONE:-1}" != 0 ] && ! git -C "$REPO" rev-parse --git-dir >/dev/null 2>&1; then
    echo "$ME: $REPO is not a git checkout: running the demo from the tree"
    DEMO_CLONE=0
fi
if [ "${DEMO_CLONE:-1}" != 0 ]; then
    git clone -q "$REPO" "$W/clone" || { echo "$ME: git clone failed"; exit 2; }
    SRC=$W/clone
fi
T0=$(date +%s%N)
(cd "$SRC" && timeout 1200 make demo) > "$W/up.txt" 2>&1
RC=$?
UP_S=$(( ($(date +%s%N) - T0) / 1000000 ))
sed 's/\x1b\[[0-9;]*m//g' "$W/up.txt" > "$W/up.plain"
has() { grep -qE -- "$1" "$W/up.plain"; }
if [ $RC = 0 ]; then
    ok "make demo ran in $((UP_S / 1000)).$((UP_S % 1000 / 100)) s (fresh clone: ${DEMO_CLONE:-1})"
else
    bad "make demo exited $RC"
    tail -n 30 "$W/up.plain" | sed 's/^/     | /'
fi

# the job that fits: submitted silently, ran, saw its plan
if has '^  submitted: job [0-9]+$' && has '^  job [0-9]+ \(fits\): JobState=COMPLETED' &&
    sed -n '/(fits): JobState/,/^  job /p' "$W/up.plain" | grep -q '^    FITGATE_TP=1$'; then
    ok "a job that fits runs with FITGATE_* (Qwen3-0.6B LoRA, 1 x T4)"
else
    bad "the job that fits"
fi
# the rejected one, with the request that would fit
if has 'fitgate: rejected: LoRA of nvidia/NVIDIA-Nemotron-Nano-9B-v2 does not fit --gres=gpu:t4:1' &&
    has 'fitgate: remedy [0-9]+ \(more GPUs\):( --ft-[a-z0-9-]+=[^ ]+)* --gres=gpu:t4:[2-8] ' && ! has 'unexpected: accepted'; then
    ok "a job rejected with its re-checked remedy: $(grep -oE 'remedy [0-9]+ \(more GPUs\):( --ft-[a-z0-9-]+=[^ ]+)* --gres=gpu:t4:[0-9]+' "$W/up.plain" | head -1)"
else
    bad "the rejected job"
fi
# the resized one: a larger request, ran, its plan split over the GPUs it got
N=$(grep -oE 'TresPerNode=gres:gpu:t4:[0-9]+' "$W/up.plain" | grep -oE '[0-9]+$')
if has 'fitgate: resized: LoRA of .* the job now asks for --gres=gpu:t4:[2-8]' &&
    [ -n "$N" ] && [ "$N" -ge 2 ] && has '^  job [0-9]+ \(resized\): JobState=COMPLETED' &&
    sed -n '/(resized): JobState/,/^==/p' "$W/up.plain" | grep -q "^    FITGATE_GPUS=$N$"; then
    ok "a job resized to $N x T4 runs with FITGATE_GPUS=$N and its layout"
else
    bad "the resized job (TresPerNode gpu:t4:${N:-?})"
fi
# the audit report: three decisions, one of each
if has 'fitgate report: 3 decisions from 1 log' &&
    grep -qE '^  total +3 +1 +0 +1 +1 +0 +0 ' "$W/up.plain"; then
    ok "the audit report: 3 decisions, allow 1, reject 1, resize 1"
else
    bad "the audit report"
    sed -n '/audit report/,$p' "$W/up.plain" | head -12 | sed 's/^/     | /'
fi
if has "export SLURM_CONF=$FITGATE_DEMO/etc/slurm.conf" && has 'sbatch --ft-model=' &&
    has 'make demo-down'; then
    ok "it says how to try one's own job and how to remove the cluster"
else
    bad "the closing lines"
fi
# still up after make demo returned: the daemons it started
PIDS=""
for f in "$FITGATE_DEMO"/run/*.pid; do [ -s "$f" ] && PIDS="$PIDS $(cat "$f")"; done
UPNOW=0
for p in $PIDS; do kill -0 "$p" 2>/dev/null && UPNOW=$((UPNOW + 1)); done
if [ "$UPNOW" = 3 ] && SLURM_CONF=$FITGATE_DEMO/etc/slurm.conf timeout 5 sinfo -h >/dev/null; then
    ok "the cluster is left up (munged, slurmctld, slurmd:$PIDS)"
else
    bad "the cluster is not up after make demo ($UPNOW of 3 daemons:$PIDS)"
fi

(cd "$SRC" && timeout 120 make demo-down) > "$W/down.txt" 2>&1
RC=$?
LEFT=""
for p in $PIDS; do kill -0 "$p" 2>/dev/null && LEFT="$LEFT $p"; done
NAMED=$(pgrep -a -f -- "$FITGATE_DEMO")
if [ $RC = 0 ] && [ -z "$LEFT" ] && [ -z "$NAMED" ] && [ ! -e "$FITGATE_DEMO" ]; then
    ok "make demo-down: no daemon left, $FITGATE_DEMO removed"
else
    bad "make demo-down (rc $RC; still running:$LEFT $NAMED)"
    sed 's/^/     | /' "$W/down.txt"
fi

echo "$ME: $PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
