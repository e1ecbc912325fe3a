"""SGLang's KV pool for a recipe on a hardware profile (catalogue: kv-pool-truncation).

SGLang 0.5.12.post1, python/sglang/srt/model_executor/:
- model_runner.py: `pre_model_load_memory` is the free GPU memory (GiB, min over ranks) after
  torch.distributed and NCCL are initialised, before any weight is loaded.
- model_runner_kv_cache_mixin.py `_profile_available_bytes`: rest = free after loading
  - pre_model_load_memory x (1 - mem_fraction_static). With free after loading = pre - weights, the
  pool is mem_fraction_static x pre - weights; CUDA graphs and activations live in the (1 - f) slice.
- pool_configurator.py `DefaultPoolConfigurator`: tokens = rest // cell_size, at most --max-total-tokens
  (kv_cache_configurator.py `_apply_token_constraints`, 0.5.16), then // page_size x page_size.
  cell_size (bytes per token, all layers, one GPU):
  GQA: max(1, KV heads // attention TP) x (head_dim + v_head_dim) x layers x element size;
  MLA: (kv_lora_rank + qk_rope_head_dim) x layers x element size, plus for NSA (DSA) models
  (index_head_dim + index_head_dim // 128 x 4) x layers x 1 B (uint8 index keys with fp32 scales).
- model_runner_kv_cache_mixin.py `calculate_mla_kv_cache_dim`: for an NSA model with an fp8_e4m3
  cache and a non-trtllm NSA backend, the MLA pool is allocated with kv_lora_rank + kv_lora_rank //
  128 x 4 + qk_rope_head_dim x 2 bytes per layer (bf16 rope, fp32 scales), more than cell_size
  budgeted: the difference comes out of the (1 - f) slice.

rlcheck's terms: pre = HBM - CUDA_CONTEXT_GIB; weights per GPU = expert / engine GPUs + other /
attention TP (dp-attention replicates every non-expert weight per DP rank; an MoE model's dense-layer MLPs whole with
--sglang-moe-dense-tp-size 1), at 2 B (1 B for an fp8
or int8 rollout checkpoint). FAIL when the pool holds no full prompt + response (SGLang caps
max_req_len at the pool), WARN when it holds fewer than the requests an engine runs at once, WARN
when the NSA fp8 allocation exceeds what the profiler budgeted, FAIL when that excess is larger
than the whole (1 - f) slice.
"""

from __future__ import annotations

import dataclasses
import math
import re

from rlcheck import catalog
from rlcheck.hardware import HardwareProfile
from rlcheck.probes.recipe.hf_config import HfConfigObservation
from rlcheck.probes.recipe.memory_params import (
    GIB,
    count_params,
    flag_value,
    is_dsa,
    kv_bytes_per_token,
    moe_layer_flags,
    mtp_layer,
)
from rlcheck.probes.recipe.recipe_rules import no_engines
from rlcheck.recipes.models import GLM5_2, MLA
from rlcheck.recipes.recipe import Recipe
from rlcheck.verdict import Status, Verdict

