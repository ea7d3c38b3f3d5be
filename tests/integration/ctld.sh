#!/usr/bin/env bash
# ctld.sh - `fitgate ctld`, the controller's check (cli/cmd_ctld.c), run as
# contrib/job_submit.lua runs it but without Slurm (tests/integration/slurm_door.sh has the
# same cases inside a real slurmctld):
#   - options on standard input, NUL-separated: two 70 KB values and 35,000 single quotes
#     are checked (rejected), a model directory named with "{{" or a newline is answered
#     in fixed, percent-encoded records;
#   - --run-as: a root:group 0750 model directory is read with the user's supplementary
#     groups; the audit line is written by the parent into a root 0755 directory the user
#     cannot write to;
#   - a policy with a bad line rejects (fails closed) and logs why; --lint names the line;
#   - a stalled file system (slurm/stallfs.c: FUSE reads that never return) is cut at
#     --timeout-ms with an error line naming its mount (fitgate-stalled); --skip decides at
#     once, and so does --stalled MOUNT for a job on that mount only;
#   - LogFile=syslog through a real /dev/log datagram socket bound in a private mount
#     namespace (the host's /dev is not touched);
#   - every audit line parses (fitgate report, 0 bad lines) and carries the model, the user,
#     the door and the key given.
# Needs root (--run-as, groupadd, mounts); SKIP otherwise.  FUSE cases need /dev/fuse and
# libfuse3 (apt-get install fuse3 libfuse3-dev), else they are skipped.
set -uo pipefail
cd "$(dirname "$0")/../.."
ME=ctld.sh
FG=$PWD/build/fitgate
[ -x "$FG" ] || { echo "$ME: FAIL: $FG missing (make all)"; exit 1; }
if [ "$(id -u)" != 0 ]; then
    echo "$ME: SKIP: needs root (--run-as, groupadd, mount namespaces)"
    exit 0
