#!/bin/bash
# tests/integration/sanitize.sh - the whole unit suite and the CLI under AddressSanitizer,
# UndefinedBehaviorSanitizer and LeakSanitizer, built in build/san (apart from build/, so the
# normal build is not touched):
#
#   1. make unit BUILD=build/san SANITIZE=address,undefined   every tests/test_*.c binary
#   2. build/san/fitgate plan DIR --json and plan DIR          every tests/fixtures/models dir
#
# The first error stops a binary (-fno-sanitize-recover=all) and fails this script.  The
# sanitizer build is not -Werror: gcc warns differently with -fsanitize (format-truncation
# false positives); the normal build is the warnings gate.
# Run from anywhere: `bash tests/integration/sanitize.sh` (make integration).  SAN_BUILD and
# SAN_JOBS (default: the CPUs) may be set.
set -u
# shellcheck source=tests/integration/lib/common.sh
FG_DIE_RC=2 FG_DIE_TAG=
source "$(dirname "$0")/lib/common.sh"
SAN_BUILD=${SAN_BUILD:-build/san}
JOBS=${SAN_JOBS:-$(nproc 2>/dev/null || echo 2)}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

T0=$(date +%s)
# 1. the unit suite (it builds build/san/fitgate too: unit depends on the CLI)
mkdir -p "$SAN_BUILD"
LOG=$SAN_BUILD/unit.log
make -s -j"$JOBS" BUILD="$SAN_BUILD" SANITIZE=address,undefined WERROR= unit >"$LOG" 2>&1
unit_rc=$?
T1=$(date +%s)
awk '/^== /{b++} /^\[  PASSED  \] [0-9]/{p+=$4} /^\[  SKIPPED \] [0-9]/{k+=$4}
     /^\[  FAILED  \] [0-9]/{f+=$4} END {printf "     %d test binaries: %d tests passed, %d skipped, %d failed\n", b, p, k, f}' "$LOG"
if [ $unit_rc != 0 ]; then
    grep -E -B2 -A25 'ERROR: (Address|Leak)Sanitizer|runtime error|FAILED' "$LOG" | head -80
    echo "FAIL unit suite under ASan+UBSan (log: $LOG)"
else
    echo "ok   unit suite under ASan+UBSan+LSan ($((T1 - T0)) s, log: $LOG)"
fi
[ -x "$SAN_BUILD/fitgate" ] || die "$SAN_BUILD/fitgate was not built"

# 2. the CLI over every model directory, both outputs
WORK=$(mktemp -d /tmp/fitgate-sanitize.XXXXXX) || die "mktemp failed"
trap 'rm -rf "$WORK"' EXIT
one() {
    local dir=$1 json=$2 tag
    tag=$(basename "$dir")$json
    # shellcheck disable=SC2086
    env HOME="$WORK" HF_HUB_OFFLINE=1 "$SAN_BUILD/fitgate" plan "$dir" $json >/dev/null 2>"$WORK/$tag.err"
    echo $? >"$WORK/$tag.rc"
}
export -f one
export SAN_BUILD WORK
for d in tests/fixtures/models/*/; do
    [ -f "$d/config.json" ] && printf '%s\0%s\0' "${d%/}" "--json" "${d%/}" ""
done | xargs -0 -n 2 -P "$JOBS" bash -c 'one "$0" "$1"'
pass=0
fail=0
for rcf in "$WORK"/*.rc; do
    tag=$(basename "$rcf" .rc)
    rc=$(cat "$rcf")
    if { [ "$rc" = 0 ] || { [ "$rc" = 2 ] && refused_root "$SAN_BUILD/fitgate" "$WORK/$tag.err"; }; } &&
        ! grep -qE 'Sanitizer|runtime error' "$WORK/$tag.err"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL fitgate plan $tag (exit $rc)"
        head -30 "$WORK/$tag.err" | sed 's/^/     | /'
    fi
done
T2=$(date +%s)
[ $fail = 0 ] && echo "ok   CLI under ASan+UBSan+LSan: $pass plans clean ($((T2 - T1)) s)"
echo "sanitize.sh: unit suite $([ $unit_rc = 0 ] && echo clean || echo FAILED), CLI $pass clean / $fail failed, $((T2 - T0)) s"
[ $unit_rc = 0 ] && [ $fail = 0 ]
