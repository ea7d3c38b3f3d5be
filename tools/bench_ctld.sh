#!/bin/bash
# tools/bench_ctld.sh - what enforcing at the controller costs per job (`make bench`,
# tools/bench.sh section 5; docs/plugin.md "Enforcing at the controller").
#
#   1. the command contrib/job_submit.lua runs for a tagged job, as it runs it: /bin/sh
#      (io.popen), setpriv to the job's user when run as root, `timeout`, then
#      `fitgate check MODEL --offline --json --log-as=job_submit --policy=P --ft-*...`;
#      fork + exec + wait included (tools/bench_exec.c), N interleaved runs, median and
#      p99 of the wall time: a job that fits, one that does not (the planner looks for a
#      request that would), a hub id in no cache with a black-hole hub (the offline miss
#      OnError decides), the shell alone, and fitgate alone;
#   2. as root with Slurm installed: sbatch round trips on the loopback cluster
#      (tests/integration/slurm/cluster.sh) with JobSubmitPlugins=lua and, slurmctld
#      restarted, without it; held jobs as nobody, untagged and tagged, interleaved; and
#      with it, the same jobs posted over REST (slurmrestd on a unix socket, curl) when
#      slurmrestd is installed.
#
# Environment: BENCH_CTLD_RUNS (201: p99 needs a hundred or more), BENCH_SBATCH_RUNS (51),
# FITGATE_BUILD (build).  Prints a report on stdout.
set -u
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO" || exit 2
B=${FITGATE_BUILD:-$REPO/build}
RUNS=${BENCH_CTLD_RUNS:-201}
SRUNS=${BENCH_SBATCH_RUNS:-51}
HERE=$REPO/tests/integration/slurm
say() { echo "bench_ctld: $*"; }
for f in fitgate bench/bench_exec; do
    [ -x "$B/$f" ] || { say "$B/$f missing: make bench builds it"; exit 2; }
done

SROOT=$(mktemp -d /tmp/fitgate-bench-ctld.XXXXXX) || exit 2
chmod 755 "$SROOT"
BH_PID=""
cleanup() {
    [ -f "$SROOT/etc/slurm.conf" ] && cluster_down
    [ -n "$BH_PID" ] && kill "$BH_PID" 2>/dev/null && wait "$BH_PID" 2>/dev/null
    rm -rf "$SROOT"
}
# shellcheck source=tests/integration/slurm/cluster.sh
source "$HERE/cluster.sh"
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- what job_submit.lua runs ------------------------------------------------------------------
cp "$B/fitgate" "$B/bench/bench_exec" "$SROOT/" || exit 2
mkdir -p "$SROOT/models" "$SROOT/cache" "$SROOT/audit" "$SROOT/jobs"
for m in nvidia--NVIDIA-Nemotron-Nano-9B-v2 Qwen--Qwen3-0.6B; do
    mkdir -p "$SROOT/models/$m" && cp "tests/fixtures/models/$m/config.json" "$SROOT/models/$m/"
done
chmod 1777 "$SROOT/cache" "$SROOT/jobs"
chmod 1733 "$SROOT/audit"
cc -std=c11 -O2 -o "$SROOT/blackhole" "$HERE/blackhole.c" || { say "cannot build blackhole"; exit 2; }
"$SROOT/blackhole" serve "$SROOT/bh.port" 3600 &
BH_PID=$!
for _ in $(seq 50); do [ -s "$SROOT/bh.port" ] && break; sleep 0.1; done
printf '%s\n' "Action=reject" "OnError=allow" "HubEndpoint=http://127.0.0.1:$(cat "$SROOT/bh.port")" \
    "HubTimeout=5" "CacheDir=$SROOT/cache/%u" "LogFile=$SROOT/audit/%u.log" > "$SROOT/fitgate.conf"
chmod -R a+rX "$SROOT/models" "$SROOT/fitgate.conf" "$SROOT/fitgate"

