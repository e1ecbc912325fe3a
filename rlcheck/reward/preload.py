"""Imported once by the forkserver that every scorer process is forked from (see procs.py).

Importing math-verify and sympy takes about 0.5 s and the first scoring about 0.1 s more; doing both
here, once, means a scorer process that replaces a killed one is ready in a few milliseconds.
"""

from __future__ import annotations

import signal

from rlcheck.reward import worker  # noqa: F401  (the scorer processes' entry point)
from rlcheck.reward.scorers import HEALTH_PAIRS, load_scorer


def _warm() -> None:
    for backend, pairs in HEALTH_PAIRS.items():
        try:
            scorer = load_scorer(backend)
            for pair in pairs:
                scorer(pair.response, pair.label)
        except Exception:  # noqa: BLE001 - a broken scorer is reported by /health and the pool, not here
            continue


# A SIGTERM sent to the whole process group (systemd, `timeout`, `kill -- -PGID`) must not take the
# forkserver down while the front drains in-flight requests: the front stops it, and it exits on its
# own when the front's end of its "alive" pipe closes. Scorer processes inherit this.
signal.signal(signal.SIGTERM, signal.SIG_IGN)
_warm()
