"""Preflight memory checks of a recipe on a hardware profile (catalogue: pp-stage-oom, kv-pool-truncation).

Training, per GPU of pipeline stage s (parameter counts: rlcheck.probes.memory_params):
  params = sum over its layers (expert / (EP x ETP) + other / TP) + embedding / TP (first stage)
           + output layer / TP (last stage)
  bytes  = 2 x params (bf16 weights) + 4 x params (fp32 main grads: Megatron's default under bf16)
           + 12 x (expert / EDP + other / (DP x CP))  (fp32 master + Adam m, v; SLIME forces Megatron's
           distributed optimizer; EDP = world / (EP x ETP x PP)); the 12 B stay on the CPU with
           --optimizer-cpu-offload.
  Budget = TORCH_BUDGET_FRACTION x HBM. Activations are not modelled: above 90% of the budget WARNs.
  Calibration, seed 004 (Miles GB300 bring-up, radixark/miles#1571): GLM-5.2 counts 743.9B (744B: -0.01%);
  TP8 x PP8 x EP8, 14/8x6/16: last stage 19.87B per rank (reported 20.1B: -1.1%), Adam moments 148.1 GiB
  (20.1B x 8 B = 149.8 GiB, reported ~150: -1.1%), 333 GiB in all > 242 GiB (step 1 ran out of memory);
  TP8 x PP4 x EP16, 18/20/20/20: 209.8 GiB static against 228 GiB measured steady with activations.

Rollout, per GPU of one SGLang engine (SGLang sizes its pool from what is free after loading weights):
  pool tokens = (mem_fraction_static x HBM - weights - reserve) / KV bytes per token, page-rounded
  weights = (expert / engine GPUs + other / attention TP) x (2 B; 1 B for an fp8 or int8 checkpoint)
  KV bytes per token per GPU: memory_params.kv_bytes_per_token (GLM-5.2, fp8: 78 x (576 + 132) = 55,224 B)
  Calibration, seed 004 (64 x GB300, GLM-5.2): 0.75 gave 26,304 tokens and 0.85 gave 553,728. The two
  points imply 52,321 B per token (architecture: 55,224 B, +5.5%) and weights + reserve = 191.5 GiB.
  Assumed engine: 8 GPUs at bf16 (173.2 GiB per GPU; on 4 GPUs bf16 needs 346 GiB per GPU, more than
  the GPU has; a 4-GPU engine on an fp8 checkpoint also holds 173 GiB per GPU): reserve = 18.3 GiB,
  applied to every recipe. With the architecture's bytes per token the pools come out at 24,896 and
  524,608 tokens (-5.4% and -5.3%). The pool caps SGLang's request length (max_req_len), so: FAIL when
  it holds no full prompt + response, WARN when fewer than the requests an engine runs at once.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import re

from rlcheck import catalog
from rlcheck.hardware import HardwareProfile
from rlcheck.probes.memory_params import GIB, StageLoad, count_params, flag_value, kv_bytes_per_token, stage_loads
from rlcheck.recipes.models import GLM5_2
from rlcheck.recipes.recipe import Parallelism, Recipe
from rlcheck.verdict import Status, Verdict

GB300_HBM_GIB = 257.0
"""The gb300 profile's HBM (276 GB), against which seed 004 measured."""
TORCH_BUDGET_FRACTION = 242.0 / GB300_HBM_GIB
"""Seed 004: 'GPU 228/242 GB' steady on GB300. Its GB are torch's GiB (its ~150 GB of Adam moments is
20.1e9 x 8 B = 149.8 GiB), so 242 of 257 GiB: the rest is CUDA context, NCCL buffers, SGLang's residue."""
WARN_FRACTION = 0.9
"""Activations are not modelled: an estimate above 90% of the budget WARNs."""
SEED_LAST_STAGE_PARAMS = 20.1e9
"""Seed 004: parameters per rank on the last stage of TP8 x PP8 x EP8 (step 1 ran out of memory)."""
SEED_STEADY_GIB = 228.0
"""Seed 004: steady GPU memory of TP8 x PP4 x EP16, 18/20/20/20 on GB300, activations included."""
SEED_POOL_TOKENS = ((0.75, 26_304), (0.85, 553_728))
"""Seed 004: (mem_fraction_static, KV pool tokens) on 64 x GB300, GLM-5.2, fp8_e4m3 KV cache."""
SEED_ENGINE_GPUS = 8
"""Assumed: bf16 GLM-5.2 does not fit 4 GB300 GPUs (372 GB per GPU); Miles' low-latency engine is one TP8
engine per node pair (its script's comment). A 4-GPU engine on an fp8 checkpoint gives the same intercept."""
ASSUMED_PROMPT_TOKENS = 1024
"""Prompt budget when the recipe sets no --rollout-max-prompt-len (dapo-math prompts are shorter)."""
_FP8 = re.compile(r"fp8|int8", re.IGNORECASE)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class StageMemory:
    stages: tuple[StageLoad, ...]
    model_params: int
    dp_cp: int
    """Data-parallel x context-parallel ranks: the distributed optimizer shards dense state over them."""
    expert_dp: int
    """Expert-data-parallel ranks, world / (EP x ETP x PP): they shard the experts' optimizer state."""
    optimizer_offload: bool
    budget_gib: float

    @property
    def peak(self) -> StageLoad:
        return max(self.stages, key=lambda s: s.total_gib)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class KvPool:
    mem_fraction_static: float
    engine_gpus: int
    engines: int
    pools_per_engine: int
    """One KV pool per engine; one per DP rank under --enable-dp-attention."""
    weight_bytes_per_param: int
    weights_gib: float
    """Rollout weights per GPU of one engine."""
    reserve_gib: float
    kv_bytes_per_token: int
    """Per GPU, all layers."""
    pool_tokens: int
    """Per pool."""
    request_tokens: int
    """Prompt + max response: one full-length request."""
    prompt_assumed: bool
    concurrency: int
    """Requests one pool is asked to hold at once: min(max-running-requests, samples / engines) / pools."""

    @property
    def full_requests(self) -> int:
        return self.pool_tokens // self.request_tokens


