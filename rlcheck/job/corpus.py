"""The upstream launch corpus: every launch script of SLIME's and Miles' `scripts/` and `examples/` at a pinned commit,
captured by rlcheck's own capture and kept as data (argv, env, cluster shape; never the script's text), each with the
blocking FAILs it is expected to get and why each is a real defect of the script.

`build` captures a checked-out tree (slow: one sandbox per script, retried with the variables capture says it lacks)
and keeps what a person judged in the document it rewrites (the hardware each is judged on, the reasons for its
expected FAILs, why a script that is not captured cannot be: `error_why`, the arguments a script is run with as its
usage line asks: `script_args`; the host folders a script is shown, each with what it stands for, as
`job_show`: [{"path": "/root/models/GLM-5", "stands_for": "..."}], which must exist when the script is re-captured,
see rlcheck.job.shown). The self-test replays every recorded entry through the recipe checks (fast: no
sandbox) and `python tests/test_upstream_corpus.py review FILE` marks the FAILs not yet judged
(tests/test_upstream_corpus.py).

    python -m rlcheck.job.corpus build TREE --repo THUDM/slime --commit SHA --framework slime==main -o FILE.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rlcheck.job import capture

PLACEHOLDERS = {"MASTER_ADDR": "10.0.0.1", "BASE_DIR": "/root", "MODEL_DIR": "/root/models",
                "DATA_DIR": "/root/data", "SAVE_DIR": "/root/ckpt", "HOST_IP": "10.0.0.1",
                "NODE_RANK": "0", "WORLD_SIZE": "1", "NNODES": "1"}
"""A value for a variable capture says a script stops for (--job-env NAME=VALUE); any other name gets '/root/NAME'."""
_NEEDS = re.compile(r"--job-env ([A-Za-z_][A-Za-z0-9_]*)=\.\.\.")
_MAX_ROUNDS = 4
LAUNCH_SUFFIXES = (".sh", ".py")


def launch_files(root: Path) -> list[str]:
    """The launch scripts of a tree's scripts/ and examples/: every shell script but the model-argument files
    (scripts/models/, sourced by the launches), and every Python file that hands a trainer command to a launch
    helper (`execute_train`, Miles' and SLIME's command_utils)."""
    out = []
    for top in ("scripts", "examples"):
        for path in sorted((root / top).rglob("*")):
            rel = path.relative_to(root).as_posix()
            if not path.is_file() or rel.startswith("scripts/models/") or path.suffix not in LAUNCH_SUFFIXES:
                continue
            if path.suffix == ".py":
                text = path.read_text(encoding="utf-8", errors="replace")
                if "execute_train" not in text:
                    continue
            out.append(rel)
    return out


def _scrub(text: str, root: Path) -> str:
    """Capture's words with the scratch tree's place removed (the data names paths inside the tree)."""
    return text.replace(str(root.resolve()) + "/", "").replace(str(root.resolve()), ".")


def capture_one(root: Path, rel: str, env: Mapping[str, str] | None = None, args: Sequence[str] = (),
                show: Sequence[str] = ()) -> dict[str, Any]:
    """Capture one script from the tree's root (as its README says to run it) with the arguments a person chose for
    it (args: `bash SCRIPT ARG...`) and the folders a person chose to show it (show: --job-show), retrying with each
    variable capture names as missing:
    {'needs': [[round's names]...], 'job_env': {...}, 'job': {...} | 'error': why}."""
    given = dict(env or {})
    needs: list[list[str]] = []
    here = os.getcwd()
    os.chdir(root)
    try:
        for _ in range(_MAX_ROUNDS):
            try:
                job = capture.capture(Path(rel), env=tuple(given.items()), args=args, show=show)
            except (capture.CaptureFailed, capture.JobFormatError) as exc:
                why = _scrub(str(exc), root)
                names = [n for n in _NEEDS.findall(why) if n not in given]
                if not names:
                    return {"needs": needs, "job_env": given, "error": why}
                needs.append(names)
                given.update({n: PLACEHOLDERS.get(n, f"/root/{n}") for n in names})
                continue
            doc = json.loads(_scrub(json.dumps(job.to_dict()), root))
            doc.pop("source", None)
            return {"needs": needs, "job_env": given, "job": doc}
        return {"needs": needs, "job_env": given, "error": f"still stops for a variable after {_MAX_ROUNDS} rounds"}
    finally:
        os.chdir(here)


def build(root: Path, repo: str, commit: str, framework: str, old: Mapping[str, Any] | None = None,
          only: Sequence[str] = ()) -> dict[str, Any]:
    """A corpus document for the tree: every launch captured and judged; an old document's hardware, job_env, script
    arguments and reasons (for expected FAILs, for a script not captured) are kept: they are judgements, not
    captures."""
    kept = {e["path"]: e for e in (old or {}).get("scripts", ())}
    entries = []
    for rel in launch_files(root):
        prev = kept.get(rel, {})
        if only and rel not in only:
            if prev:
                entries.append(prev)
            continue
        print(f"capture {rel}", file=sys.stderr, flush=True)
        got = capture_one(root, rel, prev.get("job_env_given"), prev.get("script_args", ()),
                          [folder["path"] for folder in prev.get("job_show", ())])
        entry: dict[str, Any] = {"path": rel, "hardware": prev.get("hardware", "h200"), **got}
        for kept_key in ("job_env_given", "script_args", "job_show"):
            if kept_key in prev:
                entry[kept_key] = prev[kept_key]
        if "job" in got and "expected_fail" in prev:
            entry["expected_fail"] = prev["expected_fail"]
        if "error" in got and "error_why" in prev:
            entry["error_why"] = prev["error_why"]
        entries.append(entry)
    return {"repo": repo, "commit": commit, "framework": framework, "scripts": entries}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rlcheck.job.corpus")
    ap.add_argument("what", choices=["build"])
    ap.add_argument("root", type=Path, help="the upstream tree, checked out at the commit")
    ap.add_argument("--repo", required=True)
    ap.add_argument("--commit", required=True)
    ap.add_argument("--framework", required=True, help="the framework the tree is judged as: slime==main ...")
    ap.add_argument("-o", "--output", type=Path, required=True)
    ap.add_argument("--only", action="append", default=[], help="re-capture only this path (repeatable)")
    args = ap.parse_args(argv)
    old = json.loads(args.output.read_text(encoding="utf-8")) if args.output.is_file() else None
    doc = build(args.root.resolve(), args.repo, args.commit, args.framework, old, args.only)
    args.output.write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
