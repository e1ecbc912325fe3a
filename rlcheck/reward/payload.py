"""The POST /score body SLIME's remote_rm sends, {prompt, response, label}, read strictly.

A malformed body is a 422 that names the field and what was found: SLIME retries it and then fails
the rollout step with that message, which beats training on a reward the service had to guess.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, NoReturn

from starlette.requests import Request

SLIME_SHAPE = "SLIME's remote_rm posts {prompt, response, label}"


class PayloadError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


@dataclass(frozen=True, kw_only=True, slots=True)
class ScorePayload:
    response: str
    label: str
    """Always a string: a JSON number label (42, 0.5) arrives here as its decimal text."""
    prompt_messages: int
    """Chat messages in the prompt (0 for a string prompt); the scorers do not read the prompt."""


def _fail(message: str, status: int = 422) -> NoReturn:
    raise PayloadError(status, message)


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _reject_constant(name: str) -> NoReturn:
    _fail(f"body is not valid JSON: {name} is not a JSON number")


async def read_body(request: Request, max_body_bytes: int) -> bytes:
    """The body, or 413 as soon as it is known to be larger than max_body_bytes (declared or streamed)."""
    limit = f"the limit is {max_body_bytes} bytes (--max-body-bytes)"
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_body_bytes:
        _fail(f"body is {declared} bytes: {limit}", 413)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_body_bytes:
            _fail(f"body is over {max_body_bytes} bytes: {limit}", 413)
        chunks.append(chunk)
    return b"".join(chunks)


def _label(obj: dict[str, Any]) -> str:
    if "label" not in obj or obj["label"] is None:
        _fail("label: missing or null; math scorers need the reference answer (check SLIME's --label-key)")
    label = obj["label"]
    if isinstance(label, bool) or not isinstance(label, str | int | float):
        _fail(f"label: expected a string or a number, got {_kind(label)}")
    if isinstance(label, float) and not math.isfinite(label):
        _fail(f"label: {label} is not a finite number")
    text = label if isinstance(label, str) else repr(label)
    if not text.strip():
        _fail("label: empty string")
    return text


def _prompt_messages(obj: dict[str, Any]) -> int:
    prompt = obj.get("prompt", "")
    if isinstance(prompt, str):
        return 0
    if not isinstance(prompt, list):
        _fail(f"prompt: expected a string or a list of chat messages, got {_kind(prompt)}")
    for i, message in enumerate(prompt):
        if not isinstance(message, dict):
            _fail(f"prompt[{i}]: expected a chat message object, got {_kind(message)}")
    return len(prompt)


def parse_payload(body: bytes) -> ScorePayload:
    """Validate a /score body; raise PayloadError(422, what is wrong) on anything else."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        _fail(f"body is not UTF-8: {exc.reason} at byte {exc.start}")
    try:
        obj = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        _fail("body is not valid JSON: nested too deeply")
    except ValueError as exc:  # JSONDecodeError, and Python's 4300-digit limit on integers
        _fail(f"body is not valid JSON: {exc}")
    if not isinstance(obj, dict):
        _fail(f"body must be a JSON object ({SLIME_SHAPE}), got {_kind(obj)}")
    if "response" not in obj:
        _fail(f"response: missing ({SLIME_SHAPE})")
    if not isinstance(obj["response"], str):
        _fail(f"response: expected a string, got {_kind(obj['response'])}")
    return ScorePayload(response=obj["response"], label=_label(obj), prompt_messages=_prompt_messages(obj))
