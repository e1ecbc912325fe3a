"""Recipe checks: pure functions of the typed recipe (and the hardware profile) to a Verdict.

Each names the catalogue entry it guards. They judge what SLIME, Megatron and SGLang would only
find out after GPUs are held (or never, and wait forever).
"""

from __future__ import annotations

from rlcheck import catalog
from rlcheck.hardware import HardwareProfile
from rlcheck.recipes import glm
from rlcheck.recipes.recipe import Recipe
from rlcheck.verdict import Status, Verdict

UVICORN_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")


def _fail(failure_id: str, summary: str, details: str = "") -> Verdict:
    return Verdict(status=Status.FAIL, summary=summary, failure_id=failure_id, details=details,
                   remedy=catalog.get(failure_id).remedy)


def _framework(recipe: Recipe, *, of: bool = False) -> str:
    if recipe.framework == "miles":
        return "Miles'" if of else "Miles"
    return "SLIME's" if of else "SLIME"


def no_engines(recipe: Recipe, failure_id: str) -> Verdict | None:
    """PASS where the job starts no SGLang engine (train only): what the engines would do wrong cannot happen.
    None where engines start (the check judges them)."""
    pl = recipe.placement
    if pl.engines:
        return None
    return Verdict(status=Status.PASS, failure_id=failure_id,
                   summary=f"{recipe.id}: no rollout engine starts: train only ({pl.mode_flag}, also set by "
                           f"--load-debug-rollout-data): {_framework(recipe)} reserves the {pl.actor_gpus} actor "
                           f"GPU(s) only and launches no SGLang engine")


def no_training(recipe: Recipe, failure_id: str) -> Verdict | None:
    """PASS where Megatron builds no model (rollout only): what training would do wrong cannot happen. None where
    it trains."""
    pl = recipe.placement
    if pl.trains:
        return None
    return Verdict(status=Status.PASS, failure_id=failure_id,
                   summary=f"{recipe.id}: nothing is trained: rollout only ({pl.mode_flag}): "
                           f"{_framework(recipe, of=True)} train actors return before Megatron builds the model; "
                           f"the {pl.rollout_gpus} rollout GPU(s) run the engines")


def evaluate_batch(recipe: Recipe) -> Verdict:
    """SLIME's batch rules (slime_validate_args): with --num-steps-per-rollout stated, the global batch must equal
    prompts x samples // steps (it asserts, integer division); unset, nothing is asserted. Either way the samples no
    global batch takes are dropped every rollout (WARN). Always: at least one optimizer step per rollout (SLIME
    asserts at run time) and Megatron's global batch divisible by micro batch x DP.
    Rollout only (--debug-rollout-only) no step runs: only the asserts of the argument check stay (the steps rule;
    Megatron's divisibility on Miles, which validates Megatron's arguments in every mode, not on SLIME)."""
    r, dp, trains = recipe.rollout, recipe.data_parallel, recipe.placement.trains
    samples = r.rollout_batch_size * r.n_samples_per_prompt
    problems = []
    if r.steps_stated and r.global_batch_size != samples // r.num_steps_per_rollout:
        problems.append(f"global_batch_size {r.global_batch_size} != rollout_batch_size {r.rollout_batch_size} x "
                        f"n_samples_per_prompt {r.n_samples_per_prompt} // num_steps_per_rollout "
                        f"{r.num_steps_per_rollout} = {samples // r.num_steps_per_rollout} (SLIME asserts it)")
    if dp and r.global_batch_size % (r.micro_batch_size * dp) and (trains or recipe.framework == "miles"):
        problems.append(f"global_batch_size {r.global_batch_size} is not divisible by micro batch "
                        f"{r.micro_batch_size} x DP {dp}")
    if samples < r.global_batch_size and trains:
        problems.append(f"{samples} samples per rollout < global batch {r.global_batch_size}: no optimizer step")
    if problems:
        return _fail("batch-size-mismatch", problems[0], "\n".join(problems))
    if not trains:
        megatron = " and Megatron's divisibility" if recipe.framework == "miles" else ""
        return Verdict(status=Status.PASS, failure_id="batch-size-mismatch",
                       summary=f"rollout only ({recipe.placement.mode_flag}): no optimizer step runs; "
                               f"{_framework(recipe, of=True)} argument asserts (the steps rule{megatron}) hold")
    how = "" if r.steps_stated else " (--num-steps-per-rollout unset: SLIME trains the global batches it holds)"
    steps = r.num_steps_per_rollout if r.steps_stated else samples // r.global_batch_size
    if left := samples - steps * r.global_batch_size:
        return Verdict(status=Status.WARN, failure_id="batch-size-mismatch",
                       summary=f"{samples} samples per rollout are {steps} global batch(es) of {r.global_batch_size} "
                               f"and {left} left over: SLIME drops them every rollout{how}")
    return Verdict(status=Status.PASS, failure_id="batch-size-mismatch",
                   summary=f"{r.rollout_batch_size} x {r.n_samples_per_prompt} = {samples} samples = "
                           f"{steps} step(s) of {r.global_batch_size}, DP {dp}{how}")


