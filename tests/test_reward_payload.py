"""POST /score bodies: what SLIME sends is accepted; a label that cannot be graded is a named label problem
(a counted fallback); everything else is a 422 that says what is wrong."""

from __future__ import annotations

import json

import pytest

from rlcheck.reward.payload import PayloadError, parse_payload

CHAT = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is 6*7?"}]

ACCEPTED = [
    # body, labels the scorer gets, chat messages counted
    ({"prompt": "What is 6*7?", "response": "\\boxed{42}", "label": "42"}, ("42",), 0),
    ({"prompt": CHAT, "response": "\\boxed{42}", "label": "\\boxed{42}"}, ("\\boxed{42}",), 2),
    ({"prompt": "p", "response": "\\boxed{42}", "label": 42}, ("42",), 0),
    ({"prompt": "p", "response": "\\boxed{0.5}", "label": 0.5}, ("0.5",), 0),
    ({"response": "\\boxed{42}", "label": "42"}, ("42",), 0),  # prompt is optional: no scorer reads it
    ({"prompt": "p", "response": "", "label": "42", "metadata": {"x": 1}}, ("42",), 0),  # unknown keys ignored
    ({"prompt": "p", "response": "\\boxed{36}", "label": ["34", 36]}, ("34", "36"), 0),  # any of these answers
]


@pytest.mark.parametrize(("body", "labels", "messages"), ACCEPTED)
def test_reward_payload_accepts_slime_bodies(body: dict, labels: tuple[str, ...], messages: int) -> None:
    payload = parse_payload(json.dumps(body).encode())
    assert (payload.response, payload.labels, payload.prompt_messages) == (body["response"], labels, messages)
    assert payload.label_problem == ""


LABEL_PROBLEMS = [
    # body, fragment of the problem: replied as the counted fallback, not a 422 SLIME would retry 10 times
    (b'{"prompt": "p", "response": "r"}', "label: missing or null"),
    (b'{"prompt": "p", "response": "r", "label": null}', "label: missing or null"),
    (b'{"prompt": "p", "response": "r", "label": true}', "got bool"),
    (b'{"prompt": "p", "response": "r", "label": {"answer": "1"}}', "label: expected a string or a number, got dict"),
    (b'{"prompt": "p", "response": "r", "label": []}', "label: a list of 0 answers; 1..64 are graded"),
    (b'{"prompt": "p", "response": "r", "label": ["1", [2]]}', "label[1]: expected a string or a number, got list"),
    (b'{"prompt": "p", "response": "r", "label": "  "}', "label: empty string"),
    (b'{"prompt": "p", "response": "r", "label": 1e400}', "is not a finite number"),
]


@pytest.mark.parametrize(("body", "fragment"), LABEL_PROBLEMS, ids=[f[1][:30] for f in LABEL_PROBLEMS])
def test_reward_payload_label_that_cannot_be_graded_is_named(body: bytes, fragment: str) -> None:
    payload = parse_payload(body)
    assert fragment in payload.label_problem
    assert payload.labels == ()


REJECTED = [
    # raw body, fragment of the 422 message
    (b"not json", "body is not valid JSON"),
    (b"\xff\xfe{}", "body is not UTF-8"),
    (b"[1, 2]", "body must be a JSON object"),
    (b'{"prompt": "p", "label": "1"}', "response: missing"),
    (b'{"prompt": "p", "response": 5, "label": "1"}', "response: expected a string, got int"),
    (b'{"prompt": "p", "response": "r", "label": NaN}', "NaN is not a JSON number"),
    (b'{"prompt": 3, "response": "r", "label": "1"}', "prompt: expected a string or a list of chat messages"),
    (b'{"prompt": ["hi"], "response": "r", "label": "1"}', "prompt[0]: expected a chat message object, got str"),
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    (b'{"response": "r", "label": ' + b"9" * 5000 + b"}", "body is not valid JSON"),  # Python's digit limit
]


@pytest.mark.parametrize(("body", "fragment"), REJECTED, ids=[f[1][:30] for f in REJECTED])
def test_reward_payload_rejects_with_reason(body: bytes, fragment: str) -> None:
    with pytest.raises(PayloadError) as caught:
        parse_payload(body)
    assert caught.value.status == 422
    assert fragment in caught.value.message


LIMIT = 1000


def _request(chunks: list[bytes], declared: int | None):
    """A real Starlette request over an ASGI receive channel that delivers the body in these chunks."""
    from starlette.requests import Request

    headers = [] if declared is None else [(b"content-length", str(declared).encode())]
    messages = [{"type": "http.request", "body": c, "more_body": i < len(chunks) - 1} for i, c in enumerate(chunks)]
    messages = messages or [{"type": "http.request", "body": b"", "more_body": False}]

    async def receive():
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    return Request({"type": "http", "method": "POST", "path": "/score", "headers": headers}, receive)


def _read(chunks: list[bytes], declared: int | None) -> bytes | int:
    import asyncio

    from rlcheck.reward.payload import read_body

    try:
        return asyncio.run(read_body(_request(chunks, declared), LIMIT, 5.0))
    except PayloadError as exc:
        return exc.status


@pytest.mark.parametrize(("chunks", "declared", "expected"), [
    ([b"x" * LIMIT], LIMIT, LIMIT),  # declared and sent at the limit
    ([b"x" * (LIMIT + 1)], LIMIT + 1, 413),  # declared one over
    ([b"x" * 10], LIMIT + 1, 413),  # declared one over: refused on the header alone, before any byte is read
    ([b"x" * 10], LIMIT, 10),  # declared at the limit: read
    ([b"x" * 500, b"x" * 500], None, LIMIT),  # streamed (chunked, no length) to the limit
    ([b"x" * 500, b"x" * 501], None, 413),  # streamed one over
    ([b"x" * 400] * 3, 10, 413),  # declares 10 bytes, streams 1200: the stream is counted, not the header
    ([b"x" * (LIMIT * 2)], LIMIT * 2, 413),  # twice the limit
])
def test_payload_body_limit_declared_and_streamed(chunks, declared, expected):
    out = _read(chunks, declared)
    assert (len(out) if isinstance(out, bytes) else out) == expected
