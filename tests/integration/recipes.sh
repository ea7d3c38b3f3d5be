#!/bin/bash
# tests/integration/recipes.sh - docs/design.md's recipes ("How to extend it") are what a
# change takes, no more and no less.
#
#   1. every file a recipe names (backquoted paths between its <!-- recipe: --> markers)
#      exists, a glob matching at least one file, a placeholder (ORG--NAME) its folder;
#   2. in a copy of the tree (git ls-files, so the working tree is never touched), a dummy
#      job option is added by the job option recipe (the row, the parser case, the field, its
#      use), a dummy framework row by the framework recipe and a dummy memory term (a stage
#      file and its row in engine/memory/stages.def) by the memory term recipe; after each,
#      the files edited are exactly the recipe's, and the plan prints the term's line;
#   3. there `make lists-check` fails, naming `make lists`, until `make lists` has run; that
#      rewrites only the generated lists (the Makefile's LIST_FILES), and the option and the
#      framework then show up in: the CLI's usage and its parser (a plan prints the option's
#      note), the SPANK plugin's option table (the --ft- name and help sbatch --help shows),
#      bash completion (run: _fitgate with COMP_WORDS), job_submit.lua's OPTIONS, fitgate(1)
#      and spank_fitgate(8) as man renders them, and docs/cli.md; test_jobspec still passes
#      (it counts the framework rows, it does not know how many there are).
#
# Needs the sources, a C toolchain (make deps) and man; about a minute on two cores.
set -euo pipefail
# shellcheck source=tests/integration/lib/common.sh
source "$(dirname "$0")/lib/common.sh"

fail=0
bad() { echo "$ME: FAIL: $*" >&2; fail=1; }
ok() { echo "ok   $*"; }

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# ---- 1. every file a recipe names exists --------------------------------------------------
n_paths=0
n_recipes=0
while IFS= read -r recipe; do
    n_recipes=$((n_recipes + 1))
    paths=$(awk -v r="$recipe" '
        $0 == "<!-- recipe: " r " -->" { on = 1; next }
        on && /^<!-- end recipe -->/ { on = 0 }
        on { print }' docs/design.md |
        grep -o '`[A-Za-z0-9_.*/-]*/[A-Za-z0-9_.*/-]*`' | tr -d '`' | sort -u)
    [ -n "$paths" ] || bad "recipe '$recipe' names no file"
    for p in $paths; do
        n_paths=$((n_paths + 1))
        case $p in
            *ORG--NAME*) [ -d "${p%%ORG--NAME*}" ] || bad "recipe '$recipe': ${p%%ORG--NAME*} missing" ;;
            *'*'*) compgen -G "$p" >/dev/null || bad "recipe '$recipe': nothing matches $p" ;;
            *) [ -e "$p" ] || bad "recipe '$recipe': $p does not exist" ;;
        esac
    done
done < <(sed -n 's/^<!-- recipe: \(.*\) -->$/\1/p' docs/design.md)
[ "$n_recipes" -ge 4 ] || bad "docs/design.md has $n_recipes recipes, expected the four"
ok "the $n_recipes recipes of docs/design.md name $n_paths files, all there"

# ---- 2. the recipes, followed in a copy ----------------------------------------------------
T=$TMP/tree
mkdir -p "$T"
git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$T" 2>/dev/null
cd "$T"
git init -q . && git add -A && git -c user.name=t -c user.email=t@t commit -qm base ||
    die "cannot make the scratch repository"

edited() { git status --porcelain | awk '{ print $2 }' | sort | tr '\n' ' '; }
expect_edited() { # WHAT FILE...: the files edited since the last commit are exactly FILE...
    local what=$1 want got
    shift
    want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
    got=$(edited)
    if [ "$got" = "$want" ]; then ok "$what touches only its recipe's files: $got"
    else bad "$what: edited $got, the recipe names $want"; fi
    git add -A && git -c user.name=t -c user.email=t@t commit -qm "$what"
}

