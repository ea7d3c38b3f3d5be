#!/usr/bin/env bash
# config.sh - the job read from its framework's own config (--config / --ft-config):
# every format's real example file (tests/fixtures/configs, PROVENANCE.md) judged as the
# same job given as options, the defaults each framework applies, conflicts named, keys
# fitgate does not model listed (refused under OnUnknown=reject), and hostile files
# refused fast as the job's own error (exit 1, a rejection whatever OnError= says, in under a
# second, never a hang).
set -u
cd "$(dirname "$0")/../.."
FG=./build/fitgate
M=$PWD/tests/fixtures/models
C=$PWD/tests/fixtures/configs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

ok() { pass=$((pass + 1)); echo "ok   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

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
    if python3 - "$tmp/a.json" "$tmp/b.json" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for d in (a, b):
    d.get("job", {}).pop("config", None)
keys = ("decision", "memory", "job")
diff = [k for k in keys if a.get(k) != b.get(k)]
if not a.get("memory") or diff:
    print("differs in", diff or ["(no estimate)"])
    sys.exit(1)
EOF
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
     --batch 1 --precision bf16-mixed --zero 3 --grad-ckpt --framework llama-factory"
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
    "$M/Qwen--Qwen3-8B $H8 --zero 3 --precision bf16-mixed --dp 8 --framework accelerate"
same vllm "--config $C/vllm/test_config_with_model.yaml $M/Qwen--Qwen3-8B $H8" \
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
fast "no framework's keys" 2 'none of its keys is one of a framework fitgate reads.*name the format' \
    "$tmp/other.yaml"
printf 'alias: *nowhere\n' > "$tmp/alias.yaml"
fast "an alias to nothing" 1 'alias.yaml:1: alias \*nowhere names no anchor' "$tmp/alias.yaml"
printf 'base_model: m\nmicro_batch_size: 0\n' > "$tmp/zero.yml"
fast "a bad value" 1 'zero.yml:2 micro_batch_size=0: --batch=0: expected a whole number' "$tmp/zero.yml"
# two documents: PyYAML's safe_load refuses them; fitgate does not pick the first in silence
printf 'base_model: m\nmicro_batch_size: 1\n---\nmicro_batch_size: 64\n' > "$tmp/two.yml"
fast "two YAML documents" 1 'two.yml:3: a second YAML document' "$tmp/two.yml"

echo "config.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
