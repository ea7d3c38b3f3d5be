# shellcheck shell=bash disable=SC2034  # sourced: the variables set here are the callers'
# chromium.sh - headless Chromium as html.sh (`fitgate plan --html`) and report.sh (`fitgate
# report --html`) run it: found or installed, offline (every host name unresolvable), as root
# with --no-sandbox, a throw-away profile per run, each run in its own process group, killed
# after 120 s at most.
#
# Sourced after the caller defines log and die (its messages' prefix is ME, the script's
# name).  On sourcing it sets CHROMIUM (apt-get installs chromium when missing: CI is root on
# Debian 12), T (a temporary directory with a home for chromium, removed on exit, when every
# run's process group is killed too) and the functions below.

ME=${ME:-$(basename "$0")}
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
    [ "$(id -u)" = 0 ] || die "chromium missing (apt-get install chromium)"
    log "installing chromium"
    timeout 600 apt-get -o DPkg::Lock::Timeout=600 update -qq >/dev/null || true
    DEBIAN_FRONTEND=noninteractive timeout 1800 apt-get -o DPkg::Lock::Timeout=600 \
        install -y -qq --no-install-recommends chromium >/dev/null || die "cannot install chromium"
    CHROMIUM=$(command -v chromium) || die "chromium not on PATH after install"
fi

T=$(mktemp -d "/tmp/fitgate-${ME%.sh}.XXXXXX")
GROUPS_STARTED=()
chromium_cleanup() {
    rc=$?
    for g in "${GROUPS_STARTED[@]}"; do
        kill -KILL -- "-$g" 2>/dev/null || true
    done
    rm -rf "$T"
    exit $rc
}
trap chromium_cleanup EXIT
trap 'exit 1' INT TERM
mkdir -p "$T/home"

# chromium_run OUT ERR ARGS... : one headless run in its own process group, at most 120 s.
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
            echo "$ME: chromium ran past 120 s: killed" >> "$err"
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

# chromium_selftest: a page that logs an error and throws; dies unless console_lines sees both.
chromium_selftest() {
    cat > "$T/selftest.html" <<'PAGE'
<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>self-test</title></head>
<body><p>x</p><script>console.error("fitgate-selftest"); notDefinedAnywhere();</script></body>
</html>
PAGE
    chromium_run "$T/selftest.dom" "$T/selftest.err" --dump-dom "file://$T/selftest.html" ||
        die "chromium failed on the self-test page: $(tail -5 "$T/selftest.err")"
    grep -q "fitgate-selftest" <<< "$(console_lines "$T/selftest.err")" &&
        grep -q "Uncaught" <<< "$(console_lines "$T/selftest.err")" ||
        die "the console check does not see console.error / uncaught exceptions in chromium's" \
            "log (log format changed?): $(grep -v dbus "$T/selftest.err" | tail -5)"
}

# chromium_dom PAGE DOM ERR [WHAT]: the DOM chromium builds of PAGE into DOM (its log in
# ERR); dies (messages prefixed "WHAT: ") when chromium fails, dumps nothing or logs a
# console line.
chromium_dom() {
    local page=$1 dom=$2 err=$3 what=${4:+$4: } c
    chromium_run "$dom" "$err" --dump-dom "file://$page" ||
        die "${what}chromium failed: $(tail -5 "$err")"
    [ -s "$dom" ] || die "${what}chromium dumped no DOM"
    c=$(console_lines "$err")
    [ -z "$c" ] || die "${what}console messages: $c"
}

# chromium_screenshot PAGE SHOT WIDTH HEIGHT MIN_BYTES: a PNG of PAGE at WIDTH x HEIGHT in
# SHOT (relative to the repository root); dies unless it is one of that size and at least
# MIN_BYTES long (a blank page of that size compresses to a few kilobytes).
chromium_screenshot() {
    local page=$1 shot=$2 w=$3 h=$4 min=$5 dims
    mkdir -p "$(dirname "$shot")"
    rm -f "$shot"
    chromium_run "$T/shot.out" "$T/shot.err" --screenshot="$PWD/$shot" --window-size="$w,$h" \
        "file://$page" || die "screenshot failed: $(tail -5 "$T/shot.err")"
    [ -s "$shot" ] || die "no screenshot written"
    [ "$(head -c 8 "$shot" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
        die "$shot is no PNG"
    dims=$(od -An -tu1 -j16 -N8 "$shot" | awk '{print $1*16777216+$2*65536+$3*256+$4 "x" \
           $5*16777216+$6*65536+$7*256+$8}')
    [ "$dims" = "${w}x$h" ] || die "$shot is $dims, not ${w}x$h"
    [ "$(stat -c %s "$shot")" -gt "$min" ] || die "$shot is only $(stat -c %s "$shot") bytes: blank?"
    log "screenshot $shot: $dims, $(stat -c %s "$shot") bytes"
}
