"""The fake commands of the capture sandbox: record argv as one JSON line, exit 0.

Run as `python3 recorder.py NAME ARGS...` by the shims the sandbox puts first on PATH (ray, python, python3,
pkill, nvidia-smi, sleep, aws, kubectl); it writes to $RLCHECK_RECORD and touches nothing else. A record already
at $RLCHECK_RECORD_CAP bytes takes no more (the call fails, saying so). `stdout` says where the call's output went:
"capture" (the sandbox's own output), "substitution" (a pipe the script reads, as in `$(python3 ...)`: the
stand-in answered nothing there) or "file".
"""

from __future__ import annotations

import json
import os
import stat
import sys

_DEFAULT_CAP = 4 << 20


def _stdout_kind() -> str:
    try:
        where = os.readlink("/proc/self/fd/1")
        mode = os.fstat(1).st_mode
    except OSError:
        return "closed"
    if where == os.environ.get("RLCHECK_STDOUT", ""):
        return "capture"
    return "substitution" if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) else "file"


def main() -> int:
    # Arguments that are not UTF-8 arrive as surrogate escapes: recorded with replacement, as capture reads them.
    name, *args = (os.fsencode(a).decode("utf-8", errors="replace") for a in sys.argv[1:])
    cap = int(os.environ.get("RLCHECK_RECORD_CAP") or _DEFAULT_CAP)
    line = json.dumps({"cmd": name, "argv": args, "cwd": os.getcwd(), "stdout": _stdout_kind()}) + "\n"
    with open(os.environ["RLCHECK_RECORD"], "a", encoding="utf-8", errors="replace") as out:
        if out.tell() + len(line.encode("utf-8", errors="replace")) > cap:
            print(f"rlcheck: the call record is full ({cap} bytes): `{name}` not recorded", file=sys.stderr)
            return 1
        out.write(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
