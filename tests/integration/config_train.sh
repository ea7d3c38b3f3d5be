#!/usr/bin/env bash
# config_train.sh - the training frameworks' own example and recipe files (axolotl,
# torchtune, LLaMA-Factory, TRL via open-r1 and alignment-handbook), copied verbatim into
# tests/fixtures/configs/ (PROVENANCE.md), each read with --config and checked on the card
# its recipe is written for:
#   - the flags it reads to are pinned: the file and those flags give one verdict and one
#     estimate, to the byte (the decision, the memory and the job of --json);
#   - the verdict is the one a user of that framework expects (exit 0 fits or warns, 1
#     rejected, 2 not a training job), with the reason in the comment above the row; "-"
#     where the verdict turns on keys another branch reads (use_liger_kernel), pinned then
#     only as equal to the flags'.
# A row: ROOT PATH[,PATH] MODEL GRES EXIT FLAGS, tab-separated; ROOT under
# tests/fixtures/configs is the repository root the files are read from (--base-dir), so a
# file that names another (deepspeed: deepspeed_configs/zero1.json) reads it as there.
set -u
# shellcheck source=tests/integration/lib/config_common.sh
source "$(dirname "$0")/lib/config_common.sh"

# one ROOT PATHS MODEL GRES EXIT FLAGS REASON
one() {
    local root=$1 paths=$2 model=$3 gres=$4 want=$5 flags=$6 why=$7 ra rb
    local -a fl
    read -ra fl <<<"$flags"
    timeout 60 $FG check --json --base-dir "$C/$root" --config "$paths" "$M/$model" \
        --gres=gpu:"$gres" > "$tmp/a.json" 2> "$tmp/a.err"
    ra=$?
    if [ "$want" = 2 ]; then
        if [ "$ra" -eq 2 ] && grep -q "not a training job" "$tmp/a.err"; then
            ok "$paths: not a training job ($why)"
        else
            bad "$paths: exit $ra, want 2 naming it not a training job"; head -3 "$tmp/a.err"
        fi
        return
    fi
    if [ "$want" != - ] && [ "$ra" -ne "$want" ]; then
        bad "$paths on $gres: exit $ra, want $want: $why"; head -3 "$tmp/a.err"; return
    fi
    timeout 60 $FG check --json "$M/$model" --gres=gpu:"$gres" "${fl[@]}" > "$tmp/b.json" \
        2> "$tmp/b.err"
    rb=$?
    if [ "$ra" -ne "$rb" ]; then
        bad "$paths: exit $ra from the file, $rb from its flags"; head -3 "$tmp/b.err"; return
    fi
    if python3 tests/integration/lib/same_job.py "$tmp/a.json" "$tmp/b.json"
    then
        ok "$paths on $gres: exit $ra, as its flags ($why)"
    else
        bad "$paths: the file and its flags differ"
    fi
}

why=""
while IFS=$'\t' read -r root paths model gres want flags; do
    case $root in
    "# "*) why=${root#\# }; continue ;;
    "") continue ;;
    esac
    one "$root" "$paths" "$model" "$gres" "$want" "$flags" "$why"
