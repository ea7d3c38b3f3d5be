#!/bin/bash
# tools/gen_learn.sh JOBS DIR - a site's month for `fitgate learn` at scale (make bench):
# DIR/audit.log (one sbatch decision and one node "started" line per job, the byte form of
# policies/audit.c, as tests/fixtures/learn/audit.log) and DIR/sacct.txt (sacct -p: the
# job's row, .batch with its gres/gpumem peak and .extern: three rows per job, the form of
# tests/fixtures/sacct/PROVENANCE).  Jobs spread over 40 users, 4 partitions, 6 models of
# 4 architectures, 3 frameworks and 3 modes; the peak is 0.8-1.3 x the estimate.
# Deterministic (awk's srand(7)).
set -eu
n=${1:?JOBS}; dir=${2:?DIR}
mkdir -p "$dir"
awk -v n="$n" -v dir="$dir" 'BEGIN {
    srand(7)
    split("Qwen/Qwen3-8B qwen3 Qwen/Qwen3-4B qwen3 meta-llama/Llama-3.1-8B llama " \
          "mistralai/Mistral-7B-v0.3 mistral google/gemma-2-9b gemma2 meta-llama/Llama-3.2-1B llama", m, " ")
    split("hf lightning deepspeed", fw, " "); split("lora full qlora", md, " ")
    split("gpu debug long a100", pt, " ")
    a = dir "/audit.log"; s = dir "/sacct.txt"
    print "JobIDRaw|JobID|State|ExitCode|AllocTRES|NTasks|TRESUsageInMax|" > s
    t0 = 1764583200
    for (i = 0; i < n; i++) {
        id = 100000 + i; k = int(rand() * 6); user = sprintf("u%02d", i % 40)
        gpus = 2 ^ int(rand() * 4); est = int((8 + rand() * 60) * 1073741824)
        t = t0 + int(i * 5); sid = sprintf("login%d:%d:%d.%09d:0", i % 3, 20000 + i % 30000, t, i)
        f = fw[1 + int(rand() * 3)]; mo = md[1 + int(rand() * 3)]; p = pt[1 + i % 4]
        v = rand() < 0.9 ? "allow" : "warn"
        common = sprintf("\"partition\":\"%s\",\"model\":\"%s\"", p, m[2 * k + 1])
        req = sprintf("--gres=gpu:h100:%d", gpus)
        printf "{\"v\":1,\"time\":%d,\"time_utc\":\"2025-12-01T10:00:00Z\",\"submit_id\":\"%s\",\"job_id\":0,\"where\":\"sbatch\",\"user\":\"%s\",\"uid\":%d,%s,\"model_type\":\"%s\",\"revision\":\"main\",\"request\":\"%s\",\"request_after\":\"%s\",\"gpus_asked\":%d,\"gpus_after\":%d,\"nodes\":1,\"nodes_after\":1,\"time_limit_min\":600,\"card\":\"NVIDIA H100 SXM5 80GB\",\"framework\":\"%s\",\"mode\":\"%s\",\"layout\":\"TP=1 PP=1 DP=%d\",\"estimate_bytes\":%d,\"per_gpu_bytes\":0,\"usable_bytes\":79463129088,\"verdict\":\"%s\",\"message\":\"\",\"override_reason\":\"\",\"version\":\"0.1.0\"}\n", t, sid, user, 1000 + i % 40, common, m[2 * k + 2], req, req, gpus, gpus, f, mo, gpus, est, v > a
        printf "{\"v\":1,\"time\":%d,\"time_utc\":\"2025-12-01T10:00:00Z\",\"submit_id\":\"%s\",\"job_id\":%d,\"where\":\"stepd\",\"user\":\"%s\",\"uid\":%d,%s,\"revision\":\"main\",\"request\":\"%s\",\"request_after\":\"%s\",\"gpus_asked\":%d,\"gpus_after\":%d,\"nodes\":1,\"nodes_after\":1,\"time_limit_min\":600,\"card\":\"h100\",\"framework\":\"\",\"mode\":\"\",\"layout\":\"\",\"estimate_bytes\":%d,\"per_gpu_bytes\":0,\"usable_bytes\":0,\"verdict\":\"allow\",\"message\":\"fitgate: started\",\"override_reason\":\"\",\"version\":\"0.1.0\"}\n", t + 60, sid, id, user, 1000 + i % 40, common, req, req, gpus, gpus, est, v > a
        st = rand() < 0.93 ? "COMPLETED" : "FAILED"; ex = st == "COMPLETED" ? "0:0" : "1:0"
        peak = int((est + 536870912) * (0.8 + rand() * 0.5) / 1048576)
        tres = sprintf("billing=8,cpu=8,gres/gpu:h100=%d,gres/gpu=%d,mem=200G,node=1", gpus, gpus)
        printf "%d|%d|%s|%s|%s|||\n", id, id, st, ex, tres > s
        printf "%d.batch|%d.batch|%s|%s|%s|1|cpu=00:40:00,energy=0,fs/disk=1000,gres/gpumem=%dM,gres/gpuutil=90,mem=40000000K,pages=0,vmem=0|\n", id, id, st, ex, tres, peak * gpus > s
        printf "%d.extern|%d.extern|COMPLETED|0:0|%s|1|cpu=00:00:00,energy=0,fs/disk=0,gres/gpumem=0,gres/gpuutil=0,mem=0,pages=0,vmem=0|\n", id, id, tres > s
    }
}'
