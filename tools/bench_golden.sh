#!/bin/bash
# tools/bench_golden.sh - byte-identical outputs before / after a performance change.
#
#   tools/bench_golden.sh record DIR    write `fitgate plan` outputs for every fixture model to DIR
#   tools/bench_golden.sh compare DIR   rebuild the same outputs and diff them against DIR
#
# Per model (tests/fixtures/models/*/config.json): `plan M --json`, `plan M --gpu h200` (the two
# the brief names), and, for wider cover of the planner and the estimator, `plan M --json --gpu
# h200 --mode lora`, `plan M --gpu a100_40g --mode serve --structure` and `plan M --json --gpu t4
# --mode qlora --grad-ckpt`.  stdout and stderr and the exit code are all compared.
# Exit 0 when identical (or after recording), 1 on any difference, 2 on misuse.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FITGATE=${FITGATE:-$ROOT/build/fitgate}
[ $# -eq 2 ] || { echo "usage: $0 record|compare DIR" >&2; exit 2; }
cmd=$1 dir=$2
[ -x "$FITGATE" ] || { echo "bench_golden: $FITGATE missing: run make first" >&2; exit 2; }

variants=(
    "json|--json"
    "h200|--gpu h200"
    "lora|--json --gpu h200 --mode lora"
    "serve|--gpu a100_40g --mode serve --structure"
    "qlora|--json --gpu t4 --mode qlora --grad-ckpt"
)

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
    n=$(ls "$now" | grep -c '\.out$')
    if diff -r -q "$dir" "$now" >/dev/null; then
        echo "bench_golden: $n outputs byte-identical to $dir"
    else
        echo "bench_golden: DIFFERENT from $dir:"
        diff -r -q "$dir" "$now" | head -20
        exit 1
    fi
    ;;
*) echo "usage: $0 record|compare DIR" >&2; exit 2 ;;
esac
