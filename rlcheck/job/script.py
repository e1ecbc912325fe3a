"""A launch script (bash, or a Miles Python launcher under rlcheck.job.miles_stub) run in the capture sandbox:
what its fake `ray job submit` (or python train.py) received."""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
from collections.abc import Sequence
from pathlib import Path

from rlcheck import secret_guard
from rlcheck.framework.detect import checkout_version
from rlcheck.job import needs, sandbox
from rlcheck.job.job import Job, framework_of
from rlcheck.job.submit import CaptureFailed, JobFormatError, from_submit


def _ray_start_gpus(run: sandbox.Run) -> int | None:
    """GPUs of `ray start --head --num-gpus N` (the only node a single-script launch starts)."""
    for cmd, argv in run.calls:
        if cmd == "ray" and argv[:1] == ("start",):
            for i, token in enumerate(argv):
                if token == "--num-gpus" and i + 1 < len(argv) and argv[i + 1].isdigit():
                    return int(argv[i + 1])
                if token.startswith("--num-gpus=") and token.split("=", 1)[1].isdigit():
                    return int(token.split("=", 1)[1])
    return None


def _failed(path: Path, run: sandbox.Run, what: str, args: Sequence[str] = ()) -> CaptureFailed:
    why = "its time limit ended it" if run.timed_out else f"it exited {run.returncode}"
    seen = ", ".join(sorted({" ".join((cmd, *argv[:1])) for cmd, argv in run.calls})) or "none"
    tail = " | ".join(run.stderr_tail) or "(no output)"
    text = _text(path)
    output = [*run.stderr_tail, *needs.program_errors(run.calls)]
    wanted = needs.how_to_pass(needs.missing_variables(text, output, run.set_at_exit)) if run.returncode else ""
    positional = needs.wants_arguments(text, run.stderr_tail, args) if run.returncode else ""
    return CaptureFailed("; ".join(p for p in (f"{path}: {what}", positional, wanted, why, *run.limits,
                                               f"fake commands it ran: {seen}", f"last output: {tail}") if p))


def _text(path: Path) -> str:
    try:
        return path.read_bytes()[:1 << 20].decode("utf-8", errors="replace")
    except OSError:
        return ""


_MILES_STUB = Path(__file__).resolve().with_name("miles_stub.py")
_IMPORTS = re.compile(r"^\s*(?:from|import)\s+(miles|slime)[.\s]", re.MULTILINE)


def tree_of(path: Path, cwd: str | None = None) -> tuple[str, Path] | None:
    """(framework, the tree's root) of the framework tree a launch script lives in (or is run from): the nearest
    directory above it holding the `miles` or `slime` package, else a train.py importing one of them (the trainer
    the script calls); None when neither. A Miles checkout's bash scripts call Miles' train.py, whose parser is
    Miles', wherever it is cloned."""
    here = path.resolve().parent
    for place in dict.fromkeys([here, *here.parents, *([Path(cwd).resolve()] if cwd else [])]):
        found = [name for name in ("miles", "slime") if (place / name / "__init__.py").is_file()]
        if len(found) == 1:
            return found[0], place
        train = place / "train.py"
        if not found and train.is_file():
            text = train.read_bytes()[:1 << 20].decode("utf-8", errors="replace")
            named = dict.fromkeys(_IMPORTS.findall(text))
            if len(named) == 1:
                return next(iter(named)), place
    return None


def tree_framework(path: Path, cwd: str | None = None) -> str | None:
    """The framework of tree_of, or None."""
    tree = tree_of(path, cwd)
    return tree[0] if tree else None


