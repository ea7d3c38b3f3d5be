#!/bin/bash
# tools/demo.sh - `make demo` / `make demo-down`: fitgate on a throwaway single-host Slurm
# cluster with fake GPUs (8 x T4, 8 x H100 device files), the SPANK plugin in its plugstack.
#
#   tools/demo.sh up     install what is missing (make deps, Slurm's Debian packages), build,
#                        start munged, slurmctld and slurmd under $FITGATE_DEMO (default
#                        /tmp/fitgate-demo), submit three jobs (one that fits, one rejected
#                        with the request that would fit, one resized that runs with the
#                        plan in its FITGATE_* variables), print the audit report, and leave
#                        the cluster up with a line on how to try one's own job;
#   tools/demo.sh down   stop every daemon `up` started (by their pid files), remove the
#                        directory, and say whether anything of it is still running.
#
# The cluster is tests/integration/slurm/cluster.sh (sourced through common.sh, as the
# integration tests use it); its models are the fixture configs under ModelDirs=, so the
# demo needs no network.  Root only: it runs the daemons and installs packages.
set -u
HERE=$(cd "$(dirname "$0")/.." && pwd)/tests/integration/slurm
# shellcheck source=tests/integration/slurm/common.sh
source "$HERE/common.sh"   # cds to the repository; ME, die, cluster_*, slurm_stage
ME=demo
SROOT=${FITGATE_DEMO:-/tmp/fitgate-demo}
BH_PID=""
WRONG=""   # what did not come out as the demo says: `up` exits 1, the cluster left up
wrong() { echo "  demo: NOT AS EXPECTED: $*"; WRONG="$WRONG; $*"; }
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
show() { printf '$ %s\n' "$*"; }

