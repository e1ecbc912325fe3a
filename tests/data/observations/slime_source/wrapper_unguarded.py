# A validate_args wrapper that hands straight to Megatron (written for rlcheck's tests).
import megatron.training.arguments as megatron_arguments


def validate_args(args):
    args.bf16 = not args.fp16
    megatron_arguments.validate_args(args)
