"""`rlcheck reward-service` as tables (issue 33): each option to its setting, the defaults, the exit codes (2 on a bad
option or a missing dependency, 3 when the server never started, 0 after a clean stop) and what the server is
started with.

An option read into the wrong setting runs the service with a limit nobody asked for; an exit code that says
"started" when it did not hides a broken deployment from Kubernetes. uvicorn itself is a stand-in here: the
server's own behaviour is judged in test_reward_service.py.
"""

from __future__ import annotations

import argparse
import logging
from typing import Any

import pytest

from rlcheck.reward import cli, server
from rlcheck.reward.config import ServiceConfig, usable_cpus


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    return parser.parse_args(list(argv))


OPTIONS = [
    # option and value, the setting, its value
    (["--backend", "boxed"], "backend", "boxed"),
    (["--backend", "math_verify"], "backend", "math_verify"),
    (["--host", "0.0.0.0"], "host", "0.0.0.0"),
    (["--port", "9001"], "port", 9001),
    (["--workers", "5"], "workers", 5),
    (["--max-slow-workers", "3"], "max_slow_workers", 3),
    (["--max-body-bytes", "2048"], "max_body_bytes", 2048),
    (["--scorer-timeout-s", "1.5"], "scorer_timeout_s", 1.5),
    (["--scorer-wall-timeout-s", "7.5"], "scorer_wall_timeout_s", 7.5),
    (["--reply-mode", "wait"], "reply_mode", "wait"),
    (["--wait-reply-s", "30.5"], "wait_reply_s", 30.5),
    (["--demote-after-cpu-s", "0.5"], "demote_after_cpu_s", 0.5),
    (["--max-queued", "17"], "max_queued", 17),
    (["--read-timeout-s", "2.5"], "read_timeout_s", 2.5),
    (["--max-connections", "99"], "max_connections", 99),
    (["--fallback-reward", "-1"], "fallback_reward", -1.0),
    (["--keep-alive-s", "20"], "keep_alive_s", 20),
    (["--reward-key", "score"], "reward_key", "score"),
    (["--access-log"], "access_log", True),
]


@pytest.mark.parametrize(("argv", "setting", "value"), OPTIONS)
def test_rules_reward_cli_option_fills_its_setting(argv: list[str], setting: str, value: object) -> None:
    config = cli.config_from_args(_args(*argv))
    assert getattr(config, setting) == value and type(getattr(config, setting)) is type(value)
    others = {f: getattr(config, f) for f in ServiceConfig.__slots__ if f != setting}  # type: ignore[attr-defined]
    assert others == {f: getattr(ServiceConfig(workers=usable_cpus()), f) for f in others}


def test_rules_reward_cli_defaults() -> None:
    args = _args()
    assert cli.config_from_args(args) == ServiceConfig(workers=usable_cpus())
    assert (args.log_level, args.access_log, args.reward_key, args.keep_alive_s) == ("info", False, None, 75)


@pytest.mark.parametrize("argv", [["--backend", "exact"], ["--reply-mode", "never"], ["--log-level", "INFO"],
                                  ["--log-level", "trace"], ["--port", "x"], ["--workers", "1.5"],
                                  ["--keep-alive-s", "1.5"], ["--scorer-timeout-s", "x"]])
