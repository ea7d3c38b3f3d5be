#!/usr/bin/env bash
# cli.sh - the fitgate command end to end: exit codes (0 fits / 1 does not /
# 2 error) and the one clear error bad input gets, naming the file and key.
set -u
cd "$(dirname "$0")/../.."
FG=./build/fitgate
M=tests/fixtures/models
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

# expect RC PATTERN -- command...: exit status RC and PATTERN in stdout+stderr
expect() {
    local rc=$1 pat=$2; shift 3
    local out got
    out=$(timeout 60 "$@" 2>&1); got=$?
    if [ "$got" -eq "$rc" ] && grep -qE -- "$pat" <<<"$out"; then
        pass=$((pass + 1)); echo "ok   $*"
    else
        fail=$((fail + 1)); echo "FAIL $* (rc $got, want $rc; pattern '$pat')"; echo "$out" | head -5
    fi
}

# the happy paths
# every framework row says where and when it was read; the stacks' own losses and recipes
expect 0 'every row: release, file, date' -- python3 -c "import json,subprocess; a=json.loads(subprocess.check_output(['$FG','frameworks','--json'])); assert a and all(r['version'] and r['repo'] and r['file'] and r['commit'] and 'date' in r and (r['date'] or 'stored file' in r['source']) for r in a); print('every row: release, file, date')"
expect 0 'trl@1.9 .*read: +huggingface/trl trl/trainer/sft_trainer.py at 35def3ee0, 2026-07-21' -- sh -c "$FG frameworks | tr '\n' ' '"
expect 0 'logits .*TRL chunked_nll: 4096 tokens' -- $FG plan $M/meta-llama--Llama-3.1-8B --framework trl --mode lora --seq-len 4096 --precision bf16
expect 0 'job: full, bf16, adamw-fused.*gradients +4.02 GB.*adamw-fused state' -- sh -c "$FG check $M/meta-llama--Llama-3.1-8B --config tests/fixtures/configs/torchtune/8B_full.yaml --gpus=h100:4 --offline 2>&1 | tr '\n' ' '"
expect 0 '8,888,227,328' -- $FG plan $M/nvidia--NVIDIA-Nemotron-Nano-9B-v2
expect 0 '"total":[[:space:]]+8888227328' -- $FG plan $M/nvidia--NVIDIA-Nemotron-Nano-9B-v2/config.json --json
expect 0 'TP=1 PP=2 EP=1 DP=1 .*layers 0-2[78] \| 2[89]-55' -- $FG plan $M/nvidia--NVIDIA-Nemotron-Nano-9B-v2 --gpu h200
expect 0 'fits with 1 x' -- $FG check $M/Qwen--Qwen3-0.6B --mode lora --gpu a100_40g --gpus 1
expect 1 'does not fit with 1 x T4' -- $FG check $M/nvidia--NVIDIA-Nemotron-Nano-9B-v2 --mode lora --gpu t4 --gpus 1
expect 0 'fits with 2 x' -- $FG check $M/nvidia--NVIDIA-Nemotron-Nano-9B-v2 --gpu h200 --gpus 2
# ZeRO over the GPUs asked for, as the plugin assesses it: per GPU, one card holds it
expect 0 'sharded over DP.*fits with 8 x' -- sh -c "$FG check $M/meta-llama--Llama-3.1-8B --mode full --zero 3 --gpu h100_sxm --gpus 8 | tr '\n' ' '"
expect 0 'read as a generic decoder' -- sh -c "printf '%s' '{\"model_type\":\"brandnew\",\"hidden_size\":64,\"num_hidden_layers\":2,\"num_attention_heads\":4,\"vocab_size\":100}' > $tmp/g.json && $FG plan $tmp/g.json"
# how sure each count is, in the text header and in --json
# the policy's Headroom= is the one every part of the output uses (verdict and card table)
expect 0 '1.30x headroom.*1.30x headroom, 1392 MiB' -- sh -c "printf 'Headroom=1.3\\n' > $tmp/h.conf && $FG plan $M/Qwen--Qwen3-0.6B --mode lora --gpu h100 --policy $tmp/h.conf | tr '\\n' ' '"
expect 0 'read as llama-style decoder; count exact' -- $FG plan $M/meta-llama--Llama-3.2-1B-Instruct
expect 0 '"certainty":[[:space:]]+"exact"' -- $FG plan $M/meta-llama--Llama-3.2-1B-Instruct --json
expect 0 '"certainty":[[:space:]]+"unsure",[[:space:]]+"unsure_key":[[:space:]]+"hidden_act"' -- sh -c "$FG plan $tmp/g.json --json | tr '\n' ' '"
expect 0 'count generic\).*assumed: tie_word_embeddings absent' -- sh -c "printf '%s' '{\"model_type\":\"brandnew\",\"hidden_size\":64,\"num_hidden_layers\":2,\"num_attention_heads\":4,\"vocab_size\":100,\"hidden_act\":\"silu\"}' > $tmp/s.json && $FG plan $tmp/s.json | tr '\n' ' '"
expect 0 '"assumptions":[[:space:]]+\[[^]]*"tie_word_embeddings absent' -- sh -c "$FG plan $tmp/s.json --json | tr '\n' ' '"

