#!/bin/bash
# tools/slurm-matrix.sh - the real-cluster suite (tests/integration/slurm.sh) and the plugin's
# unit test on newer Slurm releases than Debian 12's packaged 22.05 (which `make check` runs),
# each with the plugin built against that release's own headers: a SPANK plugin loads only
# into its own major.minor.  Run by .ci/run after make check; as root.
#
#   tools/slurm-matrix.sh [RELEASE...]     default: $FITGATE_SLURM_RELEASES, else 26.05 24.11
#
# Each release is built by tools/slurm-build.sh under /opt/fitgate-slurm/MM.mm once per
# machine (1.5-2.5 min on 2 cores; a reused machine skips it).  Newest first: the newest
# release that can be built must pass; one whose source this machine cannot reach (Debian's
# mirror, or SLURM_GIT=CLONE / SLURM_SRC=TARBALL) is reported as not tested, and at least one
# must be tested.  FITGATE_SLURM_RELEASES="" skips the matrix.  Exit 0 when all tested passed.
set -u
cd "$(dirname "$0")/.." || exit 2
RELEASES=("$@")
[ $# -gt 0 ] || read -r -a RELEASES <<< "${FITGATE_SLURM_RELEASES-26.05 24.11}"
if [ ${#RELEASES[@]} = 0 ]; then
    echo "slurm-matrix: FITGATE_SLURM_RELEASES is empty: skipped"
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "slurm-matrix: SKIP: needs root (it builds under /opt and runs Slurm's daemons)"
    exit 0
fi

# what tools/slurm-build.sh needs beyond make deps (no pipe into grep -q: SIGPIPE)
missing=""
for p in libmunge-dev munge dpkg-dev python3; do
    grep -q "install ok installed" <<< "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" ||
        missing="$missing $p"
done
if [ -n "$missing" ]; then
    # shellcheck disable=SC2086  # package names
    DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -qq $missing >/dev/null ||
        { echo "slurm-matrix: cannot install$missing" >&2; exit 1; }
fi

tested="" untested="" failed="" summary=""
for rel in "${RELEASES[@]}"; do
    t0=$(date +%s)
    prefix=$(tools/slurm-build.sh "$rel" | tail -1)
    if [ -z "$prefix" ] || [ ! -d "$prefix" ]; then
        echo "slurm-matrix: Slurm $rel: NOT TESTED (no source reachable or build failed, above)"
        untested="$untested $rel"
        continue
    fi
    t1=$(date +%s)
    version=$(sed -n 's/^version=//p' "$prefix/.fitgate-build")
    build=build/slurm-$rel
    if ! nice make -s -j2 SLURM_PREFIX="$prefix" all "$build/tests/test_plugin" >/dev/null ||
        ! "$build/tests/test_plugin" > "$build/test_plugin.log" 2>&1; then
        tail -20 "$build/test_plugin.log" 2>/dev/null
        echo "slurm-matrix: Slurm $version: plugin build or test_plugin FAILED"
        failed="$failed $rel"
        continue
    fi
    log=$build/slurm.sh.log
    SLURM_PREFIX=$prefix bash tests/integration/slurm.sh 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    line=$(grep -E '^slurm.sh: [0-9]+ passed' "$log" | tail -1)
    summary="$summary
  Slurm $version: ready in $((t1 - t0)) s, test_plugin ok, ${line#slurm.sh: }"
    if [ "$rc" = 0 ]; then tested="$tested $rel"; else failed="$failed $rel"; fi
done
echo "slurm-matrix:$summary"
[ -z "$untested" ] || echo "slurm-matrix: not tested:$untested"
if [ -n "$failed" ]; then
    echo "slurm-matrix: FAILED on:$failed" >&2
    exit 1
fi
if [ -z "$tested" ]; then
    echo "slurm-matrix: no release could be built" >&2
    exit 1
fi
echo "slurm-matrix: passed on:$tested"