CUDA_CONTEXT_GIB = 1.15
"""Measured on an H200 (torch 2.11 + CUDA 13.0): CUDA context 0.61 GiB, plus a one-rank NCCL communicator
with one all-reduce 1.15 GiB; SGLang measures its free memory after both. More ranks take more."""
ASSUMED_PROMPT_TOKENS = 1024
"""Prompt budget when the recipe sets no --rollout-max-prompt-len (dapo-math prompts are shorter)."""
NSA_QUANT_BLOCK = 128
"""SGLang 0.5.12 NSATokenToKVPool.quant_block_size: one fp32 scale per 128 fp8 values."""
_FP8 = re.compile(r"fp8|int8", re.IGNORECASE)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class KvPool:
    mem_fraction_static: float
    engine_gpus: int
    engines: int
    pools_per_engine: int
    """One KV pool per engine; one per DP rank under --enable-dp-attention."""
    weight_bytes_per_param: float
    pre_load_free_gib: float
    """HBM less the CUDA context and NCCL: what SGLang sees free before loading weights."""
    weights_gib: float
    """Rollout weights per GPU of one engine."""
    kv_bytes_per_token: int
    """SGLang's cell_size: per GPU, all layers."""
    allocated_bytes_per_token: int
    """What the pool really allocates per token (more than cell_size for NSA fp8 caches)."""
    pool_tokens: int
    """Per pool, page-rounded."""
    page_size: int
    request_tokens: int
    """Prompt + max response: one full-length request."""
    prompt_assumed: bool
    concurrency: int
    """Requests one pool is asked to hold at once: min(max-running-requests, samples / engines) / pools."""
    draft_layers: int = 0
    """An MTP draft's layers (speculative decoding), whose KV shares the pool's cells."""

    @property
    def full_requests(self) -> int:
        return self.pool_tokens // self.request_tokens

    @property
    def pool_gib(self) -> float:
        return self.mem_fraction_static * self.pre_load_free_gib - self.weights_gib

    @property
    def slack_gib(self) -> float:
        """The (1 - f) slice SGLang leaves for CUDA graphs and activations."""
        return (1 - self.mem_fraction_static) * self.pre_load_free_gib

    @property
    def overallocation_gib(self) -> float:
        return self.pool_tokens * (self.allocated_bytes_per_token - self.kv_bytes_per_token) / GIB


def nsa_allocated_bytes_per_token(recipe: Recipe, cell: int) -> int:
    """Bytes per token SGLang allocates (calculate_mla_kv_cache_dim); cell_size itself outside NSA fp8."""
    model, dtype = recipe.model, recipe.sglang_value("kv-cache-dtype") or "auto"
    backends = {recipe.sglang_value("nsa-prefill-backend"), recipe.sglang_value("nsa-decode-backend")}
    if not (is_dsa(model) and isinstance(model.attention, MLA) and dtype == "fp8_e4m3") or "trtllm" in backends:
        return cell
    mla = model.attention
    budgeted = mla.kv_lora_rank + mla.qk_pos_emb_head_dim
    allocated = mla.kv_lora_rank + mla.kv_lora_rank // NSA_QUANT_BLOCK * 4 + mla.qk_pos_emb_head_dim * 2
    return cell + (allocated - budgeted) * model.num_layers


def _weight_bytes(recipe: Recipe) -> int:
    """1 for an fp8/int8 rollout checkpoint (Miles' --fp8-rollout loads '<model>_fp8') or quantization flag."""
    quantization = recipe.sglang_value("quantization") or ""
    return 1 if _FP8.search(quantization) or _FP8.search(recipe.hf_checkpoint.rstrip("/").rsplit("/", 1)[-1]) else 2


def _fraction(recipe: Recipe) -> float:
    raw = recipe.sglang_value("mem-fraction-static")
    fraction = float(raw) if raw is not None and re.fullmatch(r"0?\.\d+|1(\.0*)?", raw) else -1.0
    if not 0 < fraction <= 1:
        raise ValueError(f"mem-fraction-static={raw!r}: a number in (0, 1]")
    return fraction


QUANTIZED_MIN_BYTES = 0.5
"""The least a rollout weight takes (int4 / fp4 checkpoints): a pool that fails even at this fails at any precision."""


def _config_fp8(checkpoint: HfConfigObservation | None) -> bool:
    """The job's config.json says its weights are fp8 (quantization_config.quant_method 'fp8': 1 B per weight)."""
    quant = checkpoint.config.get("quantization_config") if checkpoint and checkpoint.config else None
    return isinstance(quant, dict) and quant.get("quant_method") == "fp8"


def precision_unknown(recipe: Recipe, checkpoint: HfConfigObservation | None) -> str:
    """'' when the rollout weights' precision is known, else why not. Known: SGLang's --sglang-quantization, an
    fp8/int8 checkpoint name, a built-in recipe (checkpoint None: the recipe names its checkpoint), or the job's
    config.json read with no quantization_config (bf16) or an fp8 one. A quantized config of another method
    (compressed-tensors int4, AWQ, GPTQ, mxfp4) or an unreadable config leaves it unknown."""
    if checkpoint is None or recipe.sglang_value("quantization") or _weight_bytes(recipe) == 1:
        return ""
    if checkpoint.config is None:
        return f"{checkpoint.path or '--hf-checkpoint'} could not be read here ({checkpoint.error})"
    quant = checkpoint.config.get("quantization_config")
    if quant is None or _config_fp8(checkpoint):
        return ""
    method = quant.get("quant_method") if isinstance(quant, dict) else quant
    return f"{checkpoint.path} has quantization_config {str(method)[:40]!r}, a precision rlcheck does not size"


