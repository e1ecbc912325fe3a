"""First cause first (issue 27): the watcher and the scanner name an incident by its earliest cause, not by the
consequences that follow it; routine lines never end a run; a failure line no entry knows is still named; replay
reads stamps without a year; Miles is a framework of its own."""

from __future__ import annotations

import io
import json

import pytest

from rlcheck import cli
from rlcheck.e2e import replay, slime_log
from rlcheck.e2e.watch import PENDING_LINES, PENDING_S, Watcher
from rlcheck.scan import Matcher, scan_paths
from rlcheck.scan_output import document, first_cause, print_human
from tests.test_watch import STARTUP, feed, plan

WRAPPER = "[2025-03-29 18:18:34 TP0] Scheduler hit an exception: Traceback (most recent call last):"  # sglang#4895
NCCL = "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)"  # sglang#8974
SIGQUIT = "[2025-08-08 09:09:09] Received sigquit from a child process. It usually means the child failed."
DIED = "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task."
WATCHDOG = ("[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation "
            "timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, "
            "Timeout(ms)=600000) ran for 600060 milliseconds before timing out.")  # LlamaFactory#7396
RETRACT = "[2026-07-01 10:00:00 TP0] KV cache pool is full. Retract requests. #retracted_reqs: 12"


def _ended(lines: list[str], *, finish: bool = True):
    watcher = Watcher(plan()[0], loops=3)
    feed(watcher, [*STARTUP, *lines])
    if finish:
        watcher.finish()
    return watcher


@pytest.mark.parametrize(("lines", "failure_id", "line"), [
    ([WRAPPER, '  File "scheduler.py", line 1', NCCL, SIGQUIT], "nccl-system-error", NCCL),
    ([WRAPPER, '  File "scheduler.py", line 1', "ValueError: bad shape"], "uncatalogued", "ValueError: bad shape"),
    (["(Child pid=3156771) SystemExit: -1", DIED], "uncatalogued", "(Child pid=3156771) SystemExit: -1"),
    ([WATCHDOG, *["noise"] * 30, DIED], "nccl-collective-timeout", WATCHDOG),
    ([DIED], "ray-actor-died", DIED),
])
def test_watch_names_the_first_cause_of_an_incident(lines, failure_id, line):
    end = _ended(lines).ended
    assert end is not None and (end.kind, end.failure_id, end.line) == ("failure", failure_id, line)
    assert len(STARTUP) + 1 in end.supporting or failure_id != "ray-actor-died"


def test_watch_consequence_waits_a_bounded_number_of_lines_then_names_itself():
    watcher = _ended([DIED, *["noise"] * (PENDING_LINES + 1)], finish=False)
    assert watcher.ended is not None and watcher.ended.failure_id == "ray-actor-died"


def test_watch_consequence_is_named_by_check_after_its_wait_and_never_times_out_meanwhile():
    watcher = _ended([DIED], finish=False)
    start = watcher._pending.at_s  # noqa: SLF001 - the wait's start is the line's time
    assert watcher.check(start + PENDING_S - 1) == [] and watcher.ended is None
    assert [e.failure_id for e in watcher.check(start + PENDING_S)] == ["ray-actor-died"]


def test_watch_routine_retraction_never_ends_a_run():
    watcher = _ended([RETRACT])
    assert watcher.ended is None and any("kv-pool-truncation" in n for n in watcher.notes)


def test_watch_uncatalogued_line_is_reported_but_does_not_stop_the_run_alone():
    watcher = _ended(["AttributeError: 'NoneType' object has no attribute 'cpu'"])  # sglang#165
    assert watcher.ended is None and watcher.uncatalogued == [(len(STARTUP) + 1, "AttributeError: 'NoneType' "
                                                                                 "object has no attribute 'cpu'")]


