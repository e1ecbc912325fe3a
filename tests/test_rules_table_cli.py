"""Rule table for rlcheck's command line (rlcheck.cli): each command's exit code (0 judged and clean, 1 judged and
found, 2 could not judge) and its words for every way it ends, run in-process through cli.main: a scan's three
outcomes, a stale generated doc, a recipe or hardware the renderer does not know, a watch with a bad option, a
capture that fails or is refused, and the guard that turns a broken data file, a missing extra, a closed pipe or a
full disk into one line and exit 2."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from rlcheck import catalog, cli, hardware
from rlcheck.deploy import yaml_text
from rlcheck.job import capture, job
from rlcheck.preflight import docs

# --- the exit codes --------------------------------------------------------------------------------------------------


def test_the_exit_codes():
    assert (cli.EXIT_CLEAN, cli.EXIT_FOUND, cli.EXIT_UNJUDGED, cli.EXIT_USAGE) == (0, 1, 2, 2)


def test_a_usage_error_exits_2_with_the_usage(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["no-such-command"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: rlcheck") and "rlcheck: error: argument command: invalid choice" in err


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out == f"rlcheck {cli.installed_version()}\n"


def test_scan_alone_builds_only_its_own_parser():
    parser = cli.build_parser("scan")
    assert list(parser._subparsers._group_actions[0].choices) == ["scan"]
    assert set(cli.build_parser("render")._subparsers._group_actions[0].choices) >= {"scan", "render", "job", "watch"}


# --- scan ------------------------------------------------------------------------------------------------------------


def _example_line() -> str:
    known = catalog.load_catalog()
    entry = next(e for e in known.values() if e.examples)
    return entry.examples[0]


@pytest.mark.parametrize(("text", "code"), [("all fine\nstep 1 done\n", 0), (None, 1)])
def test_scan_found_or_clean(tmp_path, capsys, text, code):
    log = tmp_path / "job.log"
    log.write_text(text if text is not None else f"x\n{_example_line()}\n", encoding="utf-8")
    assert cli.main(["scan", str(log)]) == code
    capsys.readouterr()


def test_scan_of_a_path_it_cannot_read_could_not_judge(tmp_path, capsys):
    assert cli.main(["scan", str(tmp_path / "missing.log")]) == 2
    assert "missing.log" in capsys.readouterr().err


def test_scan_json(tmp_path, capsys):
    log = tmp_path / "job.log"
    log.write_text(f"{_example_line()}\n", encoding="utf-8")
    assert cli.main(["scan", "--json", str(log)]) == 1
    assert json.loads(capsys.readouterr().out)


def test_scan_with_an_empty_catalogue_could_not_judge(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(catalog, "load_catalog", lambda: {})
    (tmp_path / "a.log").write_text("x\n")
    assert cli.main(["scan", str(tmp_path / "a.log")]) == 2
    err = capsys.readouterr().err
    assert err == f"rlcheck scan: broken data file: {catalog.DATA_DIR}: no [[failure]] entry in any *.toml file\n"


# --- catalog ---------------------------------------------------------------------------------------------------------


def test_catalog_lists_each_entry_on_one_line(capsys):
    known = catalog.load_catalog()
    assert cli.main(["catalog"]) == 0
    lines = capsys.readouterr().out.splitlines()
    first = min(known.values(), key=lambda e: (e.layer, e.id))
    assert len(lines) == len(known) and lines[0] == f"{first.id:32} {first.layer:9} {first.severity:9} {first.title}"


def test_catalog_json_and_markdown(capsys):
    assert cli.main(["catalog", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) == set(catalog.load_catalog())
    assert set(next(iter(doc.values()))) == {"layer", "severity", "title", "check", "reproducer"}



def test_catalog_markdown_is_the_docs_page(monkeypatch, capsys):
    monkeypatch.setattr(cli, "catalog_markdown", lambda known: f"PAGE of {len(known)}\n")
    assert cli.main(["catalog", "--markdown"]) == 0
    assert capsys.readouterr().out == f"PAGE of {len(catalog.load_catalog())}\n"


# --- docs ------------------------------------------------------------------------------------------------------------


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A checkout whose generated page is what the catalogue makes (a stand-in text: the generator has its own
    tests) and whose README carries the checks table."""
    from rlcheck.preflight.docs import with_checks_table

    monkeypatch.setattr(cli, "catalog_markdown", lambda known: "# Known failures (generated)\n")
    root = Path(__file__).resolve().parents[1]
    (tmp_path / "docs").mkdir()
    readme = with_checks_table((root / "README.md").read_text(encoding="utf-8"))
    (tmp_path / "README.md").write_text(readme, encoding="utf-8")
    (tmp_path / cli.DOCS_PAGE).write_text("# Known failures (generated)\n", encoding="utf-8")
    return tmp_path


