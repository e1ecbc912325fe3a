"""Rule table for capturing a Job from what a user launches (rlcheck.job.capture): --job-env values, the format told
from a file's name and first lines (every format and each near miss), the usage errors and their whole texts, the
reader each format goes to, and where a --job-env secret reappears recorded and scrubbed from the texts. The script
formats' sandbox run is stood in for: rlcheck.job.script and the sandbox tables judge it."""

from __future__ import annotations

import dataclasses
import json
import shlex

import pytest

from rlcheck.job import capture
from rlcheck.job.capture import JobFormatError
from rlcheck.job.job import Job

HF = "hf_" + "A" * 34  # an HF token by shape
SUBMIT = "ray job submit --working-dir /root/slime -- python3 train.py --lr 1e-6"


def _refused(call, *args, **kwargs) -> str:
    with pytest.raises(JobFormatError) as exc:
        call(*args, **kwargs)
    return str(exc.value)


@pytest.mark.parametrize(("items", "env"), [
    ([], ()),
    (["A=1", "B=", "C=x=y"], (("A", "1"), ("B", ""), ("C", "x=y"))),
    (["HF_TOKEN"], (("HF_TOKEN", "from-shell"),)),  # NAME alone: this shell's value
    (["EMPTY"], (("EMPTY", ""),)),
])
def test_parse_env(items, env):
    assert capture.parse_env(items, {"HF_TOKEN": "from-shell", "EMPTY": ""}) == env


@pytest.mark.parametrize(("item", "text"), [
    ("MISSING", "--job-env MISSING: not set in this environment; give NAME=VALUE or export it"),
    ("1X=2", "--job-env '1X': a variable name is letters, digits and _, not starting with a digit"),
    ("PATH=/x", "--job-env PATH: the sandbox sets it itself (PATH, HOME, LANG, BASH_ENV, RLCHECK_*)"),
    ("=v", "--job-env '': a variable name is letters, digits and _, not starting with a digit"),
])
def test_parse_env_refuses_naming_the_item(item, text):
    assert _refused(capture.parse_env, ["OK=1", item], {}) == text


@pytest.mark.parametrize(("name", "text", "fmt"), [
    ("job.json", '{"source_format": "bash", "argv": ["python3"]}', "job-json"),
    ("job.JSON", '{"source_format": null}', "job-json"),
    ("render.json", '{"argv": ["python3"]}', "argv-json"),
    ("argv.json", '["python3", "train.py"]', "argv-json"),
    ("argv.json", '"source_format"', "argv-json"),
    ("job.yaml", "not read", "rayjob"),
    ("job.YML", "", "rayjob"),
    ("run.sh", "python3 train.py\n", "bash"),
    ("run.bash", "", "bash"),
    ("run", "#!/bin/bash\nray job submit -- python3 train.py\n", "bash"),
    ("run.txt", "#!/usr/bin/env bash\n", "bash"),
    ("run", "#!/bin/sh\n", "bash"),
    ("launch.py", "import miles.utils.external_utils.command_utils as U\n", "miles-py"),
    ("launch.PY", "x = 1\n  from miles.utils import misc\n", "miles-py"),
    ("launch.py", "import miles\n", "miles-py"),
    ("launch.py", "from slime.utils.external_utils.command_utils import execute_train\n", "miles-py"),
    ("launch.py", "import slime.utils.external_utils.command_utils as U\n", "miles-py"),
    ("submit.txt", SUBMIT + "\n", "ray-submit"),
    ("submit", "# pasted\n\n" + SUBMIT.replace(" -- ", " \\\n  -- ") + "\n", "ray-submit"),
    ("submit", "ray job submit --a=1 \\\n --b \\\n -- python3 x.py\n", "ray-submit"),
    ("submit", "   # indented comment\n" + SUBMIT + "\n", "ray-submit"),
])
def test_detect(tmp_path, name, text, fmt):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    assert capture.detect(path) == fmt


FORMATS = "bash, miles-py, ray-submit, rayjob, argv-json, job-json"