def replicated_dense_mlp(recipe: Recipe) -> int:
    """Parameters of an MoE model's dense layers' MLPs when `--sglang-moe-dense-tp-size 1` keeps them whole on every
    GPU (SGLang 0.5.16 `enable_moe_dense_fully_dp`: the MoE model files build those MLPs at TP 1; any other size
    leaves them at the engine's TP); 0 otherwise."""
    model = recipe.model
    if model.moe is None or recipe.sglang_value("moe-dense-tp-size") != "1":
        return 0
    dense = moe_layer_flags(model.moe.layer_freq, model.num_layers).count(False)
    return dense * model.ffn_matrices * model.hidden_size * model.ffn_hidden_size


MTP_DRAFTS = ("EAGLE", "NEXTN")
"""SGLang's speculative algorithms whose draft, without --speculative-draft-model-path, is the target checkpoint's
own MTP (NextN) layers; EAGLE3, STANDALONE, NGRAM and DFLASH drafts are other models (their terms are not counted)."""


def draft_layers(recipe: Recipe, checkpoint: HfConfigObservation | None) -> tuple[int, str]:
    """(the MTP draft's layers, '') for speculative decoding with the target's own MTP layers, (0, '') without
    speculative decoding, (0, why) when the draft's layers are not known: --mtp-num-layers, else config.json's
    num_nextn_predict_layers."""
    algorithm = (recipe.sglang_value("speculative-algorithm") or "").upper()
    if algorithm in ("", "NONE"):
        return 0, ""
    if algorithm not in MTP_DRAFTS or recipe.sglang_value("speculative-draft-model-path"):
        return 0, f"a draft model of its own ({algorithm}): its weights and KV are not counted"
    stated = flag_value(list(recipe.extra_args), "--mtp-num-layers")
    config = checkpoint.config if checkpoint is not None and checkpoint.config is not None else {}
    layers = stated if stated is not None else config.get("num_nextn_predict_layers")
    if isinstance(layers, int) or (isinstance(layers, str) and layers.isdigit()):
        return int(layers), "" if int(layers) > 0 else "an MTP draft of 0 layers"
    return 0, ("the MTP draft's layers are not known: neither --mtp-num-layers nor config.json's "
               "num_nextn_predict_layers gives them")


def _draft_weights(recipe: Recipe, layers: int, engine: int, attention_tp: int) -> float:
    """Per GPU, an upper bound of an MTP draft's own weights: each layer the model's largest with its 2h x h
    projection and norms, and its own embedding and output layer (SGLang shares the target's after loading, which
    the profile may or may not have seen)."""
    model = recipe.model
    expert, own = mtp_layer(count_params(model), model.hidden_size, engine, attention_tp)
    return layers * (expert + own) + 2 * model.vocab_size * model.hidden_size / attention_tp


