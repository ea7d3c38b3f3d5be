#!/usr/bin/env bash
# config.sh - the job read from its framework's own config (--config / --ft-config):
# every format's real example file (tests/fixtures/configs, PROVENANCE.md) judged as the
# same job given as options, the defaults each framework applies, conflicts named, keys
# fitgate does not model listed (refused under OnUnknown=reject), and hostile files
# refused fast as the job's own error (exit 1, a rejection whatever OnError= says, in under a
# second, never a hang).
set -u
# shellcheck source=tests/integration/lib/config_common.sh
source "$(dirname "$0")/lib/config_common.sh"

# expect RC PATTERN -- command...: exit status RC and PATTERN in stdout+stderr
expect() {
    local rc=$1 pat=$2; shift 3
    local out got
    out=$(timeout 60 "$@" 2>&1); got=$?
    if [ "$got" -eq "$rc" ] && grep -qE -- "$pat" <<<"$out"; then
        ok "$*"
    else
        bad "$* (rc $got, want $rc; pattern '$pat')"; echo "$out" | head -8
    fi
}

# same NAME "CONFIG ARGS" "OPTION ARGS": the two give one verdict and one estimate (the
# decision and the memory of --json; the job but for the config's own record)
same() {
    local name=$1 a=$2 b=$3
    # shellcheck disable=SC2086
    timeout 60 $FG check --json $a > "$tmp/a.json" 2>/dev/null
    local ra=$?
    # shellcheck disable=SC2086
    timeout 60 $FG check --json $b > "$tmp/b.json" 2>/dev/null
    local rb=$?
    if [ "$ra" -ne "$rb" ]; then
        bad "$name: exit $ra from the config, $rb from the options"; return
    fi
    if python3 tests/integration/lib/same_job.py "$tmp/a.json" "$tmp/b.json"
    then
        ok "$name: the config and the options give one verdict and estimate (exit $ra)"
    else
        bad "$name: the config and the options differ"
    fi
}

L8=$M/meta-llama--Llama-3.1-8B
A40="--gres=gpu:a100_40g:1"
H8="--gres=gpu:h100:8"

# --- each format's own example, against the same job as options --------------------------
same axolotl "--config $C/axolotl/qlora.yml $L8 $A40" \
    "$L8 $A40 --mode qlora --seq-len 4096 --lora-rank 32 --lora-targets all-linear --batch 2 \
     --optimizer adamw --precision bf16 --grad-ckpt --attention sdpa --framework axolotl"
same trl "--config $C/trl/example_config.yaml $M/Qwen--Qwen2-0.5B-Instruct $A40" \
    "$M/Qwen--Qwen2-0.5B-Instruct $A40 --mode full --grad-ckpt --seq-len 1024 --batch 8 \
     --framework trl"
mkdir -p "$tmp/lf/examples/deepspeed"
cp "$C/llama-factory/qwen3_lora_sft_ds3.yaml" "$tmp/lf/"
cp "$C/deepspeed/ds_z3_config.json" "$tmp/lf/examples/deepspeed/"
same llama-factory "--base-dir $tmp/lf --config qwen3_lora_sft_ds3.yaml $M/Qwen--Qwen3-8B $A40" \
    "$M/Qwen--Qwen3-8B $A40 --mode lora --lora-rank 8 --lora-targets all-linear --seq-len 2048 \
     --batch 1 --precision bf16-mixed --zero 3 --grad-ckpt --ds-bucket auto \
     --framework llama-factory"
same torchtune "--config $C/torchtune/8B_lora_single_device.yaml $L8 $A40" \
    "$L8 $A40 --mode lora --lora-rank 8 --batch 2 --optimizer adamw-fused --loss linear-ce \
     --lora-targets q_proj,v_proj,o_proj,gate_proj,up_proj,down_proj --precision bf16 \
     --grad-ckpt --framework torchtune"
