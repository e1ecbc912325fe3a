#!/bin/bash
# A SLIME-style launch (tests/data/jobs): sources the model args, starts Ray, submits train.py unquoted.
set -ex
pkill -9 sglang
sleep 3
ray stop --force
SCRIPT_DIR="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" &>/dev/null && pwd)"
source "${SCRIPT_DIR}/models/qwen3-30B-A3B.sh"
NVLINK_COUNT=$(nvidia-smi topo -m 2>/dev/null | grep -o 'NV[0-9][0-9]*' | wc -l)
CKPT_ARGS=(
   --hf-checkpoint /fsx/models/Qwen3-30B-A3B
   --ref-load /fsx/models/Qwen3-30B-A3B_torch_dist
   --load /fsx/checkpoints/qwen3-30b-a3b-grpo
   --save /fsx/checkpoints/qwen3-30b-a3b-grpo
   --save-interval 20
   --prompt-data /fsx/data/dapo-math-17k.jsonl
   --input-key prompt
   --label-key label
   --apply-chat-template --rollout-shuffle
   --num-rollout 100
   --rollout-batch-size 12
   --n-samples-per-prompt 8
   --global-batch-size 96
   --num-steps-per-rollout 1
   --rollout-max-response-len 8192
   --rollout-temperature 1.0
   --tensor-model-parallel-size 2
   --pipeline-model-parallel-size 1
   --context-parallel-size 2
   --expert-model-parallel-size 2
   --expert-tensor-parallel-size 1
   --sequence-parallel --use-dynamic-batch-size
   --max-tokens-per-gpu 4096
)
TRAIN_ARGS=(
   --advantage-estimator grpo
   --use-kl-loss --kl-loss-coef
   0.00 --kl-loss-type
   low_var_kl --entropy-coef
   0.00 --eps-clip
   0.2 --eps-clip-high
   0.28 --optimizer
   adam --lr
   1e-06 --lr-decay-style
   constant --weight-decay
   0.1 --adam-beta1
   0.9 --adam-beta2
   0.98 --attention-dropout
   0.0 --hidden-dropout
   0.0 --actor-num-nodes
   2 --actor-num-gpus-per-node
   6 --num-gpus-per-node
   8 --rollout-num-gpus-per-engine
   2 --rollout-num-gpus
   4 --rm-type
   deepscaler --sglang-mem-fraction-static
   0.85 --sglang-log-level
   warning --recompute-granularity
   full --recompute-method
   uniform --recompute-num-layers
   1
)

export MASTER_ADDR=${MASTER_ADDR:-"127.0.0.1"}
ray start --head --node-ip-address ${MASTER_ADDR} --num-gpus 8 --disable-usage-stats
RUNTIME_ENV_JSON="{\"env_vars\": {\"PYTHONPATH\": \"/opt/Megatron-LM\", \"TOKENIZERS_PARALLELISM\": \"false\", \"NCCL_DEBUG\": \"WARN\", \"CUDA_DEVICE_MAX_CONNECTIONS\": \"1\", \"RLCHECK_WORKER_CAPABILITY\": \"9.0\", \"FI_PROVIDER\": \"efa\", \"FI_EFA_USE_DEVICE_RDMA\": \"1\"}}"
ray job submit --address="http://127.0.0.1:8265" \
   --runtime-env-json="${RUNTIME_ENV_JSON}" \
   -- python3 train.py \
   ${MODEL_ARGS[@]} \
   ${CKPT_ARGS[@]} \
   ${TRAIN_ARGS[@]}
