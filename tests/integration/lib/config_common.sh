# tests/integration/lib/config_common.sh - what config.sh and config_train.sh share: the
# fitgate binary, the fixture folders, a scratch folder removed at exit and the pass / fail
# tally.  Source it first:
#
#   source "$(dirname "$0")/lib/config_common.sh"
#
# Sets FG, M (tests/fixtures/models), C (tests/fixtures/configs), tmp; defines ok MESSAGE and
# bad MESSAGE (counted in pass and fail) and tally, the last line: "ME: N passed, M failed",
# exit status 0 when none failed.
# shellcheck shell=bash
cd "$(dirname "${BASH_SOURCE[0]}")/../../.." || exit 2
FG=./build/fitgate
M=$PWD/tests/fixtures/models
C=$PWD/tests/fixtures/configs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

ok() { pass=$((pass + 1)); echo "ok   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
tally() {
    echo "$(basename "$0"): $pass passed, $fail failed"
    [ "$fail" -eq 0 ]
}
