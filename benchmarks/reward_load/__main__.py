"""python -m benchmarks.reward_load: see run.py."""

from __future__ import annotations

import sys

from benchmarks.reward_load.run import main

if __name__ == "__main__":
    sys.exit(main())
