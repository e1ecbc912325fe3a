"""The launch of launch.sh written as a Miles Python launcher (tests/data/jobs), for rlcheck's job-capture tests:
a ScriptArgs dataclass, argv built as strings, handed to Miles' execute_train."""

from dataclasses import dataclass

import miles.utils.external_utils.command_utils as U
import typer


@dataclass
class ScriptArgs(U.ExecuteTrainConfig):
    model_name: str = "Qwen3-30B-A3B"
    megatron_model_type: str = "qwen3-30B-A3B"
    hardware: str = "H200"
    megatron_path: str = "/opt/Megatron-LM"
    tp: int = 2
    cp: int = 2


def execute(args: ScriptArgs) -> None:
    ckpt_args = (
        f"--hf-checkpoint /fsx/models/{args.model_name} "
        f"--ref-load /fsx/models/{args.model_name}_torch_dist "
        "--load /fsx/checkpoints/qwen3-30b-a3b-grpo --save /fsx/checkpoints/qwen3-30b-a3b-grpo --save-interval 20 "
    )
    rollout_args = (
        "--prompt-data /fsx/data/dapo-math-17k.jsonl --input-key prompt --label-key label "
        "--apply-chat-template --rollout-shuffle --num-rollout 100 --rollout-batch-size 12 "
        "--n-samples-per-prompt 8 --global-batch-size 96 --num-steps-per-rollout 1 "
        "--rollout-max-response-len 8192 --rollout-temperature 1.0 "
    )
    perf_args = (
        f"--tensor-model-parallel-size {args.tp} --pipeline-model-parallel-size 1 --context-parallel-size {args.cp} "
        "--expert-model-parallel-size 2 --expert-tensor-parallel-size 1 "
        f"{'--sequence-parallel ' if args.tp > 1 else ''}--use-dynamic-batch-size --max-tokens-per-gpu 4096 "
    )
    grpo_args = (
        "--advantage-estimator grpo --use-kl-loss --kl-loss-coef 0.00 --kl-loss-type low_var_kl "
        "--entropy-coef 0.00 --eps-clip 0.2 --eps-clip-high 0.28 "
    )
    optimizer_args = (
        "--optimizer adam --lr 1e-06 --lr-decay-style constant --weight-decay 0.1 --adam-beta1 0.9 --adam-beta2 0.98 "
    )
    misc_args = (
        "--attention-dropout 0.0 --hidden-dropout 0.0 "
        f"--actor-num-nodes {args.num_nodes} --actor-num-gpus-per-node 6 "
        f"--num-gpus-per-node {U.NUM_GPUS_OF_HARDWARE[args.hardware]} "
        "--rollout-num-gpus-per-engine 2 --rollout-num-gpus 4 --rm-type deepscaler "
        "--sglang-mem-fraction-static 0.85 --sglang-log-level warning "
        "--recompute-granularity full --recompute-method uniform --recompute-num-layers 1 "
    )
    U.execute_train(
        train_args=f"{ckpt_args}{rollout_args}{perf_args}{grpo_args}{optimizer_args}"
        f"{U.get_default_wandb_args(__file__)}{misc_args}",
        config=args,
        num_gpus_per_node=U.NUM_GPUS_OF_HARDWARE[args.hardware],
        megatron_model_type=args.megatron_model_type,
        extra_env_vars={"TOKENIZERS_PARALLELISM": "false", "NCCL_DEBUG": "WARN", "RLCHECK_WORKER_CAPABILITY": "9.0",
                        "FI_PROVIDER": "efa", "FI_EFA_USE_DEVICE_RDMA": "1"},
        megatron_path=args.megatron_path,
    )


@U.dataclass_cli
def main(args: ScriptArgs) -> None:
    execute(args)


if __name__ == "__main__":
    typer.run(main)
