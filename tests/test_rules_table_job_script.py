"""Rule table for a launch script captured in the sandbox (rlcheck.job.script): the Job its first `ray job submit` or
its train.py call gives, the GPUs of `ray start`, the whole error of a script that launched nothing, the framework
tree it lives in and that tree's version, and what the Miles stub saw. The sandbox and the entrypoint's replay are
their own modules' (their own tests): recorded runs stand in for them here."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlcheck.job import replay as replay_mod
from rlcheck.job import sandbox, script
from rlcheck.job.job import Job
from rlcheck.job.submit import CaptureFailed, JobFormatError

SUBMIT = ("job", "submit", "--address", "http://h:8265", "--", "python3", "train.py", "--x", "1")


def _run(*calls, returncode=0, **fields) -> sandbox.Run:
    return sandbox.Run(returncode=returncode, stderr_tail=fields.pop("stderr_tail", ()), calls=tuple(calls), **fields)


@pytest.fixture(autouse=True)
def replayed(monkeypatch):
    """The entrypoint's replay, recorded: the tokens as meant."""
    monkeypatch.setattr(replay_mod, "replay", lambda tokens, entrypoint=None, working_dir=None: replay_mod.Replayed(
        entrypoint=" ".join(tokens), argv=tuple(tokens), findings=()))


# --- _ray_start_gpus ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("calls", "gpus"), [
    ([("ray", ("start", "--head", "--num-gpus", "8"))], 8),
    ([("ray", ("start", "--head", "--num-gpus=4"))], 4),
    ([("ray", ("start", "--head", "--num-gpus", "$N"))], None),
    ([("ray", ("start", "--head", "--num-gpus=x"))], None),
    ([("ray", ("start", "--head", "--num-gpus=8=1"))], None),
    ([("ray", ("start", "--head", "--num-gpus"))], None),  # no value after it
    ([("ray", ("status", "--num-gpus", "8"))], None),
    ([("ray", ())], None),
    ([("bash", ("start", "--num-gpus", "8"))], None),
    ([("ray", ("start", "--num-gpus", "x")), ("ray", ("start", "--num-gpus", "2"))], 2),
    ([("ray", ("start", "--num-gpus", "0"))], 0),
    ([], None),
])
def test_the_gpus_of_ray_start(calls, gpus):
    assert script._ray_start_gpus(_run(*calls)) == gpus


# --- _job_of: the Job of a run ---------------------------------------------------------------------------------------

def test_the_first_submit_is_the_job(tmp_path):
    path = tmp_path / "run.sh"
    run = _run(("ray", ("start", "--head", "--num-gpus", "8")), ("ray", SUBMIT), ("ray", SUBMIT[:-1]),
               returncode=3, limits=("output over its cap",))
    job = script._job_of(path, run, "bash")
    assert (job.argv, job.nodes, job.gpus_per_node, job.source, job.source_format, job.findings) == (
        ("python3", "train.py", "--x", "1"), 1, 8, str(path), "bash",
        ("the script exited 3 after its launch command", "output over its cap", "2 `ray job submit` calls: judged "
                                                                                  "the first"))


def test_a_submit_without_ray_start_states_no_shape(tmp_path):
    job = script._job_of(tmp_path / "run.sh", _run(("ray", SUBMIT), ("ray", ("job", "status"))), "bash")
    assert (job.nodes, job.gpus_per_node, job.findings) == (None, None, ())


def test_the_findings_of_what_ran_come_before_the_submits(tmp_path):
    run = _run(("helper", ("h.py",)), ("ray", SUBMIT), substituted=(("hostname", ()),))
    findings = script._job_of(tmp_path / "run.sh", run, "bash").findings
    assert [f.split("`")[1] for f in findings] == ["hostname", "python3 h.py"]