down() {
    [ -d "$SROOT" ] || { echo "demo: nothing to stop ($SROOT does not exist)"; return 0; }
    if [ -f "$SROOT/etc/slurm.conf" ]; then
        export SLURM_CONF=$SROOT/etc/slurm.conf
        # every demo job, whatever its partition (cluster_down cancels partition gpu only)
        timeout 10 squeue -h -o %i 2>/dev/null | xargs -r timeout 10 scancel 2>/dev/null
        cluster_down
    fi
    local left="" f p
    for f in "$SROOT"/run/*.pid; do
        [ -s "$f" ] || continue
        p=$(cat "$f")
        kill -0 "$p" 2>/dev/null && left="$left $(basename "$f" .pid)($p)"
    done
    [ -n "$left" ] && die "still running:$left (kept $SROOT)"
    rm -rf "$SROOT"
    left=$(pgrep -a -f -- "$SROOT")
    [ -n "$left" ] && die "processes still naming $SROOT: $left"
    echo "demo: cluster stopped, $SROOT removed, nothing of it left running"
}

up() {
    local t0 d
    t0=$(date +%s%N)
    [ "$(id -u)" = 0 ] || die "make demo needs root (it installs packages and runs slurmctld)"
    [ -d "$SROOT" ] && { echo "demo: a previous demo is there: stopping it first"; down || exit 2; }

    step "1. what it needs: make deps, Slurm's Debian packages, a build"
    make -s deps || die "make deps failed"
    local b missing=""
    for b in munged slurmctld slurmd sbatch; do command -v "$b" >/dev/null 2>&1 || missing=1; done
    if [ -n "$missing" ]; then
        echo "installing slurmctld slurmd slurm-client munge"
        timeout 300 apt-get update -qq &&
            DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -qq \
                slurmctld slurmd slurm-client munge >/dev/null || die "cannot install Slurm"
    fi
    nice make -s -j2 all >/dev/null || die "build failed"
    echo "built: build/fitgate, build/spank_fitgate.so, build/fitgate_engine.so"

    step "2. a single-host cluster in $SROOT: 8 x T4 + 8 x H100 (fake device files)"
    mkdir -p "$SROOT" && chmod 755 "$SROOT"
    slurm_stage   # the plugin, the CLI, two models, PORTS, NODE_GRES, GRES_LINES
    cp -r tests/fixtures/models/. "$SROOT/models/" 2>/dev/null
    mkdir -p "$SROOT/audit" "$SROOT/cache"
    chmod 1733 "$SROOT/audit"
    chmod 1777 "$SROOT/cache"
    chmod -R a+rX "$SROOT/models"
    cat > "$SROOT/fitgate.conf" <<CONF
# the demo's policy (conf/fitgate.conf explains every key)
Action=reject
OnError=allow
ModelDirs=$SROOT/models
CacheDir=$SROOT/cache/%u
HubEndpoint=https://huggingface.co
HubTimeout=5
LogFile=$SROOT/audit/%u.log
PartitionName=resize Action=resize
CONF
    chmod 644 "$SROOT/fitgate.conf"
    PLUGSTACK="required $SROOT/spank_fitgate.so conf=$SROOT/fitgate.conf"
    EXTRA_CONF="PartitionName=resize Nodes=$NODE MaxTime=INFINITE State=UP"
    if ! cluster_up; then
        tail -n 20 "$SROOT"/log/*.log
        down
        die "the cluster did not come up"
    fi
    sed 's/^/    /' "$SROOT/fitgate.conf" | grep -v '^    #'
    timeout 5 sinfo -o '    %P %D %t %G' || true

    local sb=(sbatch --parsable -o %x-%j.out)
    step "3. a job that fits: LoRA of Qwen3-0.6B on 1 x T4 (partition gpu: Action=reject)"
    show "${sb[*]} -J fits --ft-model=Qwen/Qwen3-0.6B --ft-mode=lora --gres=gpu:t4:1 --wrap 'env | grep ^FITGATE_'"
    as_user "${sb[@]}" -J fits --ft-model=Qwen/Qwen3-0.6B --ft-mode=lora --gres=gpu:t4:1 \
        --wrap 'env | grep ^FITGATE_ | sort'
    local fits
    fits=$(cat "$SROOT/out")
    sed 's/^/  /' "$SROOT/err"
    if [ -n "$fits" ]; then
        echo "  submitted: job $fits"
    else
        wrong "the job that fits was not accepted"
    fi

    step "4. a job that does not fit: LoRA of Nemotron-Nano-9B-v2 on 1 x T4 (partition gpu)"
    show "${sb[*]} -J rejected --ft-model=nvidia/NVIDIA-Nemotron-Nano-9B-v2 --ft-mode=lora --gres=gpu:t4:1 --wrap true"
    if as_user "${sb[@]}" -J rejected --ft-model=nvidia/NVIDIA-Nemotron-Nano-9B-v2 --ft-mode=lora \
        --gres=gpu:t4:1 --wrap true; then
        wrong "the job that does not fit was accepted (job $(cat "$SROOT/out"))"
    fi
    sed 's/^/  /' "$SROOT/err"

    step "5. the same job in partition resize (Action=resize): resized, then it runs"
    show "${sb[*]} -J resized -p resize --ft-model=nvidia/NVIDIA-Nemotron-Nano-9B-v2 --ft-mode=lora --gres=gpu:t4:1 --wrap 'env | grep ^FITGATE_'"
    as_user "${sb[@]}" -J resized -p resize --ft-model=nvidia/NVIDIA-Nemotron-Nano-9B-v2 --ft-mode=lora \
        --gres=gpu:t4:1 --wrap 'env | grep ^FITGATE_ | sort'
    local resized
    resized=$(cat "$SROOT/out")
    sed 's/^/  /' "$SROOT/err"
    if [ -n "$resized" ]; then
        echo "  submitted: job $resized, $(field "$resized" TresPerNode)"
    else
        wrong "the resized job was not accepted"
    fi

    step "6. the two jobs ran; what they found in their environment"
    local j i
    for j in "fits-$fits" "resized-$resized"; do
        for i in $(seq 150); do
            [ -z "$(timeout 5 squeue -h -j "${j##*-}" 2>/dev/null)" ] && break
            sleep 0.2
        done
        [ -n "${j##*-}" ] || continue
        echo "  job ${j##*-} (${j%-*}): $(field "${j##*-}" JobState)"
        sed 's/^/    /' "$SROOT/jobs/$j.out" 2>/dev/null
        grep -q '^FITGATE_GPUS=' "$SROOT/jobs/$j.out" 2>/dev/null ||
            wrong "job ${j##*-} (${j%-*}) did not run with FITGATE_*"
    done

    step "7. the audit report: fitgate report $SROOT/audit/*.log"
    "$SROOT/fitgate" report "$SROOT"/audit/*.log 2>&1 | sed 's/^/  /'

    d=$(( ($(date +%s%N) - t0) / 1000000 ))
    step "the cluster stays up (demo took $((d / 1000)).$((d % 1000 / 100)) s)"
    cat <<EOF
Try your own job (any model under $SROOT/models by its hub id, others from the hub):
  export SLURM_CONF=$SROOT/etc/slurm.conf
  sbatch --ft-model=Qwen/Qwen3-8B --ft-mode=qlora --gres=gpu:t4:1 [-p resize] --wrap 'env | grep FITGATE_'
  $SROOT/fitgate report $SROOT/audit/*.log
Remove it: make demo-down
EOF
    if [ -n "$WRONG" ]; then
        echo "demo: NOT AS EXPECTED${WRONG}; the cluster is left up to look at ($SROOT/log)" >&2
        return 1
    fi
}

case "${1:-}" in
up) up ;;
down) down ;;
*) echo "usage: tools/demo.sh up|down" >&2; exit 2 ;;
esac