same torchtune-qlora "--config $C/torchtune/8B_qlora_single_device.yaml $L8 $A40" \
    "$L8 $A40 --mode qlora --lora-rank 8 --batch 2 --optimizer adamw-fused --loss linear-ce \
     --lora-targets q_proj,v_proj,o_proj,gate_proj,up_proj,down_proj --precision bf16 \
     --grad-ckpt --framework torchtune"
same deepspeed "--config $C/deepspeed/ds_z3_offload_config.json $M/Qwen--Qwen3-8B $H8" \
    "$M/Qwen--Qwen3-8B $H8 --zero 3 --offload params --ds-bucket auto --framework deepspeed"
same accelerate-fsdp2 "--config $C/accelerate/fsdp2.yaml $M/Qwen--Qwen3-8B $H8" \
    "$M/Qwen--Qwen3-8B $H8 --zero 3 --precision bf16-mixed --dp 8 --framework accelerate"
same accelerate-zero3 "--config $C/accelerate/deepspeed_zero3.yaml $M/Qwen--Qwen3-8B $H8" \
    "$M/Qwen--Qwen3-8B $H8 --zero 3 --precision bf16-mixed --dp 8 --ds-bucket 500000000 \
     --framework accelerate"
same vllm "--config vllm:$C/vllm/test_config_with_model.yaml $M/Qwen--Qwen3-8B $H8" \
    "$M/Qwen--Qwen3-8B $H8 --mode serve --tp 2 --framework vllm"
same sglang "--config $C/sglang/config.yaml $M/Qwen--Qwen3-32B $H8" \
    "$M/Qwen--Qwen3-32B $H8 --mode serve --tp 4 --gpu-util 0.8 --framework sglang"
# two files for one job: a trainer's and the accelerate config it runs under
same trl+accelerate "--config $C/trl/example_config.yaml,$C/accelerate/fsdp2.yaml \
    $M/Qwen--Qwen2-0.5B-Instruct $H8" \
    "$M/Qwen--Qwen2-0.5B-Instruct $H8 --grad-ckpt --seq-len 1024 --batch 8 --zero 3 \
     --precision bf16-mixed --dp 8 --framework trl"

# --- the job line names every key used ----------------------------------------------------
expect 0 'qlora.yml:46 gradient_checkpointing=true -> --grad-ckpt=yes' -- \
    $FG check --config $C/axolotl/qlora.yml $L8 $A40
expect 0 '"from":[[:space:]]+"[^"]*qlora.yml:37 micro_batch_size=2",[[:space:]]+"set":[[:space:]]+"--batch=2"' -- \
    bash -o pipefail -c "$FG check --json --config $C/axolotl/qlora.yml $L8 $A40 | tr '\n' ' '"
expect 0 'example_config.yaml: gradient_checkpointing \(SFTConfig default\) -> --grad-ckpt=yes' -- \
    $FG check --config $C/trl/example_config.yaml $M/Qwen--Qwen2-0.5B-Instruct $A40
expect 0 'ds_z3_config.json:19 zero_optimization.stage=3 -> --zero=3' -- \
    $FG check --base-dir "$tmp/lf" --config qwen3_lora_sft_ds3.yaml $M/Qwen--Qwen3-8B $A40
# the format named instead of told by its keys
expect 0 'read as axolotl' -- $FG check --config "axolotl:$C/axolotl/qlora.yml" $L8 $A40

# --- checkpointing as the framework decides it --------------------------------------------
# axolotl QLoRA with gradient_checkpointing: true fits one A100 40 GB ...
expect 0 'gradient checkpointing.*fits with 1 x A100 40 GB' -- \
    bash -o pipefail -c "$FG check --config $C/axolotl/qlora.yml $L8 $A40 | tr '\n' ' '"
