#!/usr/bin/env bash
# report.sh - `fitgate report` on the audit-trail fixtures (tests/fixtures/audit):
#
#   - text: the per-month, per-partition and per-user rows and the totals of site.log
#     (96 decisions), the numbers tests/fixtures/audit/gen.py --summary computes in Python
#     (and, where python3 is installed, computed again here and compared);
#   - --json: the same totals, --by week, --since/--until, null GPU-hours when no shrunk
#     request has a time limit;
#   - bad lines (mixed.log): each skipped with a warning naming FILE:LINE, never fatal;
#     past 20 (over all the trails given), one warning counting the rest;
#     syslog-prefixed lines read; errors (missing file, bad option) exit 2;
#   - --html in headless Chromium exactly as html.sh runs it (offline, no sandbox,
#     throw-away profile, 120 s at most): every section, chart and table in the DOM, the
#     page's segments all there, no console message (self-test first), nothing loaded,
#     the hostile model path escaped; screenshot build/report-audit.png, 1400 x 1800.
# Installs chromium with apt when it is missing (CI: root on Debian 12).
set -euo pipefail
# shellcheck source=tests/integration/lib/common.sh
source "$(dirname "$0")/lib/common.sh"


FG=build/fitgate
A=tests/fixtures/audit
[ -x "$FG" ] || die "$FG missing (run make all)"

# CHROMIUM (installed when missing), T (removed on exit), chromium_run ...
source tests/integration/lib/chromium.sh

# has TEXT-FILE REGEX WHAT: the extended regex matches a line of the file
has() { grep -qE -- "$2" "$1" || { echo "--- $1:"; cat "$1"; die "$3: no line matching '$2'"; }; }

# ---- text ------------------------------------------------------------------------------
timeout 60 $FG report $A/site.log > "$T/site.txt" 2> "$T/site.err" ||
    { cat "$T/site.err"; die "fitgate report site.log failed"; }
[ ! -s "$T/site.err" ] || die "warnings on a clean log: $(cat "$T/site.err")"
has "$T/site.txt" '^fitgate report: 96 decisions from 1 log, 2025-11-03 10:34 \.\. 2025-12-15 20:23 UTC$' header
# period checked allow warn reject resize override error GPUs-asked after GPU-h
has "$T/site.txt" '^2025-11 +62 +15 +21 +8 +15 +2 +1 +222 +202 +472\.0 \+ 2 unknown$' "November"
has "$T/site.txt" '^2025-12 +34 +7 +9 +4 +8 +5 +1 +108 +96 +247\.0$' "December"
has "$T/site.txt" '^total +96 +22 +30 +12 +23 +7 +2 +330 +298 +719\.0 \+ 2 unknown$' "total"
has "$T/site.txt" '^gpu +30 +5 +0 +0 +23 +1 +1 +111 +79 +719\.0 \+ 2 unknown$' "partition gpu"
has "$T/site.txt" '^\(default\) +33 +6 +11 +12 +0 +4 +0 +102 +102 +0$' "default partition"
has "$T/site.txt" '^debug +33 +11 +19 +0 +0 +2 +1 +117 +117 +0$' "partition debug"
has "$T/site.txt" '^alice +22 +5 +6 +2 +7 +2 +0 +89 +66 +263\.0 \+ 1 unknown$' "user alice"
has "$T/site.txt" '^eve +22 +3 +8 +3 +5 +1 +2 +86 +83 +336\.0$' "user eve"
has "$T/site.txt" '^dmitri +15 +4 +6 +2 +2 +1 +0 +40 +42 +0$' "user dmitri (resized up only)"
has "$T/site.txt" '^ +6  Qwen/Qwen3-8B$' "top rejected model"
has "$T/site.txt" '^ +2  /home/eve/ckpt<v2>&final$' "rejected local path"
[ "$(grep -A9 '^models rejected' "$T/site.txt" | grep -cE '^ +[0-9]+  ')" = 4 ] ||
    die "not 4 rejected models"
log "text: 96 decisions, 719.0 GPU-h shrunk + 2 unknown, per month / partition / user"

# the same log on standard input
timeout 60 $FG report - < $A/site.log > "$T/stdin.txt" || die "report - failed"
has "$T/stdin.txt" '^total +96 +22 +30 +12 +23 +7 +2 +330 +298 +719\.0 \+ 2 unknown$' "stdin total"

# the fixture's numbers computed in Python, apart from the C reader
if command -v python3 >/dev/null; then
    python3 $A/gen.py --summary > "$T/py.txt"
    has "$T/py.txt" "^decisions 96 \{'allow': 22, 'error': 2, 'override': 7, 'reject': 12, 'resize': 23, 'warn': 30\}$" "gen.py totals"
    has "$T/py.txt" '^gpus_asked 330 gpus_after 298$' "gen.py GPUs"
    has "$T/py.txt" '^shrunk 10 no_time_limit 2 gpu_hours 719\.0$' "gen.py GPU-hours"
    python3 $A/gen.py > "$T/regen.log"
    cmp -s "$T/regen.log" $A/site.log || die "gen.py no longer writes site.log"
    log "gen.py (Python) agrees and regenerates site.log byte for byte"
