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
#   - the same at link level, on the objects' symbols (nm): no cycle between object
#     files, and every edge between folders, by symbol and by #include, one an
#     allow-list names (LAYERS below): a cycle through a shared helper or a call the
#     wrong way is still a cycle, whatever the include lines say;
#   - private headers are included from their own part only (and the tests): engine's
#     (*_int.h, the readers' arch/*.h but graph.h, the estimator's memory_node.h and
#     memory_stage.h) from engine/, another folder's *_int.h from that folder.
# Prints every offender; exit 1 if any.  Needs the sources and the objects of `make all`
# (BUILD, default build).  `layout.sh --self-test` plants a cycle and a wrong-way include
# in a scratch copy of the tree and checks that each one fails.
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ "${1:-}" = --self-test ]; then
    # each plant, in a scratch copy of the tree built on its own, must fail the check
    plant() {   # plant WHAT FILE LINE
        local d
        d=$(mktemp -d)
        git ls-files -z | xargs -0 cp --parents -t "$d"
        printf '%s\n' "$3" >> "$d/$2"
        if ! make -C "$d" -j2 all > "$d/make.log" 2>&1; then
            echo "layout.sh: FAIL: self-test: the tree with $1 does not build" >&2
            tail -5 "$d/make.log" >&2; rm -rf "$d"; return 1
        fi
        if LAYOUT_NESTED=1 bash "$d/tests/integration/layout.sh" > "$d/out" 2>&1; then
            echo "layout.sh: FAIL: self-test: $1 passed the check" >&2; rm -rf "$d"; return 1
        fi
        echo "layout.sh: self-test: $1 fails: $(grep -m1 FAIL "$d/out")"
        rm -rf "$d"
    }
    rc=0
    plant "a planted cycle (util calls the planner)" engine/util/log.c \
        'const void *fg_framework_default(void); const void *fg__layout_plant(void); const void *fg__layout_plant(void) { return fg_framework_default(); }' || rc=1
    plant "a planted wrong-way include (util includes model.h)" engine/util/fmt.c \
        '#include "model/model.h"' || rc=1
    exit $rc
fi

MAX_FILE=${MAX_FILE:-800}
MAX_FUNC=${MAX_FUNC:-120}
fail=0
bad() { echo "layout.sh: FAIL: $*" >&2; fail=1; }

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# ---- 1. the module graph sorts ---------------------------------------------------
for f in engine/*/*.[ch] engine/*/*/*.[ch] engine/*/*.def policies/*.[ch] plugin/*.[ch] cli/*.[ch]; do
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
       sub(/_int$/, "", a); sub(/_int$/, "", b);
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
for f in engine/*/*.[ch] engine/*/*/*.[ch] policies/*.[ch] plugin/*.[ch] cli/*.[ch]; do
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
' engine/*/*.c engine/*/*/*.c policies/*.c plugin/*.c cli/*.c > "$TMP/funcs"
while read -r line; do bad "$line"; done < "$TMP/funcs"

# ---- 4. link level: the objects' symbol graph, and folders one way --------------------
# A layer per folder (engine/model/model.* is the graph every layer passes around); a layer may
# use the ones its row names, and nothing else.
BUILD=${BUILD:-build}
declare -A ALLOW=(
    [util]=""
    [model]="util"
    [source]="util model"
    [arch]="util model source"
    [hw]="util"
    [load]="util model source arch"
    [estimate]="util model source arch hw load"
    [plan]="util model source arch hw load estimate"
    [policies]="util model source arch hw load estimate plan"
    [plugin]="util model source arch hw load estimate plan policies"
    [cli]="util model source arch hw load estimate plan policies"
)
# engine/'s rooms (docs/design.md "Layout"): the graph (model/model.*), its loader
# (model/model_load.*: a source read through the readers), the estimate of one job
# (job/ stack/ memory/: the job's options, the frameworks' rows, the bytes), and the
# planner above them all (plan/).  Generated data sits in the room that reads it.
layer_of() {   # a source, header or object path relative to the root or to BUILD
    case $1 in
    engine/util/*) echo util ;;
    engine/model/model_load.*) echo load ;;
    engine/model/*) echo model ;;
    engine/source/* | gen/config_classes.*) echo source ;;
    engine/arch/* | gen/real_configs.*) echo arch ;;
    engine/hw/* | gen/*) echo hw ;;
    engine/job/* | engine/stack/* | engine/memory/*) echo estimate ;;
    engine/plan/*) echo plan ;;
    policies/* | plugin/* | cli/*) echo "${1%%/*}" ;;
    *) echo other ;;
    esac
}
allowed() {    # allowed FROM TO
    [ "$1" = "$2" ] && return 0
    case " ${ALLOW[$1]:-} " in *" $2 "*) return 0 ;; esac
    return 1
}
objs=$(cd "$BUILD" 2>/dev/null && find engine policies plugin cli gen -name '*.o' 2>/dev/null | sort)
if [ -z "$objs" ]; then
    bad "no objects under $BUILD: run make all first"
else
    (cd "$BUILD" && for o in $objs; do
        nm -g --defined-only "$o" | awk -v o="$o" '$2 ~ /^[TDBRCVW]$/ { print $3, o }'
    done) | sort > "$TMP/defs"
    (cd "$BUILD" && for o in $objs; do nm -u "$o" | awk -v o="$o" '{ print $2, o }'; done) |
        sort > "$TMP/uses"
    join "$TMP/uses" "$TMP/defs" | awk '$2 != $3 { print $2, $3, $1 }' | sort -u > "$TMP/links"
    awk '{ print $1, $2 }' "$TMP/links" | sort -u > "$TMP/objedges"
    if ! tsort "$TMP/objedges" > /dev/null 2> "$TMP/otsort"; then
        bad "link cycle between objects: $(grep -v 'input contains a loop' "$TMP/otsort" |
            sed 's/^tsort: //' | tr '\n' ' ')"
    fi
    while read -r from to sym; do
        lf=$(layer_of "$from") lt=$(layer_of "$to")
        allowed "$lf" "$lt" || bad "wrong-way link: $from ($lf) uses $sym of $to ($lt)"
    done < "$TMP/links"
    echo "layout.sh: $(wc -l < "$TMP/objedges") link edges among $(echo "$objs" | wc -w) objects"
fi
while read -r from to; do
    lf=$(layer_of "$from") lt=$(layer_of "$to")
    allowed "$lf" "$lt" || bad "wrong-way include: $from ($lf) includes $to ($lt)"
    case $to in
    engine/arch/graph.h) ;;
    *_int.h)   # a module's private half: engine's from engine/, another's from its folder
        case $to in
        engine/*) case $from in engine/*) ;; *) bad "private header: $from includes $to" ;; esac ;;
        *) [ "${from%/*}" = "${to%/*}" ] || bad "private header: $from includes $to" ;;
        esac ;;
    engine/arch/*.h | engine/memory/memory_node.h | engine/memory/memory_stage.h | engine/memory/pipeline.h)
        case $from in engine/*) ;; *) bad "private header: $from includes $to" ;; esac ;;
    esac
done < "$TMP/files"

[ "$fail" = 0 ] && echo "layout.sh: ok (no module or link cycle, folders one way, files <= $MAX_FILE lines, functions <= $MAX_FUNC lines)"
# the check itself must catch what it is for (make integration runs both)
[ "$fail" = 0 ] && [ -z "${LAYOUT_NESTED:-}" ] && exec bash "$0" --self-test
exit "$fail"