def evaluate_layout(recipe: Recipe) -> Verdict:
    """Megatron's divisibility rules on the actor GPUs. Rollout only, SLIME skips Megatron's validate_args and
    builds no model (nothing to judge); Miles validates Megatron's arguments in every mode (judged as usual)."""
    if recipe.framework != "miles" and (done := no_training(recipe, "parallel-layout-mismatch")):
        return done
    p, world = recipe.parallel, recipe.world_size
    problems = []
    if world % (p.tp * p.pp * p.cp):
        problems.append(f"world size {world} is not divisible by TP {p.tp} x PP {p.pp} x CP {p.cp}")
    if world % (p.ep * p.etp * p.pp):
        problems.append(f"world size {world} is not divisible by EP {p.ep} x expert-TP {p.etp} x PP {p.pp}")
    if recipe.model.moe and recipe.model.moe.num_experts % p.ep:
        problems.append(f"{recipe.model.moe.num_experts} experts do not divide over EP {p.ep}")
    if p.ep > 1 and recipe.model.moe is None:
        problems.append(f"EP {p.ep} on a dense model")
    if problems:
        return _fail("parallel-layout-mismatch", problems[0], "\n".join(problems))
    return Verdict(status=Status.PASS, failure_id="parallel-layout-mismatch",
                   summary=f"{world} GPUs = TP {p.tp} x PP {p.pp} x CP {p.cp} x DP {recipe.data_parallel}; "
                           f"EP {p.ep} x expert-TP {p.etp} fits")


def evaluate_engines(recipe: Recipe, profile: HardwareProfile | None) -> Verdict:
    """Engines as SLIME places them: one wider than a node spans whole nodes, split by SLIME's own node width
    (--num-gpus-per-node, default 8), so that width must be the nodes' and the engine a whole number of nodes;
    SGLang's data parallelism inside an engine (--sglang-dp-size > 1) needs dp-attention."""
    if done := no_engines(recipe, "engine-larger-than-node"):
        return done
    pl = recipe.placement
    per_node = profile.gpus_per_node if profile else pl.num_gpus_per_node
    engine, rollout = pl.rollout_gpus_per_engine, pl.rollout_gpus
    dp = recipe.sglang_value("dp-size") or "1"
    if dp.isdigit() and int(dp) > 1 and "enable-dp-attention" not in dict(recipe.sglang):
        return _fail("engine-larger-than-node",
                     f"--sglang-dp-size {dp} without --sglang-enable-dp-attention: SLIME runs SGLang's data "
                     "parallelism inside an engine only with dp-attention")
    if engine > per_node and engine % per_node:
        return _fail("engine-larger-than-node", f"a rollout engine of {engine} GPUs is no whole number of nodes of "
                                                f"{per_node}: the ranks of its last node never all join the TCPStore")
    if engine > per_node and pl.num_gpus_per_node != per_node:
        return _fail("engine-larger-than-node",
                     f"a rollout engine of {engine} GPUs spans nodes of {per_node}, but SLIME splits it by "
                     f"--num-gpus-per-node {pl.num_gpus_per_node}: its ranks never all join the TCPStore")
    if rollout % engine:
        return Verdict(status=Status.WARN, failure_id="engine-larger-than-node",
                       summary=f"{rollout} rollout GPUs do not divide into engines of {engine}: "
                               f"{rollout % engine} GPU(s) would sit idle")
    where = (f"within nodes of {per_node}" if engine <= per_node
             else f"each across {engine // per_node} nodes of {per_node}")
    return Verdict(status=Status.PASS, failure_id="engine-larger-than-node",
                   summary=f"{rollout // engine} engine(s) of {engine} GPUs, {where}")


