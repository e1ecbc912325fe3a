"""Prompt cap + response cap against the rollout engine's context length (catalogue: context-length-exceeded).

SLIME asks SGLang for max_new_tokens = --rollout-max-response-len on every request and filters prompts longer
than --rollout-max-prompt-len (which defaults to --rollout-max-context-len - 1; SLIME uses the context cap for
nothing else). SGLang's tokenizer manager refuses a request whose input + max_new_tokens exceeds the engine's
context length, unless --allow-auto-truncate, which cuts max_new_tokens instead. The engine's context length is
--context-length when given, else what SGLang derives from config.json: the first of its context keys, times the
rope-scaling factor unless the scaling names original_max_position_embeddings or is llama3 (2048 when no key).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rlcheck import catalog
from rlcheck.probes.recipe.hf_config import HfConfigObservation
from rlcheck.probes.recipe.sample_caps import int_option
from rlcheck.verdict import Status, Verdict

FAILURE_ID = "context-length-exceeded"
CONTEXT_KEYS = ("max_sequence_length", "seq_length", "max_seq_len", "model_max_length", "max_position_embeddings")
"""config.json keys SGLang reads for the context length, in its order of preference."""
SGLANG_DEFAULT_CONTEXT = 2048
"""SGLang's context length for a config that has none of CONTEXT_KEYS."""


def derived_context(config: Mapping[str, Any]) -> tuple[int, str]:
    """(context length, how) as SGLang derives it from a checkpoint's config.json."""
    inner = config.get("text_config")
    text: Mapping[str, Any] = inner if isinstance(inner, dict) else config
    rope = text.get("rope_scaling")
    scaling: Mapping[str, Any] = rope if isinstance(rope, dict) else {}
    factor = scaling.get("factor", 1)
    if "original_max_position_embeddings" in scaling or scaling.get("rope_type") == "llama3":
        factor = 1
    for key in CONTEXT_KEYS:
        if isinstance(text.get(key), int):
            scaled = f" x rope factor {factor}" if factor != 1 else ""
            return int(factor * text[key]), f"{key} {text[key]}{scaled}"
    return SGLANG_DEFAULT_CONTEXT, f"SGLang's default (no {', '.join(CONTEXT_KEYS)})"


def _engine_context(obs: HfConfigObservation, argv: Sequence[str]) -> tuple[int | None, str]:
    """(engine context or None, how it was found, or why it was not)."""
    given = int_option(argv, "--sglang-context-length")
    if given is not None:
        return given, f"--sglang-context-length {given}"
    if obs.config is None:
        return None, obs.error
    context, how = derived_context(obs.config)
    return context, f"{how} in {obs.path}"


def _caps(argv: Sequence[str]) -> tuple[int | None, bool, int | None]:
    """(prompt cap, whether SLIME only implies it from --rollout-max-context-len, response cap)."""
    prompt = int_option(argv, "--rollout-max-prompt-len")
    context = int_option(argv, "--rollout-max-context-len")
    if prompt is None and context is not None:
        return context - 1, True, int_option(argv, "--rollout-max-response-len")
    return prompt, False, int_option(argv, "--rollout-max-response-len")


def _judge(prompt: int | None, implied: bool, response: int | None, engine: int) -> tuple[Status, str]:
    """(status, what was found) of the caps against the engine's context, before auto-truncation softens it."""
    how = (f"--rollout-max-context-len - 1 = {prompt} (SLIME's prompt filter)" if implied
           else f"--rollout-max-prompt-len {prompt}")
    if response is None:
        if prompt is not None and prompt < engine:
            return Status.PASS, f"{how} and no response cap (SGLang ends a response at its context)"
        return Status.WARN, (f"{how if prompt is not None else 'prompts are not capped'} and no response cap: a prompt "
                             "as long as the context is refused")
    if prompt is None:
        if response >= engine:
            return Status.FAIL, f"--rollout-max-response-len {response} alone leaves no room for a prompt"
        return Status.WARN, (f"--rollout-max-prompt-len is not set: a prompt of {engine - response + 1} tokens or "
                             f"more plus --rollout-max-response-len {response} is refused")
    total = prompt + response
    found = f"{how} + --rollout-max-response-len {response} = {total} tokens"
    if total <= engine:
        return Status.PASS, found
    # a prompt cap implied by the context cap is a filter nobody sized for the response: WARN, not stop the job
    return (Status.WARN if implied else Status.FAIL), found


def evaluate_context_length(obs: HfConfigObservation, argv: Sequence[str], name: str) -> Verdict:
    base = {"failure_id": FAILURE_ID}
    remedy = catalog.get(FAILURE_ID).remedy
    try:
        engine, source = _engine_context(obs, argv)
        prompt, implied, response = _caps(argv)
    except ValueError as exc:
        return Verdict(**base, status=Status.FAIL, remedy=remedy, summary=f"{name}: {exc}")
    if engine is None:
        missing = "no --sglang-context-length and "
        if obs.not_here:
            return Verdict(**base, status=Status.SKIP, summary=f"{name}: {missing}the checkpoint is not on this "
                                                               f"machine ({source}): judged where it is mounted")
        return Verdict(**base, status=Status.UNKNOWN,
                       summary=f"{name}: {missing}cannot read the checkpoint's config.json ({source}): the engine's "
                               "context is unknown")
    status, found = _judge(prompt, implied, response, engine)
    truncated = ""
    if status is Status.FAIL and "--sglang-allow-auto-truncate" in argv:
        status, truncated = Status.WARN, "; --sglang-allow-auto-truncate cuts such responses short instead"
    relation = "fits" if status is Status.PASS else "against"
    return Verdict(**base, status=status, remedy=remedy if status is not Status.PASS else "",
                   summary=f"{name}: {found} {relation} the engine's context of {engine} tokens ({source}){truncated}")