# the job option: the row, the parser case, the field, its use (a note on the job)
cat >> engine/job/jobopts.def <<'EOF'
FG_JOBOPT(DUMMY_KNOB, "dummy-knob", "WORD", 1, "a dummy option the recipe test adds (default off)")
EOF
python3 - <<'EOF' || die "cannot apply the job option recipe"
import re
p = 'engine/job/jobspec.c'; s = open(p).read()
s = s.replace('    case FG_JOBOPT_COUNT: break;',
              '    case FG_JOBOPT_DUMMY_KNOB:\n'
              '        rc = copy_text(s->dummy_knob, sizeof s->dummy_knob, v, sp, name, err);\n'
              '        break;\n    case FG_JOBOPT_COUNT: break;', 1)
s = s.replace('    j->cp = s->cp;\n    return 0;\n}',
              '    if (s->dummy_knob[0])\n        note(s, "dummy knob %s", s->dummy_knob);\n'
              '    j->cp = s->cp;\n    return 0;\n}', 1)
open(p, 'w').write(s)
p = 'engine/job/jobspec.h'; s = open(p).read()
s = s.replace('    double gpu_util;', '    char dummy_knob[32];                /* --ft-dummy-knob */\n'
              '    double gpu_util;', 1)
open(p, 'w').write(s)
EOF
expect_edited "the job option recipe" engine/job/jobopts.def engine/job/jobspec.c engine/job/jobspec.h

# the framework row: the table's row, its line in docs/frameworks.md
python3 - <<'EOF' || die "cannot apply the framework recipe"
p = 'engine/stack/framework.c'; s = open(p).read()
i = s.index('static const struct fg_framework table[] = {')
j = s.index('\n};\n', i)
s = s[:j] + ('\n    {.name = "dummyfw", .version = "1", .aliases = "",'
             ' .label = "dummy (recipe test)",'
             ' .layouts = FG_LAY_ZERO, .trains = true, .full_precision = FG_PREC_BF16,'
             ' .master = FG_MASTER_PARAMS, .optimizer = FG_OPT_ADAMW, .keeps = "nothing",'
             ' .source = "tests/integration/recipes.sh: no framework", .repo = "example/dummy",'
             ' .file = "dummy.py", .commit = "0000000", .date = "2026-01-01"},') + s[j:]
open(p, 'w').write(s)
p = 'docs/frameworks.md'; s = open(p).read()
i = s.index('| `--framework` | release | runs |')
j = s.index('\n\n', i)
s = s[:j] + '\n| `dummyfw` | 1 | train | DP, ZeRO | nothing | recipes.sh |' + s[j:]
open(p, 'w').write(s)
EOF
expect_edited "the framework recipe" engine/stack/framework.c docs/frameworks.md

# the memory term: a stage file and its row in the table of stages
cat > engine/memory/train_dummy.c <<'EOF'
#include "memory/pipeline.h"

int fg__train_dummy(struct train *x, struct fg_err *err)
{
    (void)err;
    add_line(x->e, "overhead", 1000000, false, "recipes.sh dummy term",
             "a dummy memory term the recipe test adds");
    return 0;
}
EOF
python3 - <<'EOF' || die "cannot apply the memory term recipe"
p = 'engine/memory/stages.def'; s = open(p).read()
i = s.index('FG_TRAIN_STAGE(phases,')
s = s[:i] + 'FG_TRAIN_STAGE(dummy, "a dummy term the recipe test adds")\n' + s[i:]
open(p, 'w').write(s)
EOF
expect_edited "the memory term recipe" engine/memory/stages.def engine/memory/train_dummy.c

# ---- 3. the generated lists follow ---------------------------------------------------------
make -s -j2 build/tools/gen_lists >"$TMP/build.log" 2>&1 || { tail -20 "$TMP/build.log"; die "build failed"; }
if make -s lists-check >"$TMP/check.log" 2>&1; then bad "lists-check passed with the lists stale"
elif grep -q "run \`make lists\`" "$TMP/check.log"; then ok "lists-check fails on stale lists, naming make lists"
else bad "lists-check failed without naming make lists: $(head -2 "$TMP/check.log")"; fi
make -s lists >/dev/null || die "make lists failed"
# (--no-print-directory: under make check this is a sub-make, which would print its
# "Entering directory" lines into the list)
lists=$(make -s --no-print-directory -f Makefile -f - print-lists <<'EOF'
print-lists: ; @echo $(LIST_FILES)
EOF
)
lists=$(echo $lists)
for f in $(edited); do
    case " $lists " in *" $f "*) ;; *) bad "make lists wrote $f, not a generated list" ;; esac
