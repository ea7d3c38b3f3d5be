#!/bin/bash
# tests/integration/slurm_lua.sh - contrib/job_submit.lua (in slurmctld) and
# contrib/cli_filter.lua (in sbatch) on a real single-host Slurm cluster
# (tests/integration/slurm/cluster.sh): both call `fitgate check --json` for jobs tagged
# with the SPANK plugin's --ft-* options (the plugin is loaded with action=off, so it
# only registers the options).  Models are fixture configs, jobs are submitted as nobody.
#
# Run as root: `bash tests/integration/slurm_lua.sh` (make integration).  Installs
# slurmctld, slurmd, slurm-client and munge with apt-get when missing.  Every daemon it
# starts is stopped on exit; every command has a timeout.  KEEP=1 keeps the directory
# when a check fails.
set -u
REPO=$(cd "$(dirname "$0")/../.." && pwd)
cd "$REPO" || exit 2
HERE=$REPO/tests/integration/slurm
die() { echo "slurm_lua.sh: $*" >&2; exit 2; }

if [ "$(id -u)" != 0 ]; then
    echo "slurm_lua.sh: SKIP: needs root (it runs munged, slurmctld and slurmd)"
    exit 0
fi
missing=""
for b in munged slurmctld slurmd sbatch; do
    command -v "$b" >/dev/null 2>&1 || missing=1
done
if [ -n "$missing" ]; then
    echo "slurm_lua.sh: installing slurmctld slurmd slurm-client munge"
    timeout 300 apt-get update -qq &&
        DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -qq \
            slurmctld slurmd slurm-client munge >/dev/null || die "cannot install Slurm"
fi
if [ ! -f build/spank_fitgate.so ] || [ ! -f build/fitgate_engine.so ] || [ ! -x build/fitgate ]
then
    timeout 600 make -s all >/dev/null || die "build failed"
fi

T_START=$(date +%s%N)
SROOT=$(mktemp -d /tmp/fitgate-slurm-lua.XXXXXX) || die "mktemp failed"
chmod 755 "$SROOT"
FAIL=0
cleanup() {
    cluster_down
    if [ "$FAIL" != 0 ] && [ -n "${KEEP:-}" ]; then echo "slurm_lua.sh: kept $SROOT"
    else rm -rf "$SROOT"; fi
}
# shellcheck source=tests/integration/slurm/cluster.sh
source "$HERE/cluster.sh"
trap cleanup EXIT
trap 'exit 130' INT TERM

cp build/spank_fitgate.so build/fitgate_engine.so build/fitgate "$SROOT/" || die "copy"
mkdir -p "$SROOT/models"
for m in nvidia--NVIDIA-Nemotron-Nano-9B-v2 Qwen--Qwen3-0.6B; do
    mkdir -p "$SROOT/models/$m"
    cp "tests/fixtures/models/$m/config.json" "$SROOT/models/$m/" || die "copy $m"
done
chmod -R a+rX "$SROOT"
cc -std=c11 -O2 -o "$SROOT/blackhole" "$HERE/blackhole.c" || die "cannot build blackhole"
NEMO=$SROOT/models/nvidia--NVIDIA-Nemotron-Nano-9B-v2
QWEN=$SROOT/models/Qwen--Qwen3-0.6B

# lua_script SRC DEST ACTION: a contrib script with this test's fitgate and action
lua_script() {
    # slurmctld reloads job_submit.lua only when its mtime is later than the
    # second of the last load (job_submit_lua.c compares whole seconds), so
    # the rewrite must land in a later second than the sbatch before it
    sleep 1.1
    sed -e "s|^local FITGATE = .*|local FITGATE = \"$SROOT/fitgate\"|" \
        -e "s|^local ACTION = .*|local ACTION = \"$3\"|" "$1" > "$2.tmp" &&
        chmod 644 "$2.tmp" && mv "$2.tmp" "$2"
}
mkdir -p "$SROOT/etc"
lua_script contrib/job_submit.lua "$SROOT/etc/job_submit.lua" reject

