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
cd "$(dirname "$0")/../.."

log() { echo "html.sh: $*"; }
die() { echo "html.sh: FAIL: $*" >&2; exit 1; }

[ -x build/fitgate ] || die "build/fitgate missing (run make all)"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
    [ "$(id -u)" = 0 ] || die "chromium missing (apt-get install chromium)"
    log "installing chromium"
    timeout 600 apt-get -o DPkg::Lock::Timeout=600 update -qq >/dev/null || true
    DEBIAN_FRONTEND=noninteractive timeout 1800 apt-get -o DPkg::Lock::Timeout=600 \
        install -y -qq --no-install-recommends chromium >/dev/null || die "cannot install chromium"
    CHROMIUM=$(command -v chromium) || die "chromium not on PATH after install"
fi

T=$(mktemp -d /tmp/fitgate-html.XXXXXX)
GROUPS_STARTED=()
cleanup() {
    rc=$?
    for g in "${GROUPS_STARTED[@]}"; do
        kill -KILL -- "-$g" 2>/dev/null || true
    done
    rm -rf "$T"
    exit $rc
}
trap cleanup EXIT
trap 'exit 1' INT TERM
mkdir -p "$T/home"

# chromium OUT ERR ARGS... : one headless run in its own process group, at most 120 s.
chromium_run() {
    local out=$1 err=$2; shift 2
    local profile
    profile=$(mktemp -d "$T/profile.XXXXXX")
    HOME="$T/home" XDG_CONFIG_HOME="$T/home/.config" XDG_CACHE_HOME="$T/home/.cache" \
    setsid "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
        --no-first-run --disable-background-networking --disable-component-update \
        --disable-sync --user-data-dir="$profile" --hide-scrollbars \
        --host-resolver-rules="MAP * ~NOTFOUND" --enable-logging=stderr --v=0 \
        "$@" > "$out" 2> "$err" < /dev/null &
    local pid=$! ticks=0 rc=0
    GROUPS_STARTED+=("$pid")
    while kill -0 "$pid" 2>/dev/null; do
        if [ "$ticks" -ge 1200 ]; then
            kill -KILL -- "-$pid" 2>/dev/null || true
            echo "html.sh: chromium ran past 120 s: killed" >> "$err"
            break
        fi
        sleep 0.1
        ticks=$((ticks + 1))
    done
    wait "$pid" || rc=$?
    kill -KILL -- "-$pid" 2>/dev/null || true # helpers of that run, if any linger
    return $rc
}

# Console lines chromium logs for a page (messages, uncaught exceptions, failed loads).
console_lines() { grep -E ':CONSOLE[(:]|Uncaught|Failed to load resource' "$1" || true; }

# ---- self-test: the console check sees what it must ------------------------------------
cat > "$T/selftest.html" <<'EOF'
<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>self-test</title></head>
<body><p>x</p><script>console.error("fitgate-selftest"); notDefinedAnywhere();</script></body>
</html>
EOF
chromium_run "$T/selftest.dom" "$T/selftest.err" --dump-dom "file://$T/selftest.html" ||
    die "chromium failed on the self-test page: $(tail -5 "$T/selftest.err")"
grep -q "fitgate-selftest" <<< "$(console_lines "$T/selftest.err")" &&
    grep -q "Uncaught" <<< "$(console_lines "$T/selftest.err")" ||
    die "the console check does not see console.error / uncaught exceptions in chromium's log" \
        "(log format changed?): $(grep -v dbus "$T/selftest.err" | tail -5)"

# ---- the Nemotron report ---------------------------------------------------------------------
MODEL=tests/fixtures/models/nvidia--NVIDIA-Nemotron-Nano-9B-v2
REPORT="$T/report-nemotron.html"
timeout 120 build/fitgate plan "$MODEL" --html "$REPORT" > "$T/plan.txt" 2>&1 ||
    { cat "$T/plan.txt" >&2; die "fitgate plan --html failed"; }
log "report: $(stat -c %s "$REPORT") bytes"

check_page() { # HTML DOM-OUT ERR-OUT WHAT
    local html=$1 dom=$2 err=$3 what=$4
    chromium_run "$dom" "$err" --dump-dom "file://$html" ||
        die "$what: chromium failed: $(tail -5 "$err")"
    [ -s "$dom" ] || die "$what: chromium dumped no DOM"
    local c
    c=$(console_lines "$err")
    [ -z "$c" ] || die "$what: console messages: $c"
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
mkdir -p build
SHOT=build/report-nemotron.png
rm -f "$SHOT"
chromium_run "$T/shot.out" "$T/shot.err" --screenshot="$PWD/$SHOT" --window-size=1400,2400 \
    "file://$REPORT" || die "screenshot failed: $(tail -5 "$T/shot.err")"
[ -s "$SHOT" ] || die "no screenshot written"
[ "$(head -c 8 "$SHOT" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || die "$SHOT is no PNG"
dims=$(od -An -tu1 -j16 -N8 "$SHOT" | awk '{print $1*16777216+$2*65536+$3*256+$4 "x" \
       $5*16777216+$6*65536+$7*256+$8}')
[ "$dims" = 1400x2400 ] || die "$SHOT is $dims, not 1400x2400"
# a blank page of that size compresses to a few kilobytes; the report is far more
[ "$(stat -c %s "$SHOT")" -gt 60000 ] || die "$SHOT is only $(stat -c %s "$SHOT") bytes: blank?"
log "screenshot $SHOT: $dims, $(stat -c %s "$SHOT") bytes"

# ---- a second model: MoE, LoRA, on H100 ------------------------------------------------------
MOE=tests/fixtures/models/Qwen--Qwen3-30B-A3B
timeout 120 build/fitgate plan "$MOE" --mode lora --gpu h100 --html "$T/moe.html" \
    > "$T/moe.txt" 2>&1 || { cat "$T/moe.txt" >&2; die "fitgate plan --html (MoE) failed"; }
check_page "$T/moe.html" "$T/moe.dom" "$T/moe.err" "Qwen3-30B-A3B LoRA"
grep -q 'data-key="adapters"' "$T/moe.dom" || die "MoE LoRA: no adapters segment"
grep -q 'Suggested layouts on H100 80 GB' "$T/moe.dom" || die "MoE LoRA: no H100 layouts"

log "ok"