# ... and without the key axolotl does not checkpoint (its default False reaches
# prepare_model_for_kbit_training): it does not fit
grep -v '^gradient_checkpointing:' "$C/axolotl/qlora.yml" > "$tmp/qlora-nockpt.yml"
expect 1 'gradient_checkpointing \(axolotl default\) -> --grad-ckpt=no.*does not fit with 1 x A100 40 GB' -- \
    bash -o pipefail -c "$FG check --config $tmp/qlora-nockpt.yml $L8 $A40 | tr '\n' ' '"
# TRL's SFTConfig checkpoints by default: the example fits; turned off it still fits, TRL 1.9's
# chunked NLL keeping no logits (21 GB); with the plain loss as well (loss_type: nll, TRL
# before 1.7) the full fp32 logits make it borderline (the conservative peak is above the
# card: measure one step first)
expect 0 'job: full, bf16-mixed, adamw[a-z-]*, gradient checkpointing.*fits with 1 x A100 40 GB \(decision: allow\)' -- \
    bash -o pipefail -c "$FG check --config $C/trl/example_config.yaml $M/Qwen--Qwen2-0.5B-Instruct $A40 | tr '\n' ' '"
{ cat "$C/trl/example_config.yaml"; echo "gradient_checkpointing: false"; } > "$tmp/trl-off.yaml"
expect 0 'gradient_checkpointing=false -> --grad-ckpt=no.*TRL chunked_nll.*fits with 1 x A100 40 GB \(decision: allow\)' -- \
    bash -o pipefail -c "$FG check --config $tmp/trl-off.yaml $M/Qwen--Qwen2-0.5B-Instruct $A40 | tr '\n' ' '"
{ cat "$tmp/trl-off.yaml"; echo "loss_type: nll"; } > "$tmp/trl-off-nll.yaml"
expect 0 'loss_type=nll -> --loss=plain.*is borderline.*\(decision: warn\)' -- \
    bash -o pipefail -c "$FG check --config $tmp/trl-off-nll.yaml $M/Qwen--Qwen2-0.5B-Instruct $A40 | tr '\n' ' '"

# --- one job, one truth ----------------------------------------------------------------
expect 1 '--grad-ckpt=no on the command line and .*qlora.yml:46 gradient_checkpointing=true say different things' -- \
    $FG check --config $C/axolotl/qlora.yml $L8 $A40 --grad-ckpt=no
expect 0 'qlora.yml:46 gradient_checkpointing=true -> agrees with the command line' -- \
    $FG check --config $C/axolotl/qlora.yml $L8 $A40 --grad-ckpt
printf 'gradient_accumulation_steps: 2\nzero_optimization:\n  stage: 2\n' > "$tmp/ds2.json.yaml"
expect 1 'ds2.json.yaml:3 zero_optimization.stage=2 and .*ds_z3_config.json:19 zero_optimization.stage=3 say different things \(--zero\)' -- \
    $FG check --base-dir "$tmp/lf" --config "qwen3_lora_sft_ds3.yaml,deepspeed:$tmp/ds2.json.yaml" \
    $M/Qwen--Qwen3-8B $A40
# the model from the config when none is given; torchtune's builder needs its checkpoint
expect 1 "torchtune builds this model in code.*checkpoint_dir \(/tmp/Meta-Llama-3.1-8B-Instruct/\) has none here" -- \
    $FG check --config $C/torchtune/8B_lora_single_device.yaml $A40
sed "s#/tmp/Meta-Llama-3.1-8B-Instruct/#$L8#" "$C/torchtune/8B_lora_single_device.yaml" > "$tmp/tt.yaml"
expect 0 'checkpoint_dir=[^ ]*Llama-3.1-8B -> --model=.*fits with 1 x A100 40 GB' -- \
    bash -o pipefail -c "$FG check --config $tmp/tt.yaml $A40 | tr '\n' ' '"
# torchtune's ${...} are OmegaConf's (the same file's keys, the environment): never expanded,
# the key named as the job's own error (an expansion in slurmctld would be its environment)
sed "s#checkpoint_dir: /tmp/Meta-Llama-3.1-8B-Instruct/#checkpoint_dir: \${oc.env:FG_TEST_CKPT}#" \
    "$C/torchtune/8B_lora_single_device.yaml" > "$tmp/tt-env.yaml"