def test_docs_current_is_clean(checkout, capsys):
    assert cli.main(["docs", "--root", str(checkout)]) == 0 and capsys.readouterr().err == ""


@pytest.mark.parametrize("how", ["edited", "missing"])
def test_docs_stale_is_found_then_written(checkout, capsys, how):
    page = checkout / cli.DOCS_PAGE
    if how == "missing":
        page.unlink()
    else:
        page.write_text("old\n", encoding="utf-8")
    assert cli.main(["docs", "--root", str(checkout)]) == 1
    assert capsys.readouterr().err == f"rlcheck docs: {page} is stale: run `rlcheck docs --write`\n"
    assert cli.main(["docs", "--root", str(checkout), "--write"]) == 0
    assert capsys.readouterr().out == f"rlcheck docs: wrote {page}\n"
    assert page.read_text() == "# Known failures (generated)\n"
    assert cli.main(["docs", "--root", str(checkout)]) == 0


def test_docs_stale_readme_table(checkout, capsys):
    readme = checkout / "README.md"
    text = readme.read_text(encoding="utf-8")
    table = text[text.index(docs.BEGIN):text.index(docs.END)]
    row = next(line for line in table.splitlines() if line.startswith("| `"))
    readme.write_text(text.replace(row, row + " edited", 1), encoding="utf-8")
    assert cli.main(["docs", "--root", str(checkout)]) == 1
    assert capsys.readouterr().err == f"rlcheck docs: {readme} is stale: run `rlcheck docs --write`\n"


# --- render ----------------------------------------------------------------------------------------------------------


def test_render_a_known_recipe(capsys):
    assert cli.main(["render", "qwen3-4b-colocated", "--hardware", "h200"]) == 0
    assert json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(("argv", "said"), [
    (["render", "no-such", "--hardware", "h200"], "rlcheck render: unknown recipe 'no-such'; valid: "),
    (["render", "qwen3-4b-colocated", "--hardware", "z9"], "rlcheck render: unknown hardware 'z9'; valid: "),
])
def test_render_refuses_what_it_does_not_know(capsys, argv, said):
    assert cli.main(argv) == 2
    assert capsys.readouterr().err.startswith(said)


def test_render_of_a_recipe_that_does_not_fit_the_hardware(monkeypatch, capsys):
    from rlcheck.deploy import render
    from rlcheck.recipes.deltas import NotForHardware

    def document(recipe, hw, image):
        raise NotForHardware("needs 8 GPUs per node")

    monkeypatch.setattr(render, "document", document)
    assert cli.main(["render", "qwen3-4b-colocated", "--hardware", "h200"]) == 2
    assert capsys.readouterr().err == ("rlcheck render: qwen3-4b-colocated does not fit h200: needs 8 GPUs per "
                                       "node\n")


# --- watch -----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("argv", "said"), [
    (["--loops", "0"], "rlcheck watch: --loops 0: a whole number >= 1\n"),
    (["--loops", "-2"], "rlcheck watch: --loops -2: a whole number >= 1\n"),
    (["--case", "nope"], "rlcheck watch: unknown case 'nope'; valid: "),
    (["--framework", "nonsense==="], "rlcheck watch: "),
])
def test_watch_refuses_a_bad_option(tmp_path, capsys, argv, said):
    assert cli.main(["watch", "--replay", str(tmp_path / "x.log"), *argv]) == 2
    assert capsys.readouterr().err.startswith(said)


