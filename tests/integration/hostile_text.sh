#!/bin/bash
# tests/integration/hostile_text.sh - text from files reaches no terminal, page or JSON raw.
#
# A config.json whose model_type carries an escape sequence, a carriage return and a newline
# tries to forge "=> fits ... (decision: allow)" over the real verdict of plan and check;
# audit lines whose user, model, partition and framework carry the same (and C1 controls,
# bidirectional overrides, malformed UTF-8) go through report and learn, as text, --json and
# --html.  Every output must hold no control character but newline and tab, no C1 or
# bidirectional control, no malformed UTF-8 (each shown as \xNN: util/fmt.h fg__esc), no
# forged line, and --json must stay valid JSON.  Then learn's readers on what never ends or
# blocks: FIFOs, /dev/zero, a 1 GB sacct line.  Needs python3 (the byte checks).
set -u
source "$(dirname "$0")/lib/common.sh"
FG=${FG:-$ROOT/build/fitgate}
[ -x "$FG" ] || die "build/fitgate missing: make all"
command -v python3 >/dev/null 2>&1 || { echo "$ME: SKIP: python3 missing"; exit 0; }
T=$(mktemp -d /tmp/fitgate-hostile.XXXXXX)
trap 'rm -rf "$T"' EXIT
PASS=0 FAIL=0
ok() { echo "ok   $*"; PASS=$((PASS + 1)); }
bad() { echo "FAIL $*"; FAIL=$((FAIL + 1)); }

# clean FILE [json]: no raw control but \n \t, no C1 / bidi / U+2028, valid UTF-8, no line
# that starts with a forged verdict; with "json", the file parses as one JSON document
clean() {
    python3 - "$1" "${2:-}" <<'EOF'
import json, re, sys
data = open(sys.argv[1], "rb").read()
why = []
if re.search(rb"[\x00-\x08\x0b-\x1f\x7f]", data):
    why.append("a raw control byte")
try:
    text = data.decode("utf-8")
except UnicodeDecodeError as e:
    why.append("malformed UTF-8 (%s)" % e)
    text = data.decode("utf-8", "replace")
if re.search("[\u0080-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]", text):
    why.append("a C1, separator or bidirectional control")
for line in text.split("\n"):
    if line.lstrip().startswith("=> fits") or line.startswith('{"forged"'):
        why.append("a forged line: %r" % line[:80])
if sys.argv[2] == "json":
    try:
        json.loads(text)
    except ValueError as e:
        why.append("not JSON: %s" % e)
print("; ".join(why))
sys.exit(1 if why else 0)
EOF
}

# --- plan and check on a config.json that forges its verdict ---------------------------------
mkdir -p "$T/m"
python3 - "$T/m/config.json" <<'EOF'
import json, sys
c = json.load(open("tests/fixtures/models/meta-llama--Llama-3.1-8B/config.json"))
c["model_type"] = ("llama\u001b[2K\r=> fits 1 x H200 (decision: allow)\u001b[8m\n=> fits 1 x T4"
                   "\u009b2J\u202e\u2028")
json.dump(c, open(sys.argv[1], "w"))
EOF
for cmd in "plan $T/m --gpu t4" "check $T/m --mode full --gpus=t4:1" "plan $T/m --gpu t4 --structure"; do
    # shellcheck disable=SC2086
    timeout 60 "$FG" $cmd > "$T/out" 2>&1
    if why=$(clean "$T/out") && grep -q 'llama\\x1b\[2K\\x0d=> fits' "$T/out"; then
        ok "fitgate ${cmd/$T\/m/MODEL}: the forged model_type is shown as \\xNN, on its own line"
    else
        bad "fitgate $cmd: ${why:-the escaped model_type is not shown}"; head -5 "$T/out" | cat -v
    fi
done
# check rejects the full fine-tune of a 1B model on a T4 whatever the text says
timeout 60 "$FG" check "$T/m" --mode full --gpus=t4:1 > "$T/out" 2>&1
rc=$?
if [ "$rc" = 1 ] && grep -q 'does not fit' "$T/out"; then
    ok "check: the real verdict stands (exit 1, does not fit)"
else
    bad "check: exit $rc"; head -5 "$T/out" | cat -v
fi
timeout 60 "$FG" plan "$T/m" --gpu t4 --json > "$T/out.json" 2>"$T/err"
if why=$(clean "$T/out.json" json) && grep -q 'llama\\\\x1b' "$T/out.json"; then
    ok "plan --json: valid JSON, the model_type escaped"
else
    bad "plan --json: ${why:-model_type not escaped}"
fi
timeout 60 "$FG" plan "$T/m" --gpu t4 --html "$T/plan.html" >/dev/null 2>&1
if why=$(clean "$T/plan.html"); then ok "plan --html: no raw control character"
else bad "plan --html: $why"; fi

# --- report and learn on hostile audit lines --------------------------------------------------
python3 - "$T/trail.log" "$(id -u)" <<'EOF'
import json, sys
uid = int(sys.argv[2])
base = json.loads(open("tests/fixtures/audit/site.log").readline())
hostile = {
    "user": "eve\u001b[2K\r=> fits (decision: allow)",
    "model": "m\n{\"forged\":1}\u009b31m\u202eevil",
    "partition": "gpu\u0007\u2028",
    "framework": "trl\u001b]0;x\u0007",
    "mode": "lora",
}
out = open(sys.argv[1], "wb")
d = dict(base, **hostile, uid=uid, submit_id="h:1", where="sbatch", job_id=0, verdict="allow",
         estimate_bytes=10000 << 20, per_gpu_bytes=10000 << 20, usable_bytes=79212345344)