fi
PASS=0 FAIL=0
T=$(mktemp -d /tmp/fitgate-ctld.XXXXXX)
chmod 755 "$T"
GROUP=fgctld$$
STALL_PID=""
cleanup() {
    [ -n "$STALL_PID" ] && kill -9 "$STALL_PID" 2>/dev/null && umount -l "$T/stall" 2>/dev/null
    gpasswd -d nobody "$GROUP" >/dev/null 2>&1
    groupdel "$GROUP" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
ok() { echo "ok   $*"; PASS=$((PASS + 1)); }
bad() { echo "FAIL $*"; FAIL=$((FAIL + 1)); }
NEMO=tests/fixtures/models/nvidia--NVIDIA-Nemotron-Nano-9B-v2
QWEN=tests/fixtures/models/Qwen--Qwen3-0.6B
NOBODY="$(id -u nobody):$(id -g nobody)"
mkdir -p "$T/audit" "$T/models"
chmod 755 "$T/audit"
AUDIT=$T/audit/ctld.log
printf 'Action=resize\nOnError=allow\nHubEndpoint=none\nLogFile=%s\n' "$AUDIT" > "$T/resize.conf"
printf 'Action=reject\nOnError=allow\nHubEndpoint=none\nLogFile=%s\n' "$AUDIT" > "$T/reject.conf"
chmod 644 "$T"/*.conf
for m in "$NEMO" "$QWEN"; do
    mkdir -p "$T/models/$(basename "$m")" && cp "$m/config.json" "$T/models/$(basename "$m")/"
done
chmod -R a+rX "$T/models"
sleep 0.2   # the policies settle (fg_policy_load waits for a file younger than 100 ms)

# ctld POLICY ARGS...: fitgate ctld as nobody's job, the arguments NUL-separated on stdin
ctld() {
    local pol=$1
    shift
    printf '%s\0' "$@" > "$T/args"
    timeout 10 "$FG" ctld --policy "$pol" --run-as "$NOBODY" --timeout-ms 800 \
        --key login1:4242:1764583200.000000001:0 < "$T/args" > "$T/out" 2> "$T/err"
}
answer() { grep '^fitgate-answer ' "$T/out"; }
unesc() { printf '%b' "$(sed 's/%\([0-9A-F][0-9A-F]\)/\\x\1/g')"; }

# --- the answer is fixed records; the last is the answer -----------------------------------
ctld "$T/resize.conf" "$T/models/$(basename "$NEMO")" --ft-mode=lora --gres=gpu:t4:1
if [ "$(tail -n 1 "$T/out" | cut -d' ' -f1-3)" = "fitgate-answer 1 resize" ] &&
    [ "$(grep -c '^fitgate-answer ' "$T/out")" = 1 ] &&
    ! grep -vE '^fitgate-(say|log|answer) [^ ]+( [^ ]+)*$' "$T/out" | grep -q . &&
    answer | grep -qE ' --gres=gpu:t4:[2-8]$'; then
    ok "answer: $(answer)"
else
    bad "answer format: $(head -c 400 "$T/out")"
fi

# --- options without a shell or an argument limit -------------------------------------------
BIG=$(head -c 70000 /dev/zero | tr '\0' x)
QUOTES=$(head -c 35000 /dev/zero | tr '\0' "'")
ctld "$T/reject.conf" "$T/models/$(basename "$NEMO")" --ft-mode=lora --gres=gpu:t4:1 \
    "--ft-override=$QUOTES" "--ft-lora-targets=$BIG" "--ft-framework=$BIG"
if [ "$(answer | cut -d' ' -f3)" = reject ] && ! grep -q "cannot check" "$T/out"; then
    ok "two 70 KB values and 35,000 quotes on stdin: checked and rejected"
else
    bad "big options: $(head -c 400 "$T/out")"
fi

# --- {{ and a newline in a model directory ---------------------------------------------------
mkdir -p "$T/models/a{{b}}" "$T/models/x"$'\n'"fitgate: forged"
cp "$NEMO/config.json" "$T/models/a{{b}}/"
cp "$NEMO/config.json" "$T/models/x"$'\n'"fitgate: forged/"
chmod -R a+rX "$T/models"
ctld "$T/resize.conf" "$T/models/a{{b}}" --ft-mode=lora --gres=gpu:t4:1
req=$(answer | cut -d' ' -f4 | unesc)
if [ "$(answer | cut -d' ' -f3)" = resize ] &&
    tail -n 1 "$AUDIT" | grep -qF "\"model\":\"$T/models/a{{b}}\"" &&
    tail -n 1 "$AUDIT" | grep -qF "\"request_after\":\"$req\""; then
    ok "a {{ model directory: resized to $req, as the audit line says"
else
    bad "{{: $(head -c 400 "$T/out")"
fi
ctld "$T/reject.conf" "$T/models/x"$'\n'"fitgate: forged" --ft-mode=lora --gres=gpu:t4:1
if [ "$(wc -l < "$T/out")" -le 12 ] && ! grep -q '^fitgate: forged' "$T/out" &&
    grep -q '%0Afitgate:%20forged' "$T/out" && [ "$(answer | cut -d' ' -f3)" = reject ]; then
    ok "a newline in a model directory stays inside its percent-encoded field"
else
    bad "newline: $(head -c 400 "$T/out")"
fi

# --- the user's supplementary groups ---------------------------------------------------------
groupadd "$GROUP" && gpasswd -a nobody "$GROUP" >/dev/null
mkdir -p "$T/proj/nemo" && cp "$NEMO/config.json" "$T/proj/nemo/"
chown -R root:"$GROUP" "$T/proj" && chmod 0750 "$T/proj" "$T/proj/nemo" &&
    chmod 0640 "$T/proj/nemo/config.json"
ctld "$T/reject.conf" "$T/proj/nemo" --ft-mode=lora --gres=gpu:t4:1
if [ "$(answer | cut -d' ' -f3)" = reject ] && ! grep -q "cannot%20check" "$T/out" &&
    ! runuser -u nobody -g nogroup -- test -r "$T/proj/nemo/config.json" 2>/dev/null; then
    ok "a root:$GROUP 0750 directory is read with nobody's groups (rejected: does not fit)"
else
    bad "groups: $(head -c 400 "$T/out")"
fi

# --- an invalid policy fails closed --------------------------------------------------------------
printf 'Action=reject\nOnError=allow\nHubEndpoint=none\nFooBar=1\nLogFile=%s\n' "$AUDIT" \
    > "$T/invalid.conf"
chmod 644 "$T/invalid.conf"
sleep 0.2
ctld "$T/invalid.conf" "$T/models/$(basename "$QWEN")" --ft-mode=lora --gres=gpu:t4:1
if [ "$(answer | cut -d' ' -f3)" = reject ] && grep -q '^fitgate-log error .*invalid.conf:4:' "$T/out" &&
    tail -n 1 "$AUDIT" | grep -q '"verdict":"error".*invalid.conf:4' &&
    ! "$FG" check --policy "$T/invalid.conf" --lint 2> "$T/lint" && grep -q 'invalid.conf:4:' "$T/lint" &&
    "$FG" check --policy "$T/reject.conf" --lint > /dev/null; then
    ok "a bad policy line rejects the job (OnError=allow ignored), logs it; --lint names line 4"
else
    bad "invalid policy: $(head -c 400 "$T/out") / $(cat "$T/lint")"
fi

# --- the trail: the parent's, root's; every line parses ------------------------------------------
n=$(wc -l < "$AUDIT")
"$FG" report --json "$AUDIT" > "$T/report.json" 2> "$T/report.err"
if [ "$(stat -c %U:%a "$AUDIT")" = root:640 ] && [ "$(stat -c %a "$T/audit")" = 755 ] &&
    grep -q "\"lines\":[[:space:]]*$n," "$T/report.json" && grep -q '"bad_lines":[[:space:]]*0,' "$T/report.json" &&
    [ "$(grep -c '"where":"job_submit","user":"nobody","uid":65534' "$AUDIT")" = "$n" ] &&
    [ "$(grep -c '"key":"login1:4242:1764583200.000000001:0"' "$AUDIT")" = "$n" ] &&
    ! grep -q '"model":""' "$AUDIT"; then
    ok "$n audit lines by the parent into root's 0640 file: all parse, each nobody / job_submit / key / model"
else
    bad "trail: $(stat -c %U:%a "$AUDIT") $(stat -c %a "$T/audit"), $(head -3 "$T/report.err"); $(grep -c '"where":"job_submit","user":"nobody","uid":65534' "$AUDIT") $(grep -c '"key":"login1' "$AUDIT") of $n; $(head -c 300 "$T/report.json")"
fi

# --- LogFile=syslog through a real /dev/log --------------------------------------------------------
cat > "$T/syslog.sh" <<EOF
set -e
mount --make-rprivate /
mkdir -p "$T/olddev"
mount --bind /dev "$T/olddev"
mount -t tmpfs tmpfs /dev
for d in null zero urandom; do touch /dev/\$d; mount --bind "$T/olddev/\$d" /dev/\$d; done
python3 - "$T/dgram" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("/dev/log")
open(sys.argv[1] + ".ready", "w").close()
s.settimeout(10)
open(sys.argv[1], "wb").write(s.recv(65536))
PY
for _ in \$(seq 50); do [ -e "$T/dgram.ready" ] && break; sleep 0.1; done
printf '%s\0--ft-mode=lora\0--gres=gpu:t4:1\0' "$T/models/$(basename "$QWEN")" |
    "$FG" ctld --policy "$T/syslog.conf" --run-as "$NOBODY" > "$T/syslog.out"
wait
EOF
printf 'Action=reject\nHubEndpoint=none\nLogFile=syslog\n' > "$T/syslog.conf"
chmod 644 "$T/syslog.conf"
sleep 0.2
if timeout 30 unshare -m bash "$T/syslog.sh" 2> "$T/syslog.err" && [ -s "$T/dgram" ] &&
    grep -qE '^<14>[A-Z][a-z]{2} [ 0-9]{2} [0-9:]{8} fitgate\[[0-9]+\]: \{"v":1,' "$T/dgram" &&
    grep -q '"where":"job_submit","user":"nobody"' "$T/dgram" && [ ! -e /dev/log ]; then
    ok "LogFile=syslog: one RFC 3164 datagram on a /dev/log bound in a private namespace"
else
    bad "syslog: $(head -c 300 "$T/syslog.err") $(head -c 300 "$T/dgram" 2>/dev/null)"
fi

# --- a stalled file system -------------------------------------------------------------------------
# the FUSE server's library (CI: Debian 12, root), installed when missing
pkg-config --exists fuse3 2>/dev/null || DEBIAN_FRONTEND=noninteractive timeout 300 \
    apt-get install -y -qq --no-install-recommends fuse3 libfuse3-dev pkg-config >/dev/null 2>&1
if [ -c /dev/fuse ] && pkg-config --exists fuse3 2>/dev/null &&
    cc -std=gnu11 -O2 -o "$T/stallfs" tests/integration/slurm/stallfs.c \
        $(pkg-config --cflags --libs fuse3) && mkdir -p "$T/stall"; then
    "$T/stallfs" "$NEMO/config.json" "$T/stall" -f -o allow_other 2>/dev/null &
    STALL_PID=$!
    for _ in $(seq 50); do [ -e "$T/stall/model/config.json" ] && break; sleep 0.1; done
    t0=$(date +%s%N)
    ctld "$T/reject.conf" "$T/stall/model" --ft-mode=lora --gres=gpu:t4:1
    ms=$((($(date +%s%N) - t0) / 1000000))
    cp "$T/out" "$T/out.stall"
    line=$(tail -n 1 "$AUDIT")
    printf '%s\0--gres=gpu:t4:1\0' "$T/stall/model" > "$T/args"
    t0=$(date +%s%N)
    "$FG" ctld --policy "$T/reject.conf" --run-as "$NOBODY" --skip "a check timed out" \
        < "$T/args" > "$T/skip.out"
    skip_ms=$((($(date +%s%N) - t0) / 1000000))
    # deadlines with a loaded host's margin (lib/common.sh deadline_ok: 2 x bound + 3 s); the
    # skip is told apart from a check by its audit line, not by its speed
    stall_rec=$(grep '^fitgate-stalled ' "$T/out.stall" 2>/dev/null)
    if [ "$ms" -le $((2 * 800 + 3000)) ] && [ "$(answer | cut -d' ' -f3)" = allow ] &&
        grep -q '^fitgate-log error .*took%20longer%20than%20800%20ms' "$T/out" &&
        [ "$stall_rec" = "fitgate-stalled $T/stall" ] &&
        grep -q '"verdict":"error".*took longer than 800 ms (waiting on the file system at '"$T/stall" <<< "$line" &&
        [ "$skip_ms" -le 3000 ] && tail -n 1 "$AUDIT" | grep -q '"verdict":"error".*a check timed out'; then
        ok "a stalled file system: answered in $ms ms (bound 800 ms + kill) naming its mount, --skip in $skip_ms ms, both logged"
    else
        bad "stall: $ms ms, skip $skip_ms ms, record '$stall_rec': $(head -c 300 "$T/out")"
    fi
    # the mount handed back (job_submit.lua's window): a job there is not checked again, one
    # elsewhere is
    printf '%s\0--ft-mode=lora\0--gres=gpu:t4:1\0' "$T/stall/model" > "$T/args"
    "$FG" ctld --policy "$T/reject.conf" --run-as "$NOBODY" --stalled "${stall_rec#fitgate-stalled }" \
        < "$T/args" > "$T/out.again"
    printf '%s\0--ft-mode=lora\0--gres=gpu:t4:1\0' "$T/models/$(basename "$QWEN")" > "$T/args"
    "$FG" ctld --policy "$T/reject.conf" --run-as "$NOBODY" --stalled "${stall_rec#fitgate-stalled }" \
        < "$T/args" > "$T/out.other"
    if grep -q '^fitgate-answer 1 allow ' "$T/out.again" && grep -q 'timed%20out%20moments%20ago' "$T/out.again" &&
        grep -q '^fitgate-answer 1 ' "$T/out.other" && ! grep -q 'cannot%20check' "$T/out.other"; then
        ok "--stalled $T/stall: a job there is decided by OnError at once, a job elsewhere is checked"
    else
        bad "stalled window: $(head -c 300 "$T/out.again") / $(head -c 300 "$T/out.other")"
    fi
    kill -9 "$STALL_PID" 2>/dev/null
    umount -l "$T/stall" 2>/dev/null
    STALL_PID=""
else
    echo "$ME: SKIP the stalled file system: no /dev/fuse or libfuse3 (apt-get install fuse3 libfuse3-dev)"
fi

echo "$ME: $PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