def test_an_unreadable_submit_says_what_the_script_lacked(tmp_path):
    path = tmp_path / "run.sh"
    path.write_text('python3 -c "import os; os.environ[\'RUNTIME\']"\nray job submit --runtime-env-json "$X" -- t\n')
    run = _run(("ray", ("job", "submit", "--runtime-env-json", "{", "--", "python3", "t.py")),
               ("program-failed", ("KeyError: 'RUNTIME'",)), substituted=(("python3", ("-c", "x")),))
    with pytest.raises(CaptureFailed) as exc:
        script._job_of(path, run, "bash")
    assert str(exc.value) == (
        f"{path}: --runtime-env-json is not valid JSON (Expecting property name enclosed in double quotes: line 1 "
        "column 2 (char 1)); the script stops for want of RUNTIME (unset when it exited): pass --job-env RUNTIME=...; "
        "`python3 -c x` ran where the script reads its output (a command substitution or pipe): rlcheck's stand-in "
        "printed nothing there, so what it would add to the launch is missing")


def test_an_unreadable_submit_alone(tmp_path):
    path = tmp_path / "run.sh"
    with pytest.raises(CaptureFailed) as exc:
        script._job_of(path, _run(("ray", ("job", "submit", "--"))), "bash")
    assert str(exc.value) == f"{path}: `ray job submit` has no entrypoint"


@pytest.mark.parametrize(("calls", "argv"), [
    ([("python3", ("-c", "x")), ("python3", ("/w/train.py", "--a")), ("python", ("b.py",))],
     ("python3", "/w/train.py", "--a")),
    ([("python", ("t.py",))], ("python", "t.py")),
])
def test_a_trainer_run_directly(tmp_path, calls, argv):
    path = tmp_path / "slime" / "run.sh"
    run = _run(("ray", ("start", "--num-gpus", "4")), *calls)
    job = script._job_of(path, run, "bash")
    assert job == Job(argv=argv, intended_argv=argv, entrypoint="", working_dir=str(path.parent), framework="slime",
                      source=str(path), source_format="bash", nodes=1, gpus_per_node=4,
                      findings=("the trainer runs directly, not through `ray job submit`",))


@pytest.mark.parametrize(("run", "text"), [
    (_run(returncode=0), "{path}: the script never reached `ray job submit` or a train.py; it exited 0; fake commands "
                         "it ran: none; last output: (no output)"),
    (_run(("python3", ("-c", "x")), ("python3", ()), ("ray", ("status", "x")), returncode=1,
          stderr_tail=("run.sh: line 2: MASTER_ADDR: unbound variable", "bye")),
     "{path}: the script failed; the script stops for want of MASTER_ADDR (unset when it exited): pass --job-env "
     "MASTER_ADDR=...; it exited 1; fake commands it ran: python3, python3 -c, ray status; last output: run.sh: line "
     "2: MASTER_ADDR: unbound variable | bye"),
    (_run(returncode=-1, timed_out=True, limits=("output over its cap",)),
     "{path}: the script failed; its time limit ended it; output over its cap; fake commands it ran: none; last "
     "output: (no output)"),
    (_run(returncode=2, stderr_tail=("usage: run.sh MODEL",)),
     "{path}: the script failed; the script stops for want of its own arguments (usage: run.sh MODEL): pass them "
     "after --: rlcheck job capture SCRIPT -- ARG... (with --job: --job-arg ARG, once per argument, in order); it "
     "exited 2; fake commands it ran: none; last output: usage: run.sh MODEL"),
    # exit 0: nothing it stopped for, whatever it printed
    (_run(returncode=0, stderr_tail=("usage: run.sh MODEL", "MASTER_ADDR: unbound variable")),
     "{path}: the script never reached `ray job submit` or a train.py; it exited 0; fake commands it ran: none; last "
     "output: usage: run.sh MODEL | MASTER_ADDR: unbound variable"),
])
def test_a_script_that_launched_nothing_says_why(tmp_path, run, text):
    path = tmp_path / "run.sh"
    path.write_text('M="$1"\necho $MASTER_ADDR\n')
    with pytest.raises(CaptureFailed) as exc:
        script._job_of(path, run, "bash")
    assert str(exc.value) == text.format(path=path)


