"""One benchmark case: every implementation on the same input, timed and checked."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from benchmarks.sparse_mla.report import FULL_EXTENT, summarize
from benchmarks.sparse_mla.timing import Timing, WorkModel, bwd_work, fwd_work, time_cuda
from benchmarks.sparse_mla.upstream import Upstream, UpstreamSpec, upstream_indices
from kernels.checks import reference_for
from kernels.config import DEFAULT_FWD_CONFIG, SAFE_BWD_CONFIG, SHIPPED_BWD_CONFIG, MlaShape
from kernels.inputs import make_inputs
from kernels.metrics import compare
from kernels.precompile import precompile, run_workers
from kernels.reference import reference_backward, reference_forward
from kernels.sparse_mla_bwd import BwdTile, sparse_mla_bwd
from kernels.sparse_mla_fwd import sparse_mla_fwd
from kernels.variants import KernelSpec

PADDING = "prefix"  # the example's own index distribution
UPSTREAM_FWD_LABEL = "example v0.1.9 (ws off, merge default)"
BWD_CONFIGS = (SAFE_BWD_CONFIG, SHIPPED_BWD_CONFIG)


def _upstream_specs(shape: MlaShape) -> list[UpstreamSpec]:
    base = UpstreamSpec(
        kind="bwd",
        batch=shape.batch,
        seq_len=shape.seq_len,
        seq_len_kv=shape.seq_len_kv,
        heads=shape.heads,
        topk=shape.topk,
    )
    kinds = [dataclasses.replace(base, kind=kind) for kind in ("fwd", "pre", "post")]
    return kinds + [dataclasses.replace(base, merge=merge) for merge in (True, False)]


def precompile_all(shapes: list[MlaShape], upstream_dir: Path | None, jobs: int) -> list[dict[str, Any]]:
    ours = [KernelSpec(kind="delta")]
    for shape in shapes:
        ours.append(KernelSpec(kind="fwd", heads=shape.heads, topk=shape.topk, config=DEFAULT_FWD_CONFIG))
        ours += [KernelSpec(kind="bwd", heads=shape.heads, topk=shape.topk, config=config) for config in BWD_CONFIGS]
        ours.append(KernelSpec(kind="bwd", heads=shape.heads, topk=shape.topk, skip_padding_blocks=False))
    results = precompile(ours, jobs)
    if upstream_dir is not None:
        specs = list(dict.fromkeys(spec for shape in shapes for spec in _upstream_specs(shape)))
        payloads = [
            (spec.label(), json.dumps({"folder": str(upstream_dir), "spec": dataclasses.asdict(spec)}))
            for spec in specs
        ]
        results += run_workers("benchmarks.sparse_mla.upstream", payloads, jobs)
    return [dataclasses.asdict(result) for result in results]


class CaseRunner:
    def __init__(self, upstream_dir: Path | None, bandwidth_bytes_per_s: float) -> None:
        self.upstream = Upstream(upstream_dir) if upstream_dir is not None else None
        self.bandwidth = bandwidth_bytes_per_s

    def run(self, shape: MlaShape, with_reference: bool) -> dict[str, Any]:
        try:
            return self._run(shape, with_reference)
        except torch.cuda.OutOfMemoryError as exc:
            return {"shape": shape.label(), "error": f"out of memory: {str(exc)[:200]}"}
        except Exception as exc:  # one case failing must not lose the others' numbers
            return {"shape": shape.label(), "error": f"{type(exc).__name__}: {str(exc)[-400:]}"}
        finally:
            torch.cuda.empty_cache()

    def _row(self, impl: str, direction: str, config: str, timing: Timing, work: WorkModel) -> dict[str, Any]:
        seconds = timing.median_ms * 1e-3
        return {
            "impl": impl,
            "pass": direction,
            "config": config,
            **timing.as_dict(),
            "unique_bytes_bound_ms": round(work.unique_bytes / self.bandwidth * 1e3, 3),
            "gathered_bytes_bound_ms": round(work.gathered_bytes / self.bandwidth * 1e3, 3),
            "tflop_per_s": round(work.flops / seconds / 1e12, 1),
        }

    def _measure(
        self, rows: list, outputs: dict, key: tuple[str, str, str], fn: Callable[[], Any], work: WorkModel, reps: int
    ) -> Any:
        """Time `fn`, keep its outputs under `key`; an error becomes a row instead of ending the case."""
        try:
            result = fn()
            torch.cuda.synchronize()
            timing = time_cuda(fn, warmup=2, reps=reps)
        except torch.cuda.OutOfMemoryError:
            raise
        except Exception as exc:
            rows.append(
                {"impl": key[0], "pass": key[1], "config": key[2], "error": f"{type(exc).__name__}: {str(exc)[-300:]}"}
            )
            return None
        rows.append(self._row(*key, timing, work))
        names = ("out", "lse") if key[1] == "fwd" else ("dq", "dkv")
        outputs[key] = dict(zip(names[:1] if key[1] == "fwd" else names, result, strict=False))
        return result

    def _run(self, shape: MlaShape, with_reference: bool) -> dict[str, Any]:
        x = make_inputs(shape, PADDING, seed=0)
        reps = 20 if shape.seq_len <= 8192 else 5
        case: dict[str, Any] = {
            "shape": shape.label(),
            "padding": PADDING,
            "valid_fraction": float((x.indices >= 0).float().mean()),
        }
        rows: list[dict[str, Any]] = []
        outputs: dict[tuple[str, str, str], dict[str, torch.Tensor]] = {}
        key = ("ours", "fwd", DEFAULT_FWD_CONFIG.label())
        fwd = self._measure(rows, outputs, key, lambda: sparse_mla_fwd(x.q, x.kv, x.indices), fwd_work(shape), reps)
        if fwd is not None:
            out, lse = fwd
            for config in BWD_CONFIGS:
                run = lambda c=config: sparse_mla_bwd(x.q, x.kv, out, x.grad_out, x.indices, lse, config=c)  # noqa: E731
                self._measure(rows, outputs, ("ours", "bwd", config.label()), run, bwd_work(shape), reps)
            full = BwdTile(skip_padding_blocks=False)
            run = lambda: sparse_mla_bwd(x.q, x.kv, out, x.grad_out, x.indices, lse, tile=full)  # noqa: E731
            self._measure(
                rows, outputs, ("ours", "bwd", SAFE_BWD_CONFIG.label() + FULL_EXTENT), run, bwd_work(shape), reps
            )
        if self.upstream is not None:
            self._run_upstream(shape, x, reps, rows, outputs)
        baseline = self._baseline(shape, x, with_reference, rows, outputs)
        _attach_checks(rows, outputs, baseline)
        case.update(baseline=baseline[0], results=rows, summary=summarize(rows))
        return case

    def _run_upstream(self, shape: MlaShape, x: Any, reps: int, rows: list, outputs: dict) -> None:
        assert self.upstream is not None
        upstream, idx = self.upstream, upstream_indices(x.indices, shape.seq_len_kv)
        specs = _upstream_specs(shape)
        key = ("upstream", "fwd", UPSTREAM_FWD_LABEL)
        try:
            fwd_run = upstream.fwd_runner(specs[0])
        except Exception as exc:
            rows.append(
                {
                    "impl": "upstream",
                    "pass": "fwd",
                    "config": key[2],
                    "error": f"{type(exc).__name__}: {str(exc)[-300:]}",
                }
            )
            return
        fwd = self._measure(rows, outputs, key, lambda: fwd_run(x.q, x.kv, idx), fwd_work(shape), reps)
        if fwd is None:
            return
        out, lse = fwd
        for spec in specs[3:]:
            label = f"merge={'on' if spec.merge else 'off'},ws=off,stages=0,tma=on"
            try:
                run = upstream.bwd_runner(spec)
            except Exception as exc:  # e.g. the example's fixed 256 threads at 16 heads
                rows.append(
                    {
                        "impl": "upstream",
                        "pass": "bwd",
                        "config": label,
                        "error": f"{type(exc).__name__}: {str(exc)[-300:]}",
                    }
                )
                continue
            self._measure(
                rows,
                outputs,
                ("upstream", "bwd", label),
                lambda r=run: r(x.q, x.kv, out, x.grad_out, idx, lse),
                bwd_work(shape),
                reps,
            )

    def _baseline(self, shape: MlaShape, x: Any, with_reference: bool, rows: list, outputs: dict) -> tuple[str, dict]:
        if with_reference:
            ref = reference_for(x)
            timing = time_cuda(lambda: reference_forward(x.q, x.kv, x.indices), warmup=1, reps=3)
            rows.append(self._row("reference", "fwd", "fp32 dense gather", timing, fwd_work(shape)))
            timing = time_cuda(lambda: reference_backward(x.q, x.kv, x.indices, x.grad_out), warmup=1, reps=3)
            rows.append(self._row("reference", "bwd", "fp32 dense gather + autograd", timing, bwd_work(shape)))
            return "fp32 reference", {"out": ref.out, "dq": ref.grads.dq, "dkv": ref.grads.dkv}
        for name, bwd_key, fwd_key in (
            (
                "upstream example, merge off",
                ("upstream", "bwd", SAFE_BWD_CONFIG.label()),
                ("upstream", "fwd", UPSTREAM_FWD_LABEL),
            ),
            ("ours, merge off", ("ours", "bwd", SAFE_BWD_CONFIG.label()), ("ours", "fwd", DEFAULT_FWD_CONFIG.label())),
        ):
            if bwd_key in outputs and fwd_key in outputs:
                return name, outputs[bwd_key] | outputs[fwd_key]
        return "none", {}


def _attach_checks(rows: list[dict[str, Any]], outputs: dict, baseline: tuple[str, dict]) -> None:
    for row in rows:
        produced = outputs.get((row["impl"], row["pass"], row["config"]), {})
        row["checks"] = {
            name: compare(name, tensor, baseline[1][name]).as_dict()
            for name, tensor in produced.items()
            if name in baseline[1]
        }