def estimate_stage_memory(recipe: Recipe, profile: HardwareProfile) -> StageMemory:
    """Static training memory per GPU of every pipeline stage; ValueError when the layout cannot exist."""
    par, world = recipe.parallel, recipe.world_size
    for name, size in (("TP x PP", par.tp * par.pp), ("EP x ETP x PP", par.ep * par.etp * par.pp)):
        if world % size:
            raise ValueError(f"{world} training GPUs do not divide by {name} = {size}")
    params = count_params(recipe.model)
    return StageMemory(stages=stage_loads(params, par, world, recipe.optimizer.cpu_offload),
                       model_params=params.total, dp_cp=world // (par.tp * par.pp),
                       expert_dp=world // (par.ep * par.etp * par.pp), optimizer_offload=recipe.optimizer.cpu_offload,
                       budget_gib=TORCH_BUDGET_FRACTION * profile.hbm_gib)


@functools.cache
def stage_calibration() -> str:
    """The seed 004 numbers against this module's formula, for the verdict details."""
    params = count_params(GLM5_2)
    old = stage_loads(params, Parallelism(tp=8, pp=8, ep=8, pp_first_layers=14, pp_last_layers=16), 64, False)[-1]
    new = max(stage_loads(params, Parallelism(tp=8, pp=4, ep=16, pp_first_layers=18, pp_last_layers=20), 64,
                           False), key=lambda s: s.total_gib)
    moments, seed_moments = 8 * old.params / GIB, 8 * SEED_LAST_STAGE_PARAMS / GIB
    return (f"calibration (seed 004, GLM-5.2 on GB300): total {params.total / 1e9:.1f}B vs 744B "
            f"({_err(params.total, 744e9)}); TP8xPP8xEP8 last stage {old.params / 1e9:.2f}B per rank vs 20.1B "
            f"({_err(old.params, SEED_LAST_STAGE_PARAMS)}), Adam moments {moments:.1f} GiB vs "
            f"{seed_moments:.1f} (~150 reported; {_err(moments, seed_moments)}), {old.total_gib:.0f} GiB in all "
            f"vs the 242 GiB budget (step 1 OOM); "
            f"TP8xPP4xEP16 {new.total_gib:.1f} GiB static vs {SEED_STEADY_GIB:.0f} GiB measured with activations")


