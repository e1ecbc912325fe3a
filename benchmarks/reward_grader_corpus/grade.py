"""Grade the corpus with SLIME's own math grader and write its verdicts as rlcheck's test data.

SLIME's grader file is read from a local SLIME clone at each given commit, written to a temporary
directory outside this repository and run there in a child process; nothing of SLIME is kept or
committed. It needs sympy and pylatexenc (what SLIME's grader imports) in this Python.

Usage: python -m benchmarks.reward_grader_corpus.grade --slime-repo PATH [--commit v0.2.4 --commit 624b824]
Writes tests/data/reward/slime_grader_corpus.jsonl: a header line, then {kind, response, label, rewards}
with SLIME's reward per commit.
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
import tempfile
from pathlib import Path

if not __package__:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.reward_grader_corpus.answers import cases  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "tests" / "data" / "reward" / "slime_grader_corpus.jsonl"
GRADER_PATH = "slime/rollout/rm_hub/math_utils.py"
# Run in the child: import the grader file and print one reward per input line (None when it raised).
_CHILD = """
import importlib.util, json, logging, sys
logging.disable(logging.WARNING)
spec = importlib.util.spec_from_file_location("grader", sys.argv[1])
grader = importlib.util.module_from_spec(spec); spec.loader.exec_module(grader)
for line in sys.stdin:
    case = json.loads(line)
    try:
        reward = 1.0 if grader.grade_answer_verl(case["response"], case["label"]) else 0.0
    except Exception as exc:
        reward = None
    print(json.dumps(reward), flush=True)
"""


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def slime_rewards(repo: Path, commit: str, corpus: list[dict[str, object]]) -> list[float | None]:
    with tempfile.TemporaryDirectory(prefix="slime-grader-") as tmp:
        grader = Path(tmp) / "grader.py"
        grader.write_text(_git(repo, "show", f"{commit}:{GRADER_PATH}"))
        stdin = "".join(json.dumps(case) + "\n" for case in corpus)
        done = subprocess.run([sys.executable, "-c", _CHILD, str(grader)], input=stdin, capture_output=True,
                              text=True, cwd=tmp, timeout=3600, check=True)
    rewards = [json.loads(line) for line in done.stdout.splitlines()]
    if len(rewards) != len(corpus):
        raise RuntimeError(f"{commit}: {len(rewards)} verdicts for {len(corpus)} answers")
    return rewards


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slime-repo", type=Path, required=True, help="a git clone of THUDM/slime")
    parser.add_argument("--commit", action="append", help="SLIME versions to grade with (default v0.2.4, 624b824)")
    args = parser.parse_args(argv)
    commits = args.commit or ["v0.2.4", "624b824"]
    corpus = cases()
    shas = {c: _git(args.slime_repo, "rev-parse", f"{c}^{{commit}}").strip() for c in commits}
    by_commit = {c: slime_rewards(args.slime_repo, c, corpus) for c in commits}
    import pylatexenc
    import sympy

    header = {"source": f"SLIME's grade_answer_verl ({GRADER_PATH}, what --rm-type math uses), run by "
                        "benchmarks/reward_grader_corpus/grade.py", "slime_commits": shas,
              "grader_blobs": {c: _git(args.slime_repo, "rev-parse", f"{c}:{GRADER_PATH}").strip() for c in commits},
              "pylatexenc": pylatexenc.__version__, "sympy": sympy.__version__, "python": sys.version.split()[0],
              "date": datetime.date.today().isoformat(), "cases": len(corpus)}
    with OUT.open("w", encoding="utf-8") as out:
        out.write(json.dumps(header, ensure_ascii=False) + "\n")
        for i, case in enumerate(corpus):
            rewards = {c: by_commit[c][i] for c in commits}
            out.write(json.dumps({**case, "rewards": rewards}, ensure_ascii=False) + "\n")
    ones = sum(by_commit[commits[0]][i] == 1.0 for i in range(len(corpus)))
    print(f"{OUT.relative_to(REPO)}: {len(corpus)} answers, {ones} rewarded 1 by SLIME {commits[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