def evaluate_log_levels(recipe: Recipe) -> Verdict:
    if done := no_engines(recipe, "uvicorn-log-level"):  # no engine, no uvicorn to read the levels
        return done
    given = {flag: recipe.sglang_value(flag) for flag in ("log-level", "log-level-http") if recipe.sglang_value(flag)}
    bad = {flag: level for flag, level in given.items() if level not in UVICORN_LEVELS}
    if bad:
        text = ", ".join(f"--sglang-{f} {v}" for f, v in bad.items())
        return _fail("uvicorn-log-level",
                     f"{text}: uvicorn accepts only {', '.join(UVICORN_LEVELS)} (lowercase)")
    shown = ", ".join(f"--sglang-{f} {v}" for f, v in given.items()) or "SGLang's default (info)"
    return Verdict(status=Status.PASS, failure_id="uvicorn-log-level",
                   summary=f"{shown}: a level uvicorn accepts")


def reaches_gpu_probes(recipe: Recipe) -> bool:
    """Megatron's validate_args probes the device for --moe-grouped-gemm and for TP or CP > 1."""
    return "--moe-grouped-gemm" in recipe.argv() or recipe.parallel.tp > 1 or recipe.parallel.cp > 1


def evaluate_connections(recipe: Recipe, profile: HardwareProfile | None) -> Verdict:
    base = {"failure_id": "cuda-device-max-connections"}
    if profile is None:
        return Verdict(**base, status=Status.SKIP, summary="needs a hardware profile (--hardware): found none")
    p, value = recipe.parallel, recipe.env_dict().get("CUDA_DEVICE_MAX_CONNECTIONS")
    if (p.tp == 1 and p.cp == 1) or profile.sm >= 100:
        return Verdict(**base, status=Status.PASS, summary=f"not required: TP {p.tp}, CP {p.cp}, sm_{profile.sm}")
    if value == "1":
        return Verdict(**base, status=Status.PASS, summary=f"CUDA_DEVICE_MAX_CONNECTIONS=1 for TP {p.tp} / CP {p.cp} "
                                                           f"on sm_{profile.sm}")
    return _fail(base["failure_id"],
                 f"TP {p.tp} / CP {p.cp} on {profile.name} (sm_{profile.sm} < sm_100) needs "
                 f"CUDA_DEVICE_MAX_CONNECTIONS=1 in the runtime env: found {value or 'unset'}")


def evaluate_pp_split(recipe: Recipe) -> Verdict:
    """Megatron's stage sizes (glm.stage_sizes), then GLM-5.2's DSA rule: each stage starts on a computing layer.
    Index sharing comes from the checkpoint's config.json (index_topk_freq: 4 on GLM-5.2, absent on GLM-5), which
    a job's argv does not give: there a start on a skip layer is a WARN naming that fact."""
    base = {"failure_id": "pp-split-skip-layer"}
    p, layers = recipe.parallel, recipe.model.num_layers
    if not recipe.model.name.startswith("GLM-5.2"):  # GLM-5 (rotary base 1e6) computes indices on every layer
        return Verdict(**base, status=Status.SKIP, summary=f"{recipe.model.name} has no DSA index sharing")
    try:
        sizes = glm.stage_sizes(layers, p.pp, p.pp_first_layers, p.pp_last_layers)
    except ValueError as exc:
        return _fail(base["failure_id"], f"Megatron refuses this split: {exc}")
    starts = glm.stage_starts(layers, p.pp, p.pp_first_layers, p.pp_last_layers)
    split = f"stages of {'/'.join(map(str, sizes))} layers start at {starts}"
    skipping = [s for s in starts if glm.is_skip_topk_layer(s)]
    if skipping and recipe.id.startswith("job:"):
        return Verdict(**base, status=Status.WARN,
                       summary=f"{split}: {skipping} are DSA skip layers if the checkpoint shares indices "
                               "(config.json index_topk_freq 4, as GLM-5.2; GLM-5 does not): check it",
                       remedy=catalog.get(base["failure_id"]).remedy)
    if skipping:
        return _fail(base["failure_id"], f"{split}: stage(s) start on DSA skip layer(s) {skipping}; "
                                         "each must start on a computing layer (1, 2, 3, 7, 11, ...)")
    return Verdict(**base, status=Status.PASS, summary=f"{split}: each on a computing layer")
