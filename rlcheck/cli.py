"""rlcheck's command line: scan logs, list the catalogue, serve rewards."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from rlcheck import catalog, scan

EXIT_CLEAN, EXIT_FOUND, EXIT_USAGE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # usage errors exit 2, as argparse does
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _print_human(result: scan.ScanResult, known: dict[str, catalog.KnownFailure]) -> None:
    for f in result.findings:
        entry = known[f.failure_id]
        print(f"{f.path}:{f.line_no}: {f.failure_id} [{entry.layer}/{entry.severity}] {entry.title}")
        print(f"    line:  {f.line[:400]}")
        print(f"    cause: {' '.join(entry.cause.split())}")
        print(f"    fix:   {' '.join(entry.remedy.split())}")
    ids = sorted({f.failure_id for f in result.findings})
    verdict = f"{len(result.findings)} known failure line(s): {', '.join(ids)}" if ids else "no known failure"
    print(f"rlcheck scan: {result.files} file(s), {verdict}")


def cmd_scan(args: argparse.Namespace) -> int:
    known = catalog.load_catalog()
    result = scan.scan_paths(args.paths, scan.Matcher(known))
    if args.json:
        doc = {"files": result.files, "errors": result.errors,
               "findings": [f.to_dict(known) for f in result.findings]}
        json.dump(doc, sys.stdout, indent=2)
        print()
    else:
        _print_human(result, known)
    for error in result.errors:
        print(f"rlcheck scan: error: {error}", file=sys.stderr)
    if result.errors:
        return EXIT_USAGE
    return EXIT_FOUND if result.findings else EXIT_CLEAN


def cmd_catalog(args: argparse.Namespace) -> int:
    known = catalog.load_catalog()
    if args.json:
        json.dump({k: {"layer": e.layer, "severity": e.severity, "title": e.title, "check": e.check,
                       "reproducer": e.reproducer} for k, e in known.items()}, sys.stdout, indent=2)
        print()
        return EXIT_CLEAN
    for e in sorted(known.values(), key=lambda e: (e.layer, e.id)):
        print(f"{e.id:32} {e.layer:9} {e.severity:9} {e.title}")
    return EXIT_CLEAN


def cmd_render(args: argparse.Namespace) -> int:
    from rlcheck import recipes, render
    from rlcheck.hardware import load_profiles
    from rlcheck.recipes.deltas import NotForHardware

    if args.recipe not in recipes.RECIPE_IDS:
        print(f"rlcheck render: unknown recipe {args.recipe!r}; valid: {', '.join(recipes.RECIPE_IDS)}",
              file=sys.stderr)
        return EXIT_USAGE
    if args.hardware not in load_profiles():
        print(f"rlcheck render: unknown hardware {args.hardware!r}; valid: {', '.join(load_profiles())}",
              file=sys.stderr)
        return EXIT_USAGE
    try:
        doc = render.document(args.recipe, args.hardware, args.image)
    except NotForHardware as exc:
        print(f"rlcheck render: {args.recipe} does not fit {args.hardware}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    sys.stdout.write(render.dump(doc, args.format))
    return EXIT_CLEAN


def _reward_service(sub: argparse._SubParsersAction) -> None:
    try:
        from rlcheck.reward import cli as reward_cli
    except ImportError:  # the reward extras (fastapi, uvicorn) are not installed in this image
        return
    p = sub.add_parser("reward-service", help="serve SLIME remote_rm rewards over HTTP")
    reward_cli.add_arguments(p)
    p.set_defaults(func=reward_cli.run)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="rlcheck", description="Diagnostics for RL post-training stacks.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    p = sub.add_parser("scan", help="find known failures in logs (files, directories, '-', .gz)")
    p.add_argument("paths", nargs="+", metavar="PATH", help="log file, directory, .gz file, or - for stdin")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_scan)
    p = sub.add_parser("catalog", help="list the known-failure catalogue")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_catalog)
    p = sub.add_parser("render", help="the exact argv, runtime env, resources and KubeRay manifests of a recipe")
    p.add_argument("recipe", metavar="RECIPE")
    p.add_argument("--hardware", required=True, metavar="NAME", help="hardware profile (h100, h200, b200, ...)")
    p.add_argument("--format", default="json", choices=("json", "yaml", "shell"))
    p.add_argument("--image", default="rlcheck/slime-training:slime0.2.4-sgl0.5.12.post1",
                   help="training image for the manifests")
    p.set_defaults(func=cmd_render)
    _reward_service(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    return func(args)


if __name__ == "__main__":
    sys.exit(main())
