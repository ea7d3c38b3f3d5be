#!/bin/bash
# tests/integration/slurm_door.sh - the controller door cannot be skipped and its audit trail
# can be trusted (issue 28): contrib/job_submit.lua in a real slurmctld (SlurmUser=root, so
# the check runs as the job's user through `fitgate ctld --run-as`), jobs submitted as
# nobody, the SPANK plugin loaded with action=off (it only registers the --ft-* options, so
# sbatch itself decides nothing: what is seen is the controller alone, as for a job with a
# private slurm.conf or one from slurmrestd).  Each case is one reproduction of the issue:
#   - a root:group 0750 model directory is read with the user's supplementary groups;
#   - RequireTag=yes refuses an untagged GPU job, also with an empty plugstack.conf;
#   - two 70 KB option values and 35,000 single quotes neither fail the exec nor admit;
#   - a model directory named with "{{" is resized as logged;
#   - a policy with a bad line, or a relative LogFile=, rejects tagged jobs and says so in
#     slurmctld.log; `fitgate check --lint` names the line;
#   - a newline in a job name cannot forge a slurmctld.log line;
#   - a stalled file system (tests/integration/slurm/stallfs.c, a FUSE server whose reads
#     never return; skipped without /dev/fuse and libfuse3) bounds the check, logs it, skips
#     only jobs on that file system for STALL_S (a job elsewhere is checked), and
#     the next jobs do not wait behind it;
#   - the audit trail: root's file, every line parses, model / user / key / door on each,
#     NO_VAL time limits recorded as unknown; 200 concurrent tagged submissions give exactly
#     200 lines, each whole.
# Run as root: `flock /tmp/fitgate-slurm.lock bash tests/integration/slurm_door.sh`.
set -u
# shellcheck source=tests/integration/slurm/common.sh
source "$(dirname "$0")/slurm/common.sh"
if [ -n "${SLURM_PREFIX:-}" ] && [ ! -e "$SLURM_PREFIX/lib/slurm/job_submit_lua.so" ]; then
    echo "$ME: SKIP: $SLURM_PREFIX has no job_submit/lua (tools/slurm-build.sh builds no Lua)"
    exit 0
fi
slurm_begin fitgate-slurm-door
slurm_stage
GROUP=fgdoor$$
STALL_PID=""
door_cleanup() {
    if [ -n "$STALL_PID" ]; then
        kill -9 "$STALL_PID" 2>/dev/null
        umount -l "$SROOT/stall" 2>/dev/null
    fi
    gpasswd -d nobody "$GROUP" >/dev/null 2>&1
    groupdel "$GROUP" 2>/dev/null
    slurm_cleanup
}
trap door_cleanup EXIT
mkdir -p "$SROOT/etc" "$SROOT/audit"
chmod 755 "$SROOT/audit"
AUDIT=$SROOT/audit/ctld.log

# door_policy NAME LINES: a policy file and job_submit.lua pointing at it (the Lua reloads
# when the script's mtime changes: one second later than the last load)
door_policy() {
    sleep 1.1
    printf 'HubEndpoint=none\n%b' "$2" > "$SROOT/$1.conf"
    chmod 644 "$SROOT/$1.conf"
    sed -e "s|^local FITGATE = .*|local FITGATE = \"$SROOT/fitgate\"|" \
        -e "s|^local POLICY = .*|local POLICY = \"$SROOT/$1.conf\"|" contrib/job_submit.lua \
        > "$SROOT/etc/job_submit.lua.tmp" && chmod 644 "$SROOT/etc/job_submit.lua.tmp" &&
        mv "$SROOT/etc/job_submit.lua.tmp" "$SROOT/etc/job_submit.lua"
}
door_policy reject "Action=reject\nLogFile=$AUDIT\n"
PLUGSTACK="required $SROOT/spank_fitgate.so action=off"
EXTRA_CONF="JobSubmitPlugins=lua"
slurm_up
CTLD_LOG=$SROOT/log/slurmctld.log
last_audit() { tail -n 1 "$1"; }
sub() { as_user sbatch --parsable --hold "$@" --wrap true; }