@pytest.mark.parametrize(("name", "text", "why"), [
    ("launch.py", "import milestone\n# import miles\nimport slime\nfrom slime.utils import x\n",
     "a Python file that imports nothing of Miles; a Miles launcher imports miles.utils.external_utils.command_utils "
     f"(else pass --job-format, one of {FORMATS})"),
    ("launch.py", "import miles_ext\nimport slime.utils.external_utils.command_utils_x\n",
     "a Python file that imports nothing of Miles; a Miles launcher imports miles.utils.external_utils.command_utils "
     f"(else pass --job-format, one of {FORMATS})"),
    ("submit", SUBMIT + "\necho done\n", f"cannot tell its format; pass --job-format, one of {FORMATS}"),
    ("submit", "echo first\n" + SUBMIT + "\n", f"cannot tell its format; pass --job-format, one of {FORMATS}"),
    ("submit", "", f"cannot tell its format; pass --job-format, one of {FORMATS}"),
    ("run", "#!/bin/zsh\n", f"cannot tell its format; pass --job-format, one of {FORMATS}"),
    ("run", " #!/bin/bash\n", f"cannot tell its format; pass --job-format, one of {FORMATS}"),
])
def test_detect_refuses_what_it_cannot_tell(tmp_path, name, text, why):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    assert _refused(capture.detect, path) == f"{path}: {why}"


def test_detect_refuses_json_that_does_not_parse(tmp_path):
    path = tmp_path / "job.json"
    path.write_text("{argv", encoding="utf-8")
    try:
        json.loads("{argv")
    except ValueError as exc:
        reason = exc
    assert _refused(capture.detect, path) == f"{path}: not valid JSON ({reason})"


@pytest.mark.parametrize(("size", "over"), [(16 << 20, False), ((16 << 20) + 1, True)])
def test_a_launch_file_is_read_up_to_16_mib(tmp_path, size, over):
    path = tmp_path / "run.sh"
    path.write_bytes(b"#" * size)
    if over:
        assert _refused(capture.detect, path) == f"{path}: over 16 MiB; a launch file is kilobytes"
    else:
        assert capture.detect(path) == "bash"


@pytest.fixture
def script_capture(monkeypatch):
    """capture_script stood in for: records (path, env, fmt, args[, show]) and returns a Job whose texts name HF."""
    calls = []

    def capture_script(path, env, fmt, args, show=()):
        calls.append((path, tuple(env), fmt, tuple(args), *([tuple(show)] if show else [])))
        return Job(argv=("python3", "train.py", "--hf-token", HF), intended_argv=("python3", "train.py"),
                   entrypoint="", source=str(path), source_format=fmt, findings=(f"saw {HF}",),
                   shell_error=f"line 3: {HF}: not found", unseen=f"HF={HF}")

    monkeypatch.setattr(capture, "capture_script", capture_script)
    return calls


def test_capture_runs_a_script_with_its_env_and_arguments_and_scrubs_a_job_env_secret(tmp_path, script_capture):
    path = tmp_path / "run.sh"
    path.write_text("true\n", encoding="utf-8")
    job = capture.capture(str(path), env=[("HF_TOKEN", HF), ("N", "2")], args=["--lr", "1e-6"])
    assert script_capture == [(path, (("HF_TOKEN", HF), ("N", "2")), "bash", ("--lr", "1e-6"))]
    assert job.argv == ("python3", "train.py", "--hf-token", HF)  # the checks judge it there
    assert job.inline_secrets == ("argv token 3 (the value of --job-env HF_TOKEN)",)
    assert (job.findings, job.shell_error, job.unseen) == (("saw <redacted>",), "line 3: <redacted>: not found",
                                                           "HF=<redacted>")


def test_capture_of_a_miles_launcher_given_its_format(tmp_path, script_capture):
    path = tmp_path / "launch.txt"
    path.write_text("print(1)\n", encoding="utf-8")
    capture.capture(path, "miles-py", args=["run"])
    assert script_capture == [(path, (), "miles-py", ("run",))]


def test_capture_shows_a_script_the_folders_given(tmp_path, script_capture):
    path = tmp_path / "run.sh"
    path.write_text("true\n", encoding="utf-8")
    capture.capture(path, show=[str(tmp_path)])
    assert script_capture == [(path, (), "bash", (), (str(tmp_path),))]


