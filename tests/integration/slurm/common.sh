# shellcheck shell=bash disable=SC2034  # sourced: the variables set here are the callers'
# common.sh - what tests/integration/slurm.sh and slurm_lua.sh share: the preamble (root or
# SKIP, Slurm installed, a build, the cluster's directory removed on exit), the staging of the
# plugin and the fixture models, the cluster's 16 fake GPUs, and the check helpers.
#
# Sourced by those scripts after `set -u`; it sources cluster.sh.  On sourcing it sets ME (the
# script's name: the prefix of its messages), REPO (and cds there), HERE (this folder),
# PASS and FAIL; the functions below set the rest.
#
# Which Slurm: by default Debian's packaged daemons (bookworm: 22.05) and the plugin built
# against /usr/include's headers in build/.  SLURM_PREFIX=/opt/fitgate-slurm/26.05 (from
# tools/slurm-build.sh) runs that prefix's daemons and clients instead, with the plugin built
# against that prefix's headers in build/slurm-26.05 (make SLURM_PREFIX=...): a SPANK plugin
# loads only into the release it was compiled for.  munged is Debian's either way.

FG_DIE_RC=2 FG_DIE_TAG=
# shellcheck source=tests/integration/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
REPO=$ROOT
HERE=$REPO/tests/integration/slurm
PASS=0
FAIL=0

# shellcheck source=tests/integration/slurm/cluster.sh
source "$HERE/cluster.sh"

# slurm_begin NAME: root (else SKIP, exit 0), the Slurm daemons (apt-get when missing, or
# SLURM_PREFIX's), a C compiler and the plugin built for the daemons' release (FG_BUILD,
# SLURM_VERSION, SLURM_RELEASE); then T_START and SROOT, a fresh /tmp/NAME.XXXXXX that the EXIT trap
# removes (KEEP=1 keeps it when a check failed) after stopping the cluster and BH_PID.
slurm_begin() {
    if [ "$(id -u)" != 0 ]; then
        echo "$ME: SKIP: needs root (it runs munged, slurmctld and slurmd)"
        exit 0
    fi
    local b missing="" pkgs="slurmctld slurmd slurm-client munge" make_args=()
    if [ -n "${SLURM_PREFIX:-}" ]; then
        SLURM_PREFIX=$(cd "$SLURM_PREFIX" 2>/dev/null && pwd) || die "no SLURM_PREFIX directory"
        for b in sbin/slurmctld sbin/slurmd sbin/slurmstepd bin/sbatch bin/srun bin/salloc \
            include/slurm/spank.h; do
            [ -e "$SLURM_PREFIX/$b" ] || die "$SLURM_PREFIX/$b missing (tools/slurm-build.sh)"
        done
        export PATH=$SLURM_PREFIX/bin:$SLURM_PREFIX/sbin:$PATH
        pkgs=munge
        make_args=(SLURM_PREFIX="$SLURM_PREFIX")
    fi
    for b in munged slurmctld slurmd sbatch; do
        command -v "$b" >/dev/null 2>&1 || missing=1
    done
    if [ -n "$missing" ]; then
        echo "$ME: installing $pkgs"
        # shellcheck disable=SC2086  # a list of package names
        timeout 300 apt-get update -qq &&
            DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -qq $pkgs >/dev/null ||
            die "cannot install $pkgs"
    fi
    command -v cc >/dev/null 2>&1 || die "a C compiler is needed (make deps)"
    # the daemons' release (slurmd -V: "slurm 26.05.3") and the headers the plugin is built
    # against must be the same major.minor, or slurmd and sbatch refuse to load it
    SLURM_VERSION=$(slurmd -V 2>/dev/null | awk '{print $2}')
    local hdr=${SLURM_PREFIX:-/usr}/include/slurm/slurm_version.h v
    v=$(awk '/define SLURM_VERSION_NUMBER/ {print $3}' "$hdr" 2>/dev/null)
    [ -n "$v" ] || die "no $hdr (libslurm-dev)"
    SLURM_RELEASE=$(printf '%d.%02d' $((v >> 16)) $(((v >> 8) & 255)))
    [ "${SLURM_VERSION%.*}" = "$SLURM_RELEASE" ] ||
        die "daemons are Slurm $SLURM_VERSION, headers $SLURM_RELEASE ($hdr)"
    FG_BUILD=build
    [ -n "${SLURM_PREFIX:-}" ] && FG_BUILD=build/slurm-$SLURM_RELEASE
    # make is incremental: a stale plugin from another release's headers is never staged
    timeout 900 nice make -s -j2 "${make_args[@]}" BUILD="$FG_BUILD" all >/dev/null ||
        die "build failed (make ${make_args[*]} BUILD=$FG_BUILD all)"
    echo "$ME: Slurm $SLURM_VERSION ($(command -v slurmctld)), plugin from $FG_BUILD"

    T_START=$(date +%s%N)
    SROOT=$(mktemp -d "/tmp/$1.XXXXXX") || die "mktemp failed"
    chmod 755 "$SROOT"
    BH_PID=""
    trap slurm_cleanup EXIT
    trap 'exit 130' INT TERM
}