# bad input: one clear error, exit 2
printf '{"model_type": "llama", "hidden_size": 4096,' > "$tmp/trunc.json"
expect 2 'trunc.json: malformed JSON near line 1' -- $FG plan "$tmp/trunc.json"
printf '{"model_type": "llama", "hidden_size": "4096"}' > "$tmp/type.json"
expect 2 "type.json: key 'hidden_size' must be a number, got a string" -- $FG plan "$tmp/type.json"
printf '{"model_type": "llama", "num_hidden_layers": -3}' > "$tmp/neg.json"
expect 2 "neg.json: key 'num_hidden_layers' is -3, outside" -- $FG plan "$tmp/neg.json"
printf '{"model_type": "llama", "vocab_size": 1e15}' > "$tmp/huge.json"
expect 2 "huge.json: key 'vocab_size' is 1000000000000000, outside" -- $FG plan "$tmp/huge.json"
printf '{"model_type": "mystery", "foo": 1}' > "$tmp/unknown.json"
expect 2 "model_type 'mystery' is not supported.*hidden_size" -- $FG plan "$tmp/unknown.json"
mkdir -p "$tmp/empty"
expect 2 'empty: directory has no config.json' -- $FG plan "$tmp/empty"
expect 2 'no such file' -- $FG plan "$tmp/nope/config.json"
expect 2 "mode 'pretrain' is not one of full\\|lora\\|qlora\\|serve" -- $FG plan $M/Qwen--Qwen3-0.6B --mode pretrain
expect 2 "--batch=0: expected a whole number" -- $FG plan $M/Qwen--Qwen3-0.6B --batch 0
expect 2 "--seq-len=12x: expected a whole number" -- $FG plan $M/Qwen--Qwen3-0.6B --seq-len 12x
expect 2 "unknown GPU 'h900'" -- $FG plan $M/Qwen--Qwen3-0.6B --gpu h900
expect 1 'asks for no GPU' -- $FG check $M/Qwen--Qwen3-0.6B --gpu h100
expect 2 "unknown option '--frobnicate'" -- $FG plan $M/Qwen--Qwen3-0.6B --frobnicate
expect 2 "--batch=1\\\\x1b\\[31m: expected a whole number" -- $FG plan $M/Qwen--Qwen3-0.6B --batch $'1\x1b[31m'
expect 2 "unknown GPU 'x\\\\x1b\\[31my'" -- $FG plan $M/Qwen--Qwen3-0.6B --gpu $'x\x1b[31my'
expect 2 'match no linear layer' -- $FG plan $M/Qwen--Qwen3-0.6B --mode lora --lora-targets nothing_here
# learn's numbers go through the same parsers as plan's: NaN is in no range
L=tests/fixtures/learn
expect 2 "--far-below 'nan' is not a number in 0\.01\.\.1" -- $FG learn $L/audit.log --far-below nan
expect 2 "--min-jobs '2\.5' is not a whole number in 1\.\.1000000" -- $FG learn $L/audit.log --min-jobs 2.5
expect 2 "--headroom 'nan' is not a number in 1\.\.4" -- $FG plan $M/Qwen--Qwen3-0.6B --headroom nan

# a calibration row skipped says why: no framework, no mode, or too few jobs
sed -e 's/"framework":"hf"/"framework":""/' -e 's/"mode":"serve"/"mode":""/' $L/audit.log > "$tmp/nofw.log"
CAL="$tmp/nofw.log --sacct $L/sacct.txt --write-calibration $tmp/cal.conf"
expect 0 '^fitgate: - lora: the decisions name no framework \(--ft-framework\): no row$' -- $FG learn $CAL --min-jobs 1
expect 0 '^fitgate: vllm -: the decisions record no mode \(jobs fitgate could not assess\): no row$' -- $FG learn $CAL --min-jobs 1
expect 0 '^fitgate: torchtune qlora: 3 completed jobs, fewer than --min-jobs 5: no row$' -- $FG learn $CAL --min-jobs 5
# preference and RL trainers: the job line says so, the engine's share and the training side by
# side, a server split found, options that do not go with the mode refused by name
Q=$M/Qwen--Qwen3-8B
expect 0 'trainer: dpo \(TRL DPOTrainer\), reference adapter-disabled, 2 sequences' -- $FG plan $Q --mode dpo --ft-adapter lora
expect 0 'reference model: a frozen copy' -- $FG plan $Q --mode dpo --gpu h200
expect 0 'vLLM colocated takes 0.30 x H100.*together.*fits with 1 x' -- sh -c "$FG check $Q --mode grpo --ft-adapter lora --num-generations 8 --max-completion-length 2048 --vllm-mode colocate --vllm-gpu-util 0.3 --gres=gpu:h100:1 | tr '\n' ' '"
expect 1 'vLLM engine of this grpo job does not fit' -- $FG check $Q --mode grpo --adapter lora --vllm-mode colocate --vllm-gpu-util 0.1 --gres=gpu:h100:1
expect 0 'split: --ft-vllm-mode=server --ft-gen-gpus=1' -- $FG check $Q --mode grpo --adapter lora --vllm-mode server --gres=gpu:h100:8
expect 1 'rejected: --num-generations does not go with --mode dpo' -- $FG check $Q --mode dpo --num-generations 4 --gres=gpu:h100:1
echo "cli.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
