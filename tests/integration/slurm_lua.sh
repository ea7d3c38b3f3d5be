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
# shellcheck source=tests/integration/slurm/common.sh
source "$(dirname "$0")/slurm/common.sh"
if [ -n "${SLURM_PREFIX:-}" ] && [ ! -e "$SLURM_PREFIX/lib/slurm/job_submit_lua.so" ]; then
    echo "$ME: SKIP: $SLURM_PREFIX has no job_submit/lua (tools/slurm-build.sh builds no Lua)"
    exit 0
fi
slurm_begin fitgate-slurm-lua
slurm_stage

# lua_script SRC DEST ACTION: a contrib script with this test's fitgate and action
lua_script() {
    sleep 1.1
    printf 'Action=%s\nHubEndpoint=none\n' "$3" > "$SROOT/lua-$3.conf"
    chmod 644 "$SROOT/lua-$3.conf"
    sed -e "s|^local FITGATE = .*|local FITGATE = \"$SROOT/fitgate\"|" \
        -e "s|^local POLICY = .*|local POLICY = \"$SROOT/lua-$3.conf\"|" "$1" > "$2.tmp" &&
        chmod 644 "$2.tmp" && mv "$2.tmp" "$2"
}
mkdir -p "$SROOT/etc"
lua_script contrib/job_submit.lua "$SROOT/etc/job_submit.lua" reject

PLUGSTACK="required $SROOT/spank_fitgate.so action=off"
EXTRA_CONF="JobSubmitPlugins=lua"
slurm_up

# --- job_submit.lua in slurmctld -------------------------------------------------------------
if ! as_user sbatch --parsable --hold --ft-model="$NEMO" --ft-mode=lora --gres=gpu:t4:1 \
    --wrap true && err_re "fitgate: rejected: LoRA of .* does not fit --gres=gpu:t4:1" &&
    err_re "(ask for|remedy [0-9]+ \(more GPUs\):)( --ft-[a-z0-9-]+=[^ ]+)* --gres=gpu:t4:[2-8]"; then
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
# an untyped request (the card from --ft-gpu) is resized untyped, gres:gpu:N (never gres:gpu:gpu:N),
# and the node is told the card the job was judged on; likewise an untyped --gpus
job_env() {   # the job's environment as slurmctld keeps it for the batch step
    cat "$SROOT"/spool/ctld/hash.*/job."$1"/environment 2>/dev/null | tr '\0' '\n'
}
for c in "--gres=gpu:1 TresPerNode" "--gpus=1 TresPerJob"; do
    read -r opt key <<< "$c"
    if as_user sbatch --parsable --hold --ft-model="$NEMO" --ft-mode=lora --ft-gpu=t4 "$opt" \
        --wrap true && err_has "fitgate: resized:" &&
        field "$(cat "$SROOT/out")" "$key" | grep -qE "^$key=gres:gpu:[2-8]\$" &&
        job_env "$(cat "$SROOT/out")" | grep -aqx 'SLURM_SPANK_FITGATE_CARD=t4'; then
        ok "job_submit.lua resize, untyped $opt: $(field "$(cat "$SROOT/out")" "$key")"
    else
        bad "job_submit.lua resize, untyped $opt ($(field "$(cat "$SROOT/out")" "$key")," \
            "$(job_env "$(cat "$SROOT/out")" | grep -a FITGATE_CARD))"
    fi
done

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
    --wrap true && err_re "fitgate: rejected: LoRA of .* does not fit --gres=gpu:t4:1" &&
    err_re "(ask for|remedy [0-9]+ \(more GPUs\):)( --ft-[a-z0-9-]+=[^ ]+)* --gres=gpu:t4:[2-8]"; then
    ok "cli_filter.lua rejects in sbatch"
else
    bad "cli_filter.lua reject"
fi
lua_script contrib/cli_filter.lua "$SROOT/client/cli_filter.lua" resize
if as_user sbatch --parsable --hold --ft-model="$NEMO" --ft-mode=lora --gpus=t4:1 --wrap true &&
    field "$(cat "$SROOT/out")" TresPerJob | grep -qE '^TresPerJob=gres:gpu:t4:[2-8]$' &&
    [ "$(field "$(cat "$SROOT/out")" TresPerJob)" = "TresPerJob=gres:gpu:t4:$("$SROOT/fitgate" check \
        "$NEMO" --mode lora --gpus t4:1 --policy "$SROOT/lua-resize.conf" --json |
        grep -m1 -oE '"count":[[:space:]]*[0-9]+' | tr -dc 0-9)" ]
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
echo "$ME: $PASS passed, $FAIL failed in $(ms_since "$T_START") ms"
[ "$FAIL" = 0 ]