fi

# ---- JSON ------------------------------------------------------------------------------
timeout 60 $FG report $A/site.log --json > "$T/site.json" || die "--json failed"
jnum() { # FILE PATH: a number from the JSON (python3, else the first "key": N after a marker)
    python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    d=d[int(k)] if k.isdigit() else d[k]
print(json.dumps(d))' "$1" "$2"
}
if command -v python3 >/dev/null; then
    [ "$(jnum "$T/site.json" total.checked)" = 96 ] || die "json total.checked"
    [ "$(jnum "$T/site.json" total.reject)" = 12 ] || die "json total.reject"
    [ "$(jnum "$T/site.json" total.override)" = 7 ] || die "json total.override"
    [ "$(jnum "$T/site.json" total.gpus_after)" = 298 ] || die "json total.gpus_after"
    [ "$(jnum "$T/site.json" total.gpu_hours_shrunk)" = 719 ] || die "json gpu_hours_shrunk"
    [ "$(jnum "$T/site.json" total.shrunk_no_time_limit)" = 2 ] || die "json no time limit"
    [ "$(jnum "$T/site.json" periods.1.period)" = '"2025-12"' ] || die "json periods"
    [ "$(jnum "$T/site.json" users.0.user)" = '"alice"' ] || die "json users sorted"
    [ "$(jnum "$T/site.json" top_rejected_models.0.rejected)" = 6 ] || die "json top model"
    [ "$(jnum "$T/site.json" first)" = '"2025-11-03T10:34:29Z"' ] || die "json first"

    timeout 60 $FG report $A/site.log --json --by week > "$T/week.json"
    [ "$(jnum "$T/week.json" periods.6.period)" = '"2025-W51"' ] || die "json weeks"
    [ "$(jnum "$T/week.json" periods.6.checked)" = 2 ] || die "json week 51"
    [ "$(jnum "$T/week.json" periods.0.checked)" = 17 ] || die "json week 45"

    # both logs, 1 to 20 December: 34 December decisions of site.log + 3 of mixed.log
    timeout 60 $FG report $A/site.log $A/mixed.log --json --since 2025-12-01 \
        --until 2025-12-20 > "$T/range.json" 2> /dev/null
    [ "$(jnum "$T/range.json" total.checked)" = 37 ] || die "json --since/--until total"
    [ "$(jnum "$T/range.json" outside_dates)" = 62 ] || die "json outside_dates"
    [ "$(jnum "$T/range.json" bad_lines)" = 5 ] || die "json bad_lines"
    timeout 60 $FG report $A/site.log --json --until 2025-11-30T23:59:59Z > "$T/nov.json"
    [ "$(jnum "$T/nov.json" total.checked)" = 62 ] || die "json --until timestamp"

    # no shrunk request with a time limit: GPU-hours unknown (null), not 0
    sed 's/"time_limit_min":[0-9]*/"time_limit_min":0/' $A/site.log > "$T/nolimit.log"
    timeout 60 $FG report "$T/nolimit.log" --json > "$T/nolimit.json"
    [ "$(jnum "$T/nolimit.json" total.gpu_hours_shrunk)" = null ] || die "json unknown hours"
    [ "$(jnum "$T/nolimit.json" total.shrunk)" = 10 ] || die "json shrunk count"
    log "json: totals, weeks, date range, unknown GPU-hours as null"
else
    grep -q '"gpu_hours_shrunk":	719' "$T/site.json" || die "json gpu_hours_shrunk (grep)"
    log "json: checked with grep (no python3)"
fi
sed 's/"time_limit_min":[0-9]*/"time_limit_min":0/' $A/site.log > "$T/nolimit.log"
timeout 60 $FG report "$T/nolimit.log" > "$T/nolimit.txt"
has "$T/nolimit.txt" '^total .* unknown \(10 jobs\)$' "text unknown GPU-hours"

# ---- bad lines and errors ----------------------------------------------------------------
rc=0
timeout 60 $FG report $A/mixed.log > "$T/mixed.txt" 2> "$T/mixed.err" || rc=$?
[ "$rc" = 0 ] || die "bad lines made report exit $rc"
for l in 3 4 5 7 9; do
    grep -q "^fitgate: warning: $A/mixed.log:$l: skipped: " "$T/mixed.err" ||
        die "no warning for mixed.log:$l: $(cat "$T/mixed.err")"
done
[ "$(wc -l < "$T/mixed.err")" = 5 ] || die "not 5 warnings: $(cat "$T/mixed.err")"
grep -q 'mixed.log:5: skipped: format version 2' "$T/mixed.err" || die "v2 warning"
has "$T/mixed.txt" '^fitgate report: 3 decisions' "mixed: syslog-prefixed lines read"
has "$T/mixed.txt" '^5 lines skipped' "mixed: skipped count"
has "$T/mixed.txt" '^frank +3 +1 +0 +1 +1 +0 +0 +10 +4 +60\.0$' "mixed: frank"