def estimate_kv_pool(recipe: Recipe, profile: HardwareProfile, weight_bytes: float | None = None,
                     draft: int = 0, draft_weights: bool = True) -> KvPool:
    """SGLang's KV pool per engine (per DP rank under dp-attention); ValueError without a usable fraction.
    weight_bytes: bytes per rollout weight, else read from the recipe (_weight_bytes); draft: an MTP draft's layers
    (SGLang scales cell_size by 1 + draft / layers, pool_configurator.py 0.5.16), whose weights are counted (an upper
    bound, _draft_weights) unless draft_weights is False."""
    fraction, pl, ro = _fraction(recipe), recipe.placement, recipe.rollout
    engine = pl.rollout_gpus_per_engine
    pools = int(recipe.sglang_value("dp-size") or 1) if "enable-dp-attention" in dict(recipe.sglang) else 1
    attention_tp = max(1, engine // pools)
    params = count_params(recipe.model)
    nbytes = _weight_bytes(recipe) if weight_bytes is None else weight_bytes
    whole = replicated_dense_mlp(recipe)
    spare = _draft_weights(recipe, draft, engine, attention_tp) if draft and draft_weights else 0.0
    weights = (params.expert / engine + (params.total - params.expert - whole) / attention_tp + whole + spare) * nbytes
    pre = (profile.hbm_gib - CUDA_CONTEXT_GIB) * GIB
    cell = kv_bytes_per_token(recipe.model, recipe.sglang_value("kv-cache-dtype"), attention_tp)
    cell = int(cell * (1 + draft / recipe.model.num_layers)) if draft else cell
    page = int(recipe.sglang_value("page-size") or 1)
    tokens = max(0, int((fraction * pre - weights) // cell))
    cap = recipe.sglang_value("max-total-tokens") or ""
    tokens = (min(tokens, int(cap)) if cap.isdigit() else tokens) // page * page  # the user's cap, then pages
    engines = max(1, pl.rollout_gpus // engine)
    asked = math.ceil(ro.rollout_batch_size * ro.n_samples_per_prompt / engines)
    running = recipe.sglang_value("max-running-requests")
    asked = min(asked, int(running)) if running else asked
    prompt = flag_value(list(recipe.extra_args), "--rollout-max-prompt-len")
    return KvPool(mem_fraction_static=fraction, engine_gpus=engine, engines=engines, pools_per_engine=pools,
                  weight_bytes_per_param=nbytes, pre_load_free_gib=pre / GIB, weights_gib=weights / GIB,
                  kv_bytes_per_token=cell, allocated_bytes_per_token=nsa_allocated_bytes_per_token(recipe, cell),
                  pool_tokens=tokens, page_size=page,
                  request_tokens=int(prompt or ASSUMED_PROMPT_TOKENS) + ro.max_response_len,
                  prompt_assumed=prompt is None, concurrency=math.ceil(asked / pools), draft_layers=draft)


SEED_POOL_TOKENS = ((0.75, 26_304), (0.85, 553_728))
"""Seed 004 (radixark/miles#1571): (mem_fraction_static, KV pool tokens) on 64 x GB300, GLM-5.2, fp8_e4m3."""
SEED_ENGINE_GPUS = 8
"""Assumed: a bf16 GLM-5.2 engine of 8 GB300 GPUs (744B x 2 B / 4 does not fit a GPU)."""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class KvCalibration:
    predicted_tokens: tuple[int, ...]
    """SGLang's arithmetic at the seed's fractions on the profile's HBM, without any fitted term."""
    implied_pre_load_free_gib: float
    """Free memory before loading that the seed's two pools imply at SGLang's cell_size."""
    implied_loaded_gib: float
    """Memory taken before the pool (weights and all) that the 0.75 point implies at that free memory."""
    weights_gib: float
    """rlcheck's weights per GPU for the seed's engine."""


def kv_calibration(hbm_gib: float) -> KvCalibration:
    """Seed 004's pools against SGLang's arithmetic with rlcheck's terms, for a GB300 HBM reading."""
    cell = kv_bytes_per_token(GLM5_2, "fp8_e4m3", SEED_ENGINE_GPUS)
    weights = count_params(GLM5_2).total * 2 / SEED_ENGINE_GPUS
    pre = (hbm_gib - CUDA_CONTEXT_GIB) * GIB
    predicted = tuple(max(0, int((f * pre - weights) // cell) // 64 * 64) for f, _ in SEED_POOL_TOKENS)
    (f_lo, t_lo), (f_hi, t_hi) = SEED_POOL_TOKENS
    implied_pre = (t_hi - t_lo) * cell / (f_hi - f_lo)
    return KvCalibration(predicted_tokens=predicted, implied_pre_load_free_gib=implied_pre / GIB,
                         implied_loaded_gib=(f_lo * implied_pre - t_lo * cell) / GIB, weights_gib=weights / GIB)


def evaluate_kv_pool(recipe: Recipe, profile: HardwareProfile | None,
                     checkpoint: HfConfigObservation | None = None) -> Verdict:
    """checkpoint: the job's config.json as read (None for a built-in recipe): a FAIL at bf16 weights that a
    quantized checkpoint would not have is UNKNOWN while the checkpoint's precision is not known."""
    base = {"failure_id": "kv-pool-truncation"}
    if done := no_engines(recipe, base["failure_id"]):
        return done
    if profile is None:
        return Verdict(**base, status=Status.SKIP, summary="needs a hardware profile (--hardware): found none")
    if recipe.sglang_value("mem-fraction-static") is None:
        return Verdict(**base, status=Status.SKIP,
                       summary="needs --sglang-mem-fraction-static in the recipe: found none (SGLang picks its own)")
    try:
        _fraction(recipe)
    except ValueError as exc:
        return Verdict(**base, status=Status.FAIL, summary=f"SGLang rejects {exc}", remedy="set a fraction such as 0.8")
    draft, no_draft = draft_layers(recipe, checkpoint)
    if no_draft:
        return Verdict(**base, status=Status.UNKNOWN,
                       summary=f"cannot judge the job: speculative decoding: {no_draft}")
    try:
        pool = estimate_kv_pool(recipe, profile, 1 if _config_fp8(checkpoint) else None, draft)
    except ValueError as exc:  # the model's own shape (an MoE layer pattern of another length)
        return Verdict(**base, status=Status.UNKNOWN, summary=f"cannot estimate the KV pool of {recipe.id}: {exc}")
    status, summary = _judge(pool, profile)
    precision = precision_unknown(recipe, checkpoint)
    unsure = [f"the checkpoint's precision ({precision}): int4 or fp8 weights" if precision else "",
              "whether SGLang's memory profile saw the MTP draft's own weights" if draft else ""]
    if status is Status.FAIL and any(unsure):
        low = QUANTIZED_MIN_BYTES if precision else (1 if _config_fp8(checkpoint) else None)
        if _judge(estimate_kv_pool(recipe, profile, low, draft, draft_weights=False), profile)[0] is not Status.FAIL:
            return Verdict(**base, status=Status.UNKNOWN, details=_kv_details(recipe, profile, pool),
                           summary=f"at {pool.weight_bytes_per_param:g} B per rollout weight"
                                   f"{' with the MTP draft' if draft else ''}: {summary}; it would hold with what is "
                                   f"not known: {'; '.join(x for x in unsure if x)}",
                           remedy="run where --hf-checkpoint's config.json is readable (its quantization_config "
                                  "decides), or state --sglang-quantization")
    remedy = "" if status is Status.PASS else _kv_remedy(pool, profile)
    return Verdict(**base, status=status, summary=summary, details=_kv_details(recipe, profile, pool), remedy=remedy)


def _judge(pool: KvPool, profile: HardwareProfile) -> tuple[Status, str]:
    per = "per engine" if pool.pools_per_engine == 1 else "per DP rank"
    at = f"at mem_fraction_static {pool.mem_fraction_static:g} on {profile.name}"
    size = f"KV pool ~{pool.pool_tokens:,} tokens {per} {at}"
    request = f"{pool.request_tokens:,}-token request"
    over = (f"the NSA fp8 cache allocates {pool.overallocation_gib:.1f} GiB more than SGLang's profiler budgeted "
            f"({pool.allocated_bytes_per_token:,} vs {pool.kv_bytes_per_token:,} B per token)")
    if pool.pool_tokens == 0:
        return Status.FAIL, (f"no KV pool {at}: rollout weights {pool.weights_gib:.1f} GiB per GPU "
                             f"({pool.engine_gpus}-GPU engine, {pool.weight_bytes_per_param:g} B per param) exceed "
                             f"{pool.mem_fraction_static:g} x {pool.pre_load_free_gib:.1f} GiB free before loading")
    if pool.full_requests < 1:
        return Status.FAIL, (f"{size} < one full-length {request} (prompt + response): SGLang cuts responses at "
                             f"the pool size")
    if pool.overallocation_gib > pool.slack_gib:
        return Status.FAIL, f"{size}: {over}, more than the {pool.slack_gib:.1f} GiB (1 - f) slice"
    if pool.full_requests < pool.concurrency:
        return Status.WARN, (f"{size} holds {pool.full_requests} full-length {request}(s); {pool.concurrency} run "
                             f"at once: requests get retracted")
    if pool.overallocation_gib > 0:
        return Status.WARN, f"{size}: {over}, out of the {pool.slack_gib:.1f} GiB (1 - f) slice"
    return Status.PASS, f"{size} holds {pool.full_requests} full-length {request}s >= {pool.concurrency} at once"


def _kv_remedy(pool: KvPool, profile: HardwareProfile) -> str:
    if pool.full_requests >= pool.concurrency:  # only the NSA fp8 excess is wrong
        return ("leave the excess room: lower --sglang-mem-fraction-static by "
                f"{math.ceil(pool.overallocation_gib / pool.pre_load_free_gib * 100) / 100:.2f}, or cap "
                "--sglang-max-total-tokens")
    kv_gib = pool.concurrency * pool.request_tokens * pool.kv_bytes_per_token / GIB
    need = (pool.weights_gib + kv_gib) / pool.pre_load_free_gib
    if need < 0.95:
        return (f"--sglang-mem-fraction-static {math.ceil(need * 100) / 100:.2f} would hold {pool.concurrency} "
                f"full-length requests; " + catalog.get("kv-pool-truncation").remedy)
    return (f"the rollout weights take {pool.weights_gib:.1f} GiB per GPU: use wider engines "
            f"(--rollout-num-gpus-per-engine) or an fp8 rollout checkpoint (Miles --fp8-rollout loads <model>_fp8)")


def _kv_details(recipe: Recipe, profile: HardwareProfile, pool: KvPool) -> str:
    prompt = "assumed" if pool.prompt_assumed else "--rollout-max-prompt-len"
    lines = [
        f"{recipe.model.name}: {pool.engines} engines of {pool.engine_gpus} GPUs, {pool.pools_per_engine} KV pool(s) "
        f"each; weights {pool.weights_gib:.1f} GiB per GPU at {pool.weight_bytes_per_param:g} B per param; KV "
        f"{pool.kv_bytes_per_token:,} B per token per GPU (kv-cache-dtype "
        f"{recipe.sglang_value('kv-cache-dtype') or 'auto'}), {pool.allocated_bytes_per_token:,} B allocated",
        f"pool (SGLang 0.5.12.post1 arithmetic) = {pool.mem_fraction_static:g} x ({profile.hbm_gib:.1f} GiB - "
        f"{CUDA_CONTEXT_GIB} GiB CUDA context and NCCL) - {pool.weights_gib:.1f} GiB weights = {pool.pool_gib:.1f} "
        f"GiB / {pool.kv_bytes_per_token:,} B, in pages of {pool.page_size} = {pool.pool_tokens:,} tokens; "
        f"(1 - f) slice {pool.slack_gib:.1f} GiB for CUDA graphs and activations",
        f"request = prompt ({prompt}) + {recipe.rollout.max_response_len:,} = {pool.request_tokens:,} tokens; "
        f"concurrency = min(max-running-requests, samples / engines) / pools = {pool.concurrency}",
    ]
    if pool.draft_layers:
        lines.append(f"speculative decoding with the checkpoint's {pool.draft_layers} MTP layer(s) as the draft: KV "
                     f"per token x (1 + {pool.draft_layers} / {recipe.model.num_layers}) (SGLang 0.5.16 "
                     f"pool_configurator), its weights counted in (each the largest layer, with its own embedding and "
                     f"output layer)")
    if is_dsa(recipe.model):
        cal = kv_calibration(profile.hbm_gib)
        lines.append(
            f"seed 004 (64 x GB300, {SEED_ENGINE_GPUS}-GPU bf16 engine assumed) measured 26,304 @ 0.75 and 553,728 "
            f"@ 0.85; this arithmetic predicts {cal.predicted_tokens[0]:,} and {cal.predicted_tokens[1]:,}: the "
            f"measured pools imply {cal.implied_pre_load_free_gib:.1f} GiB free before loading and "
            f"{cal.implied_loaded_gib:.1f} GiB loaded per GPU (rlcheck counts {cal.weights_gib:.1f} GiB of weights), "
            f"so for this model the estimate is optimistic")
    return "\n".join(lines)