expect 1 'rejected: .*tt-env.yaml:[0-9]+ checkpointer.checkpoint_dir: an interpolation' -- \
    env FG_TEST_CKPT="$L8" $FG check --config "$tmp/tt-env.yaml" $A40
printf 'base_model: ${MODEL}\nadapter: lora\n' > "$tmp/interp.yml"
expect 1 'rejected: .*interp.yml:1 base_model: an interpolation' -- \
    env MODEL="$L8" $FG check --config "$tmp/interp.yml" $A40
# a secret in the environment is never echoed: not in the answer, not in the trail
printf 'micro_batch_size: ${oc.env:FG_SECRET}\nbase_model: %s\nadapter: lora\n' "$L8" > "$tmp/secret.yml"
printf 'LogFile=%s\n' "$tmp/secret.log" > "$tmp/secret.conf"
out=$(env FG_SECRET=hf_abc123secret $FG check --config "axolotl:$tmp/secret.yml" $A40 \
    --policy "$tmp/secret.conf" --log-as=cli 2>&1); rc=$?
if [ "$rc" = 1 ] && grep -q 'micro_batch_size: an interpolation' <<<"$out" &&
    ! grep -q hf_abc123secret <<<"$out" && ! grep -q hf_abc123secret "$tmp/secret.log" &&
    grep -q '"message":"fitgate: rejected: .*micro_batch_size: an interpolation' "$tmp/secret.log"; then
    ok "\${oc.env:FG_SECRET}: rejected naming micro_batch_size; the secret in no output or audit line"
else
    bad "secret: rc $rc: $out"
fi

# --- keys that change memory and are not modelled: listed, refused under OnUnknown=reject ---
expect 0 'not modelled: .*tokenizer.max_seq_len=null: no truncation' -- \
    $FG check --config $C/torchtune/8B_lora_single_device.yaml $L8 $A40
printf 'OnUnknown=reject\n' > "$tmp/reject.conf"
expect 1 'rejected: .*tokenizer.max_seq_len=null.*OnUnknown=reject' -- \
    $FG check --config $C/torchtune/8B_lora_single_device.yaml $L8 $A40 --policy "$tmp/reject.conf"

# --- bad and hostile files: one clear error, the job's (exit 1), fast ------------------------
# fast NAME RC PATTERN FILE: exit RC naming PATTERN within a second, with the margin a loaded
# host needs (2 x 1 s + 3 s, as lib/common.sh deadline_ok; the command's timeout is 10 s)
fast() {
    local name=$1 rc=$2 pat=$3 file=$4 t0 t1 out got
    t0=$(date +%s%N)
    out=$(timeout 10 $FG check --config "$file" $L8 $A40 2>&1); got=$?
    t1=$(date +%s%N)
    local ms=$(((t1 - t0) / 1000000))
    if [ "$got" -eq "$rc" ] && grep -qE -- "$pat" <<<"$out" && [ "$ms" -le 5000 ]; then
        ok "$name: exit $got in $ms ms"
    else
        bad "$name: exit $got in $ms ms (want $rc within 1 s + margin, '$pat')"; echo "$out" | head -3
    fi
}
head -c 100000000 /dev/zero | tr '\0' 'a' > "$tmp/big.yaml"
fast "a 100 MB YAML" 1 'big.yaml: 100000000 bytes, more than a framework config' "$tmp/big.yaml"
python3 - "$tmp/laughs.yaml" <<'EOF'
import sys
with open(sys.argv[1], "w") as f:
    f.write("base_model: x\na0: &a0 {k: lol}\n")
    for i in range(1, 10):
        prev = "*a%d" % (i - 1)
        f.write("a%d: &a%d {%s}\n" % (i, i, ", ".join("k%d: %s" % (j, prev) for j in range(10))))
