"""`python3 -m rlcheck.exec_argv`: run the argv given as JSON in $RLCHECK_ARGV, with no shell in between.

A KubeRay RayJob's entrypoint passes through the submitter's shell, `ray job submit`'s list2cmdline and
the job supervisor's /bin/sh: three chances to expand `$`, split words and glob brackets. With this
entrypoint the only string that crosses them is `python3 -m rlcheck.exec_argv`; the real argv travels
as JSON in the runtime env and is exec'd token for token.
"""

from __future__ import annotations

import json
import os
import sys

ENV_NAME = "RLCHECK_ARGV"


def parse(raw: str | None) -> list[str]:
    if not raw:
        raise ValueError(f"${ENV_NAME} is empty: expected a JSON list of strings, e.g. [\"python3\", \"train.py\"]")
    argv = json.loads(raw)
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        raise ValueError(f"${ENV_NAME}={raw[:200]!r}: expected a non-empty JSON list of strings")
    return argv


def main() -> int:
    try:
        argv = parse(os.environ.get(ENV_NAME))
    except ValueError as exc:  # json.JSONDecodeError is a ValueError too
        print(f"rlcheck.exec_argv: {exc}", file=sys.stderr)
        return 2
    os.execvp(argv[0], [*argv, *sys.argv[1:]])
    return 127  # not reached: execvp replaces this process or raises


if __name__ == "__main__":
    sys.exit(main())
