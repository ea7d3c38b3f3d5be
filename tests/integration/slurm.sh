#!/bin/bash
# tests/integration/slurm.sh - the SPANK plugin on a real Slurm cluster: munged, slurmctld
# and slurmd on loopback (tests/integration/slurm/cluster.sh), 16 fake GPU device files
# (8 as gres type t4, 8 as h100), the plugin's node side reading the hwloc topology of an
# 8 x T4 machine (tests/fixtures/hwloc/mpibind-g4dnmetal.xml), models given as paths to
# fixture configs, jobs submitted as `nobody`.  No network, no GPU.
#
# Run as root: `bash tests/integration/slurm.sh` (make integration).  Installs slurmctld,
# slurmd, slurm-client and munge with apt-get when missing.  Every daemon it starts is
# stopped on exit, failure or interrupt; every command has a timeout.  KEEP=1 keeps the
# cluster's directory (logs, job outputs) when a check fails.
set -u
# shellcheck source=tests/integration/slurm/common.sh
source "$(dirname "$0")/slurm/common.sh"
slurm_begin fitgate-slurm

# --- what the cluster runs, readable by the job user wherever the repository lives
cp tests/fixtures/hwloc/mpibind-g4dnmetal.xml "$SROOT/t4x8.xml" || die "copy topology"
: > "$SROOT/fitgate.conf"
slurm_stage
PLUGSTACK="required $SROOT/spank_fitgate.so conf=$SROOT/fitgate.conf topology=$SROOT/t4x8.xml"
slurm_up

# --- helpers (common.sh has ok, bad, as_user, field, err_has, err_re, ms_since) ---------
wait_job() {   # wait_job ID: until it leaves the queue (60 s at most)
    local i
    for i in $(seq 300); do
        [ -z "$(timeout 5 squeue -h -j "$1" -o %T 2>/dev/null)" ] && return 0
        sleep 0.2
    done
    return 1
}
node_ok() { ! timeout 5 scontrol show node "$NODE" | grep -q 'State=[A-Z+]*DRAIN'; }
jobout() { cat "$SROOT/jobs/$1.out" 2>/dev/null; }
policy() { printf '%s\n' "$@" > "$SROOT/fitgate.conf"; }
OUT='-o %x-%j.out'
# The job environment without the submitter's: --export=NONE; on Slurm >= 25.05 --export=NIL.
# sbatch --export=NONE implies --get-user-env (SchedMD/slurm src/sbatch/sbatch.c,
# _fill_job_desc_from_opts), i.e. slurmd's `su - USER` on the node; from 25.05 a failure of
# that fails the launch and requeues the job held (src/slurmd/slurmd/req.c, _get_user_env:
# commit 23e61a29 dropped SchedulerParameters=requeue_setup_env_fail), and nobody's shell is
# nologin.  NIL (23.02.3+) is NONE without the node-side login: the same job-control path
# (env_array_merge_slurm_spank) that carries fitgate's plan, which is what is checked.
NOENV=NONE
[ "${SLURM_RELEASE/./}" -ge 2505 ] && NOENV=NIL

# --- 1. a job without --ft-model: untouched, runs, sees nothing of fitgate -------------
if as_user sbatch --parsable -J plain $OUT --gres=gpu:t4:1 --wrap 'env | sort' &&
    [ ! -s "$SROOT/err" ]; then
    J=$(cat "$SROOT/out")
    wait_job "$J"
    if [ "$(field "$J" JobState)" = JobState=COMPLETED ] && ! jobout "plain-$J" | grep -q FITGATE_
    then ok "untagged job runs untouched ($J)"; else bad "untagged job ($J): $(field "$J" JobState)"; fi
else
    bad "untagged job refused or noisy"
fi

# --- 2. what an untagged job costs sbatch is measured by make bench (tools/bench_slurm.sh:
# paired against no plugin in the same rounds, median of 101): make check asserts no speed.

# --- 3. reject at submit: LoRA of Nemotron-Nano-9B-v2 on one T4 16 GB --------------------
before=$(timeout 5 squeue -h | wc -l)
if ! as_user sbatch --parsable --ft-model="$NEMO" --ft-mode=lora --gres=gpu:t4:1 --wrap true &&
    err_has "fitgate: rejected: LoRA of nvidia--NVIDIA-Nemotron-Nano-9B-v2 does not fit --gres=gpu:t4:1" &&
    err_re "fitgate: needs [0-9.]+ GB per GPU" && err_re "one T4 16 GB has [0-9.]+ GB usable" &&
    err_re "fitgate: (ask for|remedy [0-9]+ \(more GPUs\):)( --ft-[a-z0-9-]+=[^ ]+)* --gres=gpu:t4:[2-8] \(" &&
    [ "$(timeout 5 squeue -h | wc -l)" = "$before" ]; then
    ok "LoRA Nemotron-Nano-9B-v2 on 1 x T4 rejected at submit:" \
       "$(grep -oE -- '--gres=gpu:t4:[0-9]+ \([^)]*\)' "$SROOT/err" | head -1)"
