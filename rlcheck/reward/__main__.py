"""`python -m rlcheck.reward`: the reward service without the rlcheck console script."""

from __future__ import annotations

import argparse
import sys

from rlcheck.reward.cli import add_arguments, run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rlcheck.reward",
                                     description="SLIME remote_rm reward service (same as `rlcheck reward-service`)")
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