@pytest.mark.parametrize(("fmt", "show", "text"), [
    ("ray-submit", ["<tmp>"], "<path>: a ray-submit file reads no folder; --job-show is for a launch script run in "
                              "the sandbox (bash, miles-py)"),
    (None, ["<tmp>"], "<path>: a ray-submit file reads no folder; --job-show is for a launch script run in the sandbox "
                      "(bash, miles-py)"),
    ("bash", ["/"], "--job-show /: is / or a system tree; allowed: an existing directory that is not / or a top-level "
                    "system tree, lies in no credential place and holds none; credential files in it (.ssh, .aws, "
                    ".netrc, ...) are hidden from the script"),
])
def test_capture_refuses_a_folder_to_show_it_cannot_show(tmp_path, script_capture, fmt, show, text):
    path = tmp_path / "submit.txt"
    path.write_text(SUBMIT + "\n", encoding="utf-8")
    show = [s.replace("<tmp>", str(tmp_path)) for s in show]
    assert _refused(capture.capture, path, fmt, show=show) == text.replace("<path>", str(path))
    assert script_capture == []


@pytest.mark.parametrize(("fmt", "args", "text"), [
    ("recipe", [], "--job-format='recipe': one of " + FORMATS),
    ("yaml", [], "--job-format='yaml': one of " + FORMATS),
    ("ray-submit", ["--lr"], "<path>: a ray-submit file takes no arguments; arguments after -- (--job-arg with "
                             "--job) are for a launch script run in the sandbox (bash, miles-py)"),
    (None, ["--lr"], "<path>: a ray-submit file takes no arguments; arguments after -- (--job-arg with --job) are "
                     "for a launch script run in the sandbox (bash, miles-py)"),
    ("bash", ["a\0b"], "script argument 'a\\x00b': a command-line argument is a string without NUL bytes"),
])
def test_capture_refuses_a_bad_format_or_arguments(tmp_path, script_capture, fmt, args, text):
    path = tmp_path / "submit.txt"
    path.write_text(SUBMIT + "\n", encoding="utf-8")
    assert _refused(capture.capture, path, fmt, args=args) == text.replace("<path>", str(path))
    assert script_capture == []


@pytest.mark.parametrize("missing", ["nowhere.sh", "."])
def test_capture_of_no_file(tmp_path, missing):
    path = tmp_path / missing
    assert _refused(capture.capture, path) == f"--job={str(path)!r}: no such file"


def test_capture_of_a_submit_line(tmp_path):
    path = tmp_path / "submit.txt"
    path.write_text("# the launch\n" + SUBMIT.replace(" -- ", " \\\n -- ") + "  # pasted\n", encoding="utf-8")
    job = capture.capture(path)
    assert (job.argv, job.working_dir, job.source, job.source_format) == (
        ("python3", "train.py", "--lr", "1e-6"), "/root/slime", str(path), "ray-submit")


def test_capture_of_a_submit_line_skips_a_commented_out_one(tmp_path):
    path = tmp_path / "submit.txt"
    path.write_text("# was: ray job submit -- python3 old.py\n" + SUBMIT + "\n", encoding="utf-8")
    assert capture.capture(path, "ray-submit").argv == ("python3", "train.py", "--lr", "1e-6")


def test_capture_of_a_submit_line_ending_at_submit_has_no_entrypoint(tmp_path):
    path = tmp_path / "submit.txt"
    path.write_text("ray job submit\n", encoding="utf-8")
    with pytest.raises(capture.CaptureFailed) as exc:
        capture.capture(path, "ray-submit")
    assert str(exc.value) == f"{path}: `ray job submit` has no entrypoint"


@pytest.mark.parametrize(("text", "why"), [
    ("ray job submit -- python3 'x\n", "not a shell command line (No closing quotation)"),
    ("ray job list\n", "no `ray job submit` in it"),
    ("ray job\n", "no `ray job submit` in it"),
])
def test_capture_of_a_submit_line_that_is_none(tmp_path, text, why):
    path = tmp_path / "submit.txt"
    path.write_text(text, encoding="utf-8")
    assert _refused(capture.capture, path, "ray-submit") == f"{path}: {why}"


def test_capture_of_a_submit_line_after_other_words(tmp_path):
    path = tmp_path / "submit.txt"
    path.write_text("env X=1 ray job submit -- python3 train.py\n", encoding="utf-8")
    assert capture.capture(path, "ray-submit").argv == ("python3", "train.py")


def test_capture_of_argv_json(tmp_path):
    path = tmp_path / "render.json"
    doc = {"argv": ["python3", "/root/miles/train.py", "--lr", "1e-6"], "entrypoint": "cd x && python3 train.py",
           "runtime_env": {"working_dir": "/root/miles", "env_vars": {"A": 1}},
           "resources": {"gpu_nodes": 2, "gpus_per_node": "8"}}
    path.write_text(json.dumps(doc), encoding="utf-8")
    job = capture.capture(path)
    assert job == Job(argv=tuple(doc["argv"]), intended_argv=tuple(doc["argv"]), entrypoint="cd x && python3 train.py",
                      env=(("A", "1"),), working_dir="/root/miles", nodes=2, gpus_per_node=8, framework="miles",
                      source=str(path), source_format="argv-json")


