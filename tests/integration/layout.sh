#!/usr/bin/env bash
# layout.sh - the shape of the code: modules that depend one way, files and
# functions small enough to read (issue 19).
#
#   - no include cycle between modules of engine/ policies/ plugin/ cli/: a
#     module is a directory plus a file name without its extension (source.c
#     and source.h are engine/<source>), an edge runs from every file to each
#     header it names in an #include "..." line (resolved as the compiler
#     does: the file's own directory, then -Iengine -Ipolicies -Icli), and the
#     graph of modules must sort (tsort);
#   - no .c or .h file of engine/ policies/ plugin/ cli/ over MAX_FILE lines;
#   - no function of engine/ policies/ plugin/ cli/ over MAX_FUNC lines, counted
#     from the line at column 0 where its definition starts to its closing "}"
#     at column 0 (the style puts both braces of a function at column 0).
# Prints every offender; exit 1 if any.  Needs nothing but the sources.
set -euo pipefail
cd "$(dirname "$0")/../.."

MAX_FILE=${MAX_FILE:-800}
MAX_FUNC=${MAX_FUNC:-120}
fail=0
bad() { echo "layout.sh: FAIL: $*" >&2; fail=1; }

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# ---- 1. the module graph sorts ---------------------------------------------------
for f in engine/*.[ch] engine/*/*.[ch] engine/*.def policies/*.[ch] plugin/*.[ch] cli/*.[ch]; do
    [ -f "$f" ] || continue
    dir=${f%/*}
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
        while read -r h; do
            for d in "$dir" engine policies cli; do
                if [ -f "$d/$h" ]; then echo "$f $d/$h"; break; fi
            done
        done
done > "$TMP/files"
# file -> module (dir/name without extension); self edges (x.c -> x.h) dropped
awk '{ a = $1; b = $2; sub(/\.[a-z]+$/, "", a); sub(/\.[a-z]+$/, "", b);
       if (a != b) print a, b }' "$TMP/files" | sort -u > "$TMP/modules"
if ! tsort "$TMP/modules" > /dev/null 2> "$TMP/tsort"; then
    bad "include cycle between modules: $(grep -v 'input contains a loop' "$TMP/tsort" |
        sed 's/^tsort: //' | tr '\n' ' ')"
    # the edges that make it, for the reader
    grep -v 'input contains a loop' "$TMP/tsort" | sed 's/^tsort: //' > "$TMP/loop"
    awk 'NR == FNR { in_loop[$1] = 1; next } ($1 in in_loop) && ($2 in in_loop)' \
        "$TMP/loop" "$TMP/modules" | sed 's/^/    /' >&2
fi
echo "layout.sh: $(wc -l < "$TMP/modules") module edges among $(awk '{ print $1; print $2 }' \
    "$TMP/modules" | sort -u | wc -l) modules"

# ---- 2. file sizes ------------------------------------------------------------------
for f in engine/*.[ch] engine/*/*.[ch] policies/*.[ch] plugin/*.[ch] cli/*.[ch]; do
    n=$(wc -l < "$f")
    [ "$n" -le "$MAX_FILE" ] || bad "$f: $n lines (at most $MAX_FILE)"
done

# ---- 3. function sizes --------------------------------------------------------------
# A function body opens with "{" alone at column 0 after a signature holding "(" and no
# "=" (an initializer is not a function); its first line is the last column-0 line
# before the "{" that is not a comment, a preprocessor line or a brace.
awk -v max="$MAX_FUNC" '
    FNR == 1 { start = 0; depth = 0; name = "" }
    depth == 0 && /^[A-Za-z_]/ && !/^(typedef|#)/ { start = FNR; sig = $0; next }
    depth == 0 && /^[ \t]/ && start { sig = sig " " $0; next }
    depth == 0 && /^\{/ {
        if (start && sig ~ /\(/ && sig !~ /=/) {
            name = sig; sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
            depth = 1; first = start
        }
        start = 0; next
    }
    depth == 1 && /^\}/ {
        n = FNR - first + 1
        if (n > max) printf "%s:%d: %s(): %d lines (at most %d)\n", FILENAME, first, name, n, max
        depth = 0; next
    }
    depth == 0 { start = 0 }
' engine/*.c engine/*/*.c policies/*.c plugin/*.c cli/*.c > "$TMP/funcs"
while read -r line; do bad "$line"; done < "$TMP/funcs"

[ "$fail" = 0 ] && echo "layout.sh: ok (no module cycle, files <= $MAX_FILE lines, functions <= $MAX_FUNC lines)"
exit "$fail"