AS=""
[ "$(id -u)" = 0 ] && AS="--run-as $(id -u nobody):$(id -g nobody)"
# lua_cmd NAME MODEL MODE GRES: what job_submit.lua hands io.popen (ctld()): the options
# NUL-separated in a file that is fitgate ctld's standard input, the line without them
lua_cmd() {
    printf '%s\0--ft-mode=%s\0--gres=%s\0--partition=gpu\0' "$2" "$3" "$4" > "$SROOT/$1.args"
    printf "exec timeout -k 1 2 %s ctld --timeout-ms 800 --on-error allow --policy %s %s < %s\n" \
        "$SROOT/fitgate" "$SROOT/fitgate.conf" "$AS" "$SROOT/$1.args"
}
lua_cmd fit "$SROOT/models/Qwen--Qwen3-0.6B" lora gpu:t4:1 > "$SROOT/fit.sh"
lua_cmd nofit "$SROOT/models/nvidia--NVIDIA-Nemotron-Nano-9B-v2" lora gpu:t4:1 > "$SROOT/nofit.sh"
lua_cmd cold acme/never-cached-9b lora gpu:t4:1 > "$SROOT/cold.sh"
echo 'echo "fitgate-answer 1 allow %00"' > "$SROOT/shell.sh"
chmod 644 "$SROOT"/*.sh
for v in fit nofit cold; do
    /bin/sh "$SROOT/$v.sh" > "$SROOT/$v.first" 2>&1
    say "$v: $(grep '^fitgate-answer' "$SROOT/$v.first")"
done

# quantiles LABEL...: median and p99 of wall_us in the samples, in ms
quantiles() {
    local l
    for l in "$@"; do
        awk -F'\t' -v l="$l" '$1 == l {print $3}' "$SROOT/samples.tsv" | sort -n |
            awk -v l="$l" '{a[NR] = $1}
                END {
                    if (!NR) exit
                    p = int(0.99 * NR + 0.999); if (p > NR) p = NR
                    printf "  %-22s median %7.2f ms   p99 %7.2f ms   max %7.2f ms   (%d runs)\n",
                           l, a[int((NR + 1) / 2)] / 1000, a[p] / 1000, a[NR] / 1000, NR
                }'
    done
}

echo
say "1. job_submit.lua's command per tagged job: $RUNS interleaved runs (fork + exec included)"
"$SROOT/bench_exec" -n "$RUNS" -w 5 -o "$SROOT/samples.tsv" \
    "lua-fit=/bin/sh $SROOT/fit.sh" "lua-nofit=/bin/sh $SROOT/nofit.sh" \
    "lua-cold-blackhole=/bin/sh $SROOT/cold.sh" "shell-alone=/bin/sh $SROOT/shell.sh" \
    "fitgate-alone=$SROOT/fitgate check $SROOT/models/Qwen--Qwen3-0.6B --offline --json --policy=$SROOT/fitgate.conf --ft-mode=lora --gres=gpu:t4:1" \
    > "$SROOT/table.txt" 2>&1
cat "$SROOT/table.txt"
quantiles lua-fit lua-nofit lua-cold-blackhole shell-alone fitgate-alone
echo "(lua-*: sh -c, timeout, fitgate ctld ${AS:+--run-as nobody }(a fork, the check as the user) as job_submit.lua runs it;"
echo " the audit line is written each run; the hub is a black hole: never connected to)"

# --- 2. sbatch round trips with and without JobSubmitPlugins=lua -----------------------------
echo
if [ "$(id -u)" != 0 ] || ! command -v slurmctld >/dev/null 2>&1 || [ ! -f "$B/spank_fitgate.so" ]
then
    say "2. SKIP: sbatch with vs without job_submit.lua needs root, Slurm and the plugin"
    exit 0
fi
cp "$B/spank_fitgate.so" "$B/fitgate_engine.so" "$SROOT/" || exit 2
mkdir -p "$SROOT/etc"
sed -e "s|^local FITGATE = .*|local FITGATE = \"$SROOT/fitgate\"|" \
    -e "s|^local POLICY = .*|local POLICY = \"$SROOT/fitgate.conf\"|" contrib/job_submit.lua \
    > "$SROOT/etc/job_submit.lua"
chmod -R a+rX "$SROOT"
PORTS=$("$SROOT/blackhole" freeport 2 | tr '\n' ' ')
NODE_GRES="gpu:t4:8,gpu:h100:8"
GRES_LINES="Name=gpu Type=t4 File=$SROOT/dev/nvidia[0-7]
Name=gpu Type=h100 File=$SROOT/dev/nvidia[8-15]"
PLUGSTACK="required $SROOT/spank_fitgate.so action=off"
EXTRA_CONF="JobSubmitPlugins=lua"
cluster_up || { tail -n 20 "$SROOT"/log/*.log; say "cluster did not come up"; exit 2; }
SB="sbatch --parsable --hold -J bench -o /dev/null --gres=gpu:t4:1 --wrap true"
TAG="--ft-model=$SROOT/models/Qwen--Qwen3-0.6B --ft-mode=lora"
sbatch_round() {   # sbatch_round SUFFIX: untagged and tagged, interleaved, as nobody
    (cd "$SROOT/jobs" && timeout 900 runuser -u nobody -- env PATH=/usr/bin:/bin \
        SLURM_CONF="$SLURM_CONF" "$SROOT/bench_exec" -n "$SRUNS" -w 3 -o "$SROOT/jobs/s$1.tsv" \
        "untagged$1=$SB" "tagged$1=$SB $TAG") > "$SROOT/sb$1.txt" 2>&1
    cat "$SROOT/jobs/s$1.tsv" >> "$SROOT/samples.tsv"
    timeout 10 scancel -n bench 2>/dev/null
}
say "2. sbatch round trip (held jobs, as nobody, $SRUNS rounds each)"
sbatch_round -lua
# the same over REST when slurmrestd is installed (tests/integration/slurm_rest.sh sets it up)
if command -v slurmrestd >/dev/null 2>&1 && command -v curl >/dev/null 2>&1; then
    mkdir -p "$SROOT/rest" && chown nobody "$SROOT/rest"
    runuser -u nobody -- timeout 900 slurmrestd -f "$SLURM_CONF" -a rest_auth/local \
        -s openapi/v0.0.38 "unix:$SROOT/rest/rest.sock" > "$SROOT/log/slurmrestd.log" 2>&1 &
    REST_PID=$!
    for _ in $(seq 100); do [ -S "$SROOT/rest/rest.sock" ] && break; sleep 0.1; done
    for v in untagged tagged; do
        env='"PATH": "/usr/bin:/bin"'
        [ $v = tagged ] && env="$env, \"_SLURM_SPANK_OPTION_fitgate_ft_model\": \"$SROOT/models/Qwen--Qwen3-0.6B\", \"_SLURM_SPANK_OPTION_fitgate_ft_mode\": \"lora\""
        printf '{"script": "#!/bin/sh\\ntrue\\n", "job": {"name": "bench", "hold": true, "gres": "gpu:t4:1", "current_working_directory": "/tmp", "standard_output": "/dev/null", "environment": {%s}}}\n' \
            "$env" > "$SROOT/rest-$v.json"
    done
    chmod 644 "$SROOT"/rest-*.json
    C="curl -sS -o /dev/null --unix-socket $SROOT/rest/rest.sock -H Content-Type:application/json --data-binary"
    U=http://localhost/slurm/v0.0.38/job/submit
    (cd "$SROOT/jobs" && timeout 900 runuser -u nobody -- "$SROOT/bench_exec" -n "$SRUNS" -w 3 \
        -o "$SROOT/jobs/rest.tsv" "rest-untagged-lua=$C @$SROOT/rest-untagged.json $U" \
        "rest-tagged-lua=$C @$SROOT/rest-tagged.json $U") > "$SROOT/rest.txt" 2>&1
    cat "$SROOT/jobs/rest.tsv" >> "$SROOT/samples.tsv"
    kill "$REST_PID" 2>/dev/null; wait "$REST_PID" 2>/dev/null
    timeout 10 scancel -n bench 2>/dev/null
fi
cluster_stop slurmctld
sed -i '/^JobSubmitPlugins=/d' "$SLURM_CONF"
timeout 10 slurmctld -f "$SLURM_CONF" || { say "slurmctld did not restart"; exit 2; }
for _ in $(seq 100); do timeout 5 scontrol ping 2>/dev/null | grep -q UP && break; sleep 0.2; done
sbatch_round -none
quantiles untagged-none tagged-none untagged-lua tagged-lua rest-untagged-lua rest-tagged-lua
awk -F'\t' '$1 ~ /^(tagged|untagged)-(lua|none)$/ {print $1, $3}' "$SROOT/samples.tsv" |
    sort -k1,1 -k2n | awk '{v[$1, ++n[$1]] = $2}
        END {
            m["untagged-none"] = v["untagged-none", int((n["untagged-none"] + 1) / 2)]
            m["untagged-lua"] = v["untagged-lua", int((n["untagged-lua"] + 1) / 2)]
            m["tagged-lua"] = v["tagged-lua", int((n["tagged-lua"] + 1) / 2)]
            printf "  job_submit.lua costs an untagged job %+.2f ms and a tagged one %+.2f ms" \
                   " (medians, against no JobSubmitPlugins)\n",
                   (m["untagged-lua"] - m["untagged-none"]) / 1000,
                   (m["tagged-lua"] - m["untagged-none"]) / 1000
        }'
echo "(the two slurmctld runs are not interleaved: the second follows a restart)"
