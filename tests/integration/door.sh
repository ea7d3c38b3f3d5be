#!/usr/bin/env bash
# door.sh - no job talks its way past the controller: `fitgate ctld` (cli/cmd_ctld.c) fed the
# hostile inputs that once got in, as contrib/job_submit.lua feeds it (NUL-separated fields on
# standard input, the model first), without Slurm and without root.  Each case is safe: the
# job is rejected, or the answer says plainly that it was not checked; nothing a clean run
# rejects is admitted, no secret of the daemon's environment is echoed, nothing hangs.
#   - the model slot is a value: "--gpus-conf=cards.conf" (a user's table of 17 TB cards),
#     "--partition=..." and "--nodes=..." there are a model name, never options; the same
#     options as fields of their own are refused (site files come from the policy);
#   - a model directory with a 100 MiB safetensors header of 1.4 M tensors, and one of 250,000
#     tensors in 20 MB, are refused as the job's own error, not timed out into OnError=allow;
#   - ${oc.env:SECRET} in the job's config is refused naming the key; the secret is in no
#     answer, log line or audit line;
#   - a bad value in the job's config (micro_batch_size: 0) is refused whatever OnError says,
#     and micro_batch_size: 0x40 is never left to OnError;
#   - the site's own broken inputs fail closed and --lint names them: GpuTable= missing,
#     /dev/zero or malformed; a policy or GPU table writable by others or owned by another
#     user; a key given twice;
#   - more than 16 MiB on standard input is answered (rejected) with an audit line.
set -uo pipefail
umask 022
cd "$(dirname "$0")/../.."
ME=door.sh
FG=$PWD/build/fitgate
[ -x "$FG" ] || { echo "$ME: FAIL: $FG missing (make all)"; exit 1; }
PASS=0 FAIL=0
T=$(mktemp -d /tmp/fitgate-door.XXXXXX)
trap 'rm -rf "$T"' EXIT
ok() { echo "ok   $*"; PASS=$((PASS + 1)); }
bad() { echo "FAIL $*"; FAIL=$((FAIL + 1)); }
L8=$PWD/tests/fixtures/models/meta-llama--Llama-3.1-8B
QWEN=$PWD/tests/fixtures/models/Qwen--Qwen3-0.6B
AUDIT=$T/audit.log

# policy NAME LINES...: a policy file NAME.conf whose trail is $AUDIT
policy() {
    local name=$1
    shift
    { printf '%s\n' "$@"; printf 'HubEndpoint=none\nLogFile=%s\n' "$AUDIT"; } > "$T/$name.conf"
}
policy strict 'Action=reject' 'OnError=reject'
policy lenient 'Action=reject' 'OnError=allow'
policy parts 'Action=reject' 'OnError=reject' 'PartitionName=free Action=off'
sleep 0.2 # the policies settle (fg_policy_load waits for a file younger than 100 ms)

# ctld POLICY FIELDS...: fitgate ctld as job_submit.lua runs it, the fields NUL-separated
ctld() {
    local pol=$1
    shift
    printf '%s\0' "$@" > "$T/args"
    timeout 20 "$FG" ctld --policy "$T/$pol.conf" --timeout-ms 800 "${EXTRA[@]}" < "$T/args" \
        > "$T/out" 2> "$T/err"
    said > "$T/said"
}
EXTRA=()
verdict() { sed -n 's/^fitgate-answer 1 \([a-z]*\) .*/\1/p' "$T/out"; }
unesc() { printf '%b' "$(sed 's/%\([0-9A-F][0-9A-F]\)/\\x\1/g')"; }
said() { grep '^fitgate-\(say\|log\) ' "$T/out" | unesc; }
# the lines said (the user's and slurmctld.log's), decoded, in $T/said after each run

# --- the clean run: this job does not fit one T4 ----------------------------------------------
ctld strict "$L8" --ft-mode=full --gres=gpu:t4:1
[ "$(verdict)" = reject ] && ! grep -q 'cannot check' "$T/said" &&
    ok "clean run: Llama-3.1-8B full on 1 x T4 is rejected" ||
    bad "clean run: $(head -c 300 "$T/out")"

# --- 1. the model slot is a value -------------------------------------------------------------
printf 'Name="Big T4" Label="Big T4" Aliases=t4 Vendor=10de Devices=1eb8 MemoryGB=99999 %s\n' \
    'MemoryBytes=107373108658176 FP16TFLOPS=65 MemBWTBps=0.32 LinkGBps=32 Interconnect="PCIe"' \
    > "$T/cards.conf"
