"""SLIME's own log statements per version, as data, and the watcher's milestones built from them.

rlcheck/data/slime_log/<version>.toml names, for each supported SLIME version (v0.2.4, the latest
release, main), the statement that marks each phase of a GRPO loop: its file, the line number SLIME's
logger prints, the f-string in the source and the message it renders. tests/test_slime_log.py checks
every entry against a SLIME checkout. Nothing here depends on SGLang's log level: readiness is SLIME's
own first weight sync (`Timer update_weights end`), which needs the engines serving.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import tomllib
from collections.abc import Iterable, Sequence
from pathlib import Path

from packaging.version import InvalidVersion, Version

from rlcheck.e2e.watch import Invariants, Milestone

DATA_DIR = Path(__file__).parents[1] / "data" / "slime_log"
LOGGER_DATEFMT = "%Y-%m-%d %H:%M:%S"
_FIELD = re.compile(r"\{(?P<name>[a-z_]+)(?::(?P<spec>[^}]*))?\}")
_INT_FIELDS = {"rollout_id", "accumulated_step_id", "n", "num_gpus", "i", "actual_bundle_index", "gpu"}
_DICT_FIELDS = {"log_dict", "reduced_log_dict"}


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Statement:
    name: str
    file: str
    """Path in SLIME's source tree; the log prints its basename."""
    line: int
    """The line number SLIME's logger prints (the logger call's line)."""
    source: str
    """The f-string at (or just after) that line in the source."""
    format: str
    """The message, with the source's expressions named (str.format syntax)."""
    actor: str
    """The Ray actor class whose log carries it ('driver' for train.py itself)."""

    def render(self, **fields: object) -> str:
        return self.format.format(**fields)

    def regex(self, **fixed: str) -> str:
        """A regex over the rendered message; `fixed` fields must equal the given text."""
        out, at = [], 0
        for field in _FIELD.finditer(self.format):
            out.append(re.escape(self.format[at:field.start()]))
            name, spec = field.group("name"), field.group("spec") or ""
            if name in fixed:
                out.append(re.escape(fixed[name]))
            elif spec.endswith("f"):
                out.append(r"-?(?:\d+(?:\.\d*)?|nan|inf)")
            elif name in _INT_FIELDS:
                out.append(r" *\d+")
            elif name in _DICT_FIELDS:
                out.append(r"\{.*\}")
            else:
                out.append(r"\S*")
            at = field.end()
        out.append(re.escape(self.format[at:]))
        return "".join(out)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class MilestoneSpec:
    name: str
    statement: str
    timer: str = ""
    first_loop_only: bool = False
    hypothesis: str = ""
    deadline: str
    """Which deadline of the case applies: placement, startup, rollout or phase."""
    needs: str = ""
    """'ref' (a reference model) or 'log_probs' (not --use-rollout-logprobs); '' for always."""
    requires_key: str = ""
    why: str = ""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class VersionTable:
    version: str
    commit: str
    logger_file: str
    logger_line: int
    logger_source: str
    statements: dict[str, Statement]
    milestones: tuple[MilestoneSpec, ...]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Deadlines:
    """Seconds allowed from the previous milestone to the next, by kind of phase."""

    placement_s: float
    startup_s: float
    """Engine launch, Megatron init, checkpoint load and the first weight sync (loop 0 only)."""
    rollout_s: float
    phase_s: float

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            if not getattr(self, field.name) > 0:
                raise ValueError(f"{field.name}={getattr(self, field.name)!r}: seconds > 0")


@functools.cache
def tables() -> dict[str, VersionTable]:
    out = {}
    for path in sorted(DATA_DIR.glob("*.toml")):
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
        statements = {name: Statement(name=name, **entry) for name, entry in raw.pop("statements").items()}
        specs = tuple(MilestoneSpec(**entry) for entry in raw.pop("milestones"))
        for spec in specs:
            if spec.statement not in statements:
                raise ValueError(f"{path.name} milestone {spec.name}: statement {spec.statement!r} is not defined")
        out[raw["version"]] = VersionTable(statements=statements, milestones=specs, **raw)
    return out


VERSIONS = ("v0.2.4", "v0.3.1", "main")
DEFAULT_VERSION = "v0.2.4"
"""The SLIME of rlcheck's reference training image (slime0.2.4-sgl0.5.12.post1)."""


MILES = "miles=="
"""What parse_framework returns for Miles, before the table's version: Miles is a framework of its own in reports."""


def parse_framework(text: str) -> str:
    """'slime==0.3.1', 'slime==v0.3.1' or 'slime==main' -> the table's version; 'miles==main' (or any Miles
    checkout: Miles has no releases of its own) -> 'miles==main' (main's statements judge it); ValueError otherwise."""
    name, sep, version = text.partition("==")
    version = version.strip()
    if name.strip().lower() == "miles" and sep and version and not version.isspace():
        return MILES + version_for("miles", None)[0]
    if name.strip().lower() != "slime" or not sep:
        raise ValueError(f"--framework {text!r}: slime==VERSION (VERSION one of {', '.join(VERSIONS)}) or miles==main")
    if version != "main" and not version.startswith("v"):
        version = "v" + version
    if version not in tables():
        raise ValueError(f"--framework {text!r}: no milestone table for SLIME {version}; have {', '.join(VERSIONS)}")
    return version


