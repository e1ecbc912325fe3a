"""The longest sample against SLIME's dynamic-batch cap (catalogue: cuda-oom).

With --use-dynamic-batch-size SLIME packs samples into micro-batches of at most --max-tokens-per-gpu x CP tokens
(slime/utils/dp_schedule.py), except that a single sample longer than the cap lands alone in its own micro-batch,
the one micro-batch allowed over it. The memory plan (recipe_stage_memory) is made for the cap, so a sample of
prompt + response beyond it runs on memory nobody planned for: the long-tail out-of-memory users hit mid-run.
SLIME asserts --max-tokens-per-gpu is set with dynamic batching (slime/utils/arguments.py).
--rollout-max-context-len is not a cap on the sample here: SLIME uses it only as the default prompt filter.
"""

from __future__ import annotations

from collections.abc import Sequence

from rlcheck import catalog
from rlcheck.framework.argv import option
from rlcheck.verdict import Status, Verdict

FAILURE_ID = "cuda-oom"


def int_option(argv: Sequence[str], flag: str) -> int | None:
    """A positive int option; raises ValueError naming the flag and what is allowed."""
    raw = option(argv, flag)
    if raw is None:
        return None
    if not raw.isdigit() or int(raw) <= 0:
        raise ValueError(f"{flag} {raw!r}: a positive integer of tokens")
    return int(raw)


def _prompt_cap(argv: Sequence[str]) -> tuple[int | None, str]:
    """(the longest prompt SLIME keeps, or None when prompts are not filtered, how it was derived).

    SLIME's data source drops prompts longer than --rollout-max-prompt-len (slime/utils/data.py filter_long_prompt,
    `<=` kept); with --rollout-max-context-len and no prompt cap, validate_args sets the prompt cap to context - 1
    (slime/utils/arguments.py). The context cap bounds nothing else in SLIME's own generate: max_new_tokens is
    --rollout-max-response-len (slime/rollout/sglang_rollout.py), so a sample can be context - 1 + response long.
    """
    if "--disable-rollout-global-dataset" in argv:
        return None, "--disable-rollout-global-dataset (SLIME filters no prompt by length)"
    prompt = int_option(argv, "--rollout-max-prompt-len")
    context = int_option(argv, "--rollout-max-context-len")
    if prompt is not None:
        return prompt, f"--rollout-max-prompt-len {prompt}"
    if context is not None:
        return context - 1, f"--rollout-max-context-len {context} - 1 (SLIME's default prompt filter)"
    return None, "--rollout-max-prompt-len is not set (prompts are not filtered by length)"


def _train_only(argv: Sequence[str]) -> bool:
    return "--debug-train-only" in argv or any(t.partition("=")[0] == "--load-debug-rollout-data" for t in argv)


def _longest(argv: Sequence[str], framework: str) -> tuple[int | None, str]:
    """(longest sample in tokens or None when a part is uncapped, how it was derived).

    Miles' default rollout (generate_hub single_turn, miles/rollout/generate_utils/generate_endpoint_utils.py
    compute_request_payload, main 31f1ca96) also cuts max_new_tokens to context - prompt: there the context cap
    does bound the sample. SLIME's does not.
    Train only (--debug-train-only, which --load-debug-rollout-data sets) nothing is generated: each sample is a
    conversation of the data as it stands (SFT's message lists pass SLIME's prompt filter unmeasured) or a rollout
    saved by another run, cut by no flag of this launch.
    """
    if _train_only(argv):
        return None, ("train only (--debug-train-only, also set by --load-debug-rollout-data): no response is "
                      "generated and no flag caps a sample, each is the data's own length")
    response = int_option(argv, "--rollout-max-response-len")
    context = int_option(argv, "--rollout-max-context-len")
    prompt, how = _prompt_cap(argv)
    if framework == "miles" and context is not None:
        if response is None or prompt is None or prompt + response > context:
            return context, f"--rollout-max-context-len {context} (Miles cuts each response to the context)"
    if response is None:
        return None, "--rollout-max-response-len is not set (responses run to the engine's context length)"
    if prompt is None:
        return None, f"{how}: the longest sample is an uncapped prompt + up to {response} response tokens"
    return prompt + response, f"{how} + --rollout-max-response-len {response}"


def evaluate_sample_caps(argv: Sequence[str], name: str, framework: str = "slime") -> Verdict:
    base = {"failure_id": FAILURE_ID}
    if "--use-dynamic-batch-size" not in argv:
        return Verdict(**base, status=Status.SKIP, summary=f"{name}: no --use-dynamic-batch-size: micro-batches "
                                                           "are --micro-batch-size samples, not a token cap")
    remedy = catalog.get(FAILURE_ID).remedy
    try:
        cap = int_option(argv, "--max-tokens-per-gpu")
        cp = int_option(argv, "--context-parallel-size") or 1
        longest, how = _longest(argv, framework)
    except ValueError as exc:
        return Verdict(**base, status=Status.FAIL, remedy=remedy, summary=f"{name}: {exc}")
    if cap is None:
        return Verdict(**base, status=Status.FAIL, remedy=remedy,
                       summary=f"{name}: --use-dynamic-batch-size without --max-tokens-per-gpu: SLIME asserts "
                               "max_tokens_per_gpu must be set at start-up")
    budget = cap * cp
    if longest is None:
        response = 0 if _train_only(argv) else int_option(argv, "--rollout-max-response-len") or 0
        alone = (f"; the response cap alone is {response / budget:.2f}x the micro-batch cap" if response > budget
                 else "")
        return Verdict(**base, status=Status.WARN, remedy=remedy,
                       summary=f"{name}: {how}{alone}; samples over the cap of {budget} tokens per micro-batch "
                               f"(--max-tokens-per-gpu {cap} x CP {cp}) run alone, beyond the memory plan")
    if longest > budget:
        return Verdict(**base, status=Status.WARN, remedy=remedy,
                       summary=f"{name}: the longest sample ({how} = {longest} tokens) exceeds the cap of {budget} "
                               f"(--max-tokens-per-gpu {cap} x CP {cp}): it runs alone in a micro-batch "
                               f"{longest / budget:.2f}x the size the memory plan assumed")
    return Verdict(**base, status=Status.PASS,
                   summary=f"{name}: the longest sample ({how} = {longest} tokens) fits the cap of {budget} "
                           f"(--max-tokens-per-gpu {cap} x CP {cp})")