# --- the check reads with the user's supplementary groups ------------------------------------
groupadd "$GROUP" && gpasswd -a nobody "$GROUP" >/dev/null
mkdir -p "$SROOT/proj/nemo"
cp "$NEMO/config.json" "$SROOT/proj/nemo/"
chown -R root:"$GROUP" "$SROOT/proj" && chmod 0750 "$SROOT/proj" "$SROOT/proj/nemo" &&
    chmod 0640 "$SROOT/proj/nemo/config.json"
if ! sub --ft-model="$SROOT/proj/nemo" --ft-mode=lora --gres=gpu:t4:1 &&
    err_re "fitgate: rejected: LoRA of .* does not fit" && ! err_has "cannot check" &&
    last_audit "$AUDIT" | grep -q '"verdict":"reject"'; then
    ok "a root:$GROUP 0750 model directory is checked with the user's groups (rejected)"
else
    bad "group-shared model directory ($(last_audit "$AUDIT" | head -c 300))"
fi

# --- RequireTag at the controller ------------------------------------------------------------
door_policy reqtag "Action=reject\nRequireTag=yes\nLogFile=$AUDIT\n"
mkdir -p "$SROOT/noplug"
: > "$SROOT/noplug/plugstack.conf"
sed "s|^PlugStackConfig=.*|PlugStackConfig=$SROOT/noplug/plugstack.conf|" "$SLURM_CONF" \
    > "$SROOT/noplug/slurm.conf"
chmod -R a+rX "$SROOT/noplug"
if ! sub --gres=gpu:t4:8 && err_has "RequireTag=yes" &&
    ! CONF=$SROOT/noplug/slurm.conf sub --gres=gpu:t4:8 && err_has "RequireTag=yes" &&
    last_audit "$AUDIT" | grep -q '"verdict":"reject"' && sub --ntasks=1; then
    ok "RequireTag=yes refuses an untagged GPU job (also with an empty plugstack.conf), not a CPU job"
else
    bad "RequireTag at the controller"
fi

# --- options travel without a shell or an argument limit -------------------------------------
door_policy reject "Action=reject\nOnError=allow\nLogFile=$AUDIT\n"
BIG=$(head -c 70000 /dev/zero | tr '\0' x)
QUOTES=$(head -c 35000 /dev/zero | tr '\0' "'")
if ! as_user env "_SLURM_SPANK_OPTION_fitgate_ft_lora_targets=$BIG" \
    "_SLURM_SPANK_OPTION_fitgate_ft_override=$QUOTES$BIG" \
    "_SLURM_SPANK_OPTION_fitgate_ft_framework=$BIG" sbatch --parsable --hold \
    --export=ALL --ft-model="$NEMO" --ft-mode=lora --gres=gpu:t4:1 --wrap true &&
    err_has "fitgate: rejected" && ! err_has "cannot check"; then
    ok "three 70 KB options and 35,000 quotes are checked, not admitted (rejected)"
else
    bad "big options ($(head -c 300 "$SROOT/out"))"
fi

# --- a model directory named with {{ is resized as logged ------------------------------------
door_policy resize "Action=resize\nLogFile=$AUDIT\n"
mkdir -p "$SROOT/models/a{{b}}"
cp "$NEMO/config.json" "$SROOT/models/a{{b}}/" && chmod -R a+rX "$SROOT/models"
if sub --ft-model="$SROOT/models/a{{b}}" --ft-mode=lora --gres=gpu:t4:1 &&
    t=$(field "$(cat "$SROOT/out")" TresPerNode) &&
    after=$(last_audit "$AUDIT" | grep -o '"request_after":"[^"]*"' | cut -d'"' -f4) &&
    [ "$t" = "TresPerNode=gres:${after#--gres=}" ] && [ "$after" != "--gres=gpu:t4:1" ]; then
    ok "a {{ model directory is resized as logged: $t ($after)"
else
    bad "{{ resize (${t:-} vs ${after:-})"
fi