def _err(value: float, reference: float) -> str:
    return f"{(value - reference) / reference:+.1%}"


def evaluate_stage_memory(recipe: Recipe, profile: HardwareProfile | None) -> Verdict:
    base = {"failure_id": "pp-stage-oom"}
    if profile is None:
        return Verdict(**base, status=Status.SKIP, summary="needs a hardware profile (--hardware): found none")
    try:
        memory = estimate_stage_memory(recipe, profile)
    except ValueError as exc:
        return Verdict(**base, status=Status.UNKNOWN, summary=f"cannot lay {recipe.id} out in stages: {exc}")
    peak, budget, pp = memory.peak, memory.budget_gib, recipe.parallel.pp
    where = f"stage {peak.stage} of {pp} ({peak.layers} layers): {peak.total_gib:.1f} GiB per GPU " \
            f"({peak.params / 1e9:.2f}B params per rank)"
    limit = f"{budget:.1f} GiB torch budget ({TORCH_BUDGET_FRACTION:.2f} x {profile.hbm_gib:.1f} GiB {profile.name})"
    details = _stage_details(recipe, memory)
    if peak.total_gib > budget:
        return Verdict(**base, status=Status.FAIL, details=details, remedy=catalog.get("pp-stage-oom").remedy,
                       summary=f"{where} of weights, grads and optimizer state > {limit}")
    if peak.total_gib > WARN_FRACTION * budget:
        return Verdict(**base, status=Status.WARN, details=details,
                       remedy="leave room for activations: lower --max-tokens-per-gpu, raise EP or PP, or "
                              "offload the optimizer (--optimizer-cpu-offload)",
                       summary=f"{where} is within {1 - WARN_FRACTION:.0%} of the {limit}; activations not modelled")
    return Verdict(**base, status=Status.PASS, details=details,
                   summary=f"most loaded {where} <= {limit}; activations not modelled")


def _stage_details(recipe: Recipe, memory: StageMemory) -> str:
    p = recipe.parallel
    lines = [f"{recipe.model.name}: {memory.model_params / 1e9:.2f}B params; TP{p.tp} PP{p.pp} CP{p.cp} EP{p.ep} "
             f"ETP{p.etp} on {recipe.world_size} GPUs; DPxCP {memory.dp_cp}, expert DP {memory.expert_dp}; "
             f"optimizer {'offloaded to CPU' if memory.optimizer_offload else 'on GPU (distributed)'}"]
    lines += [f"stage {s.stage}: {s.layers} layers, {s.expert_params / 1e9:.2f}B expert + {s.dense_params / 1e9:.2f}B "
              f"other per rank; weights {s.weights_gib:.1f} + grads {s.grads_gib:.1f} + optimizer "
              f"{s.optimizer_gib:.1f} = {s.total_gib:.1f} GiB" for s in memory.stages]
    lines += ["formula: per rank expert/(EP x ETP) + other/TP (+ embedding first, output last); bytes 2 (bf16) "
              "+ 4 (fp32 grads) + 12 (fp32 master, Adam m, v) sharded over expert DP or DP x CP; "
              "activations not modelled", stage_calibration()]
    return "\n".join(lines)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class KvCalibration:
    implied_kv_bytes_per_token: float
    """Slope of seed 004's two points: 0.1 x HBM / (553,728 - 26,304) tokens."""
    arch_kv_bytes_per_token: int
    intercept_gib: float
    """Weights + reserve per GPU that the two points imply."""
    seed_weights_gib: float
    reserve_gib: float
    predicted_tokens: tuple[int, ...]
    """The model's pool at the seed's fractions, with the architecture's bytes per token."""


