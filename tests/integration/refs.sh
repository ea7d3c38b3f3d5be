#!/usr/bin/env bash
# refs.sh - no dead reference from the README to the code, and a README a
# newcomer can follow.
#
#   - nothing tracked mentions the lab's scratch tree: the parent-directory
#     "shared" folder, research "notes", or a DESIGN file outside the repository
#     (the patterns are spelled out in BANNED below);
#   - every repository path named in README.md, docs/*.md, man/*, the other
#     project Markdown files, and in the comments of engine/ policies/ plugin/
#     cli/ tests/ tools/ bench/ (C comments, '#' comments of scripts, the
#     Makefile and conf/) exists: is tracked, or new and not ignored by git.
#     A path is ours when it starts with a top-level directory (engine/,
#     tests/, docs/ ...), with a directory beside the file that names it
#     (accuracy/accuracy.h in tests/), or, in Markdown, with ../ (taken from
#     the page's directory).  Other paths (models/llama/..., torch/optim/...)
#     cite other projects and are not checked; so is a path written
#     repo:path (open-mpi/hwloc:tests/hwloc/xml/...).  An all-capitals
#     component (TARGET, ORG--NAME) or a <word> is a placeholder that matches
#     anything; a module may be named without its extension (engine/source);
#   - a page named without a directory (estimate.md) is a tracked file's name;
#   - every function of ours named in those texts (fg_x(), fitgate_x(),
#     acc_x(), `fg_x`) exists in the code, outside comments;
#   - README.md is at most 150 lines, gives the test command that .ci/run runs
#     (make check), and every docs/*.md page is linked from the README or from
#     another docs page;
#   - the newcomer's path: README -> demo -> `fitgate plan` -> docs/estimate.md.
#     Every "$ fitgate ..." command in the README runs (exit 0, or 1 for a
#     check that does not fit), every line the README shows under it (but the
#     "..." ones) is in its real output, and every source label the plan prints
#     for the demo model ([PyTorch AMP / Megatron] ...) in each job mode is
#     explained in docs/estimate.md, which the README links;
#   - the calibration grid (tests/calibration/grid.tsv) parses and every config_dir it names
#     holds a config.json that its layer cut applies to: measure.py --dry-run, which needs
#     no torch, where python3 is installed (skipped, and said, where it is not).
# Needs build/fitgate (make all).  In a git checkout the file list is git's.
set -euo pipefail
# shellcheck source=tests/integration/lib/common.sh
source "$(dirname "$0")/lib/common.sh"

fail=0
bad() { echo "refs.sh: FAIL: $*" >&2; fail=1; }

[ -x build/fitgate ] || die "build/fitgate missing (run make all)"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
SELF=tests/integration/refs.sh

# The repository's files: git's list in a checkout (tracked, or new and not ignored), else
# (an unpacked release tarball) every file but the build tree.
if command -v git >/dev/null && git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files --cached --others --exclude-standard > "$TMP/files"
else
    find . -path ./build -prune -o -path ./.git -prune -o -type f -print | sed 's:^\./::' |
        sort > "$TMP/files"
fi
# every tracked file and every directory above one
awk -F/ '{ p = $1; print p; for (i = 2; i <= NF; i++) { p = p "/" $i; print p } }' \
    "$TMP/files" | sort -u > "$TMP/known"

# ---- 1. no mention of the scratch tree ----------------------------------------
# (split so that this file does not match itself)
BANNED='\.\./'"shared|/work/"'shared|(^|[^A-Za-z0-9_-])notes/|DESIGN'"\.md"
grep -vxF "$SELF" "$TMP/files" | tr '\n' '\0' |
    xargs -0 grep -I -n -H -E "$BANNED" -- > "$TMP/banned" || true
if [ -s "$TMP/banned" ]; then
    while IFS= read -r l; do bad "names a file outside the repository: $l"; done < "$TMP/banned"
fi

# ---- 2. the texts to check, as FILE:LINE:TEXT ---------------------------------
# C comments (block and line), string and character literals skipped.
cat > "$TMP/ccom.awk" <<'EOF'
FNR == 1 { st = "" }
{
    com = ""; code = ""; i = 1; n = length($0)
    if (st == "line") st = ""
    while (i <= n) {
        c = substr($0, i, 1); d = substr($0, i, 2)
        if (st == "block") {
            if (d == "*/") { st = ""; i += 2; com = com " "; continue }
            com = com c; i++; continue
        }
        if (st == "str" || st == "chr") {
            if (c == "\\") { i += 2; continue }
            if ((st == "str" && c == "\"") || (st == "chr" && c == "'")) st = ""
            i++; continue
        }
        if (d == "/*") { st = "block"; i += 2; continue }
        if (d == "//") { com = com substr($0, i + 2); st = "line"; break }
        if (c == "\"") st = "str"
        else if (c == "'") st = "chr"
        else code = code c
        i++
    }
    if (st == "str" || st == "chr") st = ""
    if (mode == "code") print code
    else if (com ~ /[^ \t]/) print FILENAME ":" FNR ":" com
}
EOF
DIRS='^(engine|policies|plugin|cli|tests|tools|bench)/'
grep -E "$DIRS" "$TMP/files" | grep -E '\.[ch]$' | grep -v '^tests/fixtures/' > "$TMP/cfiles"
xargs awk -f "$TMP/ccom.awk" < "$TMP/cfiles" > "$TMP/texts"
# '#' comments: shell, Python, the Makefile, conf/ and .ci/
{ grep -E "$DIRS" "$TMP/files" | grep -E '\.(sh|py)$' | grep -v '^tests/fixtures/'
  grep -E '^(Makefile|conf/|\.ci/)' "$TMP/files"; } | grep -vx "$SELF" > "$TMP/hfiles"