@pytest.mark.parametrize("code", [0, 1, 2])
def test_watch_exits_as_the_replay_ended(monkeypatch, tmp_path, capsys, code):
    from rlcheck.e2e import replay

    asked = []
    report = {"exit_code": code, "verdict": {"kind": "k"}}
    monkeypatch.setattr(replay, "replay", lambda path, **kw: asked.append((path, kw)) or report)
    monkeypatch.setattr(replay, "render_text", lambda r: "TEXT")
    assert cli.main(["watch", "--replay", str(tmp_path / "x.log"), "--loops", "1"]) == code
    assert capsys.readouterr().out == "TEXT\n"
    assert asked == [(tmp_path / "x.log", {"loops": 1, "case": None, "version": None})]
    assert cli.main(["watch", "--replay", str(tmp_path / "x.log"), "--json"]) == code
    assert json.loads(capsys.readouterr().out) == report


# --- job -------------------------------------------------------------------------------------------------------------


def _job() -> job.Job:
    return job.Job(argv=("python3", "train.py", "--lr", "1"), intended_argv=("python3", "train.py", "--lr", "1"),
                   entrypoint="", env=(), working_dir=None, nodes=1, gpus_per_node=8, framework="slime",
                   framework_version=None, source="s", source_format="argv-json", findings=("f1", "f2"))


@pytest.fixture
def captured(monkeypatch):
    state = {"result": _job(), "asked": []}

    def capture_fn(path, fmt, env, args, show):
        state["asked"].append((path, fmt, env, args, *([show] if show else [])))
        if isinstance(state["result"], Exception):
            raise state["result"]
        return state["result"]

    monkeypatch.setattr(capture, "capture", capture_fn)
    return state


def test_job_show_writes_the_job_and_its_findings(captured, capsys, monkeypatch):
    monkeypatch.setenv("RLC_TOKEN", "v")
    assert cli.main(["job", "show", "x.sh", "--job-env", "A=1", "--job-env", "RLC_TOKEN", "--", "p2p", "-x"]) == 0
    out = capsys.readouterr()
    assert out.out == job.json_dumps(captured["result"])
    assert out.err == "rlcheck job: finding: f1\nrlcheck job: finding: f2\n"
    assert captured["asked"] == [(Path("x.sh") if isinstance(captured["asked"][0][0], Path) else "x.sh", None,
                                  (("A", "1"), ("RLC_TOKEN", "v")), ["p2p", "-x"])]


def test_job_capture_shows_each_folder_given(captured, capsys):
    assert cli.main(["job", "capture", "x.sh", "--job-show", "/data/a", "--job-show", "/root/models/b"]) == 0
    assert captured["asked"] == [("x.sh", None, (), [], ["/data/a", "/root/models/b"])]


def test_job_capture_writes_the_file(captured, capsys, tmp_path):
    out = tmp_path / "job.json"
    assert cli.main(["job", "capture", "x.sh", "-o", str(out)]) == 0
    assert out.read_text() == job.json_dumps(captured["result"])
    err = capsys.readouterr().err
    assert err.startswith(f"rlcheck job: wrote {out} (4 argv tokens; judge it with --job {out})\n")


def test_job_capture_without_a_file_writes_stdout(captured, capsys):
    assert cli.main(["job", "capture", "x.sh"]) == 0
    assert capsys.readouterr().out == job.json_dumps(captured["result"])


def test_job_refused_is_a_usage_error(captured, capsys):
    captured["result"] = capture.JobFormatError("x.sh: not a launch")
    assert cli.main(["job", "show", "x.sh"]) == 2
    assert capsys.readouterr().err == "rlcheck job: x.sh: not a launch\n"