done <<'ROWS'
# 8-bit LoRA of Llama-3-8B with checkpointing at 2 x 4096: axolotl's single-GPU example, fits 40 GB; lora_modules_to_save listed
axolotl	examples/llama-3/lora-8b.yml	meta-llama--Llama-3.1-8B	a100_40g:1	0	--mode=qlora --quant=int8 --seq-len=4096 --lora-rank=32 --lora-targets=all-linear --grad-accum=4 --batch=2 --optimizer=adamw-8bit --precision=bf16 --grad-ckpt=yes --attention=sdpa --framework=axolotl
# QLoRA of a 1B model fits a 16 GB T4
axolotl	examples/llama-3/qlora-1b.yml	meta-llama--Llama-3.2-1B-Instruct	t4:1	0	--mode=qlora --seq-len=2048 --lora-rank=32 --lora-targets=gate_proj,down_proj,up_proj,q_proj,v_proj,k_proj,o_proj --grad-accum=4 --batch=2 --optimizer=adamw-8bit --precision=bf16 --grad-ckpt=yes --attention=sdpa --framework=axolotl
# rl: dpo with an 8-bit LoRA: chosen + rejected, reference = adapters disabled; fits one H100
axolotl	examples/llama-3/instruct-dpo-lora-8b.yml	meta-llama--Llama-3.1-8B	h100:1	0	--mode=dpo --adapter=qlora --quant=int8 --seq-len=4096 --lora-rank=32 --lora-targets=all-linear --grad-accum=4 --batch=2 --optimizer=adamw-8bit --precision=bf16 --grad-ckpt=yes --attention=sdpa --framework=axolotl
# rl: kto, QLoRA of a 1B model: fits an A100 40 GB
axolotl	examples/llama-3/qlora-1b-kto.yaml	meta-llama--Llama-3.2-1B-Instruct	a100_40g:1	0	--mode=kto --adapter=qlora --seq-len=2048 --lora-rank=32 --lora-targets=all-linear --grad-accum=1 --batch=2 --optimizer=adamw-8bit --precision=bf16 --grad-ckpt=yes --attention=sdpa --framework=axolotl
# rl: orpo (no reference model), QLoRA of Mistral-7B: fits an A100 40 GB
axolotl	examples/mistral/orpo/mistral-qlora-orpo.yml	mistralai--Mistral-7B-v0.1	a100_40g:1	0	--mode=orpo --adapter=qlora --seq-len=4096 --lora-rank=32 --lora-targets=all-linear --grad-accum=4 --batch=2 --optimizer=adamw-8bit --precision=bf16 --grad-ckpt=yes --attention=sdpa --framework=axolotl
# rl: dpo at micro-batch 16 x 2048, two sequences a sample: 58 GB, over an A100 40 GB
axolotl	examples/mistral/dpo/mistral-dpo-qlora.yml	mistralai--Mistral-7B-Instruct-v0.3	a100_40g:1	1	--mode=dpo --adapter=qlora --seq-len=2048 --lora-rank=8 --lora-targets=all-linear --grad-accum=4 --batch=16 --optimizer=adamw-8bit --precision=bf16 --grad-ckpt=yes --framework=axolotl
# bf16: auto loads phi-2 in bf16 (resolve_dtype): 22 GB, fits an A100 40 GB as the flags do
axolotl	examples/phi/phi2-ft.yml	microsoft--phi-2	a100_40g:1	0	--seq-len=2048 --grad-accum=1 --batch=2 --optimizer=adamw-fused --precision=bf16 --grad-ckpt=yes --attention=sdpa --framework=axolotl
# 8-bit LoRA of Phi-3.5-mini fits an A100 40 GB
axolotl	examples/phi/lora-3.5.yaml	microsoft--Phi-3.5-mini-instruct	a100_40g:1	0	--mode=qlora --quant=int8 --seq-len=4096 --lora-rank=32 --lora-targets=all-linear --grad-accum=4 --batch=4 --optimizer=adamw-8bit --precision=bf16 --grad-ckpt=yes --framework=axolotl
# QLoRA of Qwen3-32B with activation offloading fits one H100 (adamw_torch_4bit listed)
axolotl	examples/qwen3/32b-qlora.yaml	Qwen--Qwen3-32B	h100:1	0	--seq-len=2048 --mode=qlora --lora-rank=16 --lora-targets=q_proj,k_proj,v_proj,o_proj,down_proj,up_proj --grad-accum=2 --batch=1 --precision=bf16 --grad-ckpt=yes --act-offload=yes --attention=sdpa --framework=axolotl --loss=cce
# FSDP QLoRA with offloaded params over 2 GPUs: fits 2 x A100 40 GB
axolotl	examples/qwen2/qlora-fsdp.yaml	Qwen--Qwen2-7B-Instruct	a100_40g:2	0	--mode=qlora --seq-len=2048 --lora-rank=32 --lora-targets=all-linear --grad-accum=4 --batch=1 --optimizer=adamw-fused --precision=bf16 --grad-ckpt=yes --attention=sdpa --zero=3 --offload=params --framework=axolotl
# QLoRA of gemma-2-9b fits an A100 40 GB
axolotl	examples/gemma2/qlora.yml	google--gemma-2-9b	a100_40g:1	0	--mode=qlora --lora-rank=32 --lora-targets=all-linear --seq-len=2048 --grad-accum=4 --batch=1 --optimizer=adamw-8bit --precision=bf16 --grad-ckpt=yes --attention=sdpa --framework=axolotl
# QLoRA of gemma-3-1b fits a T4 (unfrozen_parameters listed)
axolotl	examples/gemma3/gemma-3-1b-qlora.yml	google--gemma-3-1b-it	t4:1	0	--mode=qlora --lora-rank=32 --lora-targets=all-linear --seq-len=2048 --grad-accum=4 --batch=1 --optimizer=adamw-8bit --precision=bf16 --grad-ckpt=yes --attention=sdpa --framework=axolotl
# a regex lora_target_modules (peft full-match) read as the decoder's projections: fits an A100 40 GB
axolotl	examples/gemma3/gemma-3-4b-vision-qlora.yml	google--gemma-3-4b-it	a100_40g:1	0	--mode=qlora --seq-len=2048 --lora-rank=32 --lora-targets=model.language_model.layers.[\d]+.(mlp|cross_attn|self_attn).(up|down|gate|q|k|v|o)_proj --grad-accum=4 --batch=2 --optimizer=adamw-8bit --precision=bf16 --grad-ckpt=yes --attention=sdpa --framework=axolotl
# LoRA of gpt-oss-20b on one H100, as its name says
axolotl	examples/gpt-oss/gpt-oss-20b-sft-lora-singlegpu.yaml	openai--gpt-oss-20b	h100:1	0	--seq-len=4096 --mode=lora --lora-rank=8 --lora-targets=all-linear --grad-accum=8 --batch=1 --optimizer=adamw-8bit --precision=bf16 --attention=sdpa --grad-ckpt=yes --act-offload=yes --framework=axolotl --loss=cce
# full fine-tune of gpt-oss-20b under FSDP2 over 8 H100
axolotl	examples/gpt-oss/gpt-oss-20b-fft-fsdp2.yaml	openai--gpt-oss-20b	h100:8	0	--seq-len=4096 --grad-accum=2 --batch=1 --optimizer=adamw-8bit --precision=bf16 --attention=sdpa --grad-ckpt=yes --act-offload=yes --zero=3 --framework=axolotl --loss=cce
# axolotl's own TP=2 x CP=2 x FSDP example runs (ParallelismConfig), not refused
axolotl	examples/distributed-parallel/qwen3-8b-fsdp-tp-cp.yaml	Qwen--Qwen3-8B	h100:8	0	--cp=2 --tp=2 --zero=3 --seq-len=8192 --attention=sdpa --grad-accum=1 --batch=1 --optimizer=adamw-fused --precision=bf16 --grad-ckpt=no --framework=axolotl --loss=cce
# TP=2 with HSDP: runs; dp_replicate_size listed as not modelled
axolotl	examples/distributed-parallel/llama-3_1-8b-hsdp-tp.yaml	meta-llama--Llama-3.1-8B	h100:8	0	--tp=2 --zero=3 --seq-len=2048 --attention=sdpa --grad-accum=1 --batch=1 --optimizer=adamw-fused --precision=bf16 --grad-ckpt=no --framework=axolotl --loss=cce
# sequence_len: 500_000 (YAML 1.1) read; 500k tokens over CP=8 with FSDP2 and offloading
axolotl	examples/alst/llama3-8b-fsdp2-alst.yaml	meta-llama--Llama-3.1-8B	h100:8	0	--seq-len=500000 --cp=8 --grad-accum=1 --batch=1 --optimizer=adamw-8bit --precision=bf16 --grad-ckpt=yes --act-offload=yes --attention=sdpa --zero=3 --framework=axolotl --loss=cce
# gradient_checkpointing: false beside fsdp_activation_checkpointing: true: FSDP checkpoints, no conflict
axolotl	examples/archived/dbrx/16bit-lora.yaml	mistralai--Mixtral-8x7B-v0.1	h100:8	0	--seq-len=512 --mode=lora --lora-rank=8 --lora-targets=q_proj,k_proj,v_proj,out_proj,layer --grad-accum=1 --batch=1 --optimizer=adamw-8bit --precision=bf16 --attention=sdpa --zero=3 --grad-ckpt=yes --framework=axolotl
# a regex lora_target_modules read; 8-bit LoRA fits an A100 40 GB
axolotl	examples/LiquidAI/lfm2-8b-a1b-lora.yaml	LiquidAI--LFM2-1.2B	a100_40g:1	0	--mode=qlora --quant=int8 --seq-len=4096 --lora-rank=32 --lora-targets=model.layers.[\d]+.(mlp|cross_attn|self_attn).(up|down|gate|q|k|v|o)_proj --grad-accum=2 --batch=4 --optimizer=adamw-fused --precision=bf16 --grad-ckpt=yes --attention=sdpa --framework=axolotl --loss=cce
# dotted targets (linear_attn.in_proj_qkvz, shared_expert.up_proj) matched by suffix: QLoRA of the 80B fits one H100
axolotl	examples/qwen3-next/qwen3-next-80b-a3b-qlora.yaml	Qwen--Qwen3-Next-80B-A3B-Instruct	h100:1	0	--mode=qlora --seq-len=2048 --lora-rank=16 --lora-targets=linear_attn.in_proj_ba,linear_attn.in_proj_qkvz,linear_attn.out_proj,shared_expert.up_proj,shared_expert.down_proj,shared_expert.gate_proj,shared_expert_gate,q_proj,v_proj,k_proj,o_proj --grad-accum=2 --batch=2 --optimizer=adamw-8bit --precision=bf16 --grad-ckpt=yes --attention=sdpa --framework=axolotl --loss=cce
# dotted targets read; QLoRA of Scout (109B) with its CutCrossEntropyPlugin (no logits) at 68 GB: fits the one H100 the file names, borderline: warned (adamw_torch_4bit listed)
axolotl	examples/llama-4/scout-qlora-single-h100-flex.yaml	meta-llama--Llama-4-Scout-17B-16E-Instruct	h100:1	0	--mode=qlora --lora-rank=32 --lora-targets=self_attn.q_proj,self_attn.k_proj,self_attn.v_proj,self_attn.o_proj,shared_expert.gate_proj,shared_expert.up_proj,shared_expert.down_proj --seq-len=4096 --grad-accum=1 --batch=1 --precision=bf16 --attention=sdpa --grad-ckpt=yes --act-offload=yes --framework=axolotl --loss=cce
# fp8: true listed as not modelled (torchao float8); bf16 FSDP2 over 2 H100 fits
axolotl	examples/llama-3/3b-fp8-fsdp2.yaml	meta-llama--Llama-3.2-3B	h100:2	0	--seq-len=512 --attention=sdpa --grad-accum=1 --batch=16 --optimizer=adamw-fused --zero=3 --grad-ckpt=no --precision=bf16 --framework=axolotl --loss=liger
# reward model full fine-tune with DeepSpeed ZeRO-1 on one H100: DeepSpeed's step converts
# the whole gradient partition to fp32 on the one rank (32.8 GB, stage_1_and_2.py step) beside
# its reduce bucket: rejected, it takes 2
axolotl	examples/qwen3/reward-model.yaml	Qwen--Qwen3-8B	h100:1	1	--seq-len=8192 --grad-accum=4 --batch=1 --optimizer=adamw-8bit --precision=bf16 --grad-ckpt=yes --zero=1 --framework=axolotl --ds-bucket=500000000
# QLoRA of Mixtral-8x7B under ZeRO-2 with the optimizer offloaded: fits 2 H100
axolotl	examples/mistral/mixtral/mixtral.yml	mistralai--Mixtral-8x7B-v0.1	h100:2	0	--mode=qlora --seq-len=4096 --lora-rank=32 --lora-targets=all-linear --grad-accum=2 --batch=1 --optimizer=adamw-8bit --precision=bf16 --grad-ckpt=yes --attention=sdpa --zero=2 --offload=optimizer --framework=axolotl --ds-bucket=500000000
# rl: dpo, 8-bit LoRA of a 1B model fits an A100 40 GB
axolotl	examples/llama-3/lora-1b-deduplicate-dpo.yml	meta-llama--Llama-3.2-1B-Instruct	a100_40g:1	0	--mode=dpo --adapter=qlora --quant=int8 --seq-len=4096 --lora-rank=32 --lora-targets=all-linear --grad-accum=4 --batch=2 --optimizer=adamw-8bit --precision=bf16 --grad-ckpt=yes --attention=sdpa --framework=axolotl
# an axolotl cloud launcher config: says it is not a training job
axolotl	examples/cloud/baseten.yaml	meta-llama--Llama-3.1-8B	h100:8	2	
# optimizer_in_bwd with PagedAdamW8bit: 39 GB, fits one H100
torchtune	recipes/configs/llama3_1/8B_full_single_device.yaml	meta-llama--Llama-3.1-8B	h100:1	0	--mode=full --batch=2 --optimizer=adamw-8bit --grad-accum=1 --grad-ckpt=yes --precision=bf16 --framework=torchtune --loss=linear-ce --optimizer-in-bwd=yes
# FSDP full fine-tune of 8B over 8 H100 fits
torchtune	recipes/configs/llama3_1/8B_full.yaml	meta-llama--Llama-3.1-8B	h100:8	0	--mode=full --batch=2 --optimizer=adamw-fused --grad-accum=1 --grad-ckpt=yes --precision=bf16 --framework=torchtune --loss=linear-ce --optimizer-in-bwd=no
# distributed LoRA of 8B over 2 GPUs fits 2 H100
torchtune	recipes/configs/llama3_1/8B_lora.yaml	meta-llama--Llama-3.1-8B	h100:2	0	--mode=lora --lora-targets=q_proj,v_proj,o_proj,gate_proj,up_proj,down_proj --lora-rank=8 --optimizer=adamw-fused --batch=2 --grad-accum=8 --precision=bf16 --grad-ckpt=no --framework=torchtune --loss=linear-ce
# torchtune's DPOLoss makes it a DPO job: LoRA DPO of 8B fits an A100 40 GB
torchtune	recipes/configs/llama3_1/8B_lora_dpo_single_device.yaml	meta-llama--Llama-3.1-8B	a100_40g:1	0	--mode=dpo --adapter=lora --lora-targets=q_proj,v_proj,o_proj,gate_proj,up_proj,down_proj --lora-rank=8 --seq-len=1024 --batch=4 --optimizer=adamw-fused --grad-accum=8 --precision=bf16 --grad-ckpt=yes --framework=torchtune
# full DPO (reference copy) of 8B over 8 H100 under FSDP fits
torchtune	recipes/configs/llama3_1/8B_full_dpo.yaml	meta-llama--Llama-3.1-8B	h100:8	0	--mode=dpo --adapter=full --seq-len=1024 --batch=4 --optimizer=adamw-fused --grad-accum=8 --precision=bf16 --grad-ckpt=yes --framework=torchtune
# LoRA of 70B over 8 H100 under FSDP fits
torchtune	recipes/configs/llama3_1/70B_lora.yaml	meta-llama--Llama-3.1-70B	h100:8	0	--mode=lora --lora-targets=q_proj,v_proj,o_proj,gate_proj,up_proj,down_proj --lora-rank=16 --optimizer=adamw-fused --batch=2 --grad-accum=1 --precision=bf16 --grad-ckpt=yes --framework=torchtune --loss=linear-ce
# full fine-tune of 1B without checkpointing at 4 x 2048: 28 GB, over a 16 GB T4
torchtune	recipes/configs/llama3_2/1B_full_single_device.yaml	meta-llama--Llama-3.2-1B-Instruct	t4:1	1	--mode=full --batch=4 --optimizer=adamw-8bit --grad-accum=1 --grad-ckpt=no --precision=bf16 --framework=torchtune --loss=linear-ce --optimizer-in-bwd=yes
# LoRA of 3B at 4 x 2048: 16 GB, over a T4 with headroom
torchtune	recipes/configs/llama3_2/3B_lora_single_device.yaml	meta-llama--Llama-3.2-3B	t4:1	1	--mode=lora --lora-targets=q_proj,v_proj,o_proj,gate_proj,up_proj,down_proj --lora-rank=64 --batch=4 --optimizer=adamw-fused --grad-accum=8 --precision=bf16 --grad-ckpt=yes --framework=torchtune --loss=linear-ce
# PagedAdamW keeps fp32 states (64 GB) beside bf16 weights: over one H100
torchtune	recipes/configs/qwen3/8B_full_single_device.yaml	Qwen--Qwen3-8B	h100:1	1	--mode=full --batch=2 --optimizer=paged-adamw --grad-accum=1 --grad-ckpt=yes --precision=bf16 --framework=torchtune --optimizer-in-bwd=yes --loss=linear-ce
# LoRA of Qwen3-8B fits an A100 40 GB
torchtune	recipes/configs/qwen3/8B_lora_single_device.yaml	Qwen--Qwen3-8B	a100_40g:1	0	--mode=lora --lora-targets=q_proj,v_proj,o_proj,gate_proj,up_proj,down_proj --lora-rank=8 --batch=2 --optimizer=adamw-fused --grad-accum=8 --precision=bf16 --grad-ckpt=yes --framework=torchtune --optimizer-in-bwd=no --loss=linear-ce
# QLoRA of gemma-2-9b fits an A100 40 GB
torchtune	recipes/configs/gemma2/9B_qlora_single_device.yaml	google--gemma-2-9b	a100_40g:1	0	--mode=qlora --lora-targets=q_proj,v_proj,o_proj,gate_proj,up_proj,down_proj --lora-rank=64 --optimizer=adamw-fused --batch=4 --grad-accum=8 --grad-ckpt=yes --precision=bf16 --framework=torchtune --loss=linear-ce
# LoRA of Phi-3-mini fits an A100 40 GB
torchtune	recipes/configs/phi3/mini_lora_single_device.yaml	microsoft--Phi-3.5-mini-instruct	a100_40g:1	0	--mode=lora --lora-targets=q_proj,v_proj,o_proj,gate_proj,up_proj,down_proj --lora-rank=8 --batch=2 --grad-accum=8 --optimizer=adamw-fused --grad-ckpt=yes --precision=bf16 --framework=torchtune --loss=linear-ce
# LoRA SFT of Qwen3-8B (the example names 4B) fits an A100 40 GB
llama-factory	examples/train_lora/qwen3_lora_sft.yaml	Qwen--Qwen3-8B	a100_40g:1	0	--mode=lora --lora-rank=8 --lora-targets=all-linear --seq-len=2048 --batch=1 --grad-accum=8 --precision=bf16-mixed --grad-ckpt=yes --framework=llama-factory
# stage: dpo: chosen + rejected with the adapters-off reference, fits an A100 40 GB
llama-factory	examples/train_lora/qwen3_lora_dpo.yaml	Qwen--Qwen3-8B	a100_40g:1	0	--mode=dpo --adapter=lora --lora-rank=8 --lora-targets=all-linear --seq-len=2048 --batch=1 --grad-accum=8 --precision=bf16-mixed --grad-ckpt=yes --framework=llama-factory
# stage: kto fits an A100 40 GB
llama-factory	examples/train_lora/qwen3_lora_kto.yaml	Qwen--Qwen3-8B	a100_40g:1	0	--mode=kto --adapter=lora --lora-rank=8 --lora-targets=all-linear --seq-len=2048 --batch=1 --grad-accum=8 --precision=bf16-mixed --grad-ckpt=yes --framework=llama-factory
# stage: rm is a reward model (score head, two sequences): fits an A100 40 GB
llama-factory	examples/train_lora/qwen3_lora_reward.yaml	Qwen--Qwen3-8B	a100_40g:1	0	--mode=reward --adapter=lora --lora-rank=8 --lora-targets=all-linear --seq-len=2048 --batch=1 --grad-accum=8 --precision=bf16-mixed --grad-ckpt=yes --framework=llama-factory
# full SFT of Qwen3-8B under its DeepSpeed ZeRO-3 file over 8 H100 fits
llama-factory	examples/train_full/qwen3_full_sft.yaml	Qwen--Qwen3-8B	h100:8	0	--mode=full --seq-len=2048 --batch=1 --grad-accum=2 --precision=bf16-mixed --zero=3 --grad-ckpt=yes --framework=llama-factory --ds-bucket=auto
# 4-bit on-the-fly QLoRA of Qwen3-8B on a T4: borderline, warned
llama-factory	examples/train_qlora/qwen3_lora_sft_otfq.yaml	Qwen--Qwen3-8B	t4:1	0	--mode=qlora --quant=nf4-dq --lora-rank=8 --lora-targets=all-linear --seq-len=2048 --batch=1 --grad-accum=8 --precision=bf16-mixed --grad-ckpt=yes --framework=llama-factory
# use_galore listed as not modelled; plain AdamW states do not fit an A100 40 GB
llama-factory	examples/extras/galore/llama3_full_sft.yaml	meta-llama--Llama-3.1-8B	a100_40g:1	1	--mode=full --seq-len=2048 --batch=1 --grad-accum=1 --precision=bf16 --grad-ckpt=yes --framework=llama-factory
# use_badam listed as not modelled; a full fine-tune's states do not fit an A100 40 GB
llama-factory	examples/extras/badam/llama3_full_sft.yaml	meta-llama--Llama-3.1-8B	a100_40g:1	1	--mode=full --seq-len=2048 --batch=1 --grad-accum=8 --grad-ckpt=yes --framework=llama-factory
# QLoRA of 8B over 2 GPUs fits 2 x A100 40 GB
llama-factory	examples/extras/fsdp_qlora/llama3_lora_sft.yaml	meta-llama--Llama-3.1-8B	a100_40g:2	0	--mode=qlora --quant=nf4-dq --lora-rank=8 --lora-targets=all-linear --seq-len=2048 --batch=1 --grad-accum=8 --precision=bf16-mixed --grad-ckpt=yes --framework=llama-factory
# PiSSA is a LoRA initialisation: LoRA of 8B fits an A100 40 GB
llama-factory	examples/extras/pissa/llama3_lora_sft.yaml	meta-llama--Llama-3.1-8B	a100_40g:1	0	--mode=lora --lora-rank=8 --lora-targets=all-linear --seq-len=2048 --batch=1 --grad-accum=8 --precision=bf16-mixed --grad-ckpt=yes --framework=llama-factory
# a LLaMA-Factory inference config: says it is not a training job
llama-factory	examples/inference/qwen3.yaml	Qwen--Qwen3-8B	a100_40g:1	2	
# a LLaMA-Factory export config: says it is not a training job
llama-factory	examples/merge_lora/qwen3_lora_sft.yaml	Qwen--Qwen3-8B	a100_40g:1	2	
# the open-r1 GRPO demo runs as grpo (no SFT max_length injected) with Liger's fused GRPO loss (use_liger_kernel: no vocabulary-wide log-probs): fits the 8 H100 it was written for (a 3B stand-in for the 1.5B, warned)
trl/open-r1	recipes/DeepSeek-R1-Distill-Qwen-1.5B/grpo/config_demo.yaml,recipes/accelerate_configs/zero2.yaml	Qwen--Qwen2.5-3B-Instruct	h100:8	0	--mode=grpo --attention=sdpa --precision=bf16-mixed --vllm-mode=colocate --grad-accum=4 --grad-ckpt=yes --max-prompt-length=512 --max-completion-length=2048 --num-generations=16 --batch=16 --zero=2 --dp=8 --framework=trl --loss=liger --ds-bucket=500000000
# GRPO with vLLM colocated under ZeRO-2 over 8 H100: warned borderline with a 3B stand-in
trl/open-r1	recipes/Qwen2.5-1.5B-Instruct/grpo/config_demo.yaml,recipes/accelerate_configs/zero2.yaml	Qwen--Qwen2.5-3B-Instruct	h100:8	0	--mode=grpo --attention=sdpa --precision=bf16-mixed --vllm-mode=colocate --grad-accum=4 --grad-ckpt=yes --max-prompt-length=512 --max-completion-length=1024 --num-generations=16 --batch=16 --zero=2 --dp=8 --framework=trl --ds-bucket=500000000
# 32k-token SFT under ZeRO-3; its verdict turns on use_liger_kernel (the loss keys' branch)
trl/open-r1	recipes/OpenR1-Distill-7B/sft/config_distill.yaml,recipes/accelerate_configs/zero3.yaml	Qwen--Qwen2-7B-Instruct	h100:8	-	--attention=sdpa --precision=bf16-mixed --grad-accum=8 --grad-ckpt=yes --seq-len=32768 --batch=2 --zero=3 --dp=8 --framework=trl --loss=liger --ds-bucket=500000000
# 32k-token SFT under ZeRO-3; its verdict turns on use_liger_kernel (the loss keys' branch)
trl/open-r1	recipes/OlympicCoder-7B/sft/config_v00.00.yaml,recipes/accelerate_configs/zero3.yaml	Qwen--Qwen2-7B-Instruct	h100:8	-	--attention=sdpa --precision=bf16-mixed --grad-accum=8 --grad-ckpt=yes --seq-len=32768 --batch=2 --zero=3 --dp=8 --framework=trl --loss=liger --ds-bucket=500000000
# an open-r1 pass-rate filtering config: says it is not a training job
trl/open-r1	recipes/dataset_filtering/config_demo.yaml	Qwen--Qwen2.5-3B-Instruct	h100:8	2	
# its folder dpo/ and beta make it DPO; full DPO under ZeRO-3 over 8 H100 fits (the handbook's run)
trl/alignment-handbook	recipes/zephyr-7b-beta/dpo/config_full.yaml,recipes/accelerate_configs/zero3.yaml	mistralai--Mistral-7B-v0.1	h100:8	0	--mode=dpo --precision=bf16-mixed --grad-accum=2 --grad-ckpt=yes --seq-len=1024 --optimizer=adamw --batch=8 --zero=3 --dp=8 --framework=trl --ds-bucket=500000000
# QLoRA DPO of Mistral-7B fits an A100 40 GB
trl/alignment-handbook	recipes/zephyr-7b-beta/dpo/config_qlora.yaml	mistralai--Mistral-7B-v0.1	a100_40g:1	0	--mode=dpo --attention=sdpa --adapter=qlora --lora-rank=128 --lora-targets=q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj --precision=bf16 --grad-accum=4 --grad-ckpt=yes --seq-len=1024 --optimizer=adamw --batch=4 --framework=trl
# full SFT under ZeRO-3 over 8 H100 fits (the handbook's run)
trl/alignment-handbook	recipes/zephyr-7b-beta/sft/config_full.yaml,recipes/accelerate_configs/zero3.yaml	mistralai--Mistral-7B-v0.1	h100:8	0	--attention=sdpa --precision=bf16-mixed --grad-accum=1 --grad-ckpt=yes --seq-len=2048 --batch=16 --zero=3 --dp=8 --framework=trl --ds-bucket=500000000
# QLoRA SFT of Mistral-7B fits an A100 40 GB
trl/alignment-handbook	recipes/zephyr-7b-beta/sft/config_qlora.yaml	mistralai--Mistral-7B-v0.1	a100_40g:1	0	--attention=sdpa --mode=qlora --lora-rank=16 --lora-targets=q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj --precision=bf16 --grad-accum=2 --grad-ckpt=yes --seq-len=2048 --batch=4 --framework=trl
# ORPO of a 141B MoE: the handbook needs 4 nodes of 8 H100; one node is rejected
trl/alignment-handbook	recipes/zephyr-141b-A35b/orpo/config_full.yaml	mistralai--Mixtral-8x22B-v0.1	h100:8	1	--mode=orpo --attention=sdpa --precision=bf16 --grad-accum=1 --grad-ckpt=yes --seq-len=2048 --optimizer=adamw-8bit --batch=1 --framework=trl
# 65k-token SFT; its verdict turns on use_liger_kernel (the loss keys' branch)
trl/alignment-handbook	recipes/smollm3/sft/sft.yaml,recipes/accelerate_configs/zero3.yaml	HuggingFaceTB--SmolLM3-3B	h100:8	-	--attention=sdpa --precision=bf16-mixed --grad-accum=2 --grad-ckpt=yes --seq-len=65536 --batch=1 --zero=3 --dp=8 --framework=trl --loss=liger --ds-bucket=500000000
# 24k-token DPO; its verdict turns on use_liger_kernel (the loss keys' branch)
trl/alignment-handbook	recipes/smollm3/dpo/apo.yaml,recipes/accelerate_configs/zero3.yaml	HuggingFaceTB--SmolLM3-3B	h100:8	-	--mode=dpo --attention=sdpa --precision=bf16-mixed --grad-accum=2 --grad-ckpt=yes --seq-len=24576 --batch=1 --zero=3 --dp=8 --framework=trl --loss=liger --ds-bucket=500000000
# full DPO under ZeRO-3 over 8 H100 fits (a 2B gemma stands in for gemma-7b)
trl/alignment-handbook	recipes/zephyr-7b-gemma/dpo/config_full.yaml,recipes/accelerate_configs/zero3.yaml	google--gemma-2b-it	h100:8	0	--mode=dpo --precision=bf16-mixed --grad-accum=8 --grad-ckpt=yes --seq-len=1024 --optimizer=adamw --batch=2 --zero=3 --dp=8 --framework=trl --ds-bucket=500000000
# a torchtune evaluation config (tune run eleuther_eval): says it is not a training job
torchtune	recipes/configs/llama3_1/evaluation.yaml	meta-llama--Llama-3.1-8B	h100:1	2	
# a LLaMA-Factory prediction config (do_predict with generation): says it is not a training job
llama-factory	examples/extras/nlg_eval/llama3_lora_predict.yaml	meta-llama--Llama-3.1-8B	a100_40g:1	2	
ROWS

tally
