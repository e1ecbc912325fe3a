"""The fake commands of the capture sandbox: record argv as one JSON line, exit 0.

Run as `python3 recorder.py NAME ARGS...` by the shims the sandbox puts first on PATH (ray, python, python3,
pkill, nvidia-smi, sleep, aws, kubectl); it writes to $RLCHECK_RECORD and touches nothing else.
"""

from __future__ import annotations

import json
import os
import sys


def main() -> int:
    name, *args = sys.argv[1:]
    with open(os.environ["RLCHECK_RECORD"], "a", encoding="utf-8") as out:
        out.write(json.dumps({"cmd": name, "argv": args, "cwd": os.getcwd()}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
