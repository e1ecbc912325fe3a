"""`rlcheck reward-service`: options and the entry point (rlcheck/cli.py wires them as a subcommand)."""

from __future__ import annotations

import argparse
import logging
import sys

from rlcheck.reward.config import BACKENDS, DEFAULT_KEEP_ALIVE_S, REPLY_MODES, ServiceConfig, usable_cpus

LOG_LEVELS = ("critical", "error", "warning", "info", "debug")  # lowercase: what uvicorn accepts


def add_arguments(parser: argparse.ArgumentParser) -> None:
    d = ServiceConfig()
    parser.add_argument("--backend", choices=BACKENDS, default=d.backend,
                        help="grading mode (default %(default)s): slime_math grades as SLIME's --rm-type math "
                             "(last \\boxed{}, its normalization, sympy); math_verify: math-verify on the whole "
                             "response; boxed: last \\boxed{} string match. README: the table of differences")
    parser.add_argument("--host", default=d.host, help="address to bind (default %(default)s)")
    parser.add_argument("--port", type=int, default=d.port, help="port (default %(default)s)")
    parser.add_argument("--workers", type=int, default=usable_cpus(),
                        help="scorer processes at full priority (default: the CPUs this container may use, "
                             "%(default)s here); the HTTP front is one process")
    parser.add_argument("--max-slow-workers", type=int, default=d.max_slow_workers,
                        help="extra processes that finish slow scorings while fresh ones take their slots "
                             "(default %(default)s)")
    parser.add_argument("--max-body-bytes", type=int, default=d.max_body_bytes,
                        help="larger bodies get 413 (default %(default)s)")
    parser.add_argument("--scorer-timeout-s", type=float, default=d.scorer_timeout_s,
                        help="CPU seconds one scoring may use; the fallback is replied past it (default %(default)s)")
    parser.add_argument("--scorer-wall-timeout-s", type=float, default=d.scorer_wall_timeout_s,
                        help="--reply-mode retry: a request whose scoring is not done within this gets 503 + "
                             "Retry-After; the scoring goes on and the retry gets its reward (default %(default)s)")
    parser.add_argument("--reply-mode", choices=REPLY_MODES, default=d.reply_mode,
                        help="retry (SLIME, which retries 503): answer 503 + Retry-After past "
                             "--scorer-wall-timeout-s; wait (Miles, whose remote_rm never retries): wait for the "
                             "scoring up to --wait-reply-s (default %(default)s)")
    parser.add_argument("--wait-reply-s", type=float, default=d.wait_reply_s,
                        help="--reply-mode wait: how long a request waits for its scoring; keep it under the "
                             "client's timeout (default %(default)s)")
    parser.add_argument("--demote-after-cpu-s", type=float, default=d.demote_after_cpu_s,
                        help="a scoring that used this much CPU is slow: a fresh process takes its slot while it "
                             "finishes at normal priority; 0 = never (default %(default)s)")
    parser.add_argument("--max-queued", type=int, default=d.max_queued,
                        help="scorings that may wait for a process; more get 503 + Retry-After (default %(default)s)")
    parser.add_argument("--read-timeout-s", type=float, default=d.read_timeout_s,
                        help="request headers, then the body, must arrive within this (default %(default)s)")
    parser.add_argument("--max-connections", type=int, default=d.max_connections,
                        help="open connections past which requests get 503 (default %(default)s)")
    parser.add_argument("--fallback-reward", type=float, default=d.fallback_reward,
                        help="reward replied on a scorer timeout or error, always counted and logged "
                             "(default %(default)s)")
    parser.add_argument("--keep-alive-s", type=int, default=DEFAULT_KEEP_ALIVE_S,
                        help="idle HTTP connection lifetime; keep it above SLIME's 15 s (default %(default)s)")
    parser.add_argument("--reward-key", default=None,
                        help="reply {KEY: reward} instead of a bare number; pass SLIME --reward-key KEY")
    parser.add_argument("--access-log", action="store_true", help="log every request (off: it costs CPU)")
    parser.add_argument("--log-level", choices=LOG_LEVELS, default="info")


def config_from_args(args: argparse.Namespace) -> ServiceConfig:
    return ServiceConfig(backend=args.backend, host=args.host, port=args.port, workers=args.workers,
                         max_slow_workers=args.max_slow_workers, max_body_bytes=args.max_body_bytes,
                         scorer_timeout_s=args.scorer_timeout_s, scorer_wall_timeout_s=args.scorer_wall_timeout_s,
                         demote_after_cpu_s=args.demote_after_cpu_s, reply_mode=args.reply_mode,
                         wait_reply_s=args.wait_reply_s, max_queued=args.max_queued,
                         read_timeout_s=args.read_timeout_s, max_connections=args.max_connections,
                         fallback_reward=args.fallback_reward, keep_alive_s=args.keep_alive_s,
                         reward_key=args.reward_key, access_log=args.access_log)


def run(args: argparse.Namespace) -> int:
    """Serve until SIGTERM/SIGINT, then drain and stop.

    Exit: 2 on a bad option; 3 when it could not start (uvicorn's code: port in use, scorers broken).
    After SIGTERM, uvicorn re-raises it once shut down, so the status is -15 (SIGINT: 0).
    """
    try:
        config = config_from_args(args)
    except ValueError as exc:
        print(f"rlcheck reward-service: error: {exc}", file=sys.stderr)
        return 2
    try:
        from rlcheck.reward.app import create_app
        from rlcheck.reward.server import RewardServer, server_config
    except ImportError as exc:
        print(f"rlcheck reward-service: error: {exc}: it needs fastapi, uvicorn and math-verify "
              "(see deploy/reward-service/Dockerfile for the tested versions)", file=sys.stderr)
        return 2

    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(message)s", force=True)
    app = create_app(config)
    server = RewardServer(server_config(
        app, host=config.host, port=config.port, log_level=args.log_level, access_log=config.access_log,
        keep_alive_s=config.keep_alive_s, graceful_shutdown_s=config.graceful_shutdown_s,
        read_timeout_s=config.read_timeout_s, max_connections=config.max_connections),
        before_shutdown=app.state.service.begin_shutdown, drained=app.state.service.drained)
    try:
        server.run()
    except KeyboardInterrupt:  # uvicorn re-raises SIGINT once it has shut down; the stop was clean
        pass
    return 0 if server.started else 3