EOF
fast "a billion laughs" 1 'expands past 100000 nodes|more than 4096 keys' "$tmp/laughs.yaml"
python3 -c "print('a: ' + '[' * 10000 + ']' * 10000)" > "$tmp/deep.yaml"
fast "10,000-deep YAML" 1 'nested deeper than 64 levels' "$tmp/deep.yaml"
python3 -c "print('{\"a\": ' + '[' * 10000 + ']' * 10000 + '}')" > "$tmp/deep.json"
fast "10,000-deep JSON" 1 'deep.json:1: not JSON \(or nested deeper' "$tmp/deep.json"
python3 -c "print('adapter: ' + 'x' * 70000)" > "$tmp/scalar.yaml"
fast "a 70 KB scalar" 1 'scalar.yaml:1: a value of 70000 bytes' "$tmp/scalar.yaml"
mkfifo "$tmp/fifo.yaml"
fast "a FIFO" 1 'fifo.yaml: not a regular file' "$tmp/fifo.yaml"
fast "a missing file" 1 'config .*nope.yaml: No such file' "$tmp/nope.yaml"
fast "a directory" 1 'not a regular file' "$tmp"
printf 'base_model: [unclosed\n' > "$tmp/broken.yaml"
fast "broken YAML" 1 'broken.yaml:2: not YAML' "$tmp/broken.yaml"
printf -- '- just\n- a list\n' > "$tmp/list.yaml"
fast "a YAML list" 1 'not a mapping of keys' "$tmp/list.yaml"
printf 'learning_rate: 1e-4\nseed: 3\n' > "$tmp/other.yaml"
fast "no framework's keys" 2 'is not a job config \(not a training job.*name the format' \
    "$tmp/other.yaml"
printf 'alias: *nowhere\n' > "$tmp/alias.yaml"
fast "an alias to nothing" 1 'alias.yaml:1: alias \*nowhere names no anchor' "$tmp/alias.yaml"
printf 'base_model: m\nmicro_batch_size: 0\n' > "$tmp/zero.yml"
fast "a bad value" 1 'zero.yml:2 micro_batch_size=0: --batch=0: expected a whole number' "$tmp/zero.yml"
# two documents: PyYAML's safe_load refuses them; fitgate does not pick the first in silence
printf 'base_model: m\nmicro_batch_size: 1\n---\nmicro_batch_size: 64\n' > "$tmp/two.yml"
fast "two YAML documents" 1 'two.yml:3: a second YAML document' "$tmp/two.yml"

# --- the launchers' own files, judged as their users run them ------------------------------
# (tests/test_jobfile.c pins the options each fixture reads to; here the verdicts)
H1="--gres=gpu:h100:1" H2="--gres=gpu:h100:2" H4="--gres=gpu:h100:4"
L2=$M/meta-llama--Llama-2-7b-hf
# DeepSpeedExamples training/bf16_master_weight on 4 x H100, a 6.9B model at 512 tokens with
# checkpointing: its README measured 31.4 GB peak with fp32 master weights and 18.9 GB peak
# (16.2 GB allocated) with bf16 master weights, gradients and Adam states; both fit, at those
# sizes (the estimate's 5e7 reduce bucket is the file's)
expect 0 'Memory at micro-batch 4 x 512 tokens: 31\.[0-9] GB.*fits with 4 x H100' -- \
    bash -o pipefail -c "$FG check --config $C/deepspeed/bf16_baseline.json $L2 $H4 \
        --seq-len 512 --grad-ckpt | tr '\n' ' '"
expect 0 'bf16 master copy.*Memory at micro-batch 4 x 512 tokens: 1[6-9]\.[0-9] GB.*bf16 master weights.*fits' -- \
    bash -o pipefail -c "$FG check --config $C/deepspeed/bf16_full.json $L2 $H4 \
        --seq-len 512 --grad-ckpt | tr '\n' ' '"