def test_rules_reward_cli_option_refused_by_the_parser(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        _args(*argv)
    assert raised.value.code == 2


@pytest.mark.parametrize("level", ["critical", "error", "warning", "info", "debug"])
def test_rules_reward_cli_log_levels(level: str) -> None:
    assert _args("--log-level", level).log_level == level


def test_rules_reward_cli_bad_setting_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.run(_args("--port", "0")) == 2
    assert capsys.readouterr() == ("", "rlcheck reward-service: error: port=0: 1..65535\n")


def test_rules_reward_cli_missing_dependency_exits_2(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(__import__("sys").modules, "rlcheck.reward.app", None)
    assert cli.run(_args()) == 2
    assert capsys.readouterr() == ("", "rlcheck reward-service: error: import of rlcheck.reward.app halted; None in "
                                   "sys.modules: it needs fastapi, uvicorn and math-verify (see "
                                   "deploy/reward-service/Dockerfile for the tested versions)\n")


class _Server:
    """uvicorn's server stand-in: started or not, and how run() ends."""

    made: list[_Server] = []

    def __init__(self, config: Any, before_shutdown: Any, drained: Any) -> None:
        self.config, self.before_shutdown, self.drained = config, before_shutdown, drained
        self.started = False
        _Server.made.append(self)

    def run(self) -> None:
        self.started = _Server.starts
        if _Server.interrupt:
            raise KeyboardInterrupt

    starts = True
    interrupt = False


RUNS = [
    # server started, run ended by KeyboardInterrupt (SIGINT), exit code
    (True, False, 0),
    (False, False, 3),  # never started: port in use, scorers broken
    (True, True, 0),
    (False, True, 3),
]


@pytest.mark.parametrize(("starts", "interrupt", "code"), RUNS)
def test_rules_reward_cli_run_exit_codes(monkeypatch: pytest.MonkeyPatch, starts: bool, interrupt: bool,
                                         code: int) -> None:
    logged: list[dict[str, Any]] = []
    monkeypatch.setattr(logging, "basicConfig", lambda **kw: logged.append(kw))
    monkeypatch.setattr(server, "RewardServer", _Server)
    monkeypatch.setattr(_Server, "made", [])
    monkeypatch.setattr(_Server, "starts", starts)
    monkeypatch.setattr(_Server, "interrupt", interrupt)
    assert cli.run(_args("--log-level", "debug", "--host", "127.0.0.2", "--port", "9002", "--keep-alive-s", "30",
                         "--read-timeout-s", "3", "--max-connections", "64", "--access-log")) == code
    assert logged == [{"level": "DEBUG", "format": "%(asctime)s %(levelname)s %(message)s", "force": True}]
    [made] = _Server.made
    c = made.config
    assert (c.host, c.port, c.log_level, c.access_log, c.timeout_keep_alive, c.timeout_graceful_shutdown,
            c.limit_concurrency, c.http.header_timeout_s, c.lifespan) == ("127.0.0.2", 9002, "debug", True, 30, 5, 64,
                                                                          3.0, "on")
    service = c.app.state.service
    assert made.before_shutdown == service.begin_shutdown and made.drained == service.drained
    assert service.config.port == 9002


HELP = {
    '--backend': ("grading mode (default slime_math): slime_math grades as SLIME's --rm-type math (last "
                  '\\boxed{}, its normalization, sympy); math_verify: math-verify on the whole response; boxed: '
                  'last \\boxed{} string match. README: the table of differences'),
    '--host': 'address to bind (default 127.0.0.1)',
    '--port': 'port (default 8000)',
    '--workers': ('scorer processes at full priority (default: the CPUs this container may use, 4 here); the '
                  'HTTP front is one process'),
    '--max-slow-workers': 'extra processes that finish slow scorings while fresh ones take their slots (default 16)',
    '--max-body-bytes': 'larger bodies get 413 (default 4194304)',
    '--scorer-timeout-s': 'CPU seconds one scoring may use; the fallback is replied past it (default 2.0)',
    '--scorer-wall-timeout-s': ('--reply-mode retry: a request whose scoring is not done within this gets 503 + '
                                'Retry-After; the scoring goes on and the retry gets its reward (default 6.0)'),
    '--reply-mode': ('retry (SLIME, which retries 503): answer 503 + Retry-After past --scorer-wall-timeout-s; '
                     'wait (Miles, whose remote_rm never retries): wait for the scoring up to --wait-reply-s '
                     '(default retry)'),
    '--wait-reply-s': ("--reply-mode wait: how long a request waits for its scoring; keep it under the client's "
                       'timeout (default 240.0)'),
    '--demote-after-cpu-s': ('a scoring that used this much CPU is slow: a fresh process takes its slot while it '
                             'finishes at normal priority; 0 = never (default 0.2)'),
    '--max-queued': 'scorings that may wait for a process; more get 503 + Retry-After (default 1024)',
    '--read-timeout-s': 'request headers, then the body, must arrive within this (default 5.0)',
    '--max-connections': 'open connections past which requests get 503 (default 2048)',
    '--fallback-reward': 'reward replied on a scorer timeout or error, always counted and logged (default 0.0)',
    '--keep-alive-s': "idle HTTP connection lifetime; keep it above SLIME's 15 s (default 75)",
    '--reward-key': 'reply {KEY: reward} instead of a bare number; pass SLIME --reward-key KEY',
    '--access-log': 'log every request (off: it costs CPU)',
    '--log-level': None,
}


def test_rules_reward_cli_help(monkeypatch: pytest.MonkeyPatch) -> None:
    """What `rlcheck reward-service --help` says of each option, with its default (4 CPUs here)."""
    monkeypatch.setattr(cli, "usable_cpus", lambda: 4)
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    shown = {a.option_strings[0]: None if a.help is None else a.help % {"default": a.default}
             for a in parser._actions if a.dest != "help"}
    assert shown == HELP
    assert cli.LOG_LEVELS == ("critical", "error", "warning", "info", "debug")
