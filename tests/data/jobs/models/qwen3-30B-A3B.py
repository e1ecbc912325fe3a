"""Qwen3-30B-A3B model args in the Miles style (scripts/models/<type>.py), written for rlcheck's job-capture tests."""


def model_args() -> str:
    return (
        "--num-layers 48 --hidden-size 2048 --ffn-hidden-size 6144 --num-attention-heads 32 "
        "--group-query-attention --num-query-groups 4 --kv-channels 128 --qk-layernorm --norm-epsilon 1e-6 "
        "--rotary-percent 1.0 --untie-embeddings-and-output-weights --disable-bias-linear --swiglu "
        "--normalization RMSNorm --position-embedding-type rope --vocab-size 151936 --rotary-base 1000000 "
        "--num-experts 128 --moe-router-topk 8 --moe-ffn-hidden-size 768 --moe-layer-freq [1]*48 "
        "--moe-router-score-function softmax --moe-token-dispatcher-type alltoall --moe-grouped-gemm "
        "--moe-token-drop-policy probs --moe-router-dtype fp32 --moe-permute-fusion --moe-aux-loss-coeff 0 "
    )
