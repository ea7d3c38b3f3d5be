#!/usr/bin/env bash
# html.sh - `fitgate plan --html` in a real browser (Debian's chromium, headless).
#
#   - the report for tests/fixtures/models/nvidia--NVIDIA-Nemotron-Nano-9B-v2 renders:
#     chromium --dump-dom holds every section, the stacked bars with one segment per
#     breakdown key and each segment's sources in its <title>, the batch chart with a line
#     per mode and a limit per card, the card, layout and structure tables;
#   - no console message at all (the page has no script; a self-test first proves that
#     this check sees console errors and uncaught exceptions);
#   - a screenshot: build/report-nemotron.png, 1400 x 2400 (docs/report-nemotron.png is a
#     copy of one);
#   - a second report (an MoE model, LoRA, on H100) renders cleanly too.
# Chromium runs as root with --no-sandbox, offline (every host name unresolvable), with a
# throw-away profile, each run in its own process group, killed after 120 s at most.
# Installs chromium with apt when it is missing (CI: root on Debian 12).
set -euo pipefail
# shellcheck source=tests/integration/lib/common.sh
source "$(dirname "$0")/lib/common.sh"


[ -x build/fitgate ] || die "build/fitgate missing (run make all)"
# CHROMIUM (installed when missing), T (removed on exit), chromium_run ...
source tests/integration/lib/chromium.sh

# ---- self-test: the console check sees what it must ------------------------------------
chromium_selftest

# ---- the Nemotron report ---------------------------------------------------------------------
MODEL=tests/fixtures/models/nvidia--NVIDIA-Nemotron-Nano-9B-v2
REPORT="$T/report-nemotron.html"
timeout 120 build/fitgate plan "$MODEL" --html "$REPORT" > "$T/plan.txt" 2>&1 ||
    { cat "$T/plan.txt" >&2; die "fitgate plan --html failed"; }
log "report: $(stat -c %s "$REPORT") bytes"

check_page() { # HTML DOM-OUT ERR-OUT WHAT
    local html=$1 dom=$2 err=$3 what=$4
    chromium_dom "$html" "$dom" "$err" "$what"
    for id in summary breakdown batch cards layouts structure; do
        grep -q "<section id=\"$id\">" "$dom" || die "$what: no <section id=\"$id\"> in the DOM"
    done
    for want in '<svg id="breakdown-bars"' '<svg id="batch-chart"' '<table id="card-table">' \
                '<table id="layout-table">' '<table id="structure-table"' '<table id="lines">' \
                '[source: ' '<polyline'; do
        grep -qF "$want" "$dom" || die "$what: '$want' not in the DOM"
    done
    ! grep -qiE '<(script|link|img|iframe)[ >]' "$dom" || die "$what: the DOM loads something"
    # the DOM keeps every structure row and every segment the page was written with
    local a b
    a=$(grep -o '<g class="segment"' "$html" | wc -l)
    b=$(grep -o '<g class="segment"' "$dom" | wc -l)
    [ "$a" -ge 3 ] && [ "$a" = "$b" ] || die "$what: segments: page $a, DOM $b"
    a=$(grep -o '<tr><td class="num">' "$html" | wc -l)
    b=$(grep -o '<tr><td class="num">' "$dom" | wc -l)
    [ "$a" -ge 10 ] && [ "$a" = "$b" ] || die "$what: table rows: page $a, DOM $b"
}

check_page "$REPORT" "$T/nemotron.dom" "$T/nemotron.err" "Nemotron"
for key in weights gradients optimizer activations logits overhead; do
    grep -q "data-key=\"$key\"" "$T/nemotron.dom" || die "Nemotron: no segment for $key"
done
grep -qF '<title>optimizer: 71.1 GB' "$T/nemotron.dom" || die "Nemotron: optimizer segment title"
[ "$(grep -o '<g class="mode"' "$T/nemotron.dom" | wc -l)" = 3 ] || die "Nemotron: not 3 mode lines"
grep -q 'Suggested layouts on H200 141 GB' "$T/nemotron.dom" || die "Nemotron: no H200 layouts"
grep -qF '0-27,28-55' "$T/nemotron.dom" || die "Nemotron: the PP=2 split is missing"
log "Nemotron report renders; no console message"

# ---- screenshot --------------------------------------------------------------------------------
chromium_screenshot "$REPORT" build/report-nemotron.png 1400 2400 60000

# ---- a second model: MoE, LoRA, on H100 ------------------------------------------------------
MOE=tests/fixtures/models/Qwen--Qwen3-30B-A3B
timeout 120 build/fitgate plan "$MOE" --mode lora --gpu h100 --html "$T/moe.html" \
    > "$T/moe.txt" 2>&1 || { cat "$T/moe.txt" >&2; die "fitgate plan --html (MoE) failed"; }
check_page "$T/moe.html" "$T/moe.dom" "$T/moe.err" "Qwen3-30B-A3B LoRA"
grep -q 'data-key="adapters"' "$T/moe.dom" || die "MoE LoRA: no adapters segment"
grep -q 'Suggested layouts on H100 80 GB' "$T/moe.dom" || die "MoE LoRA: no H100 layouts"

# ---- the page shows the gate's verdict: the card of --gres, the policy's headroom -------------
printf 'Headroom=1.3\n' > "$T/policy.conf"
timeout 120 build/fitgate plan tests/fixtures/models/Qwen--Qwen3-0.6B --mode lora \
    --gres=gpu:a100_40g:1 --policy "$T/policy.conf" --html "$T/gres.html" > "$T/gres.txt" 2>&1 ||
    { cat "$T/gres.txt" >&2; die "fitgate plan --gres --html failed"; }
grep -q 'A100 40 GB holds this job' "$T/gres.html" || die "--gres: the page judged another card"
grep -q 'Suggested layouts on A100 40 GB' "$T/gres.html" || die "--gres: no A100 layouts"

log "ok"