@pytest.mark.parametrize(("line", "year", "expected"), [
    ("[rank0]:[E1201 09:25:16.123456789 ProcessGroupNCCL.cpp:607] [Rank 0] x", 2026, "2026-12-01 09:25:16.123456"),
    ("[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] x", 2025, "2025-03-21 02:07:08.408271"),
    ("[12-01 09:25:16 TP0] Prefill batch. #new-seq: 1", 2026, "2026-12-01 09:25:16"),
    ("E0323 21:57:08.583000 23 torch/distributed/elastic/multiprocessing/api.py:869] failed", 2025,
     "2025-03-23 21:57:08.583"),
])
def test_replay_reads_stamps_without_a_year(line, year, expected):
    import datetime

    stamp = replay.timestamp(line, year)
    assert stamp is not None
    shown = datetime.datetime.fromtimestamp(stamp, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S.%f").rstrip("0")
    assert shown.rstrip(".") == expected


@pytest.mark.parametrize("line", ["Epoch 12:00:00 done", "[13-45 09:25:16 TP0] x", "E9999 12:00:00.1 x.py:1] y"])
def test_replay_yearless_look_alikes_are_not_stamps(line):
    assert replay.timestamp(line, 2026) is None


def test_replay_clock_runs_on_glog_stamps(tmp_path):
    log = tmp_path / "glog.log"
    log.write_text("[rank0]:[I1201 09:25:16.000000000 ProcessGroupNCCL.cpp:1] start\n"
                   "[rank0]:[I1201 11:25:16.000000000 ProcessGroupNCCL.cpp:1] two hours later\n")
    report = replay.replay(log, loops=1)
    assert report["verdict"]["kind"] == "timeout", report["verdict"]


def test_watch_accepts_miles_as_its_own_framework(tmp_path, capsys):
    assert slime_log.parse_framework("miles==main") == "miles==main"
    assert slime_log.split_framework("miles==main") == ("miles", "main")
    log = tmp_path / "miles.log"
    log.write_text("[2026-07-01 10:00:00] placement_group.py:71 - start\n")
    code = cli.main(["watch", "--replay", str(log), "--framework", "miles==main", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code in (1, 2) and report["framework"] == "miles==main"
    with pytest.raises(ValueError, match="or miles==main"):
        slime_log.parse_framework("vllm==0.9")


def test_scan_leads_with_the_first_cause(tmp_path):
    log = tmp_path / "incident.log"
    lines = [WRAPPER, '  File "scheduler.py", line 1', "ValueError: bad shape", DIED, WATCHDOG]
    log.write_text("\n".join(lines) + "\n")
    result = scan_paths([str(log)], Matcher())
    known = Matcher().catalog
    assert first_cause(result, known).failure_id == "nccl-collective-timeout"
    out = io.StringIO()
    print_human(result, known, out)
    text = out.getvalue()
    assert text.startswith(f"first cause: {log}:5: nccl-collective-timeout")
    assert text.rstrip().endswith("3 known failure line(s): nccl-collective-timeout, ray-actor-died, "
                                  "sglang-scheduler-crashed; 1 uncatalogued failure line(s)")
    assert document(result, known)["first_cause"]["line_no"] == 5


def test_scan_names_an_uncatalogued_cause_before_its_consequences(tmp_path):
    log = tmp_path / "incident.log"
    log.write_text("\n".join([WRAPPER, "ValueError: bad shape", DIED]) + "\n")
    result = scan_paths([str(log)], Matcher())
    assert first_cause(result, Matcher().catalog).line_no == 2


FIELD_RUNS = replay.Path(__file__).parent / "data" / "logs" / "field_runs"


@pytest.mark.parametrize("failure_id", ["nccl-collective-timeout", "nccl-system-error", "extension-abi-mismatch",
                                        "host-oom-killed"])
def test_replay_of_a_field_run_names_its_first_cause(failure_id):
    """The watcher on realistic logs (tests/data/logs/field_runs, sources in its manifest): the cause, not the actor
    death, the SGLang wrapper or the router's retries that follow it."""
    report = replay.replay(FIELD_RUNS / f"{failure_id}.log", loops=1)
    assert (report["exit_code"], report["verdict"]["failure_id"]) == (replay.EXIT_FOUND, failure_id), report["verdict"]


@pytest.mark.parametrize(("lines", "traits"), [
    (["[2026-07-01 10:01:40 TP0] Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, avail mem=120.32 GB"],
     frozenset()),
    (["[2026-07-01 10:01:40 TP0] Load weight end. type=DeepseekV32ForCausalLM, dtype=torch.bfloat16"],
     frozenset({"dsa"})),
    (["python3 train.py --sglang-attention-backend nsa --tp 8"], frozenset({"dsa"})),
    (["step 0: {'train/loss': 0.1}"], None),
])
def test_log_traits_read_from_the_log_itself(lines, traits):
    from rlcheck import catalog

    assert catalog.log_traits(lines) == traits


DSA_HINT = "DeepseekV32ForCausalLM"
MODEL_HINT = "'architectures': ["


def _ending_at(column: int, hint: str, rest: str = "") -> str:
    """A long line (a config or argv echo) whose hint ends at its column-th character."""
    return "x" * (column - len(hint)) + hint + rest


@pytest.mark.parametrize(("lines", "traits"), [
    # a hint at a line's first character is read
    ([DSA_HINT + " loaded"], frozenset({"dsa"})),
    (["--sglang-attention-backend nsa"], frozenset({"dsa"})),
    (["--sglang-attention-backend fa3"], frozenset()),
    (["Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16"], frozenset()),
    # only a line's first 4096 characters are searched: a hint ending at the 4096th is read, one a character later
    # is not
    ([_ending_at(4096, DSA_HINT)], frozenset({"dsa"})),
    ([_ending_at(4097, DSA_HINT)], None),
    ([_ending_at(4096, MODEL_HINT, "'Qwen3ForCausalLM']")], frozenset()),
    ([_ending_at(4097, MODEL_HINT, "'Qwen3ForCausalLM']")], None),
    # a model seen stays seen; a later line may still show sparse attention
    (["Load weight end. type=Qwen3ForCausalLM", "step 0: {'train/loss': 0.1}"], frozenset()),
    (["Load weight end. type=Qwen3ForCausalLM", "--sglang-nsa-prefill-backend flashmla_sparse"],
     frozenset({"dsa"})),
    ([], None),
])
def test_log_traits_read_from_each_lines_first_4096_characters(lines, traits):
    from rlcheck import catalog

    assert catalog.log_traits(lines) == traits


def test_replay_of_a_dense_models_nan_names_nan_result_not_the_dsa_kernel():
    """The log's own model line (Qwen3, dense) says the job has no sparse attention (issue 27)."""
    report = replay.replay(FIELD_RUNS / "nan-result.log", loops=1)
    assert report["traits"] == [] and report["verdict"]["failure_id"] == "nan-result"