@pytest.mark.parametrize(("doc", "shape"), [
    (["python3", "slime/train.py"], (None, None, None, "slime", (), "python3 slime/train.py")),
    ({"argv": ["python3", "train.py"], "runtime_env": {"working_dir": "/root/miles"}},
     ("/root/miles", None, None, "miles", (), "python3 train.py")),  # the framework from the working dir
    ({"argv": ["python3", "a b"], "resources": {"gpu_nodes": 0, "gpus_per_node": 0}},
     (None, None, None, "unknown", (), "python3 'a b'")),  # 0 is no shape
    ({"argv": ["python3"], "runtime_env": {}, "entrypoint": ""}, (None, None, None, "unknown", (), "python3")),
])
def test_capture_of_argv_json_without_the_optional_fields(tmp_path, doc, shape):
    path = tmp_path / "render.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    job = capture.capture(path, "argv-json")
    assert (job.working_dir, job.nodes, job.gpus_per_node, job.framework, job.env, job.entrypoint) == shape


J = "argv-json needs 'argv': a non-empty list of strings (what `rlcheck render --format json` writes)"


@pytest.mark.parametrize(("text", "why"), [
    ("[]", J),
    ('{"argv": []}', J),
    ('{"argv": "python3 train.py"}', J),
    ('{"argv": ["python3", 1]}', J),
    ('{"entrypoint": "x"}', J),
    ('"python3"', J),
    ("[python3]", "not valid JSON ({reason})"),
    ('{"argv": ["p"], "runtime_env": []}', "argv-json.runtime_env: expected a mapping, found list"),
    ('{"argv": ["p"], "resources": []}', "argv-json.resources: expected a mapping, found list"),
    ('{"argv": ["p"], "resources": {"gpu_nodes": -1}}', "argv-json resources.gpu_nodes=-1: expected >= 0"),
    ('{"argv": ["p"], "resources": {"gpus_per_node": "x"}}',
     "argv-json resources.gpus_per_node='x': expected a whole number"),
    ('{"argv": ["p"], "runtime_env": {"working_dir": 3}}',
     "argv-json runtime_env.working_dir: expected a string, found int"),
    ('{"argv": ["p"], "entrypoint": 3}', "argv-json.entrypoint: expected a string, found int"),
    ('{"argv": ["p"], "runtime_env": {"env_vars": [1]}}', "runtime env env_vars is list, expected a mapping"),
])
def test_capture_of_argv_json_refuses_naming_the_field(tmp_path, text, why):
    path = tmp_path / "render.json"
    path.write_text(text, encoding="utf-8")
    if "{reason}" in why:
        try:
            json.loads(text)
        except ValueError as exc:
            why = why.replace("{reason}", str(exc))
    assert _refused(capture.capture, path, "argv-json") == f"{path}: {why}"


def test_capture_of_job_json_round_trips(tmp_path):
    job = Job(argv=("python3", "train.py"), intended_argv=("python3", "train.py", "--x"), entrypoint="python3 train.py",
              env=(("A", "1"),), working_dir="/w", nodes=2, gpus_per_node=4, framework="slime",
              framework_version="0.2.4", source="s", source_format="job-json", shell_error="e", unseen="u",
              findings=("f",), inline_secrets=())
    path = tmp_path / "job.json"
    path.write_text(json.dumps(job.to_dict()), encoding="utf-8")
    assert capture.capture(path) == dataclasses.replace(job, source=str(path))


