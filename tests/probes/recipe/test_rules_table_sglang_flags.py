"""Every --sglang-* flag against the installed SGLang as a rule table (rlcheck/probes/recipe/sglang_flags.py): which
names SLIME keeps for itself, the advice for each unknown one, the whole verdicts, and the collector, which asks
SGLang's own parser in a child forked from a warm interpreter, run against a stand-in SGLang written here (and
against the real one where the recorded release is installed)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from importlib import metadata, util
from pathlib import Path

import pytest

from rlcheck import catalog
from rlcheck.probes.recipe.sglang_flags import (
    SglangOptions,
    ask_sglang_options,
    collect_sglang_options,
    evaluate_sglang_flags,
    run_sglang,
    server_args_files,
    sglang_env,
)
from rlcheck.process import warm
from rlcheck.repro import image_facts
from rlcheck.verdict import Status

REMEDY = catalog.get("sglang-dead-flag").remedy
FLAGS = ("config", "ep-size", "help", "mem-fraction-static", "mem-fraction-statics", "model-path", "port",
         "random-seed", "tp-size")
OPTIONS = SglangOptions(version="9.1.0", flags=FLAGS)
SKIPPED = "SLIME sets this server argument itself and passes no --sglang- flag for it: drop it"
EP_MOE = "--sglang-ep-size N (SGLang removed --enable-ep-moe; EP is --ep-size / --expert-parallel-size)"

VERDICTS = [
    ([], Status.PASS, "0 --sglang-* flag(s) all known to sglang 9.1.0", ""),
    (["python3", "train.py", "--hf-checkpoint", "/m", "--rollout-num-gpus", "8"], Status.PASS,
     "0 --sglang-* flag(s) all known to sglang 9.1.0", ""),
    (["--sglang-mem-fraction-static", "0.8", "--sglang-ep-size=2", "--sglang-mem-fraction-statics=k=v"],
     Status.PASS,
     "3 --sglang-* flag(s) all known to sglang 9.1.0", ""),
    # SLIME's own --sglang-* options and its router's, whatever SGLang has
    (["--sglang-server-concurrency", "512", "--sglang-router-policy", "cache_aware", "--sglang-router-port=3000",
      "--sglang-config", "c.yaml"], Status.PASS, "4 --sglang-* flag(s) all known to sglang 9.1.0", ""),
    # what SLIME sets itself is dead under --sglang-, even where SGLang has it
    (["--sglang-tp-size", "2"], Status.FAIL, "1 flag(s) unknown to sglang 9.1.0, which SLIME would drop silently: "
     "--sglang-tp-size", f"--sglang-tp-size: {SKIPPED}"),
    (["--sglang-port=30000", "--sglang-random-seed", "1", "--sglang-mem-fraction-static", "0.8"], Status.FAIL,
     "2 flag(s) unknown to sglang 9.1.0, which SLIME would drop silently: --sglang-port, --sglang-random-seed",
     f"--sglang-port: {SKIPPED}\n--sglang-random-seed: {SKIPPED}"),
    # gone from SGLang: the replacement, then the closest name SLIME passes on, then nothing
    (["--sglang-enable-ep-moe"], Status.FAIL, "1 flag(s) unknown to sglang 9.1.0, which SLIME would drop silently: "
     "--sglang-enable-ep-moe", f"--sglang-enable-ep-moe: {EP_MOE}"),
    (["--sglang-enable-deepep-moe", "--sglang-mem-fraction-statc=0.8", "--sglang-tp-sizes", "2",
      "--sglang-quantization", "fp8"], Status.FAIL,
     "4 flag(s) unknown to sglang 9.1.0, which SLIME would drop silently: --sglang-enable-deepep-moe, "
     "--sglang-mem-fraction-statc, --sglang-tp-sizes, --sglang-quantization",
     "--sglang-enable-deepep-moe: --sglang-moe-a2a-backend deepep\n"
     "--sglang-mem-fraction-statc: did you mean --sglang-mem-fraction-static?\n"
     "--sglang-tp-sizes: did you mean --sglang-ep-size?\n"  # never the tp-size SLIME would drop as well
     "--sglang-quantization: drop it"),
    # only a token that starts with --sglang- is one (a value naming one is not)
    (["--exp-name", "x--sglang-foo", "--sglang"], Status.PASS, "0 --sglang-* flag(s) all known to sglang 9.1.0", ""),
]


@pytest.mark.parametrize(("argv", "status", "summary", "details"), VERDICTS)
def test_rules_table_sglang_flags_verdicts(argv, status, summary, details):
    verdict = evaluate_sglang_flags(argv, OPTIONS)
    assert (verdict.status, verdict.summary, verdict.details) == (status, summary, details)
    assert verdict.remedy == (REMEDY if status is Status.FAIL else "")
    assert verdict.failure_id == "sglang-dead-flag"


def test_rules_table_sglang_flags_unknown_when_sglang_cannot_be_asked():
    options = SglangOptions(version=None, flags=(), error="sglang's parser did not run (exit code 1): No module")
    verdict = evaluate_sglang_flags(["--sglang-enable-ep-moe"], options)
    assert (verdict.status, verdict.summary, verdict.details, verdict.remedy, verdict.failure_id) == (
        Status.UNKNOWN, "cannot ask the installed SGLang: sglang's parser did not run (exit code 1): No module", "", "",
        "sglang-dead-flag")


# A stand-in for sglang.srt.server_args: its options say what the child saw (the offline variables, and whether it
# runs in a child forked after the server imported the module, or imported it itself).
STAND_IN = """
import os
IMPORTED_BY = os.getpid()
{at_import}