# (the clean job fits one of these: the table must never be read)
"$FG" check "$L8" --ft-mode=full --gres=gpu:t4:1 --gpus-conf "$T/cards.conf" > /dev/null 2>&1 ||
    bad "cards.conf: the 99,999 GB T4 is no card fitgate reads, the cases below prove nothing"
printf 'base_model: %s\n' "$L8" > "$T/job.yml"
ctld strict "--gpus-conf=$T/cards.conf" "--ft-config=$T/job.yml" --ft-mode=full --gres=gpu:t4:1
[ "$(verdict)" = reject ] &&
    ok "--gpus-conf=cards.conf in the model slot, OnError=reject: rejected ($(said | head -1 | cut -c1-90))" ||
    bad "model-slot --gpus-conf: $(head -c 400 "$T/out")"
ctld lenient "--gpus-conf=$T/cards.conf" --ft-mode=full --gres=gpu:t4:1
line=$(tail -n 1 "$AUDIT")
if [ "$(verdict)" = allow ] && grep -q 'cannot check this job' "$T/said" &&
    grep -q '"verdict":"error"' <<<"$line" && grep -qF "\"model\":\"--gpus-conf=$T/cards.conf\"" <<<"$line"; then
    ok "the same under OnError=allow: a model that is not there, said as unchecked (the 99,999 GB card never read)"
else
    bad "model-slot --gpus-conf, OnError=allow: $(head -c 400 "$T/out") / $line"
fi
for field in "--gpus-conf=$T/cards.conf" "--policy=$T/lenient.conf" --headroom=1.0 \
    "--calibration=$T/c.conf" "--topology=$T/t.xml" --ft-model=x --lint --json -- "x"; do
    ctld lenient "$L8" --ft-mode=full --gres=gpu:t4:1 "$field"
    if [ "$(verdict)" = reject ] && grep -q 'fitgate: rejected: .*\(not an option\|first field\)' "$T/said" &&
        ! grep -q 'cannot check' "$T/said" && tail -n 1 "$AUDIT" | grep -q '"verdict":"reject"'; then
        ok "a field '$field' is refused as the job's own error (OnError=allow), in the trail"
    else
        bad "field $field: $(head -c 400 "$T/out")"
    fi
done
ctld parts "--partition=free" --ft-mode=full --gres=gpu:t4:1 --partition=gpu
[ "$(verdict)" = reject ] && ! grep -q 'partition free' "$T/said" &&
    ok "--partition=free in the model slot is a model name: the job is judged in its own partition" ||
    bad "model-slot --partition: $(head -c 400 "$T/out")"
ctld parts "$L8" --ft-mode=full --gres=gpu:t4:1 --partition=gpu --partition=free
[ "$(verdict)" = reject ] && grep -q -- '--partition given twice' "$T/said" &&
    ok "a second --partition is refused" || bad "two partitions: $(head -c 400 "$T/out")"
ctld strict "--nodes=64" "--ft-config=$T/job.yml" --ft-mode=full --gres=gpu:t4:1
[ "$(verdict)" = reject ] && ok "--nodes=64 in the model slot: rejected (no 64 nodes)" ||
    bad "model-slot --nodes: $(head -c 400 "$T/out")"
ctld strict "$L8" --ft-mode=full --gres=gpu:t4:1 --gpus=t4:64
[ "$(verdict)" = reject ] && grep -q 'GPU request is given twice' "$T/said" &&
    ok "a second GPU request is refused" || bad "two requests: $(head -c 400 "$T/out")"

# --- 2. a slow input is the job's, not a timeout ------------------------------------------------
mkdir -p "$T/big" "$T/many"
cp "$QWEN/config.json" "$T/big/" && cp "$QWEN/config.json" "$T/many/"
python3 - "$T/big/model.safetensors" 1400000 "$T/many/model.safetensors" 250000 <<'PY'
import struct, sys
for path, n in ((sys.argv[1], int(sys.argv[2])), (sys.argv[3], int(sys.argv[4]))):
    h = ('{' + ','.join('"t%d":{"dtype":"BF16","shape":[1],"data_offsets":[%d,%d]}'
                        % (i, 2 * i, 2 * i + 2) for i in range(n)) + '}').encode()
    h += b' ' * (-len(h) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(h)) + h)
        f.truncate(8 + len(h) + 2 * n)