# a 200 kB line and a NUL byte: skipped, bounded, the lines around them read
{ head -1 $A/site.log; printf '{"v":1,"model":"%0200000d"}\n' 0; printf '{"v":1,\0}\n'
  tail -1 $A/site.log; } > "$T/weird.log"
timeout 60 $FG report "$T/weird.log" > "$T/weird.txt" 2> "$T/weird.err" || die "weird.log"
grep -q 'weird.log:2: skipped: longer than 64 KiB' "$T/weird.err" || die "long line: $(cat "$T/weird.err")"
grep -q 'weird.log:3: skipped: a NUL byte' "$T/weird.err" || die "NUL: $(cat "$T/weird.err")"
has "$T/weird.txt" '^fitgate report: 2 decisions' "lines around the bad ones"

# 30 bad lines over two trails: a warning each for the first 20, then one count of the rest
{ head -1 $A/site.log; printf 'not an audit line\n%.0s' {1..15}; } > "$T/bad1.log"
printf 'not an audit line\n%.0s' {1..15} > "$T/bad2.log"
timeout 60 $FG report "$T/bad1.log" "$T/bad2.log" > "$T/bad.txt" 2> "$T/bad.err" || die "bad1+2"
[ "$(grep -c ': skipped: not an audit line' "$T/bad.err")" = 20 ] &&
    [ "$(tail -1 "$T/bad.err")" = "fitgate: warning: 10 more lines skipped" ] &&
    [ "$(wc -l < "$T/bad.err")" = 21 ] || die "warnings over two trails: $(cat "$T/bad.err")"
has "$T/bad.txt" '^fitgate report: 1 decision from 2 logs' "two trails counted"
has "$T/bad.txt" '^30 lines skipped' "bad lines of both trails counted"

expect_fail() { # PATTERN ARGS...: exit 2 and PATTERN on stderr
    local pat=$1; shift
    local rc=0
    timeout 60 $FG report "$@" > "$T/f.out" 2> "$T/f.err" || rc=$?
    [ "$rc" = 2 ] || die "report $*: exit $rc, not 2"
    grep -qE -- "$pat" "$T/f.err" || die "report $*: no '$pat' in: $(cat "$T/f.err")"
}
expect_fail "$T/none.log: No such file" "$T/none.log"
expect_fail 'usage: fitgate report' --json
expect_fail '--by year: expected day, week or month' $A/site.log --by year
expect_fail '--since 2025-13-01: expected' $A/site.log --since 2025-13-01
expect_fail 'is not after --since' $A/site.log --since 2025-12-02 --until 2025-12-01
expect_fail 'unknown option --jsn' $A/site.log --jsn
log "bad lines: 5 warnings naming mixed.log:LINE, exit 0; errors exit 2"

# ---- HTML in Chromium --------------------------------------------------------------------
chromium_selftest

PAGE="$T/audit.html"
timeout 60 $FG report $A/site.log --html "$PAGE" > "$T/html.txt" || die "--html failed"
has "$T/html.txt" '^total +96 ' "--html still prints the text"
log "page: $(stat -c %s "$PAGE") bytes"
chromium_dom "$PAGE" "$T/audit.dom" "$T/audit.err"
for id in summary periods partitions users models; do
    grep -q "<section id=\"$id\">" "$T/audit.dom" || die "no <section id=\"$id\"> in the DOM"
done
for want in '<svg id="period-chart"' '<svg id="partition-chart"' '<svg id="user-chart"' \
            '<table id="period-table">' '<table id="partition-table">' '<table id="user-table">' \
            '<table id="model-table">' '<b id="n-checked">96</b>' '<b id="n-reject">12</b>' \
            '<b id="n-override">7</b>' '<b id="n-shrunk">719.0 + 2 unknown</b>' \
            '<title>2025-11: 8 reject</title>' '<title>gpu: 23 resize</title>' \
            '<td>/home/eve/ckpt&lt;v2&gt;&amp;final</td>'; do
    grep -qF "$want" "$T/audit.dom" || die "'$want' not in the DOM"
done
! grep -qiE '<(script|link|img|iframe|v2)[ >]' "$T/audit.dom" || die "the DOM loads or injects something"
# every segment the page was written with is in the DOM: 12 per month + 12 per partition
# + 25 per user (one per verdict a row has)
a=$(grep -o '<rect class="segment"' "$PAGE" | wc -l)
b=$(grep -o '<rect class="segment"' "$T/audit.dom" | wc -l)
[ "$a" = 49 ] && [ "$b" = 49 ] || die "segments: page $a, DOM $b, want 49"
a=$(grep -o '<tr><td' "$T/audit.dom" | wc -l)
[ "$a" = 14 ] || die "table rows: $a, want 14 (2 months, 3 partitions, 5 users, 4 models)"
log "page renders: 5 sections, 3 charts, 49 segments, no console message, escaped path"

chromium_screenshot "$PAGE" build/report-audit.png 1400 1800 40000
log "ok"