xargs grep -Hn -E '(^|[[:space:]])#' < "$TMP/hfiles" |
    sed -E 's/^([^:]*:[0-9]+:)([^#]*[[:space:]])?#/\1/' >> "$TMP/texts"
# whole documents
{ echo README.md; grep -E '^(docs/.*\.md|man/)' "$TMP/files"
  grep -E '\.md$' "$TMP/files" | grep -v -E '^(README\.md|docs/|tests/fixtures/)'; } |
    sort -u > "$TMP/dfiles"
xargs grep -Hn '' < "$TMP/dfiles" >> "$TMP/texts"
# a blank after FILE:LINE: so that a path at the start of a text has a left edge
sed -i -E 's/^([^:]*:[0-9]+:)/\1 /' "$TMP/texts"

# ---- 3. every repository path named exists --------------------------------------
tops=$(cut -d/ -f1 "$TMP/files" | grep -v '^\.' | sort -u | paste -sd'|')
grep -oE "^[^:]+:[0-9]+:|(^|[^A-Za-z0-9_./\$:-])(\.\./)*[A-Za-z0-9_.-]+/[A-Za-z0-9_.*/<>-]*[A-Za-z0-9_*>]" \
    "$TMP/texts" | awk '/^[^:]+:[0-9]+:$/ { where = $0; next }
                        { sub(/^[^A-Za-z0-9_]/, ""); print where $0 }' > "$TMP/paths"