@pytest.mark.parametrize(("doc", "why"), [
    ({"source_format": "bash"}, "job.argv: required, a non-empty list of strings"),
    ({"source_format": "bash", "argv": []}, "job.argv: a non-empty list of strings (item None: none)"),
    ({"argv": ["p"], "intended_argv": "p", "source_format": "b"}, "job.intended_argv: expected a list, found str"),
    ({"argv": ["p"], "findings": [1], "source_format": "b"}, "job.findings: a non-empty list of strings (item 0: int)"),
    ({"argv": ["p"], "inline_secrets": {}, "source_format": "b"}, "job.inline_secrets: expected a list, found dict"),
    ({"argv": ["p"], "env": {"A": []}, "source_format": "b"}, "job.env['A']: expected a string value, found list"),
    ({"argv": ["p"], "nodes": "two", "source_format": "b"}, "job.nodes='two': expected a whole number"),
    ({"argv": ["p"], "gpus_per_node": -8, "source_format": "b"}, "job.gpus_per_node=-8: expected >= 0"),
    ({"argv": ["p"], "nodes": 0, "source_format": "b"}, "job.nodes=0: must be > 0 or None"),  # the Job's bound
    ({"argv": ["p"], "gpus_per_node": 0, "source_format": "b"}, "job.gpus_per_node=0: must be > 0 or None"),
    ({"argv": ["p"], "inline_secrets": None, "source_format": "b"},
     "not a captured job ('NoneType' object is not iterable); expected keys argv, env, entrypoint"),
    *(({"argv": ["p"], key: 1, "source_format": "b"}, f"job.{key}: expected a string, found int")
      for key in ("entrypoint", "working_dir", "framework", "framework_version", "shell_error", "unseen")),
])
def test_capture_of_job_json_refuses_naming_the_field(tmp_path, doc, why):
    path = tmp_path / "job.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert _refused(capture.capture, path) == f"{path}: {why}"


def test_capture_of_job_json_that_does_not_parse(tmp_path):
    path = tmp_path / "job.txt"
    path.write_text("{", encoding="utf-8")
    try:
        json.loads("{")
    except ValueError as exc:
        reason = exc
    assert _refused(capture.capture, path, "job-json") == f"{path}: not valid JSON ({reason})"


def test_capture_of_a_rayjob(tmp_path):
    path = tmp_path / "job.yaml"
    path.write_text(f"kind: RayJob\nspec:\n  entrypoint: {shlex.quote(SUBMIT.split(' -- ')[1])}\n", encoding="utf-8")
    job = capture.capture(path)
    assert (job.argv, job.source, job.source_format) == (("python3", "train.py", "--lr", "1e-6"), str(path), "rayjob")


@pytest.mark.parametrize(("env", "secrets"), [
    ([("HF_TOKEN", "hf_secret_value")], {"HF_TOKEN": "hf_secret_value"}),  # by name
    ([("MY_VAR", HF)], {"MY_VAR": HF}),  # by shape
    ([("HF_TOKEN", "abcdefg")], {}),  # too short to look for
    ([("HF_TOKEN", "abcdefgh")], {"HF_TOKEN": "abcdefgh"}),
    ([("HF_TOKEN", "12345678")], {}),  # a number is no secret
    ([("WANDB_API_KEY", "${WANDB_KEY_FROM_VAULT}")], {}),  # a reference
    ([("MODEL", "qwen3-4B-instruct")], {}),
])
def test_job_env_secrets(env, secrets):
    assert capture.job_env_secrets(env) == secrets


def test_with_job_env_secrets_records_every_place_once(tmp_path):
    job = Job(argv=("python3", f"--key={HF}"), intended_argv=("python3",), entrypoint=f"X={HF} python3 --key={HF}",
              env=(("COPY", f"pre{HF}"),), source="s", source_format="bash", inline_secrets=("env OLD (by name)",),
              findings=(f"found {HF}", "plain"))
    out = capture.with_job_env_secrets(job, {"HF_TOKEN": HF})
    assert out.inline_secrets == ("env OLD (by name)", "env COPY (the value of --job-env HF_TOKEN)",
                                  "argv token 1 (the value of --job-env HF_TOKEN)")
    assert out.findings == ("found <redacted>", "plain") and out.argv == job.argv and out.env == job.env
    again = capture.with_job_env_secrets(out, {"HF_TOKEN": HF})
    assert again.inline_secrets == out.inline_secrets


def test_with_job_env_secrets_finds_an_entrypoint_only_secret_from_the_intended_argv():
    job = Job(argv=("python3",), intended_argv=("python3",), entrypoint="", source="s", source_format="bash")
    out = capture.with_job_env_secrets(job, {"T": "zz-secret-zz"})
    assert out.inline_secrets == ()
    job = Job(argv=("python3",), intended_argv=("python3", "--t", "zz-secret-zz"), entrypoint="", source="s",
              source_format="bash")
    assert capture.with_job_env_secrets(job, {"T": "zz-secret-zz"}).inline_secrets == (
        "entrypoint (the value of --job-env T)",)