class ServerArgs:
    @staticmethod
    def add_cli_args(parser):
        print("sglang: adding its options")
        {in_parser}
        parser.add_argument("--model-path")
        parser.add_argument("--tp-size", "--tensor-parallel-size", type=int)
        parser.add_argument("-e", "--ep-size", type=int)
        parser.add_argument("--seen-hf-hub-offline-" + os.environ.get("HF_HUB_OFFLINE", "unset"))
        parser.add_argument("--seen-transformers-offline-" + os.environ.get("TRANSFORMERS_OFFLINE", "unset"))
        parser.add_argument("--seen-" + ("forked-child" if os.getpid() != IMPORTED_BY else "cold-import"))
"""
SEEN = ("ep-size", "help", "model-path", "seen-forked-child", "seen-hf-hub-offline-1", "seen-transformers-offline-1",
        "tensor-parallel-size", "tp-size")


def _stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, at_import: str = "", in_parser: str = "") -> None:
    """An installed 'sglang 9.1.0' (package and metadata) first on the children's PYTHONPATH."""
    site = tmp_path / "site"
    (site / "sglang" / "srt").mkdir(parents=True)
    (site / "sglang" / "__init__.py").write_text("")
    (site / "sglang" / "srt" / "__init__.py").write_text("")
    (site / "sglang" / "srt" / "server_args.py").write_text(STAND_IN.format(at_import=at_import,
                                                                            in_parser=in_parser or "pass"))
    (site / "sglang-9.1.0.dist-info").mkdir()
    (site / "sglang-9.1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: sglang\nVersion: 9.1.0\n")
    paths = [str(site), os.environ.get("PYTHONPATH", "")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(paths).rstrip(os.pathsep))
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def stop_warm() -> Iterator[None]:
    """The warm interpreters a test starts end (and are reaped) with it: none is left for a process that waits for
    any child (mutmut's runner does) or for the rest of the session."""
    yield
    warm.stop_all()


@pytest.mark.usefixtures("stop_warm")
def test_rules_table_sglang_flags_collect_asks_the_parser_in_a_warm_offline_child(tmp_path, monkeypatch):
    _stand_in(tmp_path, monkeypatch)
    assert ask_sglang_options() == SglangOptions(version="9.1.0", flags=SEEN)


@pytest.mark.usefixtures("stop_warm")
def test_rules_table_sglang_flags_collect_names_why_the_parser_did_not_run(tmp_path, monkeypatch):
    _stand_in(tmp_path, monkeypatch, at_import='raise ImportError("sglang was built without its CUDA kernels")')
    assert ask_sglang_options() == SglangOptions(
        version=None, flags=(),
        error="sglang's parser did not run (exit code 1): ImportError: sglang was built without its CUDA kernels")


@pytest.mark.usefixtures("stop_warm")
def test_rules_table_sglang_flags_collect_stops_at_its_deadline(tmp_path, monkeypatch):
    _stand_in(tmp_path, monkeypatch, in_parser="import time; time.sleep(120)")
    assert ask_sglang_options(timeout_s=2) == SglangOptions(
        version=None, flags=(), error="sglang's parser did not run (killed at its deadline): sglang: adding its "
                                      "options")