else
    bad "reject on 1 x T4"
fi

# --- 4. a job that fits: no message; --export=NONE still gets the plan ----------------------
if as_user sbatch --parsable --export=$NOENV -J fits $OUT --ft-model="$QWEN" --ft-mode=lora \
    --gres=gpu:t4:1 --wrap '/usr/bin/env' && [ ! -s "$SROOT/err" ]; then
    J=$(cat "$SROOT/out")
    wait_job "$J"
    o=$(jobout "fits-$J")
    if [ "$(field "$J" JobState)" = JobState=COMPLETED ] && grep -q '^FITGATE_TP=1$' <<<"$o" &&
        [ "$(field "$J" TresPerNode)" = TresPerNode=gres:gpu:t4:1 ] &&
        grep -q '^FITGATE_MICRO_BATCH=1$' <<<"$o" &&
        grep -Eq '^SLURM_SPANK_FITGATE_PLAN=(.*;)?CARD=t4(;|$)' <<<"$o" &&
        [ "$(grep -c '^SLURM_SPANK_FITGATE_' <<<"$o")" = 1 ]
    then ok "job that fits: submitted silently, FITGATE_* in the job under --export=$NOENV, one job-control variable ($J)"
    else bad "fitting job ($J) $(field "$J" JobState): $(grep -c FITGATE <<<"$o") FITGATE lines"; fi
else
    bad "fitting job refused or noisy"
fi

# --- 5. over-request: LoRA asking 8 x H100 80 GB is warned and left as asked ----------------
if as_user sbatch --parsable --hold -J over --ft-model="$NEMO" --ft-mode=lora \
    --gres=gpu:h100:8 --wrap true &&
    err_has "fitgate: warning: --gres=gpu:h100:8 is more than LoRA of" &&
    err_has "--gres=gpu:h100:1 is enough" &&
    [ "$(field "$(cat "$SROOT/out")" TresPerNode)" = TresPerNode=gres:gpu:h100:8 ]; then
    ok "8 x H100 for a one-card LoRA: warned, request unchanged"
else
    bad "over-request warning"
fi

# --- 6. on the node: the topology's GPUs (T4) are smaller than the H100 asked for -----------
if as_user sbatch --parsable -J small $OUT --ft-model="$NEMO" --ft-mode=lora --gres=gpu:h100:1 \
    --wrap 'echo SHOULD-NOT-RUN' && [ ! -s "$SROOT/err" ]; then
    J=$(cat "$SROOT/out")
    wait_job "$J"
    o=$(jobout "small-$J")
    if [ "$(field "$J" JobState)" = JobState=FAILED ] &&
        grep -q 'fitgate: rejected on .* does not fit the 1 x T4 16 GB allocated here' <<<"$o" &&
        ! grep -q SHOULD-NOT-RUN <<<"$o" && node_ok; then
        ok "node-side re-check: job on T4s it cannot fit fails in task_init, node not drained ($J)"
    else
        bad "node-side reject ($J): $(field "$J" JobState), node: $(timeout 5 sinfo -h -N -o %t)"
        sed 's/^/     | /' <<<"$o" | head -8
    fi
else
    bad "H100 job refused at submit"
fi

# --- 7. a job array: every task gets the plan --------------------------------------------------
if as_user sbatch --parsable -J arr -o 'arr-%A_%a.out' --array=0-2 --ft-model="$QWEN" \
    --ft-mode=lora --gres=gpu:t4:1 --wrap 'env' && [ ! -s "$SROOT/err" ]; then
    J=$(cat "$SROOT/out")
    wait_job "$J"
    n=$(cat "$SROOT"/jobs/arr-"$J"_*.out 2>/dev/null | grep -c '^FITGATE_GPUS=1$')
    if [ "$n" = 3 ]; then ok "job array: 3 tasks, each with FITGATE_* ($J)"
    else bad "job array ($J): $n of 3 tasks saw FITGATE_GPUS"; fi
else
    bad "job array refused or noisy"
fi

