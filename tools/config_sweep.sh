#!/bin/bash
# tools/config_sweep.sh - how many of a framework repository's own example and recipe
# YAMLs `fitgate check --config` refuses with an error (issue #33's measure: at most 2%).
#
#   tools/config_sweep.sh [-v] MIRROR...
#
# MIRROR is a git directory (a bare mirror or a checkout) of axolotl, torchtune,
# LLaMA-Factory, alignment-handbook, open-r1 or trl.  Each YAML under examples/ and
# recipes/ at HEAD is checked from the tree it lives in (--base-dir: the repository root,
# so `deepspeed: deepspeed_configs/zero3.json` is read as the framework reads it), with
# one model given on the command line (the file's own model is a hub id this machine may
# not have) on 8 x H100.  A file is counted as
#   read      exit 0 or 1 (a verdict, fits or not),
#   not-job   exit 2 saying "not a training job" (an inference, merge or eval config),
#   refused   any other exit 2: the number to keep at or under 2%.
# -v prints each refused file with the first line of its error.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FG=$ROOT/build/fitgate
MODEL=${SWEEP_MODEL:-$ROOT/tests/fixtures/models/meta-llama--Llama-3.1-8B}
verbose=0
[ "${1:-}" = -v ] && { verbose=1; shift; }
[ $# -ge 1 ] || { echo "usage: $0 [-v] MIRROR..." >&2; exit 2; }
[ -x "$FG" ] || { echo "$0: $FG missing: run make" >&2; exit 2; }
work=$(mktemp -d /tmp/fitgate-sweep.XXXXXX) || exit 2
trap 'rm -rf "$work"' EXIT
total=0 read_=0 notjob=0 refused=0
for mirror in "$@"; do
    name=$(basename "$(dirname "$mirror")")
    [ -d "$mirror/objects" ] || name=$(basename "$mirror")
    tree=$work/$name
    mkdir -p "$tree"
    git -C "$mirror" archive HEAD | tar -x -C "$tree" || { echo "$mirror: not a git repository" >&2; exit 2; }
    n=0 r=0 nj=0 rf=0
    while IFS= read -r f; do
        n=$((n + 1))
        out=$(cd "$tree" && timeout 20 "$FG" check --base-dir "$tree" --config "$f" "$MODEL" \
              --gres=gpu:h100:8 2>&1)
        rc=$?
        if [ "$rc" -le 1 ]; then
            r=$((r + 1))
        elif grep -q "not a training job" <<<"$out"; then
            nj=$((nj + 1))
        else
            rf=$((rf + 1))
            [ "$verbose" = 1 ] && printf '  refused %s: %s\n' "$f" \
                "$(grep -m1 -E 'fitgate|error|config' <<<"$out" | cut -c1-220)"
        fi
    done < <(cd "$tree" && find examples recipes -name '*.yaml' -o -name '*.yml' 2>/dev/null | sort)
    printf '%-36s %4d YAMLs: %4d read, %3d not a job, %3d refused\n' "$name" "$n" "$r" "$nj" "$rf"
    total=$((total + n)) read_=$((read_ + r)) notjob=$((notjob + nj)) refused=$((refused + rf))
done
pct=$(awk -v a="$refused" -v b="$total" 'BEGIN { printf "%.1f", b ? 100 * a / b : 0 }')
printf 'all: %d YAMLs, %d read, %d not a training job, %d refused (%s%%)\n' "$total" "$read_" \
    "$notjob" "$refused" "$pct"