# axolotl examples/llama-3/fft-8b.yaml names no DeepSpeed and no FSDP: axolotl runs it DDP on
# the 8 GPUs, a whole 8B full fine-tune (bf16 weights, 8-bit Adam) per GPU at 8192 tokens:
# 94 GB with headroom, over an H100; judged on that layout (never admitted on a ZeRO-3 split
# it does not run), rejected with its remedies as edits of the file: the fused loss, or
# axolotl's own ZeRO-3 config
expect 1 'layout TP=1 PP=1 EP=1 DP=8 \(declared\).*names no DeepSpeed, FSDP.*-> --zero=0.*rejected: full fine-tune.*remedy [0-9] in the file: [^ ]*fft-8b.yaml:47 add deepspeed: deepspeed_configs/zero3_bf16.json' -- \
    bash -c "$FG check --config $C/axolotl/fft-8b.yaml $L8 $H8 | tr '\n' ' '; exit \${PIPESTATUS[0]}"
if $FG check --config "$C/axolotl/fft-8b.yaml" $L8 $H8 2>&1 | grep -Eq 'hold it|fits with'; then
    bad "fft-8b.yaml: admitted on a layout the file does not declare"
else
    ok "fft-8b.yaml: not admitted on another layout"
fi
# on 8 x A100 40 GB it does not fit; ZeRO-3 would, as an edit of the file (axolotl ships
# deepspeed_configs/zero3_bf16.json)
expect 1 'rejected.*remedy [0-9] in the file: [^ ]*fft-8b.yaml:47 add deepspeed: deepspeed_configs/zero3_bf16.json' -- \
    bash -c "$FG check --config $C/axolotl/fft-8b.yaml $L8 --gres=gpu:a100_40g:8 | tr '\n' ' '; \
        exit \${PIPESTATUS[0]}"
# accelerate's multi_gpu template is DDP over 2 processes: a 3B full fine-tune does not fit
# 2 x H100; FSDP does, and is the file's own key: distributed_type, quoted as it was
expect 1 'remedy 1 in the file: [^ ]*template_multi_gpu.yaml:[0-9]+ distributed_type: MULTI_GPU -> FSDP' -- \
    bash -c "$FG check --config $C/accelerate/template_multi_gpu.yaml $M/meta-llama--Llama-3.2-3B $H2 \
        | tr '\n' ' '; exit \${PIPESTATUS[0]}"
# accelerate's torch-native parallelism examples on one node of 8: CP=8, and TP=2 with HSDP
expect 0 'layout TP=1 PP=1 EP=1 CP=8 DP=1 ZeRO-3 \(declared\).*fits with 8 x H100' -- \
    bash -o pipefail -c "$FG check --config $C/accelerate/parallelism_cp.yaml \
        $M/Qwen--Qwen3-8B $H8 | tr '\n' ' '"
expect 0 'layout TP=2 PP=1 EP=1 DP=4 ZeRO-3.*not modelled: .*dp_replicate_size=2.*fits' -- \
    bash -o pipefail -c "$FG check --config $C/accelerate/parallelism_tp_hsdp.yaml \
        $M/Qwen--Qwen3-8B $H8 | tr '\n' ' '"
# its DeepSpeed template names ../deepspeed_config_templates/zero_stage1_config.json from
# where accelerate is launched: ZeRO-1 with fp16 over 2 processes holds a 1.7B model
mkdir -p "$tmp/acc/config_yaml_templates" "$tmp/acc/deepspeed_config_templates"
cp "$C/accelerate/template_deepspeed.yaml" "$tmp/acc/config_yaml_templates/deepspeed.yaml"
cp "$C/deepspeed/accelerate_zero_stage1_config.json" \
    "$tmp/acc/deepspeed_config_templates/zero_stage1_config.json"