def test_a_failed_python_programs_error_names_its_variable(tmp_path):
    path = tmp_path / "run.sh"
    path.write_text("X=$(python3 -c 'import os; os.environ[\"TOKEN\"]')\n")
    run = _run(("program-failed", ("KeyError: 'TOKEN'",)), returncode=1)
    assert "pass --job-env TOKEN=..." in str(script._failed(path, run, "the script failed"))


def test_a_missing_script_reads_as_no_text(tmp_path):
    assert script._text(tmp_path / "gone.sh") == ""
    (tmp_path / "x.sh").write_bytes(b"a\xffb" + b"c" * (1 << 20))
    assert script._text(tmp_path / "x.sh") == "a\ufffdb" + "c" * ((1 << 20) - 3)


# --- tree_of: the framework tree a script lives in --------------------------------------------------------------------

def _tree(root: Path, *files: str, train: str | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for f in files:
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        (root / f).write_text("")
    if train is not None:
        (root / "train.py").write_text(train)
    (root / "scripts").mkdir(parents=True, exist_ok=True)
    return root / "scripts" / "run.sh"


@pytest.mark.parametrize(("files", "train", "found"), [
    (["miles/__init__.py"], None, "miles"),
    (["slime/__init__.py"], None, "slime"),
    (["slime/__init__.py", "miles/__init__.py"], "import slime\n", None),  # both: neither is the tree
    (["slime/README"], None, None),  # a folder that is no package
    ([], "import miles.utils\n", "miles"),
    ([], "from slime.ray import x\n", "slime"),
    ([], "  import slime\n", "slime"),
    ([], "import slimer\n", None),
    ([], "import slime\nimport miles\n", None),
    ([], "x = 1  # import slime\n", None),
])
def test_tree_of_a_package_or_a_train_py_importing_one(tmp_path, files, train, found):
    path = _tree(tmp_path / "co", *files, train=train)
    assert script.tree_of(path) == ((found, (tmp_path / "co").resolve()) if found else None)
    assert script.tree_framework(path) == found


def test_tree_of_the_nearest_and_else_the_directory_it_runs_from(tmp_path):
    path = _tree(tmp_path / "co", "scripts/slime/__init__.py", "miles/__init__.py")
    assert script.tree_of(path) == ("slime", (tmp_path / "co" / "scripts").resolve())
    other = _tree(tmp_path / "plain")
    cwd = tmp_path / "cwd"
    (cwd / "miles").mkdir(parents=True)
    (cwd / "miles" / "__init__.py").write_text("")
    assert script.tree_of(other) is None
    assert script.tree_of(other, str(cwd)) == ("miles", cwd.resolve())
    assert script.tree_of(path, str(cwd)) == ("slime", (tmp_path / "co" / "scripts").resolve())  # above it first


# --- with_tree_version -----------------------------------------------------------------------------------------------

def _job(framework="slime", version=None) -> Job:
    return Job(argv=("python3", "t.py"), intended_argv=("python3", "t.py"), entrypoint="", source="s",
               source_format="bash", framework=framework, framework_version=version, findings=("f",))


@pytest.mark.parametrize(("answer", "version", "note"), [
    (("0.3.1", "git tag v0.3.1"), "0.3.1",
     "slime 0.3.1: the tree it lives in (/co) is a git checkout at git tag v0.3.1; judged by that version's schema "
     "unless --framework says otherwise"),
    ((None, "git commit 624b824a8 (no release tag: judged as main)"), "main",
     "slime main: the tree it lives in (/co) is a git checkout at git commit 624b824a8; judged by that version's "
     "schema unless --framework says otherwise"),
    ((None, "no package metadata and no git checkout"), None,
     "slime release unknown: no git checkout in the tree it lives in (/co; a version file there is not trusted: main "
     "keeps the last release's); judged by slime's default schema unless --framework slime==VERSION (or ==main) "
     "says which"),
    ((None, "no package metadata, and git could not run: not found"), None,
     "slime release unknown: git could not run: not found in the tree it lives in (/co; a version file there is not "
     "trusted: main keeps the last release's); judged by slime's default schema unless --framework slime==VERSION "
     "(or ==main) says which"),
])
def test_the_version_of_the_tree(monkeypatch, answer, version, note):
    asked: list[Path] = []
    monkeypatch.setattr(script, "checkout_version", lambda path: (asked.append(path), answer)[1])
    job = script.with_tree_version(_job(), ("slime", Path("/co")))
    assert (job.framework_version, job.findings) == (version, ("f", note))
    assert asked == [Path("/co/slime")]


@pytest.mark.parametrize(("job", "tree"), [
    (_job(), None), (_job(framework="miles"), ("slime", Path("/co"))), (_job(version="0.2.4"), ("slime", Path("/co"))),
])
def test_no_tree_another_frameworks_tree_or_a_stated_version_is_kept(monkeypatch, job, tree):
    monkeypatch.setattr(script, "checkout_version", lambda path: pytest.fail("asked git"))
    assert script.with_tree_version(job, tree) is job


@pytest.mark.parametrize(("text", "slime"), [
    ("from slime.utils.external_utils import command_utils\n", True),
    ("import slime.x\nimport miles.y\n", False),
    ("import miles.utils\n", False),
    ("print('slime')\n", False),
])
def test_a_slime_launcher_imports_slime_and_not_miles(tmp_path, text, slime):
    (tmp_path / "run.py").write_text(text)
    assert script._slime_launcher(tmp_path / "run.py") is slime


# --- capture_script: the run's Job, the stub's notes and the tree -----------------------------------------------------

@pytest.fixture
def sandboxed(monkeypatch):
    """sandbox.run answering with the run a test sets, recording what it was asked."""
    asked: list[dict] = []
    state = {"run": _run(("ray", SUBMIT))}

    def run(command, **kw):
        asked.append({"command": command, **kw})
        if isinstance(state["run"], Exception):
            raise state["run"]
        return state["run"]
    monkeypatch.setattr(sandbox, "run", run)
    monkeypatch.setattr(script, "checkout_version", lambda path: ("0.3.1", "git tag v0.3.1"))
    return state, asked


def test_capture_a_bash_script_with_its_arguments(tmp_path, sandboxed, monkeypatch):
    state, asked = sandboxed
    path = _tree(tmp_path / "co", "slime/__init__.py")
    path.write_text("ray job submit -- python3 train.py\n")
    monkeypatch.chdir(tmp_path)
    job = script.capture_script(path, env=(("A", "1"),), args=("qwen", "hf_abcdefghijklmnopqrstuvwxyz012345"))
    root = (tmp_path / "co").resolve()
    assert asked == [{"command": ["bash", str(path.resolve())], "env": (("A", "1"),), "script": str(path.resolve()),
                      "checkout": (str(root), "/root/slime"), "args": ("qwen", "hf_abcdefghijklmnopqrstuvwxyz012345"),
                      "show": ()}]
    assert (job.framework, job.framework_version, job.nodes) == ("slime", "0.3.1", None)
    assert job.findings == (
        "captured with the script's arguments qwen '<redacted>'",
        "judged as slime: the script lives in a slime tree (its package, or a train.py importing it, above the script)",
        f"slime 0.3.1: the tree it lives in ({root}) is a git checkout at git tag v0.3.1; judged by that version's "
        "schema unless --framework says otherwise")


def test_capture_a_script_outside_any_tree(tmp_path, sandboxed, monkeypatch):
    state, asked = sandboxed
    path = tmp_path / "run.sh"
    path.write_text("")
    monkeypatch.chdir(tmp_path)
    job = script.capture_script(path)
    assert asked[0]["checkout"] is None and asked[0]["args"] == ()
    assert (job.framework, job.framework_version, job.findings) == ("unknown", None, ())


def test_capture_what_the_miles_stub_saw(tmp_path, sandboxed, monkeypatch):
    state, asked = sandboxed
    state["run"] = _run(("miles-stub", ("exec_command",)), ("miles-stub", ("exec_command",)), ("miles-stub", ()),
                        ("miles-stub", ("a_helper",)), ("miles-note", ("a note",)), ("miles-nodes", ("x",)),
                        ("miles-nodes", ("4",)), ("miles-nodes", ("2",)), ("ray", SUBMIT))
    path = tmp_path / "run.py"
    path.write_text("import miles.utils\n")
    monkeypatch.chdir(tmp_path)
    job = script.capture_script(path, fmt="miles-py")
    assert asked[0]["command"] == [script.sandbox.interpreter(), str(script._MILES_STUB), str(path.resolve())]
    assert (job.framework, job.nodes, job.source_format) == ("miles", 4, "miles-py")
    assert job.findings == tuple(f"Miles helper {n} is not modelled by rlcheck's stub: what it adds to the launch is "
                                 f"not judged" for n in ("a_helper", "exec_command")) + ("a note",)


@pytest.mark.parametrize(("text", "framework"), [("from slime.utils import x\n", "slime"), ("print(1)\n", "miles")])
def test_capture_a_python_launcher_is_miles_unless_it_is_slimes(tmp_path, sandboxed, monkeypatch, text, framework):
    path = tmp_path / "run.py"
    path.write_text(text)
    monkeypatch.chdir(tmp_path)
    job = script.capture_script(path, fmt="miles-py")
    assert (job.framework, job.framework_version, job.nodes) == (framework, None, None)


def test_capture_a_python_launcher_in_its_tree_gets_the_trees_version(tmp_path, sandboxed, monkeypatch):
    path = _tree(tmp_path / "co", "miles/__init__.py").with_name("run.py")
    path.write_text("print(1)\n")
    monkeypatch.chdir(tmp_path)
    job = script.capture_script(path, fmt="miles-py")
    assert (job.framework, job.framework_version) == ("miles", "0.3.1")


def test_capture_where_no_sandbox_can_be_made(tmp_path, sandboxed, monkeypatch):
    state, _ = sandboxed
    state["run"] = sandbox.SandboxUnavailable("user namespaces are off")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CaptureFailed) as exc:
        script.capture_script(tmp_path / "run.sh")
    assert str(exc.value) == f"{tmp_path / 'run.sh'}: not run: user namespaces are off"
    assert isinstance(exc.value.__cause__, sandbox.SandboxUnavailable)


