"""The /score body rules as tables (issue 21): each limit on both sides, each message word for word.

The body limit is two rules: the declared Content-Length is refused on the header alone, and the streamed
bytes are counted whatever the header says (a client may lie or send chunked). Either one turned off, or
moved by a byte or doubled, turns a row here red. The 422 / label-problem messages are what SLIME logs when
it gives up on a rollout, so they are compared whole.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from starlette.requests import Request

from rlcheck.reward.payload import CLIENT_GONE, PayloadError, parse_payload, read_body

LIMIT = 1000
NOTE = "the limit is 1000 bytes (--max-body-bytes)"


def _request(chunks: list[bytes], declared: str | None, then: str = "end") -> Request:
    """A real Starlette request whose ASGI receive delivers these chunks, then: 'end' (the last chunk closes the
    body), 'disconnect' (the client goes away mid-body) or 'stall' (nothing more ever arrives)."""
    headers = [] if declared is None else [(b"content-length", declared.encode())]
    closes = then == "end"
    messages: list[dict[str, Any]] = [
        {"type": "http.request", "body": c, "more_body": not (closes and i == len(chunks) - 1)}
        for i, c in enumerate(chunks)]
    if then == "disconnect":
        messages.append({"type": "http.disconnect"})

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop(0)
        await asyncio.Event().wait()  # stalled: the read timeout must end it
        raise AssertionError("unreachable")

    return Request({"type": "http", "method": "POST", "path": "/score", "headers": headers}, receive)


def _read(chunks: list[bytes], declared: str | None, then: str = "end", timeout_s: float = 5.0) -> object:
    try:
        return asyncio.run(read_body(_request(chunks, declared, then), LIMIT, timeout_s))
    except PayloadError as exc:
        assert str(exc) == exc.message  # the exception's own text is the message
        return exc.status, exc.message


BODY_LIMIT = [
    # chunks, Content-Length header, what read_body returns: the body, or (status, message)
    ([b"a" * LIMIT], str(LIMIT), b"a" * LIMIT),  # declared = limit, sent = limit
    ([b"a" * 10], str(LIMIT), b"a" * 10),  # declared = limit (not over): read
    ([b"a" * 10], str(LIMIT + 1), (413, f"body is 1001 bytes: {NOTE}")),  # one over, on the header alone
    ([b"a" * 10], str(2 * LIMIT - 1), (413, f"body is 1999 bytes: {NOTE}")),  # under a doubled limit: still over
    ([b"a" * 10], str(2 * LIMIT), (413, f"body is 2000 bytes: {NOTE}")),
    ([b"a" * 10], "10", b"a" * 10),
    ([b"a" * 10], "abc", b"a" * 10),  # not a number: the stream is what counts
    ([b"a" * 10], "-5", b"a" * 10),
    ([b"a" * 10], "", b"a" * 10),
    ([b"ab", b"cd", b"ef"], None, b"abcdef"),  # chunks joined in order, nothing between
    ([b"a" * 500, b"a" * 500], None, b"a" * LIMIT),  # streamed to the limit
    ([b"a" * 500, b"a" * 501], None, (413, f"body is over 1000 bytes: {NOTE}")),  # streamed one over
    ([b"a" * 999, b"a"], None, b"a" * LIMIT),
    ([b"a" * 999, b"aa"], None, (413, f"body is over 1000 bytes: {NOTE}")),
    ([b"a" * 400] * 3, "10", (413, f"body is over 1000 bytes: {NOTE}")),  # declares 10, streams 1200
    ([b"a" * 400] * 3, str(LIMIT), (413, f"body is over 1000 bytes: {NOTE}")),  # the header lies: the stream counts
    ([b"a" * 1001], None, (413, f"body is over 1000 bytes: {NOTE}")),  # one chunk one over
    ([b"a" * 1500], None, (413, f"body is over 1000 bytes: {NOTE}")),  # under a doubled limit: still over
    ([b""], None, b""),
]


@pytest.mark.parametrize(("chunks", "declared", "expected"), BODY_LIMIT)
def test_payload_rule_body_limit(chunks: list[bytes], declared: str | None, expected: object) -> None:
    assert _read(chunks, declared) == expected


def test_payload_rule_stalled_body_is_408_after_the_read_timeout() -> None:
    assert _read([b"a" * 7], None, then="stall", timeout_s=0.05) == (
        408, "body not complete after 0.05 s (7 bytes arrived; --read-timeout-s)")


def test_payload_rule_body_in_time_is_read_whole() -> None:
    assert _read([b"a" * 7, b"b"], None, timeout_s=0.5) == b"a" * 7 + b"b"


def test_payload_rule_client_gone_mid_body() -> None:
    assert CLIENT_GONE == 499
    assert _read([b"a" * 12], None, then="disconnect") == (499, "client disconnected after 12 bytes of the body")


def _labels_body(label: object) -> bytes:
    return json.dumps({"prompt": "p", "response": "r", "label": label}).encode()


LABEL_COUNT = [
    # number of answers in a list label: graded (1..64) or a named problem
    (0, "label: a list of 0 answers; 1..64 are graded"),
    (1, ""),
    (2, ""),
    (63, ""),
    (64, ""),
    (65, "label: a list of 65 answers; 1..64 are graded"),
]


@pytest.mark.parametrize(("count", "problem"), LABEL_COUNT)
def test_payload_rule_label_list_length(count: int, problem: str) -> None:
    payload = parse_payload(_labels_body([str(i) for i in range(count)]))
    assert payload.label_problem == problem
    assert payload.labels == (() if problem else tuple(str(i) for i in range(count)))


LABELS = [
    # label as JSON text, labels graded, problem (exact)
    ('"42"', ("42",), ""),
    ("42", ("42",), ""),
    ("0", ("0",), ""),
    ("-3", ("-3",), ""),
    ("0.5", ("0.5",), ""),
    ("1e300", ("1e+300",), ""),
    ('" 7 "', (" 7 ",), ""),  # kept as sent: the scorer normalises
    ('"x"', ("x",), ""),
    ('["a", 2]', ("a", "2"), ""),
    ("null", (), "label: missing or null; math scorers need the reference answer (check SLIME's --label-key)"),
    ("true", (), "label: expected a string or a number, got bool"),
    ("false", (), "label: expected a string or a number, got bool"),
    ('{"a": 1}', (), "label: expected a string or a number, got dict"),
    ('""', (), "label: empty string"),
    ('"  "', (), "label: empty string"),
    ('"\\n"', (), "label: empty string"),
    ("1e400", (), "label: inf is not a finite number"),
    ("-1e400", (), "label: -inf is not a finite number"),
    ('["1", null]', (), "label[1]: expected a string or a number, got null"),
    ('[true]', (), "label[0]: expected a string or a number, got bool"),
    ('["1", "2", ""]', (), "label[2]: empty string"),
    ('[1e400]', (), "label[0]: inf is not a finite number"),
    ('[[1]]', (), "label[0]: expected a string or a number, got list"),
]


@pytest.mark.parametrize(("label", "labels", "problem"), LABELS)
def test_payload_rule_label(label: str, labels: tuple[str, ...], problem: str) -> None:
    payload = parse_payload(b'{"prompt": "p", "response": "r", "label": ' + label.encode() + b"}")
    assert (payload.labels, payload.label_problem) == (labels, problem)


def test_payload_rule_missing_label_is_the_null_problem() -> None:
    payload = parse_payload(b'{"response": "r"}')
    assert payload.label_problem.startswith("label: missing or null;")
    assert (payload.labels, payload.prompt_messages, payload.response) == ((), 0, "r")


SHAPE = "SLIME's remote_rm posts {prompt, response, label}"
REJECTED = [
    # raw body, the whole 422 message
    (b"[1]", f"body must be a JSON object ({SHAPE}), got list"),
    (b'"s"', f"body must be a JSON object ({SHAPE}), got str"),
    (b"null", f"body must be a JSON object ({SHAPE}), got null"),
    (b"3", f"body must be a JSON object ({SHAPE}), got int"),
    (b'{"label": "1"}', f"response: missing ({SHAPE})"),
    (b'{"response": null, "label": "1"}', "response: expected a string, got null"),
    (b'{"response": ["r"], "label": "1"}', "response: expected a string, got list"),
    (b'{"response": "r", "label": NaN}', "body is not valid JSON: NaN is not a JSON number"),
    (b'{"response": "r", "label": Infinity}', "body is not valid JSON: Infinity is not a JSON number"),
    (b'{"response": "r", "label": -Infinity}', "body is not valid JSON: -Infinity is not a JSON number"),
    (b'{"prompt": 3, "response": "r", "label": "1"}',
     "prompt: expected a string or a list of chat messages, got int"),
    (b'{"prompt": null, "response": "r", "label": "1"}',
     "prompt: expected a string or a list of chat messages, got null"),
    (b'{"prompt": {"a": 1}, "response": "r", "label": "1"}',
     "prompt: expected a string or a list of chat messages, got dict"),
    (b'{"prompt": [{"role": "user"}, "hi"], "response": "r", "label": "1"}',
     "prompt[1]: expected a chat message object, got str"),
    (b'{"prompt": [null], "response": "r", "label": "1"}', "prompt[0]: expected a chat message object, got null"),
    (b"[" * 100_000 + b"]" * 100_000, "body is not valid JSON: nested too deeply"),
    (b"ok\xff", "body is not UTF-8: invalid start byte at byte 2"),
    (b"\xc3", "body is not UTF-8: unexpected end of data at byte 0"),
    (b"{", "body is not valid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
]


@pytest.mark.parametrize(("body", "message"), REJECTED, ids=[m[:40] for _, m in REJECTED])
def test_payload_rule_rejected_with_the_whole_reason(body: bytes, message: str) -> None:
    with pytest.raises(PayloadError) as caught:
        parse_payload(body)
    assert (caught.value.status, caught.value.message, str(caught.value)) == (422, message, message)


PROMPTS = [
    # prompt as JSON, chat messages counted
    ('""', 0), ('"What is 6*7?"', 0), ("[]", 0), ('[{"role": "user", "content": "q"}]', 1),
    ('[{"role": "system"}, {"role": "user"}, {"role": "assistant"}]', 3),
]


@pytest.mark.parametrize(("prompt", "messages"), PROMPTS)
def test_payload_rule_prompt_messages_counted(prompt: str, messages: int) -> None:
    payload = parse_payload(b'{"prompt": ' + prompt.encode() + b', "response": "r", "label": "1"}')
    assert (payload.prompt_messages, payload.response, payload.labels, payload.label_problem) == (messages, "r",
                                                                                                  ("1",), "")
