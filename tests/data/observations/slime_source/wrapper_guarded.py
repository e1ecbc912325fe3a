# A validate_args wrapper shaped like the seed's build-time patch (written for rlcheck's tests).
import torch
import megatron.training.arguments as megatron_arguments


def validate_args(args):
    if not torch.cuda.is_available():
        torch.cuda.get_device_capability = lambda device=None: (9, 0)
        megatron_arguments.get_device_arch_version = lambda: 9
    megatron_arguments.validate_args(args)