def test_capture_names_each_folder_shown_once_by_its_real_path(tmp_path, sandboxed, monkeypatch):
    state, asked = sandboxed
    (tmp_path / "models").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "models")
    (tmp_path / "data").mkdir()
    monkeypatch.chdir(tmp_path)
    job = script.capture_script(tmp_path / "run.sh", show=[str(tmp_path / "link"), str(tmp_path / "data"),
                                                           str(tmp_path / "models")])
    assert asked[0]["show"] == [str(tmp_path / "link"), str(tmp_path / "data"), str(tmp_path / "models")]
    what = ("shown at its own path (a private overlay: the host folder unchanged, what the script wrote there not "
            "kept, credential files in it hidden)")
    assert job.findings == (f"captured with {tmp_path}/data {what}", f"captured with {tmp_path}/models {what}")


def test_capture_of_a_folder_the_sandbox_cannot_show_is_a_usage_error(tmp_path, sandboxed, monkeypatch):
    state, _ = sandboxed
    state["run"] = ValueError("--job-show /x: is / or a system tree")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(JobFormatError) as exc:
        script.capture_script(tmp_path / "run.sh", show=["/x"])
    assert str(exc.value) == "--job-show /x: is / or a system tree"


def test_ray_start_nodes_are_kept_and_none_stays_none(tmp_path, sandboxed, monkeypatch):
    state, _ = sandboxed
    state["run"] = _run(("ray", ("start", "--num-gpus", "8")), ("ray", SUBMIT))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.sh").write_text("")
    assert script.capture_script(tmp_path / "run.sh").nodes == 1


