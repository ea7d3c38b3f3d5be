#!/bin/bash
# tests/integration/valgrind.sh - the CLI under valgrind's memcheck over every model directory
# in tests/fixtures/models: `fitgate plan DIR --json` and `fitgate plan DIR`, each with no
# memory error (invalid access, uninitialised value used), no definite or indirect leak, and
# exit status 0.
#
# Run from anywhere: `bash tests/integration/valgrind.sh` (make integration).  Uses
# $FITGATE (default build/fitgate); runs VALGRIND_JOBS invocations at a time (default: the
# number of CPUs); VALGRIND_MODELS="dir1 dir2" limits the run to those directories (names
# under tests/fixtures/models or paths).  Installs valgrind with apt-get when missing.
# Prints the slowest invocations and the wall time, so CI cost stays visible.
set -u
# shellcheck source=tests/integration/lib/common.sh
FG_DIE_RC=2 FG_DIE_TAG=
source "$(dirname "$0")/lib/common.sh"
FITGATE=${FITGATE:-$ROOT/build/fitgate}
[ -x "$FITGATE" ] || die "$FITGATE missing: run make first"

if ! command -v valgrind >/dev/null 2>&1; then
    echo "valgrind.sh: installing valgrind"
    SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
        valgrind >/dev/null || die "cannot install valgrind"
fi

WORK=$(mktemp -d /tmp/fitgate-valgrind.XXXXXX) || die "mktemp failed"
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

dirs=()
if [ -n "${VALGRIND_MODELS:-}" ]; then
    for d in $VALGRIND_MODELS; do
        [ -d "$d" ] || d=tests/fixtures/models/$d
        [ -f "$d/config.json" ] || die "$d: no config.json"
        dirs+=("$d")
    done
else
    for d in tests/fixtures/models/*/; do
        [ -f "$d/config.json" ] && dirs+=("${d%/}")
    done
fi
[ ${#dirs[@]} -gt 0 ] || die "no model directories"
JOBS=${VALGRIND_JOBS:-$(nproc 2>/dev/null || echo 2)}

# One invocation: valgrind's exit status, fitgate's own, the time and the log land in files
# named after the invocation.  A clean run leaves an empty log (-q prints only errors).
one() {
    local dir=$1 json=$2 tag t0 rc args=(plan "$1")
    tag=$(basename "$dir")$json
    [ -n "$json" ] && args+=("$json")
    t0=$(date +%s%N)
    env -i PATH="$PATH" HOME="$WORK/home" HF_HUB_OFFLINE=1 \
        valgrind -q --error-exitcode=101 --leak-check=full --show-leak-kinds=definite,indirect \
        --errors-for-leak-kinds=definite,indirect --track-origins=no --log-file="$WORK/$tag.vg" \
        "$FITGATE" "${args[@]}" >"$WORK/$tag.out" 2>"$WORK/$tag.err"
    echo "$? $(( ($(date +%s%N) - t0) / 1000000 ))" >"$WORK/$tag.rc"
}
export -f one
export FITGATE WORK

T0=$(date +%s)
for d in "${dirs[@]}"; do
    printf '%s\0%s\0' "$d" "--json" "$d" ""
done | xargs -0 -n 2 -P "$JOBS" bash -c 'one "$0" "$1"'
T1=$(date +%s)

PASS=0
FAIL=0
for d in "${dirs[@]}"; do
    for json in --json ""; do
        tag=$(basename "$d")$json
        read -r rc ms <"$WORK/$tag.rc" 2>/dev/null || { rc=missing ms=0; }
        echo "$ms $tag" >>"$WORK/times"
        if { [ "$rc" = 0 ] || { [ "$rc" = 2 ] && refused_root "$FITGATE" "$WORK/$tag.err"; }; } &&
            [ ! -s "$WORK/$tag.vg" ]; then
            PASS=$((PASS + 1))
        else
            FAIL=$((FAIL + 1))
            echo "FAIL fitgate plan $d $json: exit $rc (101 = valgrind found errors)"
            sed 's/^/     | /' "$WORK/$tag.vg" "$WORK/$tag.err" 2>/dev/null | head -40
        fi
    done
done
# The planner's totals-only estimates under CPU offload (no breakdown lines written).
tag=offload
env -i PATH="$PATH" HOME="$WORK/home" HF_HUB_OFFLINE=1 \
    valgrind -q --error-exitcode=101 --track-origins=no --log-file="$WORK/$tag.vg" \
    "$FITGATE" plan tests/fixtures/models/meta-llama--Llama-3.1-8B --mode full \
    --framework deepspeed --zero 3 --offload optimizer --gpu t4 >"$WORK/$tag.out" 2>"$WORK/$tag.err"
rc=$?
if [ "$rc" = 0 ] && [ ! -s "$WORK/$tag.vg" ]; then
    PASS=$((PASS + 1))
else
    FAIL=$((FAIL + 1))
    echo "FAIL fitgate plan Llama-3.1-8B --offload optimizer: exit $rc (101 = valgrind errors)"
    sed 's/^/     | /' "$WORK/$tag.vg" "$WORK/$tag.err" 2>/dev/null | head -40
fi
echo "valgrind.sh: slowest invocations (ms under memcheck):"
sort -rn "$WORK/times" | head -5 | sed 's/^/     /'
echo "valgrind.sh: $PASS clean, $FAIL failed, ${#dirs[@]} model directories, $((T1 - T0)) s wall with $JOBS jobs"
[ "$FAIL" = 0 ]
