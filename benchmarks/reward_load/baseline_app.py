"""The baseline: a reward server built the way the reference test case serves it, for comparison only.

One uvicorn worker, a synchronous FastAPI handler (so it runs in Starlette's thread pool) calling
math-verify with its timeouts disabled (its signal.alarm timeouts fail outside the main thread), any
exception answered with 0.0, and a /health that answers without scoring. Rebuilt from the behaviour
described in shared/reference/adt-slime.md section 4; no upstream code is copied.
"""

from __future__ import annotations

from fastapi import FastAPI
from math_verify import parse, verify
from pydantic import BaseModel

app = FastAPI()


class ScoreRequest(BaseModel):
    prompt: str | list = ""
    response: str = ""
    label: str | None = None


@app.get("/health")
def health() -> dict[str, str]:
    return {"status": "ok", "backend": "math_verify"}


@app.post("/score")
def score(request: ScoreRequest) -> float:
    if not request.label:
        return 0.0
    label = request.label if "\\boxed" in request.label else f"\\boxed{{{request.label}}}"
    try:
        gold = parse(label, parsing_timeout=None)
        answer = parse(request.response, parsing_timeout=None)
        return 1.0 if verify(gold, answer, timeout_seconds=None) else 0.0
    except Exception:  # noqa: BLE001 - the reference answers 0.0 to any scorer failure
        return 0.0