slurm_cleanup() {
    cluster_down
    [ -n "$BH_PID" ] && kill "$BH_PID" 2>/dev/null && wait "$BH_PID" 2>/dev/null
    if [ "$FAIL" != 0 ] && [ -n "${KEEP:-}" ]; then
        echo "$ME: kept $SROOT"
    else
        rm -rf "$SROOT"
    fi
}

# slurm_stage: what the cluster runs, readable by the job user wherever the repository lives:
# the plugin, the engine and the CLI, two fixture models (NEMO, QWEN), the blackhole helper and
# plugin_abi (built against the release's headers);
# then PORTS, NODE_GRES and GRES_LINES for cluster_up (8 GPUs as gres type t4, 8 as h100).
slurm_stage() {
    cp "${FG_BUILD:-build}"/spank_fitgate.so "${FG_BUILD:-build}"/fitgate_engine.so "${FG_BUILD:-build}"/fitgate "$SROOT/" ||
        die "copy build"
    mkdir -p "$SROOT/models"
    local m
    for m in nvidia--NVIDIA-Nemotron-Nano-9B-v2 Qwen--Qwen3-0.6B; do
        mkdir -p "$SROOT/models/$m"
        cp "tests/fixtures/models/$m/config.json" "$SROOT/models/$m/" || die "copy $m"
    done
    chmod -R a+rX "$SROOT"
    cc -std=c11 -O2 -o "$SROOT/blackhole" "$HERE/blackhole.c" || die "cannot build blackhole"
    cc -std=c11 -O2 ${SLURM_PREFIX:+-isystem "$SLURM_PREFIX/include"} -o "$SROOT/plugin_abi" \
        "$HERE/plugin_abi.c" -ldl || die "cannot build plugin_abi"
    NEMO=$SROOT/models/nvidia--NVIDIA-Nemotron-Nano-9B-v2
    QWEN=$SROOT/models/Qwen--Qwen3-0.6B
    PORTS=$("$SROOT/blackhole" freeport 2 | tr '\n' ' ')
    NODE_GRES="gpu:t4:8,gpu:h100:8"
    GRES_LINES="Name=gpu Type=t4 File=$SROOT/dev/nvidia[0-7]
Name=gpu Type=h100 File=$SROOT/dev/nvidia[8-15]"
}

# slurm_up: cluster_up (PLUGSTACK and EXTRA_CONF set by the caller), or the daemons' logs and
# exit 2.
slurm_up() {
    if ! cluster_up; then
        FAIL=1
        tail -n 20 "$SROOT"/log/*.log
        die "cluster did not come up"
    fi
    echo "$ME: cluster up in $(ms_since "$T_START") ms (ports $PORTS)"
}

# --- check helpers ---------------------------------------------------------------------
ok() { echo "ok   $*"; PASS=$((PASS + 1)); }
bad() {
    echo "FAIL $*"
    FAIL=$((FAIL + 1))
    [ -s "$SROOT/err" ] && sed 's/^/     | /' "$SROOT/err" | head -12
}
# as_user CMD...: run CMD as nobody from the jobs directory; stdout to $SROOT/out, stderr to
# $SROOT/err, exit status returned; TMO seconds at most (default 30), CONF the client's
# slurm.conf (default the cluster's).
as_user() {
    (cd "$SROOT/jobs" && timeout "${TMO:-30}" runuser -u nobody -- \
        env SLURM_CONF="${CONF:-$SLURM_CONF}" \
            PATH="${SLURM_PREFIX:+$SLURM_PREFIX/bin:}/usr/bin:/bin" "$@") \
        > "$SROOT/out" 2> "$SROOT/err"
}
# field JOB KEY: KEY=VALUE from scontrol show job; a TRES written gres/gpu:t4:1 (24.11 and
# later) as gres:gpu:t4:1 (22.05), so the checks read the same on every release
field() {
    timeout 5 scontrol show job "$1" | grep -o "$2=[^ ]*" | head -1 | sed 's|=gres/|=gres:|'
}
err_has() { grep -qF -- "$1" "$SROOT/err"; }
err_re() { grep -qE -- "$1" "$SROOT/err"; }
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