out.write(json.dumps(d, ensure_ascii=False).encode() + b"\n")
# the node's line for the same job, with its sampled peak: learn joins the two
s = dict(d, where="stepd", job_id=4242, gpu_peak_bytes=11000 << 20)
out.write(json.dumps(s, ensure_ascii=False).encode() + b"\n")
# a user name with malformed UTF-8 (a lone CSI byte), as bytes
raw = json.dumps(dict(d, user="x", submit_id="h:2")).encode().replace(b'"user": "x"', b'"user": "x\x9b2J"')
out.write(raw + b"\n")
EOF
chmod 644 "$T/trail.log"
for cmd in "report" "report --json" "learn" "learn --json"; do
    # shellcheck disable=SC2086
    timeout 60 "$FG" $cmd "$T/trail.log" > "$T/out" 2>&1
    rc=$?
    kind=""
    [[ $cmd == *--json ]] && { timeout 60 "$FG" $cmd "$T/trail.log" > "$T/out" 2>/dev/null; kind=json; }
    if [ "$rc" = 0 ] && why=$(clean "$T/out" $kind) && grep -q 'eve\\\{1,2\}x1b\[2K' "$T/out"; then
        ok "fitgate $cmd: hostile fields shown escaped${kind:+, valid JSON}"
    else
        bad "fitgate $cmd (exit $rc): ${why:-the escaped user is not shown}"; head -8 "$T/out" | cat -v
    fi
done
for cmd in report learn; do
    timeout 60 "$FG" $cmd "$T/trail.log" --html "$T/$cmd.html" >/dev/null 2>&1
    if why=$(clean "$T/$cmd.html") && ! grep -q '<script\|{"forged"' "$T/$cmd.html"; then
        ok "fitgate $cmd --html: no raw control character, nothing forged"
    else
        bad "fitgate $cmd --html: $why"
    fi
done
# the same trail on standard input, as journalctl ... | fitgate report - reads it
if timeout 60 "$FG" report - < "$T/trail.log" > "$T/out" 2>&1 && why=$(clean "$T/out"); then
    ok "fitgate report -: escaped from standard input too"
else
    bad "fitgate report -: $why"
fi

# --- learn's readers on endless and blocking input: bounded memory, a clear error, no hang ----
F=tests/fixtures/learn
mkfifo "$T/trail.fifo"
mkdir -p "$T/logs" && mkfifo "$T/logs/slurm-7022.out"
if timeout 20 "$FG" learn "$F/audit.log" --sacct "$F/sacct.txt" --logs "$T/logs" --json \
    > "$T/out" 2>&1 && grep -q '"logs_refused":[[:space:]]*1' "$T/out"; then
    ok "learn --logs: a FIFO named like a job's output is refused, not waited on"
else
    bad "learn --logs with a FIFO (exit $?): $(head -c 200 "$T/out")"
fi
if timeout 20 "$FG" learn "$T/trail.fifo" > "$T/out" 2>&1; then
    ok "learn: a trail that is a FIFO nobody writes reads as empty"
else
    bad "learn on a FIFO trail: $(head -c 200 "$T/out")"
fi
# a 1 GB sacct line from a pipe: refused at the cap, naming the line, memory bounded
rss_of() { # rss_of CMD...: runs CMD (stdin inherited), prints its peak RSS in KB to $T/rss
    if [ -x /usr/bin/time ]; then /usr/bin/time -o "$T/rss" -f %M "$@"; else echo 0 > "$T/rss"; "$@"; fi
}
{ head -n 1 "$F/sacct.txt"; head -c 1000000000 /dev/zero | tr '\0' 7; } |
    rss_of timeout 60 "$FG" learn "$F/audit.log" --sacct - > "$T/out" 2>&1
rc=$?
kb=$(tail -n 1 "$T/rss")
if [ "$rc" = 2 ] && grep -q -- "--sacct -: line 2: longer than 1024 KiB" "$T/out" && [ "$kb" -lt 200000 ]; then
    ok "learn --sacct: a 1 GB line refused at 1 MiB (exit 2, line named, peak RSS ${kb} KB)"
else
    bad "learn --sacct with a 1 GB line: exit $rc, ${kb} KB: $(head -c 200 "$T/out")"
fi
if timeout 20 "$FG" learn /dev/zero > "$T/out" 2>&1; [ $? = 2 ] &&
    grep -q '/dev/zero: not a regular file or a pipe' "$T/out" &&
    timeout 20 "$FG" learn - < /dev/zero > "$T/out" 2>&1; [ $? = 2 ] &&
    grep -q '(stdin):1: a line longer than 16 MiB' "$T/out"; then
    ok "learn: /dev/zero named or on standard input ends with an error naming it"
else
    bad "learn on /dev/zero: $(head -c 200 "$T/out")"
fi

echo "$ME: $PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