def test_job_that_could_not_be_captured_is_found_with_its_secrets_scrubbed(captured, capsys):
    captured["result"] = capture.CaptureFailed("x.sh: stopped at --wandb-key abcdef0123456789abcdef0123456789abcdef01")
    assert cli.main(["job", "show", "x.sh"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("rlcheck job: could not capture: x.sh: stopped at --wandb-key ")
    assert "abcdef0123456789abcdef0123456789abcdef01" not in err


def test_job_env_of_a_variable_not_set_is_a_usage_error(captured, capsys, monkeypatch):
    monkeypatch.delenv("RLC_NOT_SET", raising=False)
    assert cli.main(["job", "show", "x.sh", "--job-env", "RLC_NOT_SET"]) == 2
    assert "RLC_NOT_SET: not set in this environment" in capsys.readouterr().err


def test_job_options_after_the_double_dash_are_the_scripts(captured, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["job", "show", "x.sh", "--bogus"])
    assert exc.value.code == 2
    assert "unrecognized arguments: --bogus (a script's own arguments go after --" in capsys.readouterr().err


# --- the guard -------------------------------------------------------------------------------------------------------


def _raising(exc: BaseException):
    def func(args):
        raise exc

    return func


@pytest.mark.parametrize(("command", "raised", "said"), [
    ("render", catalog.CatalogError("bad toml"), "rlcheck render: broken data file: bad toml\n"),
    ("render", hardware.ProfileError("bad profile"), "rlcheck render: broken data file: bad profile\n"),
    ("render", yaml_text.YamlMissing("install PyYAML"), "rlcheck render: install PyYAML\n"),
    ("scan", BrokenPipeError(), "rlcheck scan: the output was closed before all of it was written (broken pipe)\n"),
    ("scan", OSError(28, "No space left on device"), "rlcheck scan: could not write the output: No space left on "
                                                     "device\n"),
    ("scan", OSError("no strerror"), "rlcheck scan: could not write the output: no strerror\n"),
])
def test_the_guard_says_one_line_and_exits_2(capsys, command, raised, said):
    assert cli._guarded(command, _raising(raised), argparse.Namespace()) == 2
    assert capsys.readouterr().err == said


def test_the_scan_guard_lets_a_profile_error_through():
    with pytest.raises(hardware.ProfileError):  # the scanner reads no profile: a bug, not a data file
        cli._guarded("scan", _raising(hardware.ProfileError("x")), argparse.Namespace())


@pytest.mark.parametrize("code", [0, 1, 2])
def test_the_guard_passes_the_commands_code(code):
    assert cli._guarded("catalog", lambda args: code, argparse.Namespace()) == code


# --- what each command's parser holds (its options, defaults, choices and --help words) ------------------------------
# the options of the other modules' commands (preflight, slurm, history, k8s, baseline, reward-service) are their
# own tables'

HELPS = {'baseline': "record this cluster's own GEMM and all-reduce floors from a healthy run",
 'catalog': 'list the known-failure catalogue',
 'docs': 'regenerate (--write) or verify the docs generated from the catalogue and checks',
 'history': 'per-check and per-node trends over the reports kept with --history DIR',
 'job': 'capture a launch (script, Miles launcher, ray job submit line, RayJob, argv JSON) as a Job',
 'k8s': "Kubernetes: render the preflight Job / node-status DaemonSet; apply a node's verdict as label, "
        'taint and annotation',
 'preflight': 'run the preflight checks shipped in the package (pytest + GO / NO-GO)',
 'render': 'the exact argv, runtime env, resources and KubeRay manifests of a recipe',
 'reward-service': 'serve SLIME remote_rm rewards over HTTP',
 'scan': "find known failures in logs (files, directories, '-'; gzip, bz2, xz, zstd)",
 'slurm': 'Slurm prolog / epilog: the quick per-node tier; drains this node on FAIL',
 'watch': 'replay a recorded job log through the e2e watcher (post-mortem)'}
OWN = {'catalog': (None,
             None,
             [(('--json',), 'json', None, False, None, None, False, 0),
              (('--markdown',),
               'markdown',
               None,
               False,
               None,
               'the docs page (docs/known-failures.md)',
               False,
               0)]),
 'docs': (None,
          None,
          [(('--write',),
            'write',
            None,
            False,
            None,
            'rewrite stale files instead of reporting them',
            False,
            0),
           (('--root',),
            'root',
            None,
            '.',
            None,
            'the rlcheck checkout (default: the current directory)',
            False,
            None)]),
 'job': ('%(prog)s {capture,show} PATH [-o FILE] [--job-format FORMAT] [--job-env NAME[=VALUE]]... '
         '[--job-show DIR]... [-- ARG...]',
         "ARG...: after --, the script's own arguments, as `bash SCRIPT ARG...` or `python LAUNCHER.py "
         'ARG...` would get them (rlcheck job capture run.sh -- p2p 0 10.0.0.1); only for a script or a '
         'Miles launcher',
         [((), 'action', None, None, ('capture', 'show'), None, True, None),
          ((), 'path', 'PATH', None, None, None, True, None),
          (('-o', '--output'),
           'output',
           'FILE',
           None,
           None,
           'capture: write the Job JSON here (pass it to --job)',
           False,
           None),
          (('--job-format',),
           'job_format',
           None,
           None,
           ('bash', 'miles-py', 'ray-submit', 'rayjob', 'argv-json', 'job-json'),
           "PATH's format when detection guesses wrong: bash, miles-py, ray-submit, rayjob, argv-json, "
           'job-json',
           False,
           None),
          (('--job-env',),
           'job_env',
           'NAME[=VALUE]',
           [],
           None,
           "a variable for the script in the capture sandbox (repeatable; NAME alone passes this shell's "
           'value), e.g. --job-env BASE_DIR=/fsx',
           False,
           None),
          (('--job-show',),
           'job_show',
           'DIR',
           [],
           None,
           "a host folder the script reads (a model's config.json, a dataset), shown to it at its own path "
           'through a private overlay: it may write there, the folder itself stays unchanged, credential '
           'files in it stay hidden (repeatable; not /, a system tree or a credential place), e.g. '
           '--job-show /root/models/GLM-5',
           False,
           None)]),
 'render': (None,
            None,
            [((), 'recipe', 'RECIPE', None, None, None, True, None),
             (('--hardware',),
              'hardware',
              'NAME',
              None,
              None,
              'hardware profile: b200, b300, gb200, gb300, h100, h200',
              True,
              None),
             (('--format',), 'format', None, 'json', ('json', 'yaml', 'shell'), None, False, None),
             (('--image',),
              'image',
              None,
              'rlcheck/slime-training:slime0.2.4-sgl0.5.12.post1',
              None,
              'training image for the manifests',
              False,
              None)]),
 'scan': (None,
          None,
          [((), 'paths', 'PATH', None, None, 'log file, directory, .gz file, or - for stdin', True, '+'),
           (('--json',), 'json', None, False, None, 'machine-readable output', False, 0)]),
 'watch': (None,
           None,
           [(('--replay',), 'replay', 'LOG', None, None, "the job's log file", True, None),
            (('--case',),
             'case',
             'ID',
             None,
             None,
             'the e2e case it ran (its deadlines and loops)',
             False,
             None),
            (('--loops',),
             'loops',
             'N',
             None,
             None,
             "GRPO loops the run was to complete (default: the case's, 3)",
             False,
             None),
            (('--framework',),
             'framework',
             'slime==VERSION',
             None,
             None,
             'the SLIME or Miles version that wrote the log (slime==0.2.4, slime==main, miles==main); '
             'default: detected from the log',
             False,
             None),
            (('--json',), 'json', None, False, None, None, False, 0)])}
TOP = [(('--version',), 'version', 'show the installed version and exit'), ((), 'command', None)]


def test_each_commands_parser_and_help():
    parser = cli.build_parser()
    sub = parser._subparsers._group_actions[0]
    assert {a.dest: a.help for a in sub._choices_actions} == HELPS
    got = {}
    for name in OWN:
        sp = sub.choices[name]
        got[name] = (sp.usage, sp.epilog, [(tuple(a.option_strings), a.dest, a.metavar,
                                            a.default if not callable(a.default) else "callable",
                                            a.choices if a.choices is None else tuple(a.choices), a.help, a.required,
                                            a.nargs) for a in sp._actions if a.dest != "help"])
    assert got == OWN
    assert [(tuple(a.option_strings), a.dest, a.help) for a in parser._actions if a.dest != "help"] == TOP
    funcs = {name: sub.choices[name].get_default("func") for name in OWN}
    assert funcs == {"scan": cli.cmd_scan, "catalog": cli.cmd_catalog, "docs": cli.cmd_docs, "render": cli.cmd_render,
                     "watch": cli.cmd_watch, "job": cli.cmd_job}
    assert sub.choices["job"].get_default("script_args") == [] and parser.prog == "rlcheck"
    assert type(sub.choices["job"]).__name__ == "_JobParser" and sub.required


# --- what the first table left alive: the command line read from sys.argv, the commands each guard covers, the
# output's exact shape, and the values each command hands on ----------------------------------------------------------


def test_the_top_parser_says_what_rlcheck_is_and_serves_rewards():
    from rlcheck.reward import cli as reward_cli

    parser = cli.build_parser()
    assert parser.description == "Diagnostics for RL post-training stacks."
    assert parser.parse_args(["reward-service"]).func is reward_cli.run


@pytest.mark.parametrize("argv", [["rlcheck", "catalog"], ["/usr/bin/rlcheck", "catalog"]])
def test_without_an_argv_main_reads_the_processs_own(monkeypatch, capsys, argv):
    monkeypatch.setattr(cli.sys, "argv", argv)
    assert cli.main() == 0
    assert len(capsys.readouterr().out.splitlines()) == len(catalog.load_catalog())


def test_an_empty_command_line_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main([])
    assert exc.value.code == 2
    assert capsys.readouterr().err.endswith("rlcheck: error: the following arguments are required: command\n")


@pytest.mark.parametrize(("argv", "only"), [(["scan", "x.log"], "scan"), (["catalog"], "catalog"),
                                            (["--version"], "--version")])
def test_the_parser_is_built_for_the_first_word(monkeypatch, capsys, argv, only):
    built = []
    real = cli.build_parser
    monkeypatch.setattr(cli, "build_parser", lambda first=None: built.append(first) or real(first))
    try:
        cli.main(argv)
    except SystemExit:
        pass
    capsys.readouterr()
    assert built == [only]


@pytest.mark.parametrize("command", [["catalog"], ["render", "qwen3-4b-colocated", "--hardware", "h200"]])
def test_catalog_and_render_are_guarded_too(monkeypatch, capsys, command):
    def broken(*a, **k):
        raise catalog.CatalogError("bad toml")

    monkeypatch.setattr(catalog, "load_catalog", broken)
    monkeypatch.setattr(cli, "cmd_render", broken)
    assert cli.main(command) == 2
    assert capsys.readouterr().err == f"rlcheck {command[0]}: broken data file: bad toml\n"


def tiny_catalog() -> dict[str, catalog.KnownFailure]:
    entry = catalog.KnownFailure(id="x-fail", layer="sglang", severity="crash", title="T", signatures=("^rlx boom$",),
                                 examples=("rlx boom",), near_misses=("rlx boom!",), cause="c", remedy="r")
    return {"x-fail": entry}


def test_scan_looks_for_the_catalogue_it_loaded(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(catalog, "load_catalog", tiny_catalog)
    (tmp_path / "a.log").write_text("rlx boom\n")
    assert cli.main(["scan", str(tmp_path / "a.log")]) == 1  # the packaged catalogue has no such line
    out = capsys.readouterr().out
    assert "x-fail" in out and not out.startswith("{")


def test_scan_without_json_writes_the_human_summary(tmp_path, capsys):
    (tmp_path / "a.log").write_text("all fine\n")
    assert cli.main(["scan", str(tmp_path / "a.log")]) == 0
    assert capsys.readouterr().out == "rlcheck scan: 1 file(s), no known failure\n"


def test_the_docs_page_ends_with_the_field_corpus_scored_against_the_catalogue_given():
    from rlcheck import field_corpus

    lines = field_corpus.load()
    tail = "\n".join(field_corpus.markdown(field_corpus.score(lines, tiny_catalog()), lines)) + "\n"
    packaged = "\n".join(field_corpus.markdown(field_corpus.score(lines, catalog.load_catalog()), lines)) + "\n"
    assert tail != packaged  # the test tells the two apart
    assert cli.catalog_markdown(tiny_catalog()).endswith(tail)


def test_catalog_json_is_every_entry_indented_by_two(monkeypatch, capsys):
    from rlcheck import preflight

    known = tiny_catalog()
    known["y-fail"] = catalog.KnownFailure(id="y-fail", layer="ray", severity="hang", title="U", signatures=("^y$",),
                                           examples=("y",), near_misses=("yy",), cause="c", remedy="r",
                                           reproducer="reproducers/test_repro_y.py::test_repro_y")
    monkeypatch.setattr(catalog, "load_catalog", lambda: known)
    monkeypatch.setattr(preflight, "guarded_by", lambda: {"y-fail": "check_y"})
    assert cli.main(["catalog", "--json"]) == 0
    assert capsys.readouterr().out == (
        '{\n  "x-fail": {\n    "layer": "sglang",\n    "severity": "crash",\n    "title": "T",\n    "check": "",\n'
        '    "reproducer": ""\n  },\n  "y-fail": {\n    "layer": "ray",\n    "severity": "hang",\n    "title": "U",\n'
        '    "check": "check_y",\n    "reproducer": "reproducers/test_repro_y.py::test_repro_y"\n  }\n}\n')


def test_docs_pages_the_catalogue_it_loaded(checkout, monkeypatch, capsys):
    monkeypatch.setattr(catalog, "load_catalog", tiny_catalog)
    monkeypatch.setattr(cli, "catalog_markdown", lambda known: f"# {sorted(known)}\n")
    (checkout / cli.DOCS_PAGE).write_text("# ['x-fail']\n", encoding="utf-8")
    assert cli.main(["docs", "--root", str(checkout)]) == 0 and capsys.readouterr().err == ""


@pytest.mark.parametrize(("argv", "said"), [
    (["render", "no-such", "--hardware", "h200"], "rlcheck render: unknown recipe 'no-such'; valid: {}\n"),
    (["render", "qwen3-4b-colocated", "--hardware", "z9"], "rlcheck render: unknown hardware 'z9'; valid: {}\n"),
])
def test_render_lists_what_it_knows(capsys, argv, said):
    from rlcheck import recipes
    from rlcheck.hardware import load_profiles

    valid = ", ".join(recipes.RECIPE_IDS) if "recipe" in said else ", ".join(load_profiles())
    assert cli.main(argv) == 2
    assert capsys.readouterr().err == said.format(valid)


def test_render_hands_on_the_image(monkeypatch, capsys):
    from rlcheck.deploy import render

    asked = []
    monkeypatch.setattr(render, "document", lambda *a: asked.append(a) or {"k": 1})
    monkeypatch.setattr(render, "dump", lambda doc, fmt: f"{doc} as {fmt}\n")
    assert cli.main(["render", "qwen3-4b-colocated", "--hardware", "h200", "--image", "img:1", "--format",
                     "yaml"]) == 0
    assert asked == [("qwen3-4b-colocated", "h200", "img:1")] and capsys.readouterr().out == "{'k': 1} as yaml\n"


def test_watch_lists_the_cases_it_knows(tmp_path, capsys):
    from rlcheck.e2e import slime_log

    assert cli.main(["watch", "--replay", str(tmp_path / "x.log"), "--case", "nope"]) == 2
    assert capsys.readouterr().err == (f"rlcheck watch: unknown case 'nope'; valid: "
                                       f"{', '.join(slime_log.case_deadlines())}\n")


def test_watch_hands_on_the_case_and_framework_and_renders_its_report(monkeypatch, tmp_path, capsys):
    from rlcheck.e2e import replay, slime_log

    case = next(iter(slime_log.case_deadlines()))
    asked, report = [], {"exit_code": 1, "nested": {"a": [1]}}
    monkeypatch.setattr(replay, "replay", lambda path, **kw: asked.append(kw) or report)
    monkeypatch.setattr(replay, "render_text", lambda r: f"TEXT {r['exit_code']}")
    argv = ["watch", "--replay", str(tmp_path / "x.log"), "--case", case, "--framework", "slime==0.2.4"]
    assert cli.main(argv) == 1
    assert capsys.readouterr().out == "TEXT 1\n"
    assert asked == [{"loops": None, "case": case, "version": slime_log.parse_framework("slime==0.2.4")}]
    assert asked[0]["version"] is not None
    assert cli.main([*argv, "--json"]) == 1
    assert capsys.readouterr().out == '{\n  "exit_code": 1,\n  "nested": {\n    "a": [\n      1\n    ]\n  }\n}\n'


def test_job_hands_on_the_format_and_writes_only_a_capture_to_the_file(captured, capsys, tmp_path):
    out = tmp_path / "job.json"
    assert cli.main(["job", "capture", "x.sh", "--job-format", "bash", "-o", str(out)]) == 0
    assert captured["asked"][0][:2] == ("x.sh", "bash")
    assert out.read_text(encoding="utf-8") == job.json_dumps(captured["result"]) and capsys.readouterr().out == ""
    assert cli.main(["job", "show", "x.sh", "-o", str(tmp_path / "no.json")]) == 0  # show always writes stdout
    assert capsys.readouterr().out == job.json_dumps(captured["result"]) and not (tmp_path / "no.json").exists()


def test_cmd_job_called_alone_writes_the_capture(captured, capsys, tmp_path):
    out = tmp_path / "job.json"
    args = argparse.Namespace(path="x.sh", job_format=None, job_env=[], script_args=[], job_show=[],
                              action="capture", output=str(out))
    assert cli.cmd_job(args) == 0
    assert out.read_text(encoding="utf-8") == job.json_dumps(captured["result"]) and capsys.readouterr().out == ""


def _job_parser() -> argparse.ArgumentParser:
    return cli.build_parser()._subparsers._group_actions[0].choices["job"]


def test_the_job_parser_reads_the_processs_argv_and_fills_the_namespace_given(monkeypatch):
    monkeypatch.setattr(cli.sys, "argv", ["rlcheck-job", "capture", "x.sh", "--", "p2p", "0"])
    parsed, extra = _job_parser().parse_known_args()
    assert (parsed.action, parsed.path, parsed.script_args, extra) == ("capture", "x.sh", ["p2p", "0"], [])
    given = argparse.Namespace(kept=1)
    parsed, _ = _job_parser().parse_known_args(["show", "y.sh"], given)
    assert parsed is given and (given.kept, given.action, given.script_args) == (1, "show", [])


def test_the_job_parser_names_every_stray_option(capsys):
    with pytest.raises(SystemExit):
        _job_parser().parse_known_args(["show", "x.sh", "--bogus", "--other"])
    assert capsys.readouterr().err.endswith(
        "error: unrecognized arguments: --bogus --other (a script's own arguments go after --: rlcheck job capture "
        "SCRIPT -- ARG...)\n")


@pytest.mark.parametrize(("versions", "said"), [
    ({"rlcheck": "9.9.1"}, "9.9.1"),
    ({}, None),
])
def test_the_version_is_the_distributions_or_the_source_trees(monkeypatch, versions, said):
    from importlib import metadata

    import rlcheck

    def version(name):
        if name not in versions:
            raise metadata.PackageNotFoundError(name)
        return versions[name]

    monkeypatch.setattr(metadata, "version", version)
    assert cli.installed_version() == (said or f"{rlcheck.__version__} (not installed: read from the source tree)")


def test_quiet_stdout_points_the_descriptor_at_dev_null(monkeypatch, tmp_path):
    import os

    path = tmp_path / "out"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    try:
        monkeypatch.setattr(cli.sys, "stdout", type("Out", (), {"fileno": lambda self: fd})())
        before = len(os.listdir("/proc/self/fd"))
        cli._quiet_stdout()
        assert len(os.listdir("/proc/self/fd")) == before  # /dev/null's own descriptor is closed again
        os.write(fd, b"lost")
    finally:
        os.close(fd)
    assert path.read_bytes() == b""


def test_quiet_stdout_leaves_a_stdout_without_a_descriptor():
    class Captured:
        def fileno(self):
            raise ValueError("no descriptor")

    import sys

    real = sys.stdout
    sys.stdout = Captured()  # type: ignore[assignment]
    try:
        assert cli._quiet_stdout() is None
    finally:
        sys.stdout = real


def test_version_leaves_no_attribute_and_passes_argparses_other_words_on():
    assert not hasattr(cli.build_parser().parse_args(["catalog"]), "version")
    action = cli._Version(["--v"], "v", metavar="M", required=True)
    assert (action.metavar, action.required, action.nargs, action.default) == ("M", True, 0, argparse.SUPPRESS)
