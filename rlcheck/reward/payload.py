"""The POST /score body SLIME's remote_rm sends, {prompt, response, label}, read strictly.

A malformed body is a 422 that names the field and what was found: SLIME retries it and then fails
the rollout step with that message, which beats training on a reward the service had to guess.
A well-formed body whose label cannot be graded (null, a bool, an object, an empty list) is not
retried into a failed rollout: it gets the fallback reward, counted and logged as a label error.
"""

from __future__ import annotations

import asyncio
import json
import math
from dataclasses import dataclass
from typing import Any, NoReturn

from starlette.requests import ClientDisconnect, Request

SLIME_SHAPE = "SLIME's remote_rm posts {prompt, response, label}"


class LabelProblem(ValueError):
    """The label cannot be graded: the reply is the counted, logged fallback (SLIME would retry a 4xx)."""


class PayloadError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


@dataclass(frozen=True, kw_only=True, slots=True)
class ScorePayload:
    response: str
    labels: tuple[str, ...]
    """The reference answers as text (a JSON number 42 arrives as "42"); a list label gives several."""
    label_problem: str = ""
    """Why the label cannot be graded (then labels is empty): a fallback reply, never a guess."""
    prompt_messages: int
    """Chat messages in the prompt (0 for a string prompt); the scorers do not read the prompt."""


def _fail(message: str, status: int = 422) -> NoReturn:
    raise PayloadError(status, message)


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _reject_constant(name: str) -> NoReturn:
    _fail(f"body is not valid JSON: {name} is not a JSON number")


CLIENT_GONE = 499  # no reply reaches the client; the status is only counted and logged


async def read_body(request: Request, max_body_bytes: int, read_timeout_s: float) -> bytes:
    """The body, or 413 as soon as it is known to be larger than max_body_bytes (declared or streamed).

    408 when it has not fully arrived within read_timeout_s (a stalled client must not hold its buffer);
    CLIENT_GONE when the client disconnected mid-body (an ordinary event: a log line, no traceback).
    """
    limit = f"the limit is {max_body_bytes} bytes (--max-body-bytes)"
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_body_bytes:
        _fail(f"body is {declared} bytes: {limit}", 413)
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(read_timeout_s):
            async for chunk in request.stream():
                size += len(chunk)
                if size > max_body_bytes:
                    _fail(f"body is over {max_body_bytes} bytes: {limit}", 413)
                chunks.append(chunk)
    except TimeoutError:
        _fail(f"body not complete after {read_timeout_s:g} s ({size} bytes arrived; --read-timeout-s)", 408)
    except ClientDisconnect:
        _fail(f"client disconnected after {size} bytes of the body", CLIENT_GONE)
    return b"".join(chunks)


_MAX_LABELS = 64


def _label_text(label: Any, where: str) -> str:
    """One answer as text; raises LabelProblem naming what it found."""
    if isinstance(label, bool) or not isinstance(label, str | int | float):
        raise LabelProblem(f"{where}: expected a string or a number, got {_kind(label)}")
    if isinstance(label, float) and not math.isfinite(label):
        raise LabelProblem(f"{where}: {label} is not a finite number")
    text = label if isinstance(label, str) else repr(label)
    if not text.strip():
        raise LabelProblem(f"{where}: empty string")
    return text


def _labels(obj: dict[str, Any]) -> tuple[tuple[str, ...], str]:
    """(answers, problem): a list label is "any of these"; a label that cannot be graded is a problem."""
    label = obj.get("label")
    try:
        if label is None:
            raise LabelProblem("label: missing or null; math scorers need the reference answer "
                               "(check SLIME's --label-key)")
        if isinstance(label, list):
            if not 1 <= len(label) <= _MAX_LABELS:
                raise LabelProblem(f"label: a list of {len(label)} answers; 1..{_MAX_LABELS} are graded")
            return tuple(_label_text(item, f"label[{i}]") for i, item in enumerate(label)), ""
        return (_label_text(label, "label"),), ""
    except LabelProblem as exc:
        return (), str(exc)


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
    labels, problem = _labels(obj)
    return ScorePayload(response=obj["response"], labels=labels, label_problem=problem,
                        prompt_messages=_prompt_messages(obj))
