"""`rlcheck reward-service`: options and the entry point (rlcheck/cli.py wires them as a subcommand)."""

from __future__ import annotations

import argparse
import logging
import sys

from rlcheck.reward.config import BACKENDS, DEFAULT_KEEP_ALIVE_S, ServiceConfig, usable_cpus

LOG_LEVELS = ("critical", "error", "warning", "info", "debug")  # lowercase: what uvicorn accepts


def add_arguments(parser: argparse.ArgumentParser) -> None:
    d = ServiceConfig()
    parser.add_argument("--backend", choices=BACKENDS, default=d.backend,
                        help="math_verify: math-verify, label boxed when it is not (default); boxed: last \\boxed{} "
                             "string match")
    parser.add_argument("--host", default=d.host, help="address to bind (default %(default)s)")
    parser.add_argument("--port", type=int, default=d.port, help="port (default %(default)s)")
    parser.add_argument("--workers", type=int, default=usable_cpus(),
                        help="scorer processes at full priority (default: the CPUs this container may use, "
                             "%(default)s here); the HTTP front is one process")
    parser.add_argument("--max-slow-workers", type=int, default=d.max_slow_workers,
                        help="extra processes that finish slow scorings at idle priority (default %(default)s)")
    parser.add_argument("--max-body-bytes", type=int, default=d.max_body_bytes,
                        help="larger bodies get 413 (default %(default)s)")
    parser.add_argument("--scorer-timeout-s", type=float, default=d.scorer_timeout_s,
                        help="deadline of one scoring; the fallback is replied past it (default %(default)s)")
    parser.add_argument("--demote-after-cpu-s", type=float, default=d.demote_after_cpu_s,
                        help="a scoring that used this much CPU goes to idle priority; 0 = never (default %(default)s)")
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
                         scorer_timeout_s=args.scorer_timeout_s, demote_after_cpu_s=args.demote_after_cpu_s,
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
        import uvicorn

        from rlcheck.reward.app import create_app
    except ImportError as exc:
        print(f"rlcheck reward-service: error: {exc}: it needs fastapi, uvicorn and math-verify "
              "(see deploy/reward-service/Dockerfile for the tested versions)", file=sys.stderr)
        return 2

    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(message)s", force=True)
    server = uvicorn.Server(uvicorn.Config(
        create_app(config), host=config.host, port=config.port, log_config=None, log_level=args.log_level,
        access_log=config.access_log, lifespan="on", timeout_keep_alive=config.keep_alive_s,
        timeout_graceful_shutdown=config.graceful_shutdown_s))
    try:
        server.run()
    except KeyboardInterrupt:  # uvicorn re-raises SIGINT once it has shut down; the stop was clean
        pass
    return 0 if server.started else 3
