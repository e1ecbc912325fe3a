"""The checkpoint's HF config.json against the Megatron model args (catalogue: model-config-mismatch).

SLIME builds the trainer's model from MODEL_ARGS and loads weights from --hf-checkpoint (through the bridge) or
--load; an arg from another model of the family gives tensors of another shape, or, for tied embeddings, an
output layer that silently is (or is not) the embedding. config.json holds the truth for the checkpoint.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlcheck import catalog
from rlcheck.framework.argv import option
from rlcheck.verdict import Status, Verdict

FAILURE_ID = "model-config-mismatch"
# (config.json key, Megatron flag): compared when both are present
_INT_FIELDS = (("vocab_size", "--vocab-size"), ("num_hidden_layers", "--num-layers"), ("hidden_size", "--hidden-size"),
               ("num_attention_heads", "--num-attention-heads"))


@dataclass(frozen=True, kw_only=True, slots=True)
class HfConfigObservation:
    """What the collector read."""

    path: str
    """The config.json it looked for ('' when the argv names no --hf-checkpoint)."""
    config: Mapping[str, Any] | None = None
    """The parsed file; None when it could not be read."""
    error: str = ""
    """Why it could not be read."""
    not_here: bool = False
    """The checkpoint directory does not exist on this machine (not mounted here): nothing to compare, not a fault."""


def collect_hf_config(argv: Sequence[str]) -> HfConfigObservation:
    """Reads <--hf-checkpoint>/config.json on this machine (the launch host sees the shared checkpoint path)."""
    root = option(argv, "--hf-checkpoint")
    if not root:
        return HfConfigObservation(path="", error="the argv has no --hf-checkpoint")
    path = Path(root) / "config.json"
    if not Path(root).exists():
        return HfConfigObservation(path=str(path), error=f"{root} does not exist on this machine", not_here=True)
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return HfConfigObservation(path=str(path), error=f"{type(exc).__name__}: {exc}")
    if not isinstance(config, dict):
        return HfConfigObservation(path=str(path), error="not a JSON object")
    return HfConfigObservation(path=str(path), config=config)


def _text_config(config: Mapping[str, Any]) -> Mapping[str, Any]:
    """Multimodal checkpoints keep the language model's numbers under text_config."""
    inner = config.get("text_config")
    return inner if isinstance(inner, dict) and "num_hidden_layers" not in config else config


def mismatches(config: Mapping[str, Any], argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """(what differs, what was compared), each as readable lines."""
    text = _text_config(config)
    diff: list[str] = []
    compared: list[str] = []
    for key, flag in _INT_FIELDS:
        arg = option(argv, flag)
        if key in text and arg is not None:
            compared.append(key)
            if str(text[key]) != arg:
                diff.append(f"{key} {text[key]} in config.json vs {flag} {arg}")
    heads = option(argv, "--num-attention-heads")
    if "--group-query-attention" in argv and "num_key_value_heads" in text:
        groups = option(argv, "--num-query-groups")  # Megatron's default is 1 (multi-query attention)
        compared.append("num_key_value_heads")
        if str(text["num_key_value_heads"]) != (groups if groups is not None else "1"):
            given = groups if groups is not None else "not given (Megatron's default 1)"
            diff.append(f"num_key_value_heads {text['num_key_value_heads']} in config.json vs --num-query-groups "
                        f"{given}")
    elif heads is not None and "num_key_value_heads" in text and "kv_lora_rank" not in text:
        compared.append("num_key_value_heads")
        if str(text["num_key_value_heads"]) != heads:
            diff.append(f"num_key_value_heads {text['num_key_value_heads']} in config.json but no "
                        "--group-query-attention (Megatron builds one KV head per attention head)")
    # transformers' PretrainedConfig defaults tie_word_embeddings to True when the key is absent
    tied = bool(config.get("tie_word_embeddings", text.get("tie_word_embeddings", True)))
    untied = "--untie-embeddings-and-output-weights" in argv
    compared.append("tie_word_embeddings")
    if tied == untied:
        flag = "--untie-embeddings-and-output-weights"
        diff.append(f"tie_word_embeddings {str(tied).lower()} in config.json vs {flag if untied else 'no ' + flag}")
    return diff, compared


def evaluate_hf_config(obs: HfConfigObservation, argv: Sequence[str], name: str) -> Verdict:
    base = {"failure_id": FAILURE_ID}
    if obs.not_here:
        return Verdict(**base, status=Status.SKIP,
                       summary=f"{name}: the checkpoint is not on this machine ({obs.error}): the model args are "
                               "compared with its config.json where the path is mounted (the launch host)")
    if obs.config is None:
        where = obs.path or "--hf-checkpoint"
        return Verdict(**base, status=Status.UNKNOWN,
                       summary=f"{name}: cannot read {where} ({obs.error}): the model args are not compared with "
                               "the checkpoint; run where the checkpoint path is mounted")
    diff, compared = mismatches(obs.config, argv)
    if diff:
        return Verdict(**base, status=Status.FAIL, remedy=catalog.get(FAILURE_ID).remedy,
                       summary=f"{name}: the model args disagree with {obs.path}: {'; '.join(diff)}")
    return Verdict(**base, status=Status.PASS,
                   summary=f"{name}: {', '.join(compared)} of {obs.path} match the model args")