def split_framework(value: str) -> tuple[str, str]:
    """parse_framework's result -> (framework name, milestone table version)."""
    return ("miles", value.removeprefix(MILES)) if value.startswith(MILES) else ("slime", value)


def version_for(framework: str | None, release: str | None) -> tuple[str, str]:
    """(the milestone table that judges a job of this framework/release, why that one).

    A release below 0.3.0 prints v0.2.4's lines; 0.3.0 and 0.3.1 print v0.3.1's; a later release or a checkout
    between tags (release None: main or a commit) prints main's. Miles forks SLIME's rollout and trainer logging
    and has no table of its own: main's statements judge it. Nothing known: the reference image's SLIME."""
    if framework is None:
        return DEFAULT_VERSION, f"no framework known: SLIME {DEFAULT_VERSION}, the reference image's"
    if framework == "miles":
        return "main", "Miles: no table of its own, SLIME main's statements (Miles forks SLIME's logging)"
    if release is None:
        return "main", "SLIME of no release (main or a commit between tags): main's statements"
    try:
        parsed = Version(release)
    except InvalidVersion:
        return "main", f"SLIME {release!r} is not a release version: main's statements"
    if parsed < Version("0.3.0"):
        return "v0.2.4", f"SLIME {release}: before 0.3.0, v0.2.4's statements"
    if parsed <= Version("0.3.1"):
        return "v0.3.1", f"SLIME {release}: 0.3.0 to 0.3.1, v0.3.1's statements"
    return "main", f"SLIME {release}: after 0.3.1, main's statements"


def plan(version: str, deadlines: Deadlines, argv: Sequence[str] = ()) -> tuple[tuple[Milestone, ...], Invariants]:
    """The milestones of one loop at this SLIME version for a job with this argv, and its invariants."""
    table = tables()[version]
    has = set(argv)
    with_ref = "--use-kl-loss" in has or _nonzero(_flag_value(argv, "--kl-coef"))
    needs = {"ref": with_ref, "log_probs": "--use-rollout-logprobs" not in has, "": True}
    seconds = {"placement": deadlines.placement_s, "startup": deadlines.startup_s, "rollout": deadlines.rollout_s,
               "phase": deadlines.phase_s}
    out = []
    for spec in table.milestones:
        if not needs[spec.needs]:
            continue
        statement = table.statements[spec.statement]
        pattern = statement.regex(name=spec.timer) if spec.timer else statement.regex()
        out.append(Milestone(name=spec.name, pattern=pattern, timeout_s=seconds[spec.deadline],
                             hypothesis=spec.hypothesis, first_loop_only=spec.first_loop_only,
                             requires=f"'{spec.requires_key}':" if spec.requires_key else ""))
    invariants = Invariants(step0_kl_loss=not {"--use-rollout-routing-replay", "--use-routing-replay"} & has,
                            step0_ppo_kl="--use-rollout-logprobs" not in has)
    return tuple(out), invariants


def _flag_value(argv: Sequence[str], flag: str) -> str | None:
    """The flag's value as argparse reads it: `--flag VALUE` or `--flag=VALUE`, the last one given winning."""
    value = None
    for i, token in enumerate(argv):
        if token == flag and i + 1 < len(argv):
            value = argv[i + 1]
        elif token.startswith(flag + "="):
            value = token.removeprefix(flag + "=")
    return value


def _nonzero(value: str | None) -> bool:
    """SLIME's `args.kl_coef != 0` on the float argparse makes of the text ('0.00', '0e0' and '-0' are zero); a value
    argparse would refuse is taken as zero: the job never starts, and no phase is waited for that may not come."""
    try:
        return value is not None and float(value) != 0
    except ValueError:
        return False


_LOCATION = re.compile(r"\] (?P<file>[\w.]+\.py):(?P<line>\d+) - ")


def detect_version(lines: Iterable[str]) -> tuple[str | None, dict[str, int]]:
    """The version whose statement locations (file:line) the log's SLIME lines agree with most, and the counts.

    SLIME's logger prints `file.py:LINE - message`; each version's table knows where its statements are.
    None when no SLIME statement location is seen, or when the best versions tie.
    """
    where = {v: {(Path(s.file).name, s.line) for s in t.statements.values()} for v, t in tables().items()}
    counts = dict.fromkeys(where, 0)
    for line in lines:
        found = _LOCATION.search(line[:4096])
        if found:
            key = (found.group("file"), int(found.group("line")))
            for version, places in where.items():
                counts[version] += key in places
    best = sorted(counts.values(), reverse=True)
    if not best or best[0] == 0 or (len(best) > 1 and best[0] == best[1]):
        return None, counts
    return max(counts, key=lambda v: counts[v]), counts


@functools.cache
def case_deadlines() -> dict[str, tuple[int, Deadlines]]:
    """{case: (loops, deadlines)} of the end-to-end cases (rlcheck/data/e2e_cases.toml)."""
    raw = tomllib.loads((DATA_DIR.parent / "e2e_cases.toml").read_text(encoding="utf-8"))
    return {case: (int(entry.pop("loops")), Deadlines(**entry)) for case, entry in raw.items()}