# --- an invalid policy fails closed and says why in slurmctld.log -----------------------------
for bad_line in "FooBar=1" "LogFile=relative.log"; do
    door_policy invalid "Action=reject\nOnError=allow\n$bad_line\n"
    if ! sub --ft-model="$QWEN" --ft-mode=lora --gres=gpu:t4:1 &&
        err_has "the site policy is invalid" &&
        grep -q "fitgate: cannot check a job of nobody.*site policy is invalid" "$CTLD_LOG" &&
        ! "$SROOT/fitgate" check --policy "$SROOT/invalid.conf" --lint 2> "$SROOT/lint" &&
        grep -q "invalid.conf:4:" "$SROOT/lint"; then
        ok "policy with '$bad_line': tagged jobs rejected, slurmctld.log says why, --lint names line 4"
    else
        bad "invalid policy '$bad_line' ($(cat "$SROOT/lint" 2>/dev/null))"
    fi
done

# --- a newline in a job name cannot forge a slurmctld.log line --------------------------------
door_policy reject "Action=reject\nLogFile=$AUDIT\n"
if ! sub -J $'x\nfitgate: forged' --ft-model="$NEMO" --ft-mode=lora --gres=gpu:t4:1 &&
    grep -qF 'x\x0afitgate: forged' "$CTLD_LOG" && ! grep -q '^fitgate: forged' "$CTLD_LOG"; then
    ok "a newline in a job name is written \\x0a in slurmctld.log"
else
    bad "job name newline in slurmctld.log"
fi

# --- the audit trail --------------------------------------------------------------------------
sub --ft-model="$QWEN" --ft-mode=lora --gres=gpu:t4:1 --time=90
line90=$(last_audit "$AUDIT")
sub --ft-model="$QWEN" --ft-mode=lora --gres=gpu:t4:1
line_noval=$(last_audit "$AUDIT")
"$SROOT/fitgate" report --json "$AUDIT" > "$SROOT/report.json" 2> "$SROOT/report.err"
n=$(wc -l < "$AUDIT")
if [ "$(stat -c %U:%a "$AUDIT")" = root:640 ] &&
    grep -q "\"lines\":[[:space:]]*$n," "$SROOT/report.json" && grep -q '"bad_lines":[[:space:]]*0,' "$SROOT/report.json" &&
    ! grep -v '"where":"job_submit"' "$AUDIT" | grep -q . &&
    ! grep -v 'RequireTag' "$AUDIT" | grep -q '"model":""' && ! grep -v '"user":"nobody","uid":65534' "$AUDIT" | grep -q . &&
    grep -q '"time_limit_min":90,' <<< "$line90" && grep -q '"time_limit_min":0,' <<< "$line_noval"; then
    ok "audit trail: root's 0640 file, $n lines all parse, each job_submit / nobody / a model; --time 90 and no --time (NO_VAL: 0)"
else
    bad "audit trail ($(stat -c %U:%a "$AUDIT"); $(head -c 300 "$SROOT/report.err"))"
fi