PY
for case in big:1400000 many:250000; do
    d=${case%%:*} n=${case#*:}
    t0=$(date +%s%N)
    ctld lenient "$T/$d" --ft-mode=lora --gres=gpu:t4:1
    ms=$((($(date +%s%N) - t0) / 1000000))
    if [ "$(verdict)" = reject ] && grep -q "more than a model's checkpoint holds" "$T/said" &&
        ! grep -q 'took longer' "$T/said" && tail -n 1 "$AUDIT" | grep -q "more than a model's checkpoint"; then
        ok "a $(($(stat -c %s "$T/$d/model.safetensors") >> 20)) MiB header of $n tensors: refused as the job's own in $ms ms, not timed out"
    else
        bad "$d header ($ms ms): $(head -c 400 "$T/out")"
    fi
done

# --- 3. no environment expansion ------------------------------------------------------------
printf 'micro_batch_size: ${oc.env:FG_SECRET}\nbase_model: %s\nadapter: lora\n' "$L8" > "$T/env.yml"
printf '%s\0' "" "--ft-config=axolotl:$T/env.yml" --gres=gpu:t4:1 > "$T/args"
FG_SECRET=hf_abc123 timeout 20 "$FG" ctld --policy "$T/lenient.conf" < "$T/args" > "$T/out" 2> "$T/err"
said > "$T/said"
said > "$T/said"
if [ "$(verdict)" = reject ] && grep -q 'micro_batch_size: an interpolation' "$T/said" &&
    ! grep -q hf_abc123 "$T/out" "$T/err" "$AUDIT"; then
    ok "\${oc.env:FG_SECRET}: refused naming micro_batch_size; the value in no answer, log or audit line"
else
    bad "oc.env: $(head -c 400 "$T/out")"
fi

# --- 4. a job's own bad value is the job's error ---------------------------------------------
for v in 0 0x40 +64; do
    printf 'micro_batch_size: %s\nbase_model: %s\nadapter: lora\n' "$v" "$L8" > "$T/v.yml"
    ctld lenient "" "--ft-config=axolotl:$T/v.yml" --gres=gpu:t4:1
    if [ -n "$(verdict)" ] && ! grep -q 'cannot check' "$T/said" &&
        { [ "$v" != 0 ] || [ "$(verdict)" = reject ]; }; then
        ok "micro_batch_size: $v under OnError=allow: $(verdict), judged ($(said | head -1 | cut -c1-80))"
    else
        bad "micro_batch_size: $v: $(head -c 400 "$T/out")"
    fi
done

# --- 5. the site's own broken input fails closed -----------------------------------------------
printf 'not a gpu row\n' > "$T/malformed.conf"
for table in "$T/missing.conf" /dev/zero "$T/malformed.conf"; do
    policy gt 'Action=reject' 'OnError=allow' "GpuTable=$table"
    sleep 0.15
    ctld gt "$L8" --ft-mode=lora --gres=gpu:a100_80g:8
    if [ "$(verdict)" = reject ] && grep -q "site policy is invalid: GpuTable=$table" "$T/said" &&
        ! "$FG" check --policy "$T/gt.conf" --lint > /dev/null 2> "$T/lint" &&
        grep -q "GpuTable=$table" "$T/lint"; then
        ok "GpuTable=$table: fails closed under OnError=allow; --lint names it"
    else
        bad "GpuTable=$table: $(head -c 300 "$T/out") / $(cat "$T/lint")"
    fi
done
printf 'Name="Site T4" Label="Site T4" Aliases=t4 Vendor=10de Devices=1eb8 MemoryGB=16 %s\n' \
    'MemoryBytes=16106127360 FP16TFLOPS=65 MemBWTBps=0.32 LinkGBps=32 Interconnect="PCIe"' \
    > "$T/gpus.conf"
policy gw 'OnError=allow' "GpuTable=$T/gpus.conf"
policy ww 'OnError=allow'
policy dup 'OnError=allow' 'Headroom=1.2' 'Headroom=1.0'
sleep 0.15
chmod 666 "$T/ww.conf"
for case in "ww.conf:$T/ww.conf: writable by every user" "dup.conf:dup.conf:3: Headroom already given at line 2"; do
    name=${case%%:*} want=${case#*:}
    ctld "${name%.conf}" "$L8" --ft-mode=lora --gres=gpu:a100_80g:8
    if [ "$(verdict)" = reject ] && grep -qF "$want" "$T/said" &&
        ! "$FG" check --policy "$T/$name" --lint > /dev/null 2> "$T/lint" && grep -qF "$want" "$T/lint"; then
        ok "$name: fails closed ($want); --lint names it"
    else
        bad "$name: $(head -c 300 "$T/out") / $(cat "$T/lint")"
    fi
done
chmod 664 "$T/gpus.conf"
ctld gw "$L8" --ft-mode=lora --gres=gpu:a100_80g:8
[ "$(verdict)" = reject ] && grep -qF "gpus.conf: writable by its group" "$T/said" &&
    ok "a group-writable GpuTable= fails closed" || bad "gw: $(head -c 300 "$T/out")"
chmod 644 "$T/gpus.conf"
if [ "$(id -u)" = 0 ]; then
    chown nobody "$T/gpus.conf"
    ctld gw "$L8" --ft-mode=lora --gres=gpu:a100_80g:8
    [ "$(verdict)" = reject ] && grep -qF "gpus.conf: owned by uid $(id -u nobody), not by root" "$T/said" &&
        ok "a GpuTable= another user owns fails closed" || bad "foreign: $(head -c 300 "$T/out")"
    chown root "$T/gpus.conf"
else
    echo "$ME: SKIP a foreign-owned GpuTable= (needs root to chown)"
fi
ctld gw "$L8" --ft-mode=lora --gres=gpu:t4:1
[ "$(verdict)" = reject ] && ! grep -q 'invalid' "$T/said" &&
    ok "the same table, the owner's own and 0644: read (rejected: does not fit a T4)" ||
    bad "good table: $(head -c 300 "$T/out")"

# --- a stalled file system closes only itself --------------------------------------------------
# (a check that times out waiting in the kernel names the job's mounts: ctld.sh, with a FUSE
# server that never answers; here job_submit.lua hands such a mount back with --stalled)
cp -r "$QWEN" "$T/qwen"
mp=$(df --output=target "$T" | tail -n 1)
enc=$(printf '%s' "$mp" | od -An -tx1 -v | tr -d ' \n' | sed 's/../%&/g')
EXTRA=(--stalled "$enc")
ctld lenient "$T/qwen" --ft-mode=lora --gres=gpu:t4:1
if [ "$(verdict)" = allow ] && grep -qF "a check on the file system at $mp timed out moments ago" "$T/said" &&
    tail -n 1 "$AUDIT" | grep -q '"verdict":"error"'; then
    ok "a job on a file system named --stalled ($mp): decided by OnError=allow at once, logged"
else
    bad "stalled: $(head -c 400 "$T/out")"
fi
EXTRA=(--stalled /no/such/mount)
ctld lenient "$T/qwen" --ft-mode=lora --gres=gpu:t4:1
[ -n "$(verdict)" ] && ! grep -q 'cannot check' "$T/said" &&
    ok "a job on another file system than the stalled one is checked ($(verdict))" ||
    bad "not stalled: $(head -c 400 "$T/out")"
EXTRA=()

# --- 6. more than 16 MiB on standard input ------------------------------------------------------
n=$(wc -l < "$AUDIT")
{ printf '%s\0--ft-mode=lora\0--ft-lora-targets=' "$L8"; head -c 17000000 /dev/zero | tr '\0' x; printf '\0'; } > "$T/args"
timeout 20 "$FG" ctld --policy "$T/lenient.conf" < "$T/args" > "$T/out" 2> "$T/err"
said > "$T/said"
if [ "$(verdict)" = reject ] && grep -q 'more than 16777216 bytes' "$T/said" &&
    [ "$(wc -l < "$AUDIT")" = $((n + 1)) ] && tail -n 1 "$AUDIT" | grep -qF "\"model\":\"$L8\""; then
    ok "17 MB of options: answered (rejected) with an audit line naming the model"
else
    bad "17 MB: $(head -c 300 "$T/out") $(head -c 200 "$T/err")"
fi
printf '%s\0--ft-mode=lora' "$L8" > "$T/args"
timeout 20 "$FG" ctld --policy "$T/lenient.conf" < "$T/args" > "$T/out" 2> "$T/err"
said > "$T/said"
[ "$(verdict)" = reject ] && grep -q 'must each end with a NUL byte' "$T/said" &&
    ok "a last field without its NUL: answered (rejected)" || bad "no NUL: $(head -c 300 "$T/out")"

# --- every line of the trail parses --------------------------------------------------------------
"$FG" report --json "$AUDIT" > "$T/report.json" 2> "$T/report.err"
grep -q '"bad_lines":[[:space:]]*0,' "$T/report.json" &&
    ok "$(wc -l < "$AUDIT") audit lines, all parse" || bad "trail: $(head -3 "$T/report.err")"

echo "$ME: $PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
