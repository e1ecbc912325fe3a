"""Print the diff of a target's mutants without running its tests: the unexplained survivors of a committed
result by default, or the mutants named.

The mutants are made afresh from the module as it is now (mutmut's own generator, in a temporary folder), so a
number written down before the function changed may name another edit than the one that survived: re-run the
target when a diff does not look like a survivor.

Usage: python -m benchmarks.mutation.show TARGET [MUTANT ...] [--result mutation_core]
  TARGET          a key of benchmarks.mutation.run.TARGETS
  MUTANT          a mutant's name (rlcheck.x.y.x_fn__mutmut_N) or its function's tail (x_fn__mutmut_N)
  --result NAME   read the unexplained survivors from benchmarks/results/NAME.json (default: every
                  mutation_*.json that holds the target)
Exit 0: every diff printed; 2: a mutant or the target's result could not be found (named on stderr).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks import results_file
from benchmarks.mutation.run import ROOT, TARGETS, TOOL, ensure_tool

_CHILD = """
import sys, warnings
from pathlib import Path
warnings.simplefilter("ignore")
from mutmut.__main__ import create_mutants_for_file
from mutmut.mutation.diff_apply import get_diff_for_mutant
module, names = sys.argv[1], sys.argv[2:]
result = create_mutants_for_file(Path(module), Path("mutants") / module)
if result.error:
    raise result.error
missing = 0
for name in names:
    try:
        diff = get_diff_for_mutant(name, path=Path(module))
        print(f"# {name}")
        print(diff)
    except Exception as exc:
        print(f"{name}: not among the mutants of {module} as it is now ({type(exc).__name__}: {exc})",
              file=sys.stderr)
        missing += 1
sys.exit(2 if missing else 0)
"""


def unexplained(target: str, result: str | None) -> list[str] | None:
    """The target's unexplained survivors in the committed result (None: no result holds the target)."""
    files = [results_file.RESULTS / f"{result}.json"] if result else sorted(results_file.RESULTS.glob("mutation*.json"))
    for path in files:
        if path.is_file():
            entry = json.loads(path.read_text(encoding="utf-8")).get("targets", {}).get(target)
            if entry is not None:
                return list(entry.get("unexplained", []))
    return None


def full_name(module: str, name: str) -> str:
    dotted = module.removesuffix(".py").replace("/", ".")
    return name if name.startswith(dotted + ".") else f"{dotted}.{name}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("target", choices=sorted(TARGETS), metavar="TARGET")
    parser.add_argument("mutants", nargs="*", metavar="MUTANT")
    parser.add_argument("--result", default=None)
    args = parser.parse_args(argv)
    module = TARGETS[args.target][0]
    names = args.mutants or unexplained(args.target, args.result)
    if names is None:
        print(f"no committed mutation result holds target {args.target!r}: name the mutants", file=sys.stderr)
        return 2
    if not names:
        print(f"{args.target}: no unexplained survivor in the committed result")
        return 0
    ensure_tool()
    with tempfile.TemporaryDirectory(prefix="rlcheck-mutants-") as work:
        (Path(work) / module).parent.mkdir(parents=True)
        (Path(work) / "mutants" / module).parent.mkdir(parents=True)
        shutil.copy2(ROOT / module, Path(work) / module)
        (Path(work) / "pyproject.toml").write_text(f"[tool.mutmut]\nsource_paths = [{module!r}]\n", encoding="utf-8")
        env = {**os.environ, "PYTHONPATH": str(TOOL)}
        proc = subprocess.run([sys.executable, "-c", _CHILD, module, *(full_name(module, n) for n in names)],
                              cwd=work, env=env, timeout=600, check=False)
    return 0 if proc.returncode == 0 else 2


if __name__ == "__main__":
    sys.exit(main())