# --- 200 concurrent tagged submissions --------------------------------------------------------
LOAD=$SROOT/audit/load.log
door_policy load "Action=resize\nLogFile=$LOAD\n"
t0=$(date +%s%N)
for s in 1 2 3 4 5 6 7 8; do
    (for i in $(seq 25); do
        m=$QWEN
        [ $((i % 2)) = 0 ] && m=$NEMO
        (cd "$SROOT/jobs" && timeout 60 runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" \
            sbatch --parsable --hold --ft-model="$m" --ft-mode=lora --gres=gpu:t4:1 \
            --wrap true) > /dev/null 2>&1 || echo "submit failed" >> "$SROOT/load.fail"
    done) &
done
wait
ms=$(ms_since "$t0")
"$SROOT/fitgate" report --json "$LOAD" > "$SROOT/load.json" 2>/dev/null
if [ ! -s "$SROOT/load.fail" ] && [ "$(wc -l < "$LOAD")" = 200 ] &&
    [ "$(grep -c '"where":"job_submit"' "$LOAD")" = 200 ] &&
    grep -q '"lines":[[:space:]]*200,' "$SROOT/load.json" && grep -q '"bad_lines":[[:space:]]*0,' "$SROOT/load.json" &&
    [ "$(grep -c '"verdict":"resize"' "$LOAD")" = 96 ]; then   # NEMO: 12 of each 25
    ok "200 tagged jobs from 8 submitters in $ms ms: 200 job_submit lines, every one parses"
else
    bad "load: $(wc -l < "$LOAD") lines, $(cat "$SROOT/load.fail" 2>/dev/null | wc -l) failed"
fi
timeout 10 scancel --user=nobody 2>/dev/null

# --- a stalled file system bounds the check ---------------------------------------------------
# the FUSE server's library (CI: Debian 12, root), installed when missing
pkg-config --exists fuse3 2>/dev/null || DEBIAN_FRONTEND=noninteractive timeout 300 \
    apt-get install -y -qq --no-install-recommends fuse3 libfuse3-dev pkg-config >/dev/null 2>&1
if [ -c /dev/fuse ] && pkg-config --exists fuse3 2>/dev/null &&
    cc -std=gnu11 -O2 -o "$SROOT/stallfs" "$HERE/stallfs.c" $(pkg-config --cflags --libs fuse3) &&
    mkdir -p "$SROOT/stall"; then
    "$SROOT/stallfs" "$NEMO/config.json" "$SROOT/stall" -f -o allow_other 2>/dev/null &
    STALL_PID=$!
    for _ in $(seq 50); do [ -e "$SROOT/stall/model/config.json" ] && break; sleep 0.1; done
    door_policy stall "Action=reject\nOnError=allow\nLogFile=$AUDIT\n"
    t0=$(date +%s%N)
    sub --ft-model="$SROOT/stall/model" --ft-mode=lora --gres=gpu:t4:1
    stalled_ms=$(ms_since "$t0")
    err_has "took longer than 800 ms" && stalled_line=$(last_audit "$AUDIT")
    t0=$(date +%s%N)
    sub --gres=gpu:t4:1
    untagged_ms=$(ms_since "$t0")
    t0=$(date +%s%N)
    sub --ft-model="$SROOT/stall/model" --ft-mode=lora --gres=gpu:t4:1
    next_ms=$(ms_since "$t0")
    next_line=$(last_audit "$AUDIT")
    # within the same window, a job on another file system is checked (Nemotron LoRA does not
    # fit one T4: rejected, where OnError=allow would have let an unchecked one through)
    if ! sub --ft-model="$NEMO" --ft-mode=lora --gres=gpu:t4:1 &&
        last_audit "$AUDIT" | grep -q '"verdict":"reject"'; then
        ok "within the stall window a job on another file system is checked (rejected)"
    else
        bad "another file system in the window: $(last_audit "$AUDIT" | head -c 300)"
    fi
    # the next tagged job on the stalled mount is not checked (the message says so), neither
    # waits on the mount
    if deadline_ok "$stalled_ms" 800 && grep -q '"verdict":"error"' <<< "${stalled_line:-}" &&
        grep -q "took longer than 800 ms" "$CTLD_LOG" && deadline_ok "$untagged_ms" 0 &&
        deadline_ok "$next_ms" 0 && grep -q '"message":"fitgate: warning: cannot check this job: a check on the file system at [^"]*/stall timed out moments ago' <<< "$next_line"; then
        ok "stalled file system: the check took $stalled_ms ms (bound 800 ms), then an untagged job $untagged_ms ms, the next tagged one $next_ms ms (no check, logged)"
    else
        bad "stall: $stalled_ms / ${untagged_ms:-?} / ${next_ms:-?} ms; ${next_line:0:300}"
    fi
    kill -9 "$STALL_PID" 2>/dev/null   # the server gone: the stalled reads fail, the mount is dropped
    umount -l "$SROOT/stall" 2>/dev/null
    STALL_PID=""
else
    echo "$ME: SKIP the stalled file system: no /dev/fuse or libfuse3 (apt-get install fuse3 libfuse3-dev)"
fi

timeout 10 scancel --user=nobody 2>/dev/null
echo "$ME: $PASS passed, $FAIL failed in $(ms_since "$T_START") ms"
[ "$FAIL" = 0 ]
