"""Imported once by the forkserver that every scorer process is forked from (see procs.py).

Importing math-verify and sympy takes about 0.5 s and the first scoring about 0.1 s more; doing both
here, once, means a scorer process that replaces a killed one is ready in a few milliseconds.
"""

from __future__ import annotations

import ctypes
import os
import signal

from rlcheck.reward import worker  # noqa: F401  (the scorer processes' entry point)
from rlcheck.reward.procs import FRONT_PID_ENV
from rlcheck.reward.scorers import HEALTH_PAIRS, load_scorer

_PR_SET_PDEATHSIG = 1
# Answers that take each parsing path once (polynomials, fractions, roots, pi, sets, intervals,
# tuples, units, text): a process forked after this scores its first symbolic answer warm, in
# milliseconds, instead of spending 0.3 s of CPU filling sympy's and the LaTeX parser's caches.
_WARM_PAIRS = (
    ("\\boxed{(x+1)^2}", "x^2+2x+1"), ("\\boxed{\\dfrac{3}{4}}", "0.75"), ("\\boxed{2\\sqrt{3}}", "\\sqrt{12}"),
    ("\\boxed{2\\pi}", "\\pi \\cdot 2"), ("\\boxed{\\{1, 2\\}}", "\\{2, 1\\}"), ("\\boxed{(0, 1]}", "(0,1]"),
    ("\\boxed{(1, -2)}", "(1,-2)"), ("\\boxed{5 \\text{ cm}}", "5"), ("\\boxed{\\text{yes}}", "yes"),
    ("\\boxed{x^3 - 1}", "(x-1)(x^2+x+1)"), ("\\boxed{1,000}", "1000"),
    ("\\boxed{\\frac{\\sqrt{2}}{2}}", "1/\\sqrt{2}"),
)


def _die_with_front() -> None:
    """In the forkserver: SIGKILL from the kernel when the front dies, however it dies (SIGKILL included).

    Scorer processes die with the forkserver in turn (worker.py), so nothing outlives the front.
    """
    front = os.environ.get(FRONT_PID_ENV, "")
    if not front.isdigit() or int(front) == os.getpid():  # imported by something other than the forkserver
        return
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the forkserver's alive pipe still ends it when the front exits
        return
    if os.getppid() != int(front):  # the front died before the request above took effect
        os._exit(0)


def _warm() -> None:
    for backend, pairs in HEALTH_PAIRS.items():
        try:
            scorer = load_scorer(backend)
            for pair in pairs:
                scorer(pair.response, pair.label)
            if backend != "boxed":
                for response, label in _WARM_PAIRS:
                    scorer(response, label)
        except Exception:  # noqa: BLE001 - a broken scorer is reported by /health and the pool, not here
            continue


# A SIGTERM sent to the whole process group (systemd, `timeout`, `kill -- -PGID`) must not take the
# forkserver down while the front drains in-flight requests: the front stops it, and it exits on its
# own when the front's end of its "alive" pipe closes. Scorer processes inherit this.
signal.signal(signal.SIGTERM, signal.SIG_IGN)
_die_with_front()
_warm()
