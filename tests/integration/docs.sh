#!/usr/bin/env bash
# docs.sh - the man pages and the bash completion against the code.
#
#   - man/fitgate.1, man/fitgate.conf.5, man/spank_fitgate.8 render without a
#     single groff warning (groff -ww, and man --warnings where man-db is there);
#   - fitgate(1) names every subcommand (cli/commands.c), every option the CLI
#     parses (cli/*.c) and every environment variable it reads;
#   - spank_fitgate(8) names every --ft-* option (plugin/fitgate_options.c) and
#     every FITGATE_* variable exported to jobs (engine/plan/plan_env.c fg_layout_env,
#     plugin/fitgate_common.c fitgate_export);
#   - fitgate.conf(5) against the policy parser is tests/test_man.c;
#   - contrib/bash-completion/fitgate completes subcommands, options, values,
#     card names from the fitgate on PATH, and model ids in the caches, with
#     and without the bash-completion package loaded.
# Needs build/fitgate (make all).  Installs groff-base / bash-completion with
# apt when missing (CI: root on Debian 12).
set -euo pipefail
# shellcheck source=tests/integration/lib/common.sh
source "$(dirname "$0")/lib/common.sh"

fail=0
bad() { echo "docs.sh: FAIL: $*" >&2; fail=1; }

[ -x build/fitgate ] || die "build/fitgate missing (run make all)"

missing=""
command -v groff >/dev/null || missing="$missing groff-base"
[ -f /usr/share/bash-completion/bash_completion ] || missing="$missing bash-completion"
if [ -n "$missing" ]; then
    [ "$(id -u)" = 0 ] || die "need$missing (apt-get install$missing)"
    echo "docs.sh: installing$missing"
    timeout 600 apt-get -o DPkg::Lock::Timeout=600 update -qq >/dev/null || true
    DEBIAN_FRONTEND=noninteractive timeout 900 apt-get -o DPkg::Lock::Timeout=600 \
        install -y -qq --no-install-recommends $missing >/dev/null ||
        die "cannot install$missing"
fi

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# ---- man pages render cleanly ------------------------------------------------
for page in man/fitgate.1 man/fitgate.conf.5 man/spank_fitgate.8; do
    [ -f "$page" ] || { bad "$page missing"; continue; }
    if ! out=$(timeout 30 groff -ww -z -man -t "$page" 2>&1) || [ -n "$out" ]; then
        bad "$page: groff warnings: $out"
    fi
    if command -v man >/dev/null; then
        out=$(MANWIDTH=80 MANPAGER=cat PAGER=cat LC_ALL=C.UTF-8 timeout 30 \
              man --warnings -l "$page" 2>&1 >/dev/null) || true
        [ -z "$out" ] || bad "$page: man --warnings: $out"
    fi
    # rendered, not empty, with its NAME section
    grep -q "^NAME" <<< "$(timeout 30 groff -man -t -Tutf8 -P-cbou "$page" 2>/dev/null)" || bad "$page: renders no NAME"
done

# roff spelling of an option: "--gpus-conf" is \-\-gpus\-conf in the source
roff() { printf '%s' "$1" | sed 's/-/\\-/g'; }

# ---- fitgate(1) against the CLI ----------------------------------------------
page=man/fitgate.1
for cmd in $(grep -o '{"[a-z]*", fg_cli_' cli/commands.c | sed 's/{"\([a-z]*\)".*/\1/'); do
    grep -q "^\.B $cmd\$" "$page" || bad "$page: subcommand '$cmd' has no entry (.B $cmd)"
