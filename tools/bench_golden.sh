#!/bin/bash
# tools/bench_golden.sh - byte-identical outputs before / after a performance change.
#
#   tools/bench_golden.sh record DIR    write `fitgate plan` outputs for every fixture model to DIR
#   tools/bench_golden.sh compare DIR   rebuild the same outputs and diff them against DIR
#   tools/bench_golden.sh against REV FILE...
#                                       build a second fitgate from this working tree with FILE...
#                                       as they are in git revision REV (in a scratch copy; the
#                                       tree is not touched), and compare the two binaries'
#                                       outputs.  This isolates one change while others edit the
#                                       CLI: e.g. `against HEAD engine/plan/plan.c engine/memory/estimate.c
#                                       engine/memory/memory.h` after `make`.
#   tools/bench_golden.sh planner REV [JOBS]
#                                       tools/bench_plandiff.c: the working tree's planner and
#                                       estimator against REV's engine/plan/plan*.c and
#                                       engine/memory/memory*.c (compiled in under ref_* names) on JOBS
#                                       (40) sampled plans and as many sampled estimates (any
#                                       TP / EP / ZeRO / stage) per fixture model, in-process,
#                                       absurd sizes included.
#
# Per model (tests/fixtures/models/*/config.json): `plan M --json`, `plan M --gpu h200` (the two
# the brief names), and, for wider cover of the planner and the estimator, `plan M --json --gpu
# h200 --mode lora`, `plan M --gpu a100_40g --mode serve --structure` and `plan M --json --gpu t4
# --mode qlora --grad-ckpt`.  stdout and stderr and the exit code are all compared.
# Exit 0 when identical (or after recording), 1 on any difference, 2 on misuse.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FITGATE=${FITGATE:-$ROOT/build/fitgate}
usage() { echo "usage: $0 record|compare DIR | against REV FILE..." >&2; exit 2; }
[ $# -ge 2 ] || usage
cmd=$1 dir=$2
[ "$cmd" = against ] || [ "$cmd" = planner ] || [ $# -eq 2 ] || usage
[ -x "$FITGATE" ] || { echo "bench_golden: $FITGATE missing: run make first" >&2; exit 2; }

variants=(
    "json|--json"
    "h200|--gpu h200"
    "lora|--json --gpu h200 --mode lora"
    "serve|--gpu a100_40g --mode serve --structure"
    "qlora|--json --gpu t4 --mode qlora --grad-ckpt"
)

same_outputs() {   # same_outputs WANT GOT WHAT: exit 1 with the files that differ
    local n
    n=$(ls "$2" | grep -c '\.out$')
    if diff -r -q "$1" "$2" >/dev/null; then
        echo "bench_golden: $n outputs byte-identical ($3)"
    else
        echo "bench_golden: DIFFERENT ($3):"
        diff -r -q "$1" "$2" | head -20
        exit 1
    fi
}

produce() {   # produce OUTDIR
    local out=$1 m name v tag args
    mkdir -p "$out"
    for m in "$ROOT"/tests/fixtures/models/*/; do
        [ -f "$m/config.json" ] || continue
        name=$(basename "$m")
        for v in "${variants[@]}"; do
            tag=${v%%|*} args=${v#*|}
            # relative path: the id printed in the output must not depend on where ROOT is
            (cd "$ROOT" && "$FITGATE" plan "tests/fixtures/models/$name" $args \
                >"$out/$name.$tag.out" 2>"$out/$name.$tag.err"; echo "rc=$?" >>"$out/$name.$tag.err")
        done
    done
}

case $cmd in
planner)
    rev=$2 jobs=${3:-40}
    scratch=$(mktemp -d /tmp/fitgate-golden.XXXXXX)
    trap 'rm -rf "$scratch"' EXIT
    [ -f "$ROOT/build/libfitgate.a" ] || { echo "bench_golden: run make first" >&2; exit 2; }
    # REV's planner and estimator: every file of engine/plan/ and engine/memory/ but the
    # site calibration (plan*.c and memory*.c at the top of engine/ in a REV from before
    # engine/ had its rooms; one file each before the estimator was split)
    refs=$(git -C "$ROOT" ls-tree -r --name-only "$rev" engine/ |
        grep -E '^engine/(plan|memory)[a-z_]*\.c$|^engine/(plan|memory)/[a-z_]*\.c$' |
        grep -v '/calib\.c$') || exit 2
    for f in $refs; do
        git -C "$ROOT" show "$rev:$f" >"$scratch/ref_${f##*/}" || exit 2
    done
    # REV's own estimator headers where today has none of that name (memory_train.h, which
    # the stages of engine/memory/pipeline.h replaced), found through -I$scratch/hdr
    mkdir -p "$scratch/hdr"
    for f in $(git -C "$ROOT" ls-tree -r --name-only "$rev" engine/ |
               grep -E '^engine/((plan|memory)/)?(plan|memory)[a-z_]*\.h$'); do
        [ -e "$ROOT/engine/memory/${f##*/}" ] || [ -e "$ROOT/engine/plan/${f##*/}" ] ||
            git -C "$ROOT" show "$rev:$f" >"$scratch/hdr/${f##*/}" || exit 2
    done
    # the folders and rooms too: a REV from before engine/ was grouped, or had its rooms,
    # names its headers bare ("fmt.h", "memory.h")
    CF="-std=c11 -D_GNU_SOURCE -O2 -I$ROOT/engine -I$ROOT/engine/util -I$ROOT/engine/source \
        -I$ROOT/engine/hw -I$ROOT/engine/model -I$ROOT/engine/job -I$ROOT/engine/stack \
        -I$ROOT/engine/memory -I$ROOT/engine/plan -I$ROOT/policies -I$scratch/hdr \
        $(pkg-config --cflags libcjson)"
    # REV's planner on REV's estimator against today's headers (fields added since REV are
    # derived ones, which REV does not read); fg__memory_on_stage, which no header declares
    # today, for the revisions whose plan.c calls it
    printf '%s\n' '#include "memory/memory_int.h"' '#include "model/model_int.h"' \
        'bool fg__memory_on_stage(const struct fg_node *n, const struct fg_job *job);' \
        >"$scratch/ref_decls.h"
    objs=
    for f in $refs; do
        o=$scratch/ref_${f##*/}
        o=${o%.c}.o
        cc $CF -include "$scratch/ref_decls.h" -c "$scratch/ref_${f##*/}" -o "$o" || exit 2
        objs="$objs $o"
    done
    # libfitgate defines the same functions: every fg_* the files define takes a ref_
    # name (ref_plan_layouts, ref_memory_estimate, ...), in every object, calls included
    # shellcheck disable=SC2086
    syms=$(nm --defined-only -g $objs |
        awk '$3 ~ /^fg_/ { printf "--redefine-sym %s=ref_%s ", $3, substr($3, 4) }')
    for o in $objs; do
        # shellcheck disable=SC2086
        objcopy $syms "$o" || exit 2
    done
    # shellcheck disable=SC2086
    cc $CF -o "$scratch/plandiff" "$ROOT/tools/bench_plandiff.c" $objs \
        "$ROOT/build/libfitgate.a" $(pkg-config --libs libcjson) -ldl -lm || exit 2
    (cd "$ROOT" && "$scratch/plandiff" --jobs "$jobs")
    exit $?
    ;;
against)
    rev=$2
    shift 2
    [ $# -ge 1 ] || usage
    scratch=$(mktemp -d /tmp/fitgate-golden.XXXXXX)
    trap 'rm -rf "$scratch"' EXIT
    # the working tree's sources (tracked or not), minus build outputs
    (cd "$ROOT" && tar --exclude=./build --exclude=./.git -cf - .) | (cd "$scratch" && tar -xf -) ||
        exit 2
    for f in "$@"; do
        git -C "$ROOT" show "$rev:$f" >"$scratch/$f" || { echo "bench_golden: $rev:$f?" >&2; exit 2; }
    done
    make -s -C "$scratch" build/fitgate >"$scratch/make.log" 2>&1 ||
        { cat "$scratch/make.log" >&2; exit 2; }
    FITGATE=$scratch/build/fitgate produce "$scratch/out-$rev"
    produce "$scratch/out-now"
    same_outputs "$scratch/out-$rev" "$scratch/out-now" "against $* as in $rev"
    ;;
record)
    rm -rf "$dir"
    produce "$dir"
    echo "bench_golden: recorded $(ls "$dir" | grep -c '\.out$') outputs in $dir"
    ;;
compare)
    [ -d "$dir" ] || { echo "bench_golden: $dir: nothing recorded" >&2; exit 2; }
    now=$(mktemp -d /tmp/fitgate-golden.XXXXXX)
    trap 'rm -rf "$now"' EXIT
    produce "$now"
    same_outputs "$dir" "$now" "against $dir"
    ;;
*) echo "usage: $0 record|compare DIR" >&2; exit 2 ;;
esac