def test_a_failed_script_that_tests_for_a_variable_unset_at_exit(tmp_path):
    path = tmp_path / "run.sh"
    path.write_text('[ -z "$HEAD_IP" ] && exit 1\n')
    run = _run(returncode=1, set_at_exit=())
    assert "pass --job-env HEAD_IP=..." in str(script._failed(path, run, "the script failed"))


def test_a_script_given_its_arguments_is_not_told_to_pass_them(tmp_path):
    path = tmp_path / "run.sh"
    path.write_text('M="$1"\n')
    run = _run(returncode=2, stderr_tail=("usage: run.sh MODEL",))
    with pytest.raises(CaptureFailed) as exc:
        script._job_of(path, run, "bash", ("qwen",))
    assert "own arguments" not in str(exc.value)


@pytest.mark.parametrize("data", [b"import slime\n\xff\n", b"#" * (1 << 20) + b"\nimport slime\n"])
def test_a_launcher_read_as_utf8_up_to_a_mib(tmp_path, data):
    (tmp_path / "run.py").write_bytes(data)
    assert script._slime_launcher(tmp_path / "run.py") is (len(data) < 1 << 20)
    (tmp_path / "scripts").mkdir()
    (tmp_path / "train.py").write_bytes(data)
    assert script.tree_of(tmp_path / "scripts" / "run.sh") == (("slime", tmp_path.resolve()) if len(data) < 1 << 20
                                                               else None)