@pytest.mark.usefixtures("stop_warm")
def test_rules_table_sglang_flags_run_sglang_passes_argv_to_an_offline_child(tmp_path, monkeypatch):
    _stand_in(tmp_path, monkeypatch)
    monkeypatch.setenv("RLCHECK_ROW", "kept")
    code = ("import os, sys; print(sys.argv[1:], os.environ['HF_HUB_OFFLINE'], os.environ['TRANSFORMERS_OFFLINE'], "
            "os.environ['RLCHECK_ROW'])")
    done = run_sglang(code, ["--a", "b c"], timeout_s=60)
    assert (done.returncode, done.stdout, done.timed_out) == (0, "['--a', 'b c'] 1 1 kept\n", False)
    assert sglang_env() == {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


RECORDED = Path(__file__).resolve().parents[2] / "data" / "observations" / "sglang_flags" / "sglang_0.5.12.post1.json"


def _installed_sglang() -> str | None:
    try:
        return metadata.version("sglang") if util.find_spec("sglang") else None
    except metadata.PackageNotFoundError:
        return None


@pytest.mark.skipif(_installed_sglang() != "0.5.12.post1", reason="needs the recorded SGLang 0.5.12.post1 installed")
@pytest.mark.usefixtures("stop_warm")
def test_rules_table_sglang_flags_collect_from_the_real_sglang_matches_its_recording():
    data = json.loads(RECORDED.read_text(encoding="utf-8"))
    found = ask_sglang_options()
    assert found == SglangOptions(version=data["version"], flags=tuple(data["flags"]), error=data["error"])


# --- the option list kept per image (rlcheck.repro.image_facts) ----------------------------------------------------

def _import_fails(tmp_path: Path) -> None:
    """The stand-in's module now raises at import: a list that still comes back was not asked for."""
    path = tmp_path / "site" / "sglang" / "srt" / "server_args.py"
    path.write_text(path.read_text().replace("IMPORTED_BY = os.getpid()", "IMPORTED_BY = os.getpid(); 1 / 0"))


@pytest.mark.usefixtures("stop_warm")
def test_rules_table_sglang_flags_list_is_kept_and_read_back_on_the_same_image(tmp_path, monkeypatch, facts_folder):
    _stand_in(tmp_path, monkeypatch)
    assert server_args_files() == [tmp_path / "site" / "sglang" / "srt" / "server_args.py"]
    first = collect_sglang_options()
    assert first == SglangOptions(version="9.1.0", flags=SEEN)  # asked: nothing to say
    assert len(list(facts_folder.glob("*.json"))) == 1
    warm.stop_all()
    second = collect_sglang_options()  # the same image: the kept list, SGLang not imported
    assert (second.version, second.flags, second.error) == ("9.1.0", SEEN, "")
    assert second.source.startswith("kept for this image, made ")
    assert second.source.endswith("(--no-cache asks the package again)")
    verdict = evaluate_sglang_flags(["--sglang-ep-size", "2"], second)
    assert verdict.status is Status.PASS and verdict.details == f"sglang 9.1.0's option list: {second.source}"


@pytest.mark.usefixtures("stop_warm")
def test_rules_table_sglang_flags_a_changed_server_args_file_is_asked_again(tmp_path, monkeypatch, facts_folder):
    _stand_in(tmp_path, monkeypatch)
    collect_sglang_options()
    warm.stop_all()
    _import_fails(tmp_path)  # the file the list is read from changed (an editable install's new code)
    again = collect_sglang_options()
    assert again.version is None and again.error.startswith("sglang's parser did not run (exit code 1)")
    assert len(list(facts_folder.glob("*.json"))) == 1  # a list that could not be asked for is never kept


@pytest.mark.usefixtures("stop_warm")
def test_rules_table_sglang_flags_no_cache_asks_and_keeps_nothing(tmp_path, monkeypatch, facts_folder):
    _stand_in(tmp_path, monkeypatch)
    image_facts.switch_off("--no-cache")
    assert collect_sglang_options() == SglangOptions(version="9.1.0", flags=SEEN)
    assert not facts_folder.exists()


@pytest.mark.usefixtures("stop_warm")
def test_rules_table_sglang_flags_a_corrupt_entry_is_named_and_asked_again(tmp_path, monkeypatch, facts_folder):
    _stand_in(tmp_path, monkeypatch)
    collect_sglang_options()
    warm.stop_all()
    (entry,) = facts_folder.glob("*.json")
    doc = json.loads(entry.read_text())
    doc["body"]["payloads"][0]["fact"]["flags"].append("made-up")  # edited by hand: the checksum says so
    entry.write_text(json.dumps(doc))
    again = collect_sglang_options()
    assert again.flags == SEEN  # asked again (the bad entry named), and kept again over it
    assert again.source.startswith(f"ignored a corrupt entry ({entry}: its checksum does not match its content); "
                                   "asked the package; kept for the next run on this image")
    assert "made-up" not in entry.read_text()
