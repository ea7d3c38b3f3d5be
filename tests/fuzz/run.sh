#!/bin/bash
# tests/fuzz/run.sh - build and run fitgate's libFuzzer targets (make fuzz).
#
#   bash tests/fuzz/run.sh [TARGET...]        TARGET: config gpu safetensors hub policy options ckpt
#                                             jobfile jobjson ctld
#
# 1. builds the engine, policies, the plugin's option code and the CLI's option parser with
#    clang -fsanitize=fuzzer-no-link,address,undefined in $FUZZ_BUILD (build/fuzz: apart from
#    the normal build), through the Makefile's own rules, and links each tests/fuzz/fuzz_*.c;
# 2. seeds each target from the fixtures (tests/fixtures/models/*/config.json, conf/gpus.conf,
#    tests/fixtures/hub, conf/fitgate.conf) plus tests/fuzz/corpus/TARGET, and makes a
#    dictionary per target from the same files (tests/fuzz/seeds.sh);
# 3. replays tests/fuzz/regress/TARGET/* (inputs that once crashed: each must pass now);
# 4. fuzzes each target for FUZZ_SECONDS (default 60), FUZZ_JOBS at a time (default: the
#    CPUs), and prints executions, exec/s, coverage (cov:) and features (ft:) per target.
#
# Environment: FUZZ_SECONDS, FUZZ_JOBS, FUZZ_SEED (libFuzzer -seed; default 0 = random, CI
# passes a fixed one so a run is reproducible), FUZZ_BUILD, FUZZ_CC (clang), FUZZ_STRICT=1
# (also check notes and log lines for control characters; see fuzz.h), WERROR=1 (-Werror
# for the targets; the engine itself is built without it here, clang warns differently).
# A crash leaves its input in $FUZZ_BUILD/crashes/TARGET/ and fails the run; once the bug is
# fixed, copy the input to tests/fuzz/regress/TARGET/ so every later run replays it.
# Exit status: 0 clean, 1 a target crashed, leaked, timed out or a regression input failed,
# 2 the build failed.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 2
FUZZ_BUILD=${FUZZ_BUILD:-build/fuzz}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
FUZZ_SEED=${FUZZ_SEED:-0}
FUZZ_CC=${FUZZ_CC:-clang}
FUZZ_JOBS=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
ALL_TARGETS="config gpu safetensors hub policy options ckpt jobfile jobjson ctld"
TARGETS=${*:-$ALL_TARGETS}
die() { echo "fuzz: $*" >&2; exit 2; }

command -v "$FUZZ_CC" >/dev/null 2>&1 || die "$FUZZ_CC missing: make deps installs clang and libclang-rt-14-dev"

