# tests/integration/lib/common.sh - what every integration script shares.  Source it first:
#
#   FG_DIE_RC=2 FG_DIE_TAG=          (optional: die's exit status and prefix; default 1, "FAIL: ")
#   source "$(dirname "$0")/lib/common.sh"
#
# Sets ME (the script's name, in every message) and ROOT (the repository), makes ROOT the
# working directory, and defines die MESSAGE (to stderr, then exit FG_DIE_RC: 1 a check
# failed, 2 what the check needs is missing) and log MESSAGE (to stdout).
# shellcheck shell=bash
ME=${ME:-$(basename "$0")}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
cd "$ROOT" || exit 2
FG_DIE_RC=${FG_DIE_RC:-1}
FG_DIE_TAG=${FG_DIE_TAG-FAIL: }
die() { echo "$ME: $FG_DIE_TAG$*" >&2; exit "$FG_DIE_RC"; }
log() { echo "$ME: $*"; }
# deadline_ok MS BOUND_MS: a run that must end within BOUND_MS (a deadline the code keeps: a
# hub timeout, a stalled file system's bound; 0 for "at once") ended in MS, with a margin
# that holds on a loaded host (make check beside another make check on two cores): twice
# the bound plus 3 s for process start-up, the kill and the reap.  A hang still fails: it
# runs into the script's own timeout.  Speed itself is measured by make bench, not here.
deadline_ok() { [ "$1" -le $((2 * $2 + 3000)) ]; }
# refused_root FITGATE ERRFILE: the plan whose stderr is ERRFILE failed only because the
# model_type it names ("model_type 'X' is not supported") is one FITGATE's families table
# refuses by name (a microsoft/trocr-* vision-encoder-decoder fixture, kept for the typed
# sub-config a reader is tested on).
refused_root() {
    local type
    type=$(sed -n "s/.*model_type '\([^']*\)' is not supported: .*/\1/p" "$2" | head -1)
    [ -n "$type" ] && "$1" families 2>/dev/null | awk -v t="$type" '$1 == t && $2 == "refused" {f = 1} END {exit !f}'
}