@functools.cache
def kv_calibration() -> KvCalibration:
    (f_lo, t_lo), (f_hi, t_hi) = SEED_POOL_TOKENS
    hbm = GB300_HBM_GIB * GIB
    slope = (f_hi - f_lo) * hbm / (t_hi - t_lo)
    intercept = f_lo * hbm - t_lo * slope
    weights = count_params(GLM5_2).total * 2 / SEED_ENGINE_GPUS
    arch = kv_bytes_per_token(GLM5_2, "fp8_e4m3", SEED_ENGINE_GPUS)
    predicted = tuple(int((f * hbm - intercept) // arch) // 64 * 64 for f, _ in SEED_POOL_TOKENS)
    return KvCalibration(implied_kv_bytes_per_token=slope, arch_kv_bytes_per_token=arch,
                         intercept_gib=intercept / GIB, seed_weights_gib=weights / GIB,
                         reserve_gib=(intercept - weights) / GIB, predicted_tokens=predicted)


def _weight_bytes(recipe: Recipe) -> int:
    """1 for an fp8/int8 rollout checkpoint (Miles' --fp8-rollout loads '<model>_fp8') or quantization flag."""
    quantization = recipe.sglang_value("quantization") or ""
    return 1 if _FP8.search(quantization) or _FP8.search(recipe.hf_checkpoint.rsplit("/", 1)[-1]) else 2


def estimate_kv_pool(recipe: Recipe, profile: HardwareProfile) -> KvPool:
    """SGLang's KV pool per engine (per DP rank under dp-attention); ValueError without a usable fraction."""
    raw = recipe.sglang_value("mem-fraction-static")
    fraction = float(raw) if raw is not None and re.fullmatch(r"0?\.\d+|1(\.0*)?", raw) else -1.0
    if not 0 < fraction <= 1:
        raise ValueError(f"mem-fraction-static={raw!r}: a number in (0, 1]")
    pl, ro = recipe.placement, recipe.rollout
    engine = pl.rollout_gpus_per_engine
    pools = int(recipe.sglang_value("dp-size") or 1) if "enable-dp-attention" in dict(recipe.sglang) else 1
    attention_tp = max(1, engine // pools)
    params, nbytes = count_params(recipe.model), _weight_bytes(recipe)
    weights = (params.expert / engine + (params.total - params.expert) / attention_tp) * nbytes
    reserve = kv_calibration().reserve_gib * GIB
    kv = kv_bytes_per_token(recipe.model, recipe.sglang_value("kv-cache-dtype"), attention_tp)
    page = int(recipe.sglang_value("page-size") or 1)
    tokens = max(0, int((fraction * profile.hbm_gib * GIB - weights - reserve) // kv) // page * page)
    engines = max(1, pl.rollout_gpus // engine)
    asked = math.ceil(ro.rollout_batch_size * ro.n_samples_per_prompt / engines)
    running = recipe.sglang_value("max-running-requests")
    asked = min(asked, int(running)) if running else asked
    prompt = flag_value(list(recipe.extra_args), "--rollout-max-prompt-len")
    return KvPool(mem_fraction_static=fraction, engine_gpus=engine, engines=engines, pools_per_engine=pools,
                  weight_bytes_per_param=nbytes, weights_gib=weights / GIB, reserve_gib=reserve / GIB,
                  kv_bytes_per_token=kv, pool_tokens=tokens,
                  request_tokens=int(prompt or ASSUMED_PROMPT_TOKENS) + ro.max_response_len,
                  prompt_assumed=prompt is None, concurrency=math.ceil(asked / pools))


def evaluate_kv_pool(recipe: Recipe, profile: HardwareProfile | None) -> Verdict:
    base = {"failure_id": "kv-pool-truncation"}
    if profile is None:
        return Verdict(**base, status=Status.SKIP, summary="needs a hardware profile (--hardware): found none")
    if recipe.sglang_value("mem-fraction-static") is None:
        return Verdict(**base, status=Status.SKIP,
                       summary="needs --sglang-mem-fraction-static in the recipe: found none (SGLang picks its own)")
    try:
        pool = estimate_kv_pool(recipe, profile)
    except ValueError as exc:
        return Verdict(**base, status=Status.FAIL, summary=f"SGLang rejects {exc}", remedy="set a fraction such as 0.8")
    per = "per engine" if pool.pools_per_engine == 1 else "per DP rank"
    at = f"at mem_fraction_static {pool.mem_fraction_static:g} on {profile.name}"
    request = f"{pool.request_tokens:,}-token request"
    details, remedy = _kv_details(recipe, profile, pool), _kv_remedy(pool, profile)
    if pool.pool_tokens == 0:
        return Verdict(**base, status=Status.FAIL, details=details, remedy=remedy,
                       summary=f"no KV pool {at}: rollout weights {pool.weights_gib:.1f} GiB per GPU "
                               f"({pool.engine_gpus}-GPU engine, {pool.weight_bytes_per_param} B per param) + "
                               f"{pool.reserve_gib:.1f} GiB reserve exceed {pool.mem_fraction_static:g} x "
                               f"{profile.hbm_gib:.1f} GiB")
    if pool.full_requests < 1:
        return Verdict(**base, status=Status.FAIL, details=details, remedy=remedy,
                       summary=f"KV pool ~{pool.pool_tokens:,} tokens {per} {at} < one full-length {request} "
                               f"(prompt + response): SGLang cuts responses at the pool size")
    if pool.full_requests < pool.concurrency:
        return Verdict(**base, status=Status.WARN, details=details, remedy=remedy,
                       summary=f"KV pool ~{pool.pool_tokens:,} tokens {per} {at} holds {pool.full_requests} "
                               f"full-length {request}(s); {pool.concurrency} run at once: requests get retracted")
    return Verdict(**base, status=Status.PASS, details=details,
                   summary=f"KV pool ~{pool.pool_tokens:,} tokens {per} {at} holds {pool.full_requests} "
                           f"full-length {request}s >= {pool.concurrency} at once")


def _kv_remedy(pool: KvPool, profile: HardwareProfile) -> str:
    kv_gib = pool.concurrency * pool.request_tokens * pool.kv_bytes_per_token / GIB
    need = (pool.weights_gib + pool.reserve_gib + kv_gib) / profile.hbm_gib
    if need < 0.95:
        return (f"--sglang-mem-fraction-static {math.ceil(need * 100) / 100:.2f} would hold {pool.concurrency} "
                f"full-length requests; " + catalog.get("kv-pool-truncation").remedy)
    return (f"the rollout weights take {pool.weights_gib:.1f} GiB per GPU: use wider engines "
            f"(--rollout-num-gpus-per-engine) or an fp8 rollout checkpoint (Miles --fp8-rollout loads <model>_fp8)")


def _kv_details(recipe: Recipe, profile: HardwareProfile, pool: KvPool) -> str:
    cal = kv_calibration()
    prompt = "assumed" if pool.prompt_assumed else "--rollout-max-prompt-len"
    return "\n".join([
        f"{recipe.model.name}: {pool.engines} engines of {pool.engine_gpus} GPUs, {pool.pools_per_engine} KV pool(s) "
        f"each; weights {pool.weights_gib:.1f} GiB per GPU at {pool.weight_bytes_per_param} B per param; reserve "
        f"{pool.reserve_gib:.1f} GiB; KV {pool.kv_bytes_per_token:,} B per token per GPU "
        f"(kv-cache-dtype {recipe.sglang_value('kv-cache-dtype') or 'auto'})",
        f"pool = ({pool.mem_fraction_static:g} x {profile.hbm_gib:.1f} GiB - {pool.weights_gib:.1f} - "
        f"{pool.reserve_gib:.1f}) / {pool.kv_bytes_per_token:,} B = {pool.pool_tokens:,} tokens; request = "
        f"prompt ({prompt}) + {recipe.rollout.max_response_len:,} = {pool.request_tokens:,} tokens; "
        f"concurrency = min(max-running-requests, samples / engines) / pools = {pool.concurrency}",
        f"calibration (seed 004, 64 x GB300, GLM-5.2): pools 26,304 @ 0.75 and 553,728 @ 0.85 imply "
        f"{cal.implied_kv_bytes_per_token:,.0f} B per token vs {cal.arch_kv_bytes_per_token:,} B from the "
        f"architecture ({_err(cal.arch_kv_bytes_per_token, cal.implied_kv_bytes_per_token)}); weights + reserve "
        f"{cal.intercept_gib:.1f} GiB = {cal.seed_weights_gib:.1f} GiB (assumed {SEED_ENGINE_GPUS}-GPU bf16 engine) "
        f"+ {cal.reserve_gib:.1f} GiB reserve; predicted {cal.predicted_tokens[0]:,} and "
        f"{cal.predicted_tokens[1]:,} tokens ({_err(cal.predicted_tokens[1], SEED_POOL_TOKENS[1][1])})",
    ])