expect 0 'zero_stage1_config.json:[0-9]+ zero_optimization.stage=1 -> --zero=1.*fits with 2 x H100' -- \
    bash -o pipefail -c "$FG check --base-dir $tmp/acc/config_yaml_templates --config \
        deepspeed.yaml $M/Qwen--Qwen3-1.7B $H2 | tr '\n' ' '"
# launched from elsewhere, the file it names is found beside it, as the example is written
expect 0 'zero_optimization.stage=1 -> --zero=1.*fits with 2 x H100' -- \
    bash -o pipefail -c "$FG check --base-dir $tmp/acc --config \
        config_yaml_templates/deepspeed.yaml $M/Qwen--Qwen3-1.7B $H2 | tr '\n' ' '"
# the serving engines' documented --config examples: each read as its own engine
expect 0 'read as vllm.*fits with 1 x H100' -- \
    bash -o pipefail -c "$FG check --config $C/vllm/serve_args_config.yaml $L8 $H1 | tr '\n' ' '"
expect 0 'tensor-parallel-size=2 -> --tp=2.*read as sglang.*fits with 2 x H100' -- \
    bash -o pipefail -c "$FG check --config $C/sglang/server_arguments_config.yaml $L8 $H2 \
        | tr '\n' ' '"
# vLLM's test config is a valid SGLang config too: refused as the job's error, naming the
# prefix that says which
expect 1 'name the one it is for: vllm:.* or sglang:' -- \
    $FG check --config $C/vllm/test_config.yaml $L8 $H2
expect 0 'read as vllm' -- $FG check --config "vllm:$C/vllm/test_config.yaml" $L8 $H2
# an lm-eval task file is no job config, and says so
expect 2 'lm_eval_Llama-3.3-70B-Instruct.yaml is not a job config' -- \
    $FG check --config $C/sglang/lm_eval_Llama-3.3-70B-Instruct.yaml $L8 $H2

# --- --write-fit: the file with the remedy, as text, passing the same check ---------------
sed 's/^gradient_checkpointing: true/gradient_checkpointing: false/' "$C/axolotl/qlora.yml" \
    > "$tmp/qlora-off.yml"
expect 0 '"line":[[:space:]]+46,[[:space:]]+"key":[[:space:]]+"gradient_checkpointing",[[:space:]]+"from":[[:space:]]+"false",[[:space:]]+"to":[[:space:]]+"true"' -- \
    bash -c "$FG check --json --config $tmp/qlora-off.yml $L8 $A40 | tr '\n' ' '"
expect 1 'wrote .*qlora-fit.yml' -- \
    $FG check --config "$tmp/qlora-off.yml" $L8 $A40 --write-fit "$tmp/qlora-fit.yml"
if [ "$(diff "$tmp/qlora-off.yml" "$tmp/qlora-fit.yml" | grep -c '^[<>]')" -eq 2 ]; then
    ok "--write-fit changed one line, the rest kept"
else
    bad "--write-fit changed more than one line"; diff "$tmp/qlora-off.yml" "$tmp/qlora-fit.yml"
fi
expect 0 'qlora-fit.yml:46 gradient_checkpointing=true.*fits with 1 x A100 40 GB' -- \
    bash -o pipefail -c "$FG check --config $tmp/qlora-fit.yml $L8 $A40 | tr '\n' ' '"
# accelerate's quoted value stays quoted; the copy is FSDP, and fits
expect 0 'wrote' -- $FG plan --config "$C/accelerate/template_multi_gpu.yaml" \
    $M/meta-llama--Llama-3.2-3B $H2 --write-fit "$tmp/multi_gpu-fit.yaml"
expect 0 '^distributed_type: "FSDP"$' -- cat "$tmp/multi_gpu-fit.yaml"
expect 0 'distributed_type=FSDP -> --zero=3.*fits with 2 x H100' -- \
    bash -o pipefail -c "$FG check --config $tmp/multi_gpu-fit.yaml $M/meta-llama--Llama-3.2-3B \
        $H2 | tr '\n' ' '"

tally