checked=0
while IFS= read -r l; do
    file=${l%%:*}; rest=${l#*:}; where=$file:${rest%%:*}; p=${rest#*:}
    dir=$(dirname "$file")
    # Ours: from the top (engine/...), under a directory beside the naming file
    # (accuracy/accuracy.h from tests/), or ../ from a Markdown page.  Anything else is another project's path
    # (models/llama/..., torch/optim/...), a URL or a ratio, and is not checked.
    first=${p%%/*}
    case "$file" in *.md|man/*) md=1 ;; *) md=0 ;; esac
    if ! grep -qxE "$tops" <<< "$first" && { [ "$first" != .. ] || [ $md = 0 ]; } &&
       ! { [ "$dir" != . ] && grep -qxF "$dir/$first" "$TMP/known"; }; then
        continue
    fi
    checked=$((checked + 1))
    # all-capitals components are placeholders
    re=$(sed -E 's/[.]/\\./g; s/[*]/[^\/]*/g; s/<[^>]*>/[^\/]*/g
                 s:(^|/)[A-Z][A-Z_0-9-]*(/|$):\1[^/]*\2:g; s:(^|/)[A-Z][A-Z_0-9-]*(/|$):\1[^/]*\2:g' <<< "$p")
    if [ "${p#../}" != "$p" ]; then     # relative to the file that names it
        rel=$(realpath -m --relative-to=. "$dir/$p")
        [ "${rel#../}" = "$rel" ] && grep -qxF "$rel" "$TMP/known" ||
            bad "$where: no such path: $p"
        continue
    fi
    grep -qxE "($re|$re\.[ch]|$dir/$re)" "$TMP/known" || bad "$where: no such path: $p"
done < "$TMP/paths"

# a Markdown page named without a directory (peers.md) is one of ours
sed 's:.*/::' "$TMP/known" | sort -u > "$TMP/basenames"
grep -oE "^[^:]+:[0-9]+:|(^|[^A-Za-z0-9_./:-])[A-Za-z0-9_-]+\.md\b" "$TMP/texts" |
    awk '/^[^:]+:[0-9]+:$/ { where = $0; next } { sub(/^[^A-Za-z0-9_]/, ""); print where $0 }' |
    while IFS= read -r l; do
        grep -qxF "${l##*:}" "$TMP/basenames" || echo "${l%:*}: no such page: ${l##*:}"
    done > "$TMP/deadmd"
while IFS= read -r l; do bad "$l"; done < "$TMP/deadmd"

# ---- 4. every function named exists in the code -----------------------------------
# fg_x(), fitgate_x(), acc_x(), cal_x() anywhere, and `fg_x` in backquotes
xargs awk -v mode=code -f "$TMP/ccom.awk" < "$TMP/cfiles" | grep -oE '\b(fg|fitgate|acc|cal)_[a-z0-9_]+' |
    sort -u > "$TMP/idents"
grep -oE "^[^:]+:[0-9]+:|\b(fg|fitgate|acc|cal)_[a-z0-9_]+\(\)|\`fg_[a-z0-9_]+\`" "$TMP/texts" |
    awk '/^[^:]+:[0-9]+:$/ { where = $0; next } { gsub(/`/, ""); print where $0 }' |
    while IFS= read -r l; do
        fn=${l##*:}; fn=${fn%()}; echo "$fn" >> "$TMP/fnnames"
        grep -qx "$fn" "$TMP/idents" || echo "${l%:*}: no such function: $fn()"
    done > "$TMP/deadfn"
while IFS= read -r l; do bad "$l"; done < "$TMP/deadfn"

# ---- 5. README size, docs pages reachable ----------------------------------------
lines=$(wc -l < README.md)
[ "$lines" -le 150 ] || bad "README.md has $lines lines (at most 150; depth goes to docs/)"
for page in $(grep -E '^docs/[^/]*\.md$' "$TMP/files"); do
    name=${page#docs/}
    others=$(grep -E '^docs/[^/]*\.md$' "$TMP/files" | grep -vx "$page" || true)
    if ! grep -qF "($page" README.md &&
       ! { [ -n "$others" ] && grep -qF "($name" $others; }; then
        bad "$page is linked from neither README.md nor another docs page"
    fi
done

# CI runs the test command the README gives
grep -q '^make check ' README.md || bad "README.md does not give the test command (make check)"
grep -q '^make check' .ci/run || bad ".ci/run does not run the README's make check"

# ---- 6. the newcomer's path ---------------------------------------------------------
grep -qF '(docs/estimate.md' README.md || bad "README.md does not link docs/estimate.md"
# The README's examples: each "$ fitgate ..." line, and what it shows until the block ends.
awk '/^```/ { if (cmd != "") { close(out) }; cmd = ""; next }
     /^\$ fitgate / { n++; cmd = substr($0, 3); out = dir "/demo" n ".want"
                      print cmd > (dir "/demo" n ".cmd"); close(dir "/demo" n ".cmd"); next }
     cmd != "" { print > out }' dir="$TMP" README.md
demos=0
for c in "$TMP"/demo*.cmd; do
    [ -e "$c" ] || break
    demos=$((demos + 1))
    cmd=$(cat "$c")
    read -r -a argv <<< "$cmd"
    rc=0
    timeout 60 build/fitgate "${argv[@]:1}" > "$TMP/got" 2>&1 || rc=$?
    if [ "$rc" -gt 1 ] || { [ "$rc" = 1 ] && [ "${argv[1]}" != check ]; }; then
        bad "README example '$cmd' exits $rc: $(head -3 "$TMP/got")"
        continue
    fi
    sed -i 's/[[:space:]]*$//' "$TMP/got"
    while IFS= read -r want; do
        want=$(sed 's/[[:space:]]*$//' <<< "$want")
        case "$want" in ''|*…*|*...*) continue ;; esac
        grep -qxF -- "$want" "$TMP/got" ||
            bad "README example '$cmd' shows a line it does not print: $want"
    done < "${c%.cmd}.want"
done
[ "$demos" -gt 0 ] || bad "README.md has no '\$ fitgate ...' example"
demo=$(awk '/^\$ fitgate plan / { print $4; exit }' README.md)
labels=0
if [ ! -f docs/estimate.md ]; then
    bad "docs/estimate.md missing (how each number of fitgate plan is made)"
elif [ -z "$demo" ] || [ ! -e "$demo" ]; then
    bad "README.md has no '\$ fitgate plan MODEL' example on a fixture model"
else
    for mode in full lora qlora serve; do
        build/fitgate plan "$demo" --mode "$mode" 2>/dev/null |
            sed -n '/^Memory at/,/^$/p' | grep -oE '\[[^]]*\][[:space:]]*$' |
            sed -E 's/^\[//; s/\][[:space:]]*$//'
    done | sort -u > "$TMP/labels"
    while IFS= read -r lab; do
        labels=$((labels + 1))
        grep -qF -- "$lab" docs/estimate.md ||
            bad "docs/estimate.md does not explain the source label [$lab] that fitgate plan prints"
    done < "$TMP/labels"
    [ "$labels" -gt 5 ] || bad "fitgate plan $demo printed only $labels source labels"
fi

# ---- 7. the calibration grid's rows and configs ------------------------------------
grid="grid skipped (no python3)"
if command -v python3 >/dev/null; then
    if python3 tests/calibration/measure.py --dry-run --out "$TMP/grid.tsv" > "$TMP/grid.log" 2>&1
    then
        grid="$(($(wc -l < "$TMP/grid.tsv") - 1)) grid rows"
    else
        bad "tests/calibration/grid.tsv: measure.py --dry-run failed:" \
            "$(grep -E 'error|grid' "$TMP/grid.log" | head -3)"
    fi
fi

if [ "$fail" = 0 ]; then
    echo "refs.sh: ok ($checked paths, $(sort -u "$TMP/fnnames" 2>/dev/null | wc -l) functions," \
         "README $lines lines, $demos README examples, $labels source labels explained, $grid)"
fi
exit $fail