def test_tree_framework_looks_where_it_runs_from(tmp_path):
    cwd = tmp_path / "cwd"
    (cwd / "miles").mkdir(parents=True)
    (cwd / "miles" / "__init__.py").write_text("")
    assert script.tree_framework(_tree(tmp_path / "plain"), str(cwd)) == "miles"


def test_capture_looks_for_the_tree_where_it_runs(tmp_path, sandboxed, monkeypatch):
    _, asked = sandboxed
    cwd = tmp_path / "co"
    (cwd / "slime").mkdir(parents=True)
    (cwd / "slime" / "__init__.py").write_text("")
    path = _tree(tmp_path / "plain")
    path.write_text("")
    monkeypatch.chdir(cwd)
    job = script.capture_script(path)
    assert asked[0]["checkout"] == (str(cwd.resolve()), "/root/slime")
    assert (job.framework, job.source) == ("slime", str(path))


def test_capture_of_a_job_already_of_its_trees_framework_says_nothing_of_it(tmp_path, sandboxed, monkeypatch):
    state, _ = sandboxed
    state["run"] = _run(("ray", (*SUBMIT[:-4], "python3", "/root/slime/train.py")))
    path = _tree(tmp_path / "co", "slime/__init__.py")
    path.write_text("")
    monkeypatch.chdir(tmp_path)
    job = script.capture_script(path)
    assert job.framework == "slime" and not any(f.startswith("judged as") for f in job.findings)


def test_a_python_launcher_in_a_slime_tree_is_slimes(tmp_path, sandboxed, monkeypatch):
    path = _tree(tmp_path / "co", "slime/__init__.py").with_name("run.py")
    path.write_text("print(1)\n")
    monkeypatch.chdir(tmp_path)
    assert script.capture_script(path, fmt="miles-py").framework == "slime"


def test_capture_of_a_launch_that_failed_with_its_arguments(tmp_path, sandboxed, monkeypatch):
    state, _ = sandboxed
    state["run"] = _run(returncode=2, stderr_tail=("usage: run.sh MODEL",))
    path = tmp_path / "run.sh"
    path.write_text('M="$1"\n')
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CaptureFailed) as exc:
        script.capture_script(path, args=("qwen",))
    assert "own arguments" not in str(exc.value)