done
for opt in $(grep -ho '"--[a-z][a-z0-9-]*"' cli/*.c | tr -d '"' | sort -u); do
    grep -qF -- "$(roff "$opt")" "$page" || bad "$page: option $opt is not documented"
done
for var in $(grep -ho '"\(HF\|HUGGING\|HUGGINGFACE\|FITGATE\|XDG\|SLURM\|CUDA\|ROCR\)_[A-Z_]*"' \
                 engine/source/source.c engine/source/source_opts.c cli/*.c | tr -d '"' | sort -u); do
    grep -q "$var" "$page" || bad "$page: environment variable $var is not documented"
done

# ---- spank_fitgate(8) against the plugin ---------------------------------------
page=man/spank_fitgate.8
opts=$(grep -o '{"ft-[a-z0-9-]*"' plugin/fitgate_options.c | sed 's/{"//; s/"//' || true)
[ -n "$opts" ] || bad "no --ft-* options found in plugin/fitgate_options.c"
for opt in $opts; do
    grep -qF -- "$(roff "--$opt")" "$page" || bad "$page: option --$opt is not documented"
done
vars=$(grep -ho '\(SETU\|set\)("FITGATE_[A-Z_]*"' engine/plan/plan_env.c plugin/*.c |
       sed 's/.*("//; s/"//' | sort -u)
for var in FITGATE_TP FITGATE_PP FITGATE_EP FITGATE_DP FITGATE_PP_SPLIT FITGATE_MICRO_BATCH \
           FITGATE_GRAD_ACCUM FITGATE_ESTIMATE_BYTES FITGATE_NEMO_OVERRIDES; do
    grep -qx "$var" <<< "$vars" || bad "$var is no longer exported (engine/plan/plan_env.c)"
done
for var in $vars; do
    grep -q "^\.B $var\$" "$page" || bad "$page: exported $var is not documented (.B $var)"
done
for ctx in task_init user_init init_post_opt; do
    grep -q "$ctx" "$page" || bad "$page: does not say what happens in $ctx"
done

# ---- bash completion -----------------------------------------------------------
# A cache with one model in fitgate's layout and one in the Hugging Face layout.
mkdir -p "$TMP/cache/fitgate/models--nvidia--NVIDIA-Nemotron-Nano-9B-v2/main" \
         "$TMP/cache/huggingface/hub/models--meta-llama--Llama-3.1-8B/snapshots"
echo '{}' > "$TMP/cache/fitgate/models--nvidia--NVIDIA-Nemotron-Nano-9B-v2/main/config.json"
mkdir -p "$TMP/bin"
ln -s "$PWD/build/fitgate" "$TMP/bin/fitgate"

cat > "$TMP/complete.sh" <<'EOF'
# usage: complete.sh WITH_BASH_COMPLETION(0|1) WORD...   (the last word is the one completed)
with=$1; shift
args=(); for w; do [ "$w" = "''" ] && w=""; args+=("$w"); done; set -- "${args[@]}"
[ "$with" = 1 ] && . /usr/share/bash-completion/bash_completion
. contrib/bash-completion/fitgate
COMP_WORDS=("$@")
COMP_CWORD=$(( $# - 1 ))
COMP_LINE="$*"
COMP_POINT=${#COMP_LINE}
COMPREPLY=()
_fitgate fitgate "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"
EOF

# expect WITH "WORDS" WORD... : each WORD must be among the completions
expect() {
    local with=$1 words=$2; shift 2
    local got
    got=$(cd "$PWD" && env -i PATH="$TMP/bin:/usr/bin:/bin" HOME="$TMP/home" \
          XDG_CACHE_HOME="$TMP/cache" timeout 20 bash --norc --noprofile "$TMP/complete.sh" \
          "$with" $words 2>&1) || { bad "completion of '$words' failed: $got"; return; }
    for w in "$@"; do
        grep -qx -- "$w" <<< "$got" ||
            bad "completion (bash-completion=$with) of '$words' lacks '$w'; got: $(echo $got)"
    done
}
for with in 1 0; do
    expect $with "fitgate ''" plan check gpus verify report help
    expect $with "fitgate pl" plan
    expect $with "fitgate plan --mo" --mode
    expect $with "fitgate plan m --html" --html
    expect $with "fitgate plan m --mode ''" full lora qlora serve
    expect $with "fitgate check m --precision bf" bf16-mixed bf16
    expect $with "fitgate plan m --gpu h2" h200
    expect $with "fitgate plan m --gpu a100" a100_40g a100_80g
    expect $with "fitgate plan ''" nvidia/NVIDIA-Nemotron-Nano-9B-v2 meta-llama/Llama-3.1-8B
    expect $with "fitgate verify nv" nvidia/NVIDIA-Nemotron-Nano-9B-v2
    expect $with "fitgate gpus --t" --table --topology
    expect $with "fitgate families --" --json --markdown
    expect $with "fitgate report a.log --" --json --html --by --since --until
    expect $with "fitgate report a.log --by ''" day week month
done
# '' above is a literal empty word for the shell that runs complete.sh

# ---- docs/accuracy.md's family table is 'fitgate families --markdown' -----------------
want=$(build/fitgate families --markdown) || bad "fitgate families --markdown failed"
have=$(sed -n '/^<!-- generated by .fitgate families --markdown/,/^$/p;/^| model_type |/,/^$/p' \
       docs/accuracy.md | grep -v '^$')
[ "$(grep -v '^$' <<< "$want")" = "$have" ] ||
    bad "docs/accuracy.md: the family table differs from 'fitgate families --markdown' (regenerate it)"
if [ "$fail" = 0 ]; then
    echo "docs.sh: ok (3 man pages clean and complete, completion with and without bash-completion)"
fi
exit $fail
