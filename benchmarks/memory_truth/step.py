"""One configuration's real Megatron-core training steps on one GPU, with the memory of each phase (child process).

    python -m benchmarks.memory_truth.step NAME OUT.json

What runs, as SLIME's actor trains (THUDM/slime 624b824, slime/backends/megatron_utils): megatron-core's GPTModel
with the local (non-Transformer-Engine) layer spec, Qwen3-shaped (RMSNorm, q/k norms, GQA, SwiGLU, RoPE, tied
embeddings, no biases), random weights, bf16 (Float16Module: fp32 logits on the last stage), Megatron's
DistributedDataParallel (fp32 grad buffer) and distributed optimizer (Adam), world size 1, TP 1. One packed
micro-batch of --max-tokens-per-gpu tokens per step. The loss is a policy-gradient loss on per-token log-probs
computed as SLIME's ppo_utils computes them: the fp32 logits, one more fp32 [tokens, vocab] buffer holding the
max-shifted logits, exponentiated and normalised in place and kept for backward, whose gradient is written into
that same buffer (no copy of SLIME's code: the same allocations). At a temperature other than 1 the logits are
divided by it first (SLIME's get_log_probs_and_entropy), a copy.

Substitutions, because Transformer Engine and flash-attn are not installed: the core attention is torch's
scaled_dot_product_attention (flash or memory-efficient kernel, causal, GQA without repeating K/V), which keeps
what TE's flash attention keeps for backward (q, k, v, the output and the log-sum-exp); the micro-batch is one
causal sequence of all its tokens, which costs the same memory as packed documents with cu_seqlens; torch's fused
AdamW (one multi-tensor kernel, no full-size temporaries, as TE's FusedAdam) stands for TE's FusedAdam, and
Megatron's unfused weight-gradient path (gradient_accumulation_fusion off) stands for TE's fused one.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from typing import Any

GIB = 2**30
STEPS = 3
ATTENTION_GQA = "torch SDPA (flash or memory-efficient), GQA without repeating K/V"
ATTENTION_EXPANDED = "torch SDPA (flash or memory-efficient), K/V repeated per query head (no GQA kernel)"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main(name: str, out_path: str) -> int:
    from benchmarks.memory_truth.configs import by_name

    config = by_name(name)
    record: dict[str, Any] = {"name": name, "phases": {}, "steps": []}
    started = time.monotonic()
    try:
        _run(config, record)
        record["ok"] = True
    except Exception as exc:  # recorded in the result file, and the traceback goes to stderr
        import traceback

        traceback.print_exc()
        record["ok"], record["error"] = False, f"{type(exc).__name__}: {exc}"[:2000]
    record["wall_s"] = round(time.monotonic() - started, 1)
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=2)
    return 0 if record["ok"] else 1


def _run(config: Any, record: dict[str, Any]) -> None:  # noqa: PLR0915 - one straight-line training script
    import torch
    import torch.nn.functional as F  # noqa: N812
    from torch.nn.attention import SDPBackend, sdpa_kernel

    cuda = torch.cuda

    def used() -> float:
        free, total = cuda.mem_get_info()
        return (total - free) / GIB

    def mark(phase: str) -> None:
        cuda.synchronize()
        record["phases"][phase] = {"allocated_gib": cuda.memory_allocated() / GIB,
                                   "reserved_gib": cuda.memory_reserved() / GIB,
                                   "max_allocated_gib": cuda.max_memory_allocated() / GIB,
                                   "max_reserved_gib": cuda.max_memory_reserved() / GIB,
                                   "device_used_gib": used()}

    cuda.set_device(0)
    torch.zeros(1, device="cuda")
    mark("cuda_context")  # device_used here: the CUDA context (and the one-element allocation's 2 MiB block)
    record["torch"], record["gpu"] = torch.__version__, cuda.get_device_name(0)

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()), CUDA_DEVICE_MAX_CONNECTIONS="1")
    torch.distributed.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda", 0))

    import megatron.core
    from megatron.core import parallel_state
    from megatron.core.distributed import DistributedDataParallel, DistributedDataParallelConfig
    from megatron.core.models.gpt import GPTModel
    from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_local_spec
    from megatron.core.optimizer import OptimizerConfig, get_megatron_optimizer
    from megatron.core.tensor_parallel.random import model_parallel_cuda_manual_seed
    from megatron.core.transformer.module import Float16Module, MegatronModule
    from megatron.core.transformer.transformer_config import TransformerConfig

    record["megatron_core"] = megatron.core.__version__
    parallel_state.initialize_model_parallel(1, 1)
    model_parallel_cuda_manual_seed(1234)
    torch.distributed.barrier()
    mark("process_groups")

    class SdpaAttention(MegatronModule):
        """Core attention through torch's fused SDPA (stands for TE's flash attention; see the module docstring)."""

        def __init__(self, config: TransformerConfig, layer_number: int, attn_mask_type: Any, attention_type: str,
                     attention_dropout: float | None = None, softmax_scale: float | None = None,
                     cp_comm_type: str | None = None, pg_collection: Any = None) -> None:
            super().__init__(config=config)
            self.softmax_scale = softmax_scale

        def forward(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, attention_mask: Any,
                    attn_mask_type: Any = None, attention_bias: Any = None, packed_seq_params: Any = None,
                    **_: Any) -> torch.Tensor:
            # Megatron hands [s, b, heads, d]; SDPA takes [b, heads, s, d] (views, no copies).
            q, k, v = (t.permute(1, 2, 0, 3) for t in (query, key, value))
            gqa = k.size(1) != q.size(1)
            if gqa and record.get("attention") == ATTENTION_EXPANDED:
                k, v = (t.repeat_interleave(q.size(1) // t.size(1), dim=1) for t in (k, v))
                gqa = False
            try:
                with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):
                    out = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=self.softmax_scale,
                                                         enable_gqa=gqa)
            except RuntimeError:
                if not gqa:
                    raise
                record["attention"] = ATTENTION_EXPANDED  # no fused kernel takes GQA here: K/V repeated per head
                return self.forward(query, key, value, attention_mask)
            record.setdefault("attention", ATTENTION_GQA)
            s, b = query.size(0), query.size(1)
            return out.permute(2, 0, 1, 3).reshape(s, b, -1)

    class LogProbs(torch.autograd.Function):
        """Per-token log-probs from fp32 logits [T, V]: one [T, V] buffer (the shifted logits, exponentiated and
        normalised in place, kept for backward, the gradient written into it), as SLIME's ppo_utils allocates."""

        @staticmethod
        def forward(ctx: Any, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
            buf = logits - logits.max(dim=-1, keepdim=True).values
            picked = buf.gather(-1, target.unsqueeze(-1))
            buf.exp_()
            total = buf.sum(dim=-1, keepdim=True)
            buf.div_(total)
            ctx.save_for_backward(buf, target)
            return (picked - total.log()).squeeze(-1)

        @staticmethod
        def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
            softmax, target = ctx.saved_tensors
            grad_in = softmax.neg_()
            grad_in.scatter_add_(-1, target.unsqueeze(-1), torch.ones_like(target, dtype=grad_in.dtype).unsqueeze(-1))
            grad_in.mul_(grad.unsqueeze(-1))
            return grad_in, None

    model_arch = config.model
    att = model_arch.attention
    recompute = {"recompute_granularity": "full", "recompute_method": "uniform", "recompute_num_layers": 1} \
        if config.recompute else {}
    tconfig = TransformerConfig(
        num_layers=model_arch.num_layers, hidden_size=model_arch.hidden_size,
        ffn_hidden_size=model_arch.ffn_hidden_size, num_attention_heads=model_arch.num_attention_heads,
        num_query_groups=att.num_query_groups, kv_channels=att.kv_channels, qk_layernorm=att.qk_layernorm,
        normalization="RMSNorm", layernorm_epsilon=1e-6, gated_linear_unit=True, activation_func=F.silu,
        add_bias_linear=False, hidden_dropout=0.0, attention_dropout=0.0, bf16=True, params_dtype=torch.bfloat16,
        pipeline_dtype=torch.bfloat16, bias_activation_fusion=True, bias_dropout_fusion=True,
        apply_rope_fusion=False, masked_softmax_fusion=False, gradient_accumulation_fusion=False,
        persist_layer_norm=False, use_cpu_initialization=False, perform_initialization=True, **recompute)
    spec = get_gpt_layer_local_spec(qk_layernorm=True, normalization="RMSNorm")
    spec.submodules.self_attention.submodules.core_attention = SdpaAttention
    gpt = GPTModel(tconfig, spec, vocab_size=model_arch.vocab_size, max_sequence_length=config.tokens,
                   share_embeddings_and_output_weights=not model_arch.untie_embeddings,
                   position_embedding_type="rope", rotary_base=model_arch.rotary_base)
    gpt.cuda()
    params = sum(p.numel() for p in gpt.parameters())
    record["model_params"] = params
    model = Float16Module(tconfig, gpt)
    ddp_config = DistributedDataParallelConfig(grad_reduce_in_fp32=True, overlap_grad_reduce=False,
                                               use_distributed_optimizer=True)
    model = DistributedDataParallel(tconfig, ddp_config, model)
    mark("after_model")  # bf16 params in the DDP param buffer + fp32 grad buffer

    # torch's fused AdamW stands for TE's FusedAdam (megatron-core falls back to foreach torch.optim.AdamW).
    base_adamw = torch.optim.AdamW

    class FusedAdamW(base_adamw):  # type: ignore[valid-type,misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, fused=True, **kwargs)

    torch.optim.AdamW = FusedAdamW  # type: ignore[misc]
    optimizer = get_megatron_optimizer(
        OptimizerConfig(optimizer="adam", lr=1e-6, weight_decay=0.1, adam_beta1=0.9, adam_beta2=0.98,
                        clip_grad=1.0, bf16=True, params_dtype=torch.bfloat16, use_distributed_optimizer=True),
        [model])
    record["optimizer"] = type(optimizer).__name__ + " over " + ", ".join(
        sorted({type(o).__module__ + "." + type(o).__name__ for o in _inner_optimizers(optimizer)}))
    mark("after_optimizer_init")  # + fp32 master weights (Adam's moments come at the first step)

    vocab, tokens = model_arch.vocab_size, config.tokens
    gen = torch.Generator(device="cuda").manual_seed(0)
    for step in range(STEPS):
        input_ids = torch.randint(0, vocab, (1, tokens), device="cuda", generator=gen)
        position_ids = torch.arange(tokens, device="cuda").unsqueeze(0)
        target = torch.roll(input_ids[0], -1)
        advantages = torch.randn(tokens, device="cuda", generator=gen)
        model.zero_grad_buffer()
        optimizer.zero_grad()
        cuda.synchronize()
        cuda.reset_peak_memory_stats()
        base = cuda.memory_allocated() / GIB
        logits = model(input_ids, position_ids, None)  # Float16Module: fp32 [1, T, V]
        cuda.synchronize()
        after_model_forward = cuda.max_memory_allocated() / GIB
        flat = logits.squeeze(0)
        if config.temperature != 1.0:
            flat = flat / config.temperature
        logp = LogProbs.apply(flat, target)
        loss = -(logp * advantages).mean()
        cuda.synchronize()
        peak_forward = cuda.max_memory_allocated() / GIB
        del logits, flat
        loss.backward()
        model.finish_grad_sync()
        cuda.synchronize()
        peak_fwd_bwd = cuda.max_memory_allocated() / GIB
        reserved_fwd_bwd = cuda.max_memory_reserved() / GIB
        del loss, logp
        cuda.reset_peak_memory_stats()
        before_step = cuda.memory_allocated() / GIB
        update_ok, grad_norm, _ = optimizer.step()
        cuda.synchronize()
        record["steps"].append({
            "step": step + 1, "allocated_at_start_gib": base, "peak_model_forward_gib": after_model_forward,
            "peak_forward_with_loss_gib": peak_forward, "peak_fwd_bwd_gib": peak_fwd_bwd,
            "max_reserved_fwd_bwd_gib": reserved_fwd_bwd, "allocated_before_optimizer_gib": before_step,
            "peak_optimizer_step_gib": cuda.max_memory_allocated() / GIB,
            "allocated_after_step_gib": cuda.memory_allocated() / GIB,
            "max_reserved_gib": cuda.max_memory_reserved() / GIB, "device_used_gib": used(),
            "update_ok": bool(update_ok), "grad_norm": float(grad_norm) if grad_norm is not None else None})
    mark("end")
    record["allocator_stats"] = {k: v for k, v in cuda.memory_stats().items()
                                 if k in ("num_alloc_retries", "num_ooms", "reserved_bytes.all.peak",
                                          "allocated_bytes.all.peak", "inactive_split_bytes.all.peak")}
    torch.distributed.destroy_process_group()


def _inner_optimizers(optimizer: Any) -> list[Any]:
    inner = getattr(optimizer, "chained_optimizers", None) or [optimizer]
    return [getattr(o, "optimizer", o) for o in inner]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