PORTS=$("$SROOT/blackhole" freeport 2 | tr '\n' ' ')
NODE_GRES="gpu:t4:8,gpu:h100:8"
GRES_LINES="Name=gpu Type=t4 File=$SROOT/dev/nvidia[0-7]
Name=gpu Type=h100 File=$SROOT/dev/nvidia[8-15]"
PLUGSTACK="required $SROOT/spank_fitgate.so action=off"
EXTRA_CONF="JobSubmitPlugins=lua"
if ! cluster_up; then
    FAIL=1
    tail -n 20 "$SROOT"/log/*.log
    die "cluster did not come up"
fi
echo "slurm_lua.sh: cluster up in $(( ($(date +%s%N) - T_START) / 1000000 )) ms"

PASS=0
ok() { echo "ok   $*"; PASS=$((PASS + 1)); }
bad() {
    echo "FAIL $*"
    FAIL=$((FAIL + 1))
    [ -s "$SROOT/err" ] && sed 's/^/     | /' "$SROOT/err" | head -12
}
as_user() {   # stdout -> $SROOT/out, stderr -> $SROOT/err; CONF: the client's slurm.conf
    (cd "$SROOT/jobs" && timeout "${TMO:-30}" runuser -u nobody -- \
        env SLURM_CONF="${CONF:-$SLURM_CONF}" PATH=/usr/bin:/bin "$@") \
        > "$SROOT/out" 2> "$SROOT/err"
}
field() { timeout 5 scontrol show job "$1" | grep -o "$2=[^ ]*" | head -1; }
err_has() { grep -qF -- "$1" "$SROOT/err"; }
err_re() { grep -qE -- "$1" "$SROOT/err"; }

# --- job_submit.lua in slurmctld -------------------------------------------------------------
if ! as_user sbatch --parsable --hold --ft-model="$NEMO" --ft-mode=lora --gres=gpu:t4:1 \
    --wrap true && err_re "fitgate: rejected: .* does not fit 1 x t4; it needs [2-8] GPUs" &&
    err_re "ask for --gres=gpu:t4:[2-8]"; then
    ok "job_submit.lua rejects LoRA Nemotron-Nano-9B-v2 on 1 x T4 in slurmctld"
else
    bad "job_submit.lua reject"
fi
if as_user sbatch --parsable --hold --ft-model="$QWEN" --ft-mode=lora --gres=gpu:t4:1 --wrap true &&
    [ ! -s "$SROOT/err" ] && as_user sbatch --parsable --hold --gres=gpu:t4:1 --wrap true &&
    [ ! -s "$SROOT/err" ]; then
    ok "job_submit.lua: a job that fits and an untagged job pass silently"
else
    bad "job_submit.lua pass-through"
fi
lua_script contrib/job_submit.lua "$SROOT/etc/job_submit.lua" resize
if as_user sbatch --parsable --hold --ft-model="$NEMO" --ft-mode=lora --gres=gpu:t4:1 \
    --wrap true && err_has "fitgate: resized:" &&
    field "$(cat "$SROOT/out")" TresPerNode | grep -qE '^TresPerNode=gres:gpu:t4:[2-8]$'; then
    ok "job_submit.lua resize: $(field "$(cat "$SROOT/out")" TresPerNode)"
else
    bad "job_submit.lua resize ($(field "$(cat "$SROOT/out")" TresPerNode))"
fi

# --- cli_filter.lua in sbatch (job_submit.lua back to a pass-through) --------------------------
sleep 1.1   # a later second than the last load (see lua_script)
printf 'function slurm_job_submit(j, p, u) return slurm.SUCCESS end\n%s\n' \
    'function slurm_job_modify(j, r, p, u) return slurm.SUCCESS end' > "$SROOT/etc/job_submit.lua"
mkdir -p "$SROOT/client"
{ cat "$SLURM_CONF"; echo "CliFilterPlugins=cli_filter/lua"; } > "$SROOT/client/slurm.conf"
lua_script contrib/cli_filter.lua "$SROOT/client/cli_filter.lua" reject
chmod -R a+rX "$SROOT/client"
export CONF=$SROOT/client/slurm.conf
if ! as_user sbatch --parsable --hold --ft-model="$NEMO" --ft-mode=lora --gres=gpu:t4:1 \
    --wrap true && err_re "fitgate: rejected: .* it needs [2-8] GPUs" &&
    err_re "ask for --gres=gpu:t4:[2-8]"; then
    ok "cli_filter.lua rejects in sbatch"
else
    bad "cli_filter.lua reject"
fi
lua_script contrib/cli_filter.lua "$SROOT/client/cli_filter.lua" resize
if as_user sbatch --parsable --hold --ft-model="$NEMO" --ft-mode=lora --gpus=t4:1 --wrap true &&
    field "$(cat "$SROOT/out")" TresPerJob | grep -qE '^TresPerJob=gres:gpu:t4:[2-8]$' &&
    [ "$(field "$(cat "$SROOT/out")" TresPerJob)" = "TresPerJob=gres:gpu:t4:$("$SROOT/fitgate" check \
        "$NEMO" --mode lora --gpu t4 --gpus 1 --json | grep -m1 -oE '"gpus":[[:space:]]*[0-9]+' | tr -dc 0-9)" ]
then
    ok "cli_filter.lua resize: --gpus=t4:1 -> $(field "$(cat "$SROOT/out")" TresPerJob)"
else
    bad "cli_filter.lua resize ($(field "$(cat "$SROOT/out")" TresPerJob))"
fi
if as_user sbatch --parsable --hold --ft-model="$QWEN" --ft-mode=lora --gres=gpu:t4:1 --wrap true &&
    [ ! -s "$SROOT/err" ]; then
    ok "cli_filter.lua: a job that fits passes silently"
else
    bad "cli_filter.lua pass-through"
fi
unset CONF

timeout 10 scancel --partition=gpu 2>/dev/null
echo "slurm_lua.sh: $PASS passed, $FAIL failed in $(( ($(date +%s%N) - T_START) / 1000000 )) ms"
[ "$FAIL" = 0 ]