done
make -s lists-check || bad "lists-check fails after make lists"
[ -n "$(edited)" ] && ok "make lists rewrote only generated lists: $(edited)"

make -s -j2 WERROR=1 build/fitgate build/spank_fitgate.so build/tests/test_jobspec \
    >"$TMP/build.log" 2>&1 || { tail -20 "$TMP/build.log"; die "the tree with both recipes does not build"; }

has() { # WHAT PATTERN FILE: FILE holds PATTERN (fixed string)
    if grep -qF -- "$2" "$3"; then ok "$1"; else bad "$1: '$2' not in ${3#"$TMP"/}"; fi
}
build/fitgate --help >"$TMP/usage"
has "the CLI's usage names the option" "--dummy-knob WORD" "$TMP/usage"
model=tests/fixtures/models/meta-llama--Llama-3.2-1B-Instruct
[ -d "$model" ] || die "$model missing"
build/fitgate plan "$model" --dummy-knob turned --framework dummyfw >"$TMP/plan" 2>&1 ||
    bad "plan with the dummy option and framework failed: $(head -3 "$TMP/plan")"
has "the CLI parses the option and the job uses it" "note: dummy knob turned" "$TMP/plan"
has "the estimate runs the dummy stage, in its place" "a dummy memory term the recipe test adds" \
    "$TMP/plan"
strings -a build/spank_fitgate.so >"$TMP/plugin"
has "the plugin registers --ft-dummy-knob" "ft-dummy-knob" "$TMP/plugin"
has "the plugin's help (sbatch --help) says it" "[fitgate] a dummy option the recipe test adds" \
    "$TMP/plugin"
has "the plugin's --ft-framework help names the row" "|dummyfw, NAME@VERSION" "$TMP/plugin"
complete_words() { # PREV CUR: what bash completion offers for `fitgate plan M PREV CUR`
    env -i PATH="$PATH" HOME="$TMP" bash --norc --noprofile -c '
        source contrib/bash-completion/fitgate
        COMP_WORDS=(fitgate plan m "$1" "$2"); COMP_CWORD=4
        [ -n "$1" ] || { COMP_WORDS=(fitgate plan m "$2"); COMP_CWORD=3; }
        _fitgate; printf "%s\n" "${COMPREPLY[@]}"' _ "$1" "$2"
}
complete_words "" --dummy >"$TMP/comp"
has "completion offers the option" "--dummy-knob" "$TMP/comp"
complete_words --framework dumm >"$TMP/comp"
has "completion offers the framework" "dummyfw" "$TMP/comp"
has "job_submit.lua knows the option" '"dummy_knob",' contrib/job_submit.lua
MANWIDTH=200 man -l man/fitgate.1 >"$TMP/man1" 2>/dev/null
MANWIDTH=200 man -l man/spank_fitgate.8 >"$TMP/man8" 2>/dev/null
has "fitgate(1) has the option" "--dummy-knob WORD" "$TMP/man1"
has "fitgate(1) lists the framework" "dummyfw" "$TMP/man1"
has "spank_fitgate(8) has the option" "--ft-dummy-knob=WORD" "$TMP/man8"
has "docs/cli.md's table has the option" '| `--dummy-knob WORD` | off | a dummy option' docs/cli.md
has "docs/cli.md's table lists the framework" '\|dummyfw, NAME@VERSION' docs/cli.md
if build/tests/test_jobspec >"$TMP/test" 2>&1; then ok "test_jobspec passes with one row more"
else bad "test_jobspec fails with the dummy framework row: $(grep -m3 -E 'FAIL|Error' "$TMP/test")"; fi

[ "$fail" = 0 ] && echo "$ME: ok (recipes walked, a job option, a framework row and a memory term added by them)"
exit "$fail"