def capture_script(path: Path, env: Sequence[tuple[str, str]] = (), fmt: str = "bash", args: Sequence[str] = (),
                   show: Sequence[str] = ()) -> Job:
    """Run the script (fmt bash, or miles-py: a Miles launcher under the Miles stub) in the sandbox with the
    user's env and its own arguments (args: what `bash SCRIPT ARG...` or `python LAUNCHER ARG...` gets); CaptureFailed
    when the sandbox cannot be made or no trainer command ran. show: host folders shown to it at their own paths
    (--job-show; JobFormatError names one that cannot be), each named in the findings."""
    command = (["bash", str(path.resolve())] if fmt == "bash" else
               [sandbox.interpreter(), str(_MILES_STUB), str(path.resolve())])
    tree = tree_of(path, os.getcwd())
    # The framework's image keeps its checkout at /root/<framework> (SLIME's and Miles' Dockerfiles), where the
    # upstream scripts source their model files from: this tree is shown there.
    checkout = (str(tree[1]), f"/root/{tree[0]}") if tree else None
    try:
        run = sandbox.run(command, env=env, script=str(path.resolve()), checkout=checkout, args=args, show=show)
    except sandbox.SandboxUnavailable as exc:
        raise CaptureFailed(f"{path}: not run: {exc}") from exc
    except ValueError as exc:  # a folder --job-show cannot show
        raise JobFormatError(str(exc)) from exc
    job = _job_of(path, run, fmt, args)
    folders = sorted({os.path.realpath(folder) for folder in show})
    job = dataclasses.replace(job, findings=(*job.findings, *(
        f"captured with {folder} shown at its own path (a private overlay: the host folder unchanged, what the script "
        f"wrote there not kept, credential files in it hidden)" for folder in folders)))
    if args:  # named in the findings, a secret-shaped one hidden (the texts are shown and written)
        shown = shlex.join(secret_guard.REDACTED if secret_guard.secret_shape(a) else a for a in args)
        job = dataclasses.replace(job, findings=(*job.findings, f"captured with the script's arguments {shown}"))
    # What the Miles stub saw: a Miles launcher's, or a Python launcher's the script ran (recorder.is_launcher).
    stubbed = sorted({argv[0] for cmd, argv in run.calls if cmd == "miles-stub" and argv})
    seen = [f"Miles helper {name} is not modelled by rlcheck's stub: what it adds to the launch is not judged"
            for name in stubbed]
    seen += sorted({argv[0] for cmd, argv in run.calls if cmd == "miles-note" and argv})
    nodes = next((int(argv[0]) for cmd, argv in run.calls if cmd == "miles-nodes" and argv and argv[0].isdigit()),
                 job.nodes)
    job = dataclasses.replace(job, nodes=nodes or None, findings=(*job.findings, *seen))
    if fmt != "miles-py":
        if tree is not None and tree[0] != job.framework:
            job = dataclasses.replace(job, framework=tree[0], findings=(
                *job.findings, f"judged as {tree[0]}: the script lives in a {tree[0]} tree (its package, or a train.py "
                               f"importing it, above the script)"))
        return with_tree_version(job, tree)
    # A SLIME launcher under the same helpers (slime.utils.external_utils.command_utils) is SLIME's job.
    framework = "slime" if tree_framework(path) == "slime" or _slime_launcher(path) else "miles"
    return with_tree_version(dataclasses.replace(job, framework=framework), tree)


def with_tree_version(job: Job, tree: tuple[str, Path] | None) -> Job:
    """The job with the version of the framework tree it was captured from (checkout_version: a release tag, else
    main), and a finding saying how that was known, or that the release is unknown (no git)."""
    if tree is None or tree[0] != job.framework or job.framework_version:
        return job
    version, how = checkout_version(tree[1] / tree[0])
    if version is None and how.startswith("git commit"):
        version = "main"
    if version is not None:
        note = (f"{tree[0]} {version}: the tree it lives in ({tree[1]}) is a git checkout at {how.split(' (')[0]}; "
                f"judged by that version's schema unless --framework says otherwise")
    else:
        why = how.removeprefix("no package metadata, and ").removeprefix("no package metadata and ")
        note = (f"{tree[0]} release unknown: {why} in the tree it lives in ({tree[1]}; a version file there is not "
                f"trusted: main keeps the last release's); judged by {tree[0]}'s default schema unless --framework "
                f"{tree[0]}==VERSION (or ==main) says which")
    return dataclasses.replace(job, framework_version=version, findings=(*job.findings, note))


def _slime_launcher(path: Path) -> bool:
    text = path.read_bytes()[:1 << 20].decode("utf-8", errors="replace")
    return "slime" in _IMPORTS.findall(text) and "miles" not in _IMPORTS.findall(text)


def _job_of(path: Path, run: sandbox.Run, fmt: str, args: Sequence[str] = ()) -> Job:
    submits = [argv for cmd, argv in run.calls if cmd == "ray" and argv[:2] == ("job", "submit")]
    gpus = _ray_start_gpus(run)
    nodes = 1 if gpus else None
    notes = [f"the script exited {run.returncode} after its launch command"] if run.returncode else []
    notes += [*run.limits, *needs.substitution_findings(run.substituted), *needs.helper_findings(run.calls),
              *needs.launcher_findings(run.calls), *needs.cluster_findings(run.calls),
              *needs.program_findings(run.calls)]
    if submits:
        if len(submits) > 1:
            notes.append(f"{len(submits)} `ray job submit` calls: judged the first")
        try:
            job = from_submit(list(submits[0][2:]), str(path), fmt, nodes=nodes, gpus_per_node=gpus)
        except CaptureFailed as exc:  # say where an unreadable value may have come from, and what it said it lacked
            said = needs.how_to_pass(needs.missing_variables(_text(path), needs.program_errors(run.calls), None))
            raise CaptureFailed("; ".join([str(exc), *filter(None, [said]),
                                           *needs.substitution_findings(run.substituted)])) from exc
        return dataclasses.replace(job, findings=(*notes, *job.findings))
    trainer = next(((cmd, *argv) for cmd, argv in run.calls
                    if cmd in ("python", "python3") and argv and argv[0].endswith(".py")), None)
    if trainer is None:
        what = "the script failed" if run.returncode else "the script never reached `ray job submit` or a train.py"
        raise _failed(path, run, what, args)
    return Job(argv=tuple(trainer), intended_argv=tuple(trainer), entrypoint="", working_dir=str(path.parent),
               framework=framework_of(tuple(trainer), str(path.parent)), source=str(path), source_format=fmt,
               findings=(*notes, "the trainer runs directly, not through `ray job submit`"), nodes=nodes,
               gpus_per_node=gpus)