# --- 1. build ----------------------------------------------------------------------------
PKGS="libcjson libcurl hwloc"
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
WARN="-Wall -Wextra -Wshadow -Wstrict-prototypes -Wformat=2 -Wno-format-nonliteral"
[ "${WERROR:-}" = 1 ] && WARN="$WARN -Werror"
EXTRA_OBJS="$FUZZ_BUILD/plugin/fitgate_common.o $FUZZ_BUILD/cli/jobopts.o"
# ctld includes cli/cmd_ctld.c and runs the check in-process: the CLI's other objects
CLI_OBJS=$(ls cli/*.c | grep -v -e '^cli/main\.c$' -e '^cli/cmd_ctld\.c$' | sed "s|^|$FUZZ_BUILD/|; s|\.c\$|.o|" | tr '\n' ' ')
t0=$(date +%s)
# WERROR= : the Makefile's -Werror is for gcc, which CI builds with; clang's extra warnings
# in other modules must not fail the fuzz build.  MAKEFLAGS from a calling make pass through.
make -s BUILD="$FUZZ_BUILD" CC="$FUZZ_CC" SANITIZE=fuzzer-no-link,address,undefined WERROR= \
    "$FUZZ_BUILD/libfitgate.a" $EXTRA_OBJS $CLI_OBJS || die "engine build failed"
CFLAGS_F="-std=c11 -D_GNU_SOURCE -O1 -g $WARN $SAN -Iengine -Ipolicies -Icli -Iplugin -I$FUZZ_BUILD/gen $(pkg-config --cflags $PKGS)"
LIBS_F="$FUZZ_BUILD/libfitgate.a $(pkg-config --libs $PKGS) -lm -lpthread"
for t in $TARGETS; do
    [ -f "tests/fuzz/fuzz_$t.c" ] || die "no target $t (tests/fuzz/fuzz_$t.c)"
    extra=""
    [ "$t" = options ] && extra=$EXTRA_OBJS
    [ "$t" = ctld ] && extra=$CLI_OBJS
    # shellcheck disable=SC2086
    "$FUZZ_CC" $CFLAGS_F -fsanitize=fuzzer -o "$FUZZ_BUILD/fuzz_$t" "tests/fuzz/fuzz_$t.c" $extra \
        $LIBS_F || die "cannot build fuzz_$t"
done
echo "fuzz: built $TARGETS in $(($(date +%s) - t0)) s"

# --- 2. seeds ----------------------------------------------------------------------------
SEEDS=$FUZZ_BUILD/seeds
rm -rf "$SEEDS" "$FUZZ_BUILD/dicts"
mkdir -p "$SEEDS"
bash tests/fuzz/seeds.sh "$SEEDS" || die "cannot make the seeds"

# --- 3 and 4. replay, then fuzz ----------------------------------------------------------
LOGS=$FUZZ_BUILD/logs
mkdir -p "$LOGS"
# libFuzzer options shared by the replay and the run: a unit slower than 10 s is a hang (the
# plugin runs this code inside sbatch), 2 GB is far more than any real input needs.
OPTS=(-timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=262144)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

fuzz_one() {
    local t=$1 bin=$FUZZ_BUILD/fuzz_$1 corpus=$FUZZ_BUILD/corpus/$1 crashes=$FUZZ_BUILD/crashes/$1
    local log=$LOGS/$1.log dict=()
    mkdir -p "$corpus" "$crashes"
    [ -s "$FUZZ_BUILD/dicts/$t.dict" ] && dict=(-dict="$FUZZ_BUILD/dicts/$t.dict")
    : >"$log"
    if [ -d "tests/fuzz/regress/$t" ] && [ -n "$(ls -A "tests/fuzz/regress/$t" 2>/dev/null)" ]; then
        if ! "$bin" "${OPTS[@]}" -runs=1 "tests/fuzz/regress/$t"/* >>"$log" 2>&1; then
            echo "regress-failed" >"$LOGS/$t.status"
            return
        fi
    fi
    "$bin" "${OPTS[@]}" "${dict[@]}" -max_total_time="$FUZZ_SECONDS" -seed="$FUZZ_SEED" \
        -print_final_stats=1 -artifact_prefix="$crashes/" "$corpus" "$SEEDS/$t" >>"$log" 2>&1
    echo "$?" >"$LOGS/$t.status"
}
export -f fuzz_one
export FUZZ_BUILD FUZZ_SECONDS FUZZ_SEED SEEDS LOGS
export OPTS_STR="${OPTS[*]}"

t0=$(date +%s)
printf '%s\n' $TARGETS | xargs -P "$FUZZ_JOBS" -I{} bash -c 'OPTS=($OPTS_STR); fuzz_one {}'
wall=$(($(date +%s) - t0))

# --- report ----------------------------------------------------------------------------
fail=0
printf '%-12s %10s %8s %7s %7s %7s  %s\n' target execs exec/s cov ft corpus result
for t in $TARGETS; do
    log=$LOGS/$t.log
    st=$(cat "$LOGS/$t.status" 2>/dev/null || echo missing)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1)
    cov=$(printf '%s' "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
    ft=$(printf '%s' "$last" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
    corp=$(printf '%s' "$last" | sed -n 's/.*corp: \([0-9]*\/[0-9a-zA-Z]*\).*/\1/p')
    case $st in
    0) res=ok ;;
    regress-failed) res="FAIL: an input in tests/fuzz/regress/$t crashes again (see $log)"; fail=1 ;;
    *) res="FAIL (exit $st): $(ls -t "$FUZZ_BUILD/crashes/$t" 2>/dev/null | head -1 |
        sed "s|^|$FUZZ_BUILD/crashes/$t/|")"; fail=1 ;;
    esac
    printf '%-12s %10s %8s %7s %7s %7s  %s\n' "$t" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" \
        "${corp:-?}" "$res"
    if [ "$res" != ok ]; then
        grep -E 'ERROR|SUMMARY|runtime error|contract broken|Test unit written' "$log" | head -8 |
            sed 's/^/     | /'
    fi
done
echo "fuzz: $FUZZ_SECONDS s per target, $FUZZ_JOBS at a time, $wall s wall; logs in $LOGS"
exit $fail