# --- 8. salloc + srun step; salloc and srun refused at submit ----------------------------------
if TMO=60 as_user salloc --ft-model="$QWEN" --ft-mode=lora --gres=gpu:t4:1 \
    srun bash -c 'env | sort' && grep -q '^FITGATE_PP=1$' "$SROOT/out" &&
    grep -q '^SLURM_STEP_GPUS=' "$SROOT/out"; then
    ok "salloc + srun step: the step gets FITGATE_*"
else
    bad "salloc + srun step"
fi
if ! as_user salloc --ft-model="$NEMO" --ft-mode=lora --gres=gpu:t4:1 true &&
    err_has "salloc: error: fitgate: rejected:" && err_re "(ask for|remedy [0-9]+ \(more GPUs\):)( --ft-[a-z0-9-]+=[^ ]+)* --gres=gpu:t4:[2-8] "; then
    ok "salloc refused at submit"
else
    bad "salloc refusal"
fi
if ! as_user srun --ft-model="$NEMO" --ft-mode=lora --gres=gpu:t4:1 true &&
    err_has "srun: error: fitgate: rejected:"; then
    ok "srun (own allocation) refused at submit"
else
    bad "srun refusal"
fi

# --- 9. Action=resize: the same T4 job is raised to the smallest T4 layout and runs with it ----
policy "Action=reject" "PartitionName=gpu Action=resize ShrinkOverRequest=yes"
# (no -p: the plugin asks the controller which partition is the default one)
if as_user sbatch --parsable -J resized $OUT --ft-model="$NEMO" --ft-mode=lora \
    --gres=gpu:t4:1 --wrap 'env | sort' && err_has "fitgate: resized: LoRA of" &&
    err_re "now asks for --gres=gpu:t4:[2-8]$"; then
    J=$(cat "$SROOT/out")
    tres=$(field "$J" TresPerNode)
    n=${tres##*:}
    wait_job "$J"
    o=$(jobout "resized-$J")
    cvd=$(grep '^CUDA_VISIBLE_DEVICES=' <<<"$o" | tr -cd ',' | wc -c)
    if [ "$tres" = "TresPerNode=gres:gpu:t4:$n" ] && [ "$(field "$J" JobState)" = JobState=COMPLETED ] &&
        grep -q "^FITGATE_GPUS=$n$" <<<"$o" && grep -q '^FITGATE_PP_SPLIT=0-' <<<"$o" &&
        grep -q '^FITGATE_NEMO_OVERRIDES=tensor_model_parallel_size=' <<<"$o" &&
        [ "$((cvd + 1))" = "$n" ]; then
        ok "Action=resize (default partition's override): --gres=gpu:t4:1 -> $tres, ran with" \
           "$(grep -E '^FITGATE_(TP|PP)=' <<<"$o" | tr '\n' ' ')($J)"
    else
        bad "resized job ($J) $tres $(field "$J" JobState)"
        grep -E 'FITGATE|CUDA_VIS|fitgate' <<<"$o" | sed 's/^/     | /' | head -8
    fi
else
    bad "resize at submit"
fi
if as_user sbatch --parsable --export=$NOENV -J micro $OUT --ft-model="$QWEN" --ft-mode=lora \
    --ft-batch=8 --gres=gpu:t4:1 --wrap '/usr/bin/env' && err_has "fitgate: resized: micro-batch 8"
then
    J=$(cat "$SROOT/out")
    wait_job "$J"
    o=$(jobout "micro-$J")
    mb=$(grep -o '^FITGATE_MICRO_BATCH=[0-9]*' <<<"$o" | tr -dc 0-9)
    ga=$(grep -o '^FITGATE_GRAD_ACCUM=[0-9]*' <<<"$o" | tr -dc 0-9)
    if [ -n "$mb" ] && [ -n "$ga" ] && [ "$mb" -lt 8 ] && [ $((mb * ga)) -ge 8 ] &&
        [ "$(field "$J" TresPerNode)" = TresPerNode=gres:gpu:t4:1 ]; then
        ok "micro-batch 8 on 1 x T4 resized to $mb x $ga accumulation steps, GPUs unchanged ($J)"
    else
        bad "micro-batch resize ($J): FITGATE_MICRO_BATCH=$mb FITGATE_GRAD_ACCUM=$ga"
    fi
else
    bad "micro-batch resize at submit"
fi
if as_user sbatch --parsable --hold -p gpu -J shrink --ft-model="$NEMO" --ft-mode=lora \
    --gres=gpu:h100:8 --wrap true && err_has "now asks for --gres=gpu:h100:1" &&
    [ "$(field "$(cat "$SROOT/out")" TresPerNode)" = TresPerNode=gres:gpu:h100:1 ]; then
    ok "ShrinkOverRequest=yes: 8 x H100 shrunk to 1"
else
    bad "shrink over-request"
fi

# --- 10. an unreachable hub: OnError decides, sbatch returns within HubTimeout (deadline_ok) -
"$SROOT/blackhole" serve "$SROOT/bh.port" 120 &
BH_PID=$!
for i in $(seq 50); do [ -s "$SROOT/bh.port" ] && break; sleep 0.1; done
BH=$(cat "$SROOT/bh.port" 2>/dev/null)
[ -n "$BH" ] || die "blackhole did not start"
policy "HubEndpoint=http://127.0.0.1:$BH" "HubTimeout=2" "OnError=allow"
t0=$(date +%s%N)
if as_user sbatch --parsable --hold -J hub --ft-model=acme/not-here --ft-mode=lora \
    --gres=gpu:t4:1 --wrap true && err_has "fitgate: warning: cannot check acme/not-here" &&
    err_has "OnError=allow" && deadline_ok "$(ms_since "$t0")" 2000; then
    ok "hub black hole, OnError=allow: submitted with a warning in $(ms_since "$t0") ms"
else
    bad "hub black hole, OnError=allow ($(ms_since "$t0") ms)"
fi
policy "HubEndpoint=http://127.0.0.1:$BH" "HubTimeout=2" "OnError=reject"
t0=$(date +%s%N)
if ! as_user sbatch --parsable --hold -J hub --ft-model=acme/not-here --ft-mode=lora \
    --gres=gpu:t4:1 --wrap true && err_has "fitgate: rejected: cannot check acme/not-here" &&
    deadline_ok "$(ms_since "$t0")" 2000; then
    ok "hub black hole, OnError=reject: refused in $(ms_since "$t0") ms"
else
    bad "hub black hole, OnError=reject ($(ms_since "$t0") ms)"
fi

# --- 11. a broken policy file: named once with file:line, OnError decides ---------------------
policy "Action=warn" "Bogus=1"
if as_user sbatch --parsable --hold -J badconf --ft-model="$QWEN" --ft-mode=lora \
    --gres=gpu:t4:1 --wrap true && err_has "fitgate.conf:2: unknown key 'Bogus'" &&
    [ "$(grep -c "unknown key" "$SROOT/err")" = 1 ]; then
    ok "bad policy line named once (file:line), job passes under OnError=allow"
else
    bad "bad policy file, OnError=allow"
fi
policy "Bogus=1" "OnError=reject"
if ! as_user sbatch --parsable --hold -J badconf --ft-model="$QWEN" --ft-mode=lora \
    --gres=gpu:t4:1 --wrap true && err_has "fitgate.conf:1: unknown key 'Bogus'"; then
    ok "bad policy file under OnError=reject refuses tagged jobs"
else
    bad "bad policy file, OnError=reject"
fi
if as_user sbatch --parsable --hold -J badconf --gres=gpu:t4:1 --wrap true &&
    [ ! -s "$SROOT/err" ]; then
    ok "untagged jobs never read the policy (broken file, no message)"
else
    bad "untagged job with a broken policy file"
fi

# --- 12. what Slurm's loader and callers see of the plugin, per release ----------------------
# Built for the daemons' major.minor (the loader refuses any other); from 25.05 it exports
# slurm_spank_init_failure_mode = ESPANK_JOB_FAILURE, so a failed init on a node fails the job
# instead of draining the node (SchedMD/slurm src/common/spank.c, _do_call_stack); before
# 25.05 it exports nothing the loader does not know.
# (the plugin's slurm_* functions from the release's libslurmfull, as in sbatch)
if [ -n "${SLURM_PREFIX:-}" ]; then full=$SLURM_PREFIX/lib/slurm/libslurmfull.so
else full=/usr/lib/$(cc -print-multiarch)/slurm-wlm/libslurmfull.so; fi
abi=$("$SROOT/plugin_abi" "$SROOT/spank_fitgate.so" "$full" 2>&1)
want="plugin_version=$SLURM_RELEASE headers=$SLURM_RELEASE"
if [ "${SLURM_RELEASE/./}" -ge 2505 ]; then
    jf=$(grep -o 'job_failure=[0-9]*' <<<"$abi" | cut -d= -f2)
    want="$want failure_mode=$jf job_failure=$jf"
else
    want="$want failure_mode=none"
fi
if [ -n "$abi" ] && [[ "$abi" == "$want"* ]]; then
    ok "plugin as the loader sees it: $abi"
else
    bad "plugin ABI: '$abi', wanted '$want...'"
fi
# Every SPANK callback returns 0 or -1 (from 25.05 any other value is an error too, and an
# ESPANK_* code would read as one): the failures the daemons logged in this run (the node-side
# reject of check 6 at least) all say rc=-1.
rcs=$(cat "$SROOT"/log/*.log 2>/dev/null | grep -o 'spank_fitgate.so: [a-z_]*() failed with rc=[-0-9]*' |
    sort | uniq -c | sed 's/^ *//' | paste -sd ';' -)
if [ -n "$rcs" ] && ! grep -q 'rc=[^-]\|rc=-[02-9]\|rc=-1[0-9]' <<<"$rcs"; then
    ok "every SPANK failure the daemons logged returned -1 ($rcs)"
else
    bad "SPANK return codes in the daemons' logs: '${rcs:-none logged}'"
fi

# --- 13. requiretag= on the plugstack line, read with the policy's words ---------------------
# An untagged job loads the engine part (here one that cannot load, so that sbatch says so) for
# a yes, or for a value the policy refuses (the engine part then reports it); never for a no.
# The last requiretag= wins, as in the policy.
sed "s|^PlugStackConfig=.*|PlugStackConfig=$SROOT/etc/plugstack.tag|" "$SLURM_CONF" \
    > "$SROOT/etc/slurm.tag.conf"
loaded=""
for v in yes On 1 TRUE "" ys no OFF 0 false "yes requiretag=no"; do
    echo "required $SROOT/spank_fitgate.so engine=$SROOT/no-engine.so requiretag=$v" \
        > "$SROOT/etc/plugstack.tag"
    chmod 644 "$SROOT/etc/slurm.tag.conf" "$SROOT/etc/plugstack.tag"
    CONF=$SROOT/etc/slurm.tag.conf as_user sbatch --parsable --hold -J tag --gres=gpu:t4:1 \
        --wrap true
    err_has "fitgate: cannot load $SROOT/no-engine.so" && loaded="$loaded[$v]"
done
timeout 10 scancel -n tag
if [ "$loaded" = "[yes][On][1][TRUE][][ys]" ]; then
    ok "requiretag= loads the engine part for an untagged job only for yes or a bad value"
else
    bad "requiretag= loaded the engine part for $loaded"
fi

# --- 13. the job's own config (--ft-config): read at sbatch (relative to the directory sbatch
# runs in), its digest in the plan, read again on the node: a file edited in between is refused
# there with a message, the step fails and the node stays
: > "$SROOT/fitgate.conf"   # the default policy (an earlier case left a broken one)
printf 'base_model: %s\nadapter: lora\nmicro_batch_size: 1\nsequence_len: 512\n' "$QWEN" \
    > "$SROOT/jobs/train.yml"
chmod a+r "$SROOT/jobs/train.yml"
if as_user sbatch --parsable -J cfg $OUT --ft-config=train.yml --gres=gpu:t4:1 --wrap '/usr/bin/env' \
    && [ ! -s "$SROOT/err" ]; then
    J=$(cat "$SROOT/out")
    wait_job "$J"
    o=$(jobout "cfg-$J")
    if [ "$(field "$J" JobState)" = JobState=COMPLETED ] &&
        grep -Eq '^SLURM_SPANK_FITGATE_PLAN=(.*;)?CONFIG_DIGEST=[0-9a-f]{16}(;|$)' <<<"$o"; then
        ok "a job given by its axolotl config alone runs, the digest in its plan ($J)"
    else
        bad "config job ($J) $(field "$J" JobState): $(grep -c CONFIG_DIGEST <<<"$o") digests"
    fi
else
    bad "config job refused or noisy: $(head -c 300 "$SROOT/err")"
fi
if as_user sbatch --parsable --hold -J cfgedit $OUT --ft-config=train.yml --gres=gpu:t4:1 \
    --wrap true && [ ! -s "$SROOT/err" ]; then
    J=$(cat "$SROOT/out")
    printf 'lora_r: 32\n' >> "$SROOT/jobs/train.yml"
    timeout 10 scontrol release "$J"
    wait_job "$J"
    if [ "$(field "$J" JobState)" = JobState=FAILED ] &&
        jobout "cfgedit-$J" | grep -q "config (train.yml) changed since submission" && node_ok
    then
        ok "a config edited between sbatch and the node is refused there, node not drained ($J)"
    else
        bad "edited config ($J) $(field "$J" JobState): $(jobout "cfgedit-$J" | head -c 300)"
    fi
else
    bad "held config job refused or noisy"
fi

if node_ok; then ok "node $NODE never drained"; else bad "node $NODE drained"; fi
timeout 10 scancel --partition=gpu 2>/dev/null
echo "$ME: $PASS passed, $FAIL failed in $(ms_since "$T_START") ms"
[ "$FAIL" = 0 ]
