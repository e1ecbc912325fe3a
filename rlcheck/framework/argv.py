"""Judge a job's argv as the framework's parsers will read it (catalogue: framework-arg-rejected, sglang-dead-flag).

SLIME parses its argv twice: Megatron's parser with SLIME's options added, with unknown options ignored
(parse_known_args, no abbreviations), and a separate SGLang parser that takes unique prefixes of its options
(argparse's default). An option neither knows is dropped without a word; a prefix of an SGLang option sets that
option. Miles adds everything to Megatron's parser and parses strictly: an unknown option is an error; with
`--train-backend fsdp` (read by a pre-parse of Miles' own options that takes a unique prefix, so `--train-back fsdp`
too; SLIME's pre-parse reads the whole flag only) it builds its FSDP parser instead (FSDPArgs' options and Miles'
own, none of Megatron's, and argparse's default allow_abbrev), so there a Megatron option is an error and a unique
prefix sets an option. Both exit on a value of the wrong type, a choice not offered, or an ambiguous prefix: a name
that is no option string of an abbreviating parser (Miles' pre-parse included, whatever the backend) but a prefix of
two or more, as argparse counts them (two names of one option are two). The last
of two values given for one option wins: upstream scripts override a model script's value that way on purpose
(--moe-token-dispatcher-type alltoall, then flex), so it is reported as a WARN naming both values and the winner,
never as an error.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence

from rlcheck import catalog
from rlcheck.framework.schema import NUMERIC, Option, Schema
from rlcheck.verdict import Status, Verdict

_NEGATIVE = re.compile(r"^-\d+$|^-\d*\.\d+$")  # argparse's own test for a value that starts with '-'
OVERRIDES = ("twice",)
"""Problems the parser accepts (the last value wins): reported, never blocking."""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Finding:
    flag: str
    """The option as the argv gave it."""
    problem: str
    """'type', 'choice', 'missing-value', 'unknown', 'abbreviation', 'ambiguous', 'twice', 'stray', 'missing', or
    'custom' and 'unreleased' (not judged: UNJUDGED)."""
    text: str


def _is_flag(token: str) -> bool:
    """argparse reads the token as an option (not a negative number; no space before any `=`: argparse takes
    `--sglang-load-format dummy`, one token, for a positional argument)."""
    return (token.startswith("-") and len(token) > 1 and not _NEGATIVE.match(token)
            and " " not in token.partition("=")[0])


def holds(when: tuple[str, str] | None, tokens: Sequence[str], schema: Schema) -> bool:
    """Whether a condition of the schema (Option.when, Parser.abbrev_when) holds for these options: the option's
    value in the argv, else its default (Miles' --train-backend left out is megatron)."""
    if when is None:
        return True
    given = condition(tokens, when[0], schema)
    default = schema.by_flag[when[0]].default if when[0] in schema.by_flag else None
    return (given if given is not None else default) == when[1]


BACKEND = "--train-backend"
HELP = "--help"
"""argparse's default parser adds -h/--help before any option: Miles' pre-parse (a plain ArgumentParser()) has it."""
SHOWN = 10
"""The candidates an ambiguous prefix's finding names (argparse names them all: an SGLang prefix can match hundreds)."""


def _preparse(schema: Schema) -> dict[str, Option | None]:
    """The option strings of the framework's abbreviating pre-parse of its backend (Schema.backend_abbrev: its own
    options, those under no `when`, after argparse's --help), in the order the schema holds them; {} without one."""
    if not schema.backend_abbrev:
        return {}
    return {HELP: None, **{f: o for o in schema.options if o.when is None for f in o.flags}}


def _abbreviates(name: str, flag: str, schema: Schema) -> bool:
    """Whether the pre-parse over the framework's own options reads name as flag: no option string of it is name, and
    flag is the only one name is a prefix of (argparse's allow_abbrev counts option strings)."""
    strings = _preparse(schema)
    return name not in strings and [f for f in strings if f.startswith(name)] == [flag]


def condition(tokens: Sequence[str], flag: str, schema: Schema) -> str | None:
    """The value the framework reads for an option a condition names: the last one given (`option`); where the
    schema's framework picks its backend by an abbreviating pre-parse (Schema.backend_abbrev: Miles), a unique prefix
    of --train-backend among its own options sets it too (`--train-back fsdp`)."""
    if flag != BACKEND:
        return option(tokens, flag)
    # a prefix of the flag first: the pre-parse's strings are read only for the few tokens that could be one
    return option(tokens, flag, also=lambda name: flag.startswith(name) and _abbreviates(name, flag, schema))


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Reader:
    """A parser that reads the whole argv taking unique prefixes of its option strings (argparse's allow_abbrev)."""
    who: str
    """As a finding names it: 'the sglang parser', 'the miles pre-parse of --train-backend (...)'."""
    strings: dict[str, Option | None]
    """Its option strings, as this argv builds it, each with its option (None: argparse's own --help)."""
    sets: bool
    """Whether what it reads is what the trainer gets (False: the pre-parse, which only picks the backend)."""


def readers(schema: Schema, tokens: Sequence[str]) -> list[Reader]:
    """The abbreviating parsers of this argv, in the order they run: the pre-parse of the backend first."""
    out = []
    if schema.backend_abbrev:
        out.append(Reader(who=f"the {schema.framework} pre-parse of {BACKEND} (over its own options, with argparse's "
                              "allow_abbrev)", strings=_preparse(schema), sets=False))
    for p in schema.parsers:
        if p.abbrev or (p.abbrev_when and holds(p.abbrev_when, tokens, schema)):
            why = (f" (with {p.abbrev_when[0]} {p.abbrev_when[1]} {schema.framework} builds it with argparse's "
                   "allow_abbrev)") if p.abbrev_when else ""
            out.append(Reader(who=f"the {p.name} parser{why}", sets=True, strings={
                f: o for o in schema.options if o.parser == p.name and holds(o.when, tokens, schema) for f in o.flags}))
    return out


def _prefixed(name: str, reader: Reader) -> list[tuple[str, Option | None]]:
    """The option strings of reader that name is a prefix of, where argparse looks for them: a long name (`--x`) that
    is none of its option strings."""
    if not name.startswith("--") or name in reader.strings:
        return []
    return [(f, o) for f, o in reader.strings.items() if f.startswith(name)]


def _ambiguous(token: str, name: str, found_by: list[Reader]) -> Finding | None:
    """The first abbreviating parser that exits on name: a prefix of two or more of its option strings (argparse counts
    strings, so two names of one option are ambiguous too); its own message, as argparse words it."""
    for reader in found_by:
        found = [f for f, _ in _prefixed(name, reader)]
        if len(found) > 1:
            more = f", ... ({len(found) - SHOWN} more)" if len(found) > SHOWN else ""
            listed = f"{', '.join(found[:SHOWN])}{more}"
            return Finding(flag=name, problem="ambiguous",
                           text=f"{name}: {reader.who} exits: 'ambiguous option: {token} could match {listed}'")
    return None


def _resolve(name: str, schema: Schema, tokens: Sequence[str], found_by: list[Reader]
             ) -> tuple[Option | None, list[tuple[Reader, str, Option]]]:
    """(the option exactly: the variant whose condition holds, else the first, whose `when` says what adds it; or each
    abbreviating parser, as this argv builds it, that reads this name as the one option string it is a prefix of)."""
    if name in schema.variants:
        found = schema.variants[name]
        return next((o for o in found if holds(o.when, tokens, schema)), found[0]), []
    matches: list[tuple[Reader, str, Option]] = []
    for reader in found_by:
        hits = _prefixed(name, reader)
        if reader.sets and len(hits) == 1 and (opt := hits[0][1]) is not None:
            matches.append((reader, hits[0][0], opt))
    return None, matches


def _preparsed(token: str, rest: list[str], target: Option | None, found_by: list[Reader]) -> list[Finding]:
    """Where the pre-parse that picks the backend (Reader.sets False) reads a name as another of its options than the
    trainer's parser does (Megatron's --profile as Miles' --profile-target, nargs '+'), it takes and checks the values
    that option would: with none to take, or one of the wrong type or not a choice, it exits before any other parser."""
    name, eq, inline = token.partition("=")
    pre = next((r for r in found_by if not r.sets), None)
    if pre is None:
        return []
    hits = _prefixed(name, pre)
    if len(hits) != 1 or (opt := hits[0][1]) is None or opt is target:
        return []
    flag = hits[0][0]
    values = [inline] if eq else rest[:_take(opt, rest)]
    return [dataclasses.replace(f, flag=name, text=f"{name}: {pre.who} reads it as {flag}: {f.text}")
            for f in _check_values(flag, opt, values)]


def _take(opt: Option | None, rest: list[str]) -> int:
    """How many of the following tokens argparse gives this option (an unknown one keeps its loose values)."""
    loose = next((i for i, t in enumerate(rest) if _is_flag(t)), len(rest))
    if opt is None or opt.nargs in ("*", "+"):
        return loose
    if not opt.takes_values:
        return 0
    return min(loose, opt.nargs if isinstance(opt.nargs, int) else 1)  # None or '?': at most one


def _check_values(flag: str, opt: Option, values: list[str]) -> list[Finding]:
    want = opt.nargs if isinstance(opt.nargs, int) else (1 if opt.nargs in (None, "+") and opt.takes_values else 0)
    if len(values) < want:
        return [Finding(flag=flag, problem="missing-value", text=f"{flag}: expected a value, got none: the parser "
                                                                   f"exits")]
    out = []
    for value in values:
        try:
            typed = NUMERIC[opt.kind](value) if opt.kind in NUMERIC else value
        except ValueError:
            out.append(Finding(flag=flag, problem="type", text=f"{flag} {value}: invalid {opt.kind} value (the "
                                                               f"parser exits; {opt.group} declares type={opt.kind})"))
            continue
        # choices are comparable only where the conversion is known (an enum type's choices are its members)
        choices = opt.choices if opt.kind in (*NUMERIC, "str") else None
        if choices is not None and typed not in choices and value not in map(str, choices):
            out.append(Finding(flag=flag, problem="choice", text=f"{flag} {value}: not one of "
                                                                 f"{', '.join(map(str, choices))}"))
    return out


def _unresolved(name: str, matches: list[tuple[Reader, str, Option]], schema: Schema) -> Finding | None:
    if matches:
        reader, flag, _ = matches[0]
        return Finding(flag=name, problem="abbreviation",
                       text=f"{name}: not an option, but {reader.who} takes it as an abbreviation of {flag} and sets "
                            "that")
    if name.startswith(schema.opaque_prefixes):
        return None
    lenient = all(p.lenient for p in schema.parsers)
    fate = "dropped without a word (parse_known_args)" if lenient else "rejected: unrecognized arguments"
    return Finding(flag=name, problem="unknown", text=f"{name}: no {schema.framework} {schema.version} parser has it: "
                                                      f"{fate}")


def _misspells(name: str, flag: str) -> bool:
    """At most MISSPELLED edits (a letter added, dropped or changed) turn flag into name."""
    if abs(len(name) - len(flag)) > MISSPELLED:
        return False
    row = list(range(len(flag) + 1))
    for i, a in enumerate(name, 1):
        prev, row[0] = row[0], i
        for j, b in enumerate(flag, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (a != b))
        if min(row) > MISSPELLED:
            return False
    return row[-1] <= MISSPELLED


MISSPELLED = 2
"""Edits that make an unknown option a misspelling of a known one rather than an option of an unreleased branch."""


def _unreleased(name: str, schema: Schema, found: Finding) -> Finding:
    """An unknown option under a prefix whose package the framework's image builds from a branch (Schema.unreleased):
    a misspelling of an option the release has stays a FAIL, naming it; anything else the branch may add, and
    rlcheck cannot read the branch: not judged."""
    for branch in schema.unreleased:
        if not name.startswith(branch.prefix):
            continue
        if name in branch.release:  # the release has it and the framework leaves it out: it sets it itself
            return dataclasses.replace(found, text=f"{found.text} ({branch.component} has it; {schema.framework} "
                                                   "sets it itself)")
        if name in branch.removed:
            return dataclasses.replace(found, text=f"{found.text} (the package removed it: {branch.removed[name]})")
        longer = next((f for f in schema.by_flag if f.startswith(name)), None)
        if longer is not None:  # an abbreviation this parser does not take, not a new option
            return dataclasses.replace(found, text=f"{found.text} (abbreviates {longer}: this parser takes whole "
                                                   "names only)")
        near = next((f for f in schema.by_flag if f.startswith(branch.prefix) and _misspells(name, f)), None)
        if near is not None:
            return dataclasses.replace(found, text=f"{found.text} (a misspelling of {near}?)")
        return Finding(flag=name, problem="unreleased", text=f"{name}: not an option of {branch.component}; the "
                       f"{schema.framework} image builds {branch.branch}, which may add it and which rlcheck cannot "
                       "read: not judged")
    return found


def _not_added(name: str, tokens: Sequence[str], schema: Schema) -> Finding:
    """An option the framework adds only under conditions this argv meets none of: its parser exits."""
    found = schema.variants[name]
    adds = " or ".join(dict.fromkeys(f"{o.when[0]} {o.when[1]} ({o.group})" for o in found if o.when))
    flag = next(o.when[0] for o in found if o.when)
    given = condition(tokens, flag, schema)
    default = schema.by_flag[flag].default if flag in schema.by_flag else None
    here = (f"this argv gives {flag} {given}" if given is not None
            else "without it" if default is None else f"this argv leaves {flag} out ({default}, its default)")
    return Finding(flag=name, problem="unknown", text=f"{name}: {schema.framework} adds it only with {adds}; {here}: "
                                                      "the parser exits (unrecognized arguments)")


CUSTOM_GENERATE = "--custom-generate-function-path"
"""Miles calls add_arguments of the function this names on its parser: options only that function knows."""


def option(argv: Sequence[str], flag: str, also: Callable[[str], bool] | None = None) -> str | None:
    """The value argparse keeps for `flag` (the last one given; `--flag v` or `--flag=v`), or None; also: other names
    the parser reads as flag (an abbreviation it accepts)."""
    found = None
    for i, token in enumerate(argv):
        name, eq, inline = token.partition("=")
        if name != flag and not (also is not None and also(name)):
            continue
        if eq:
            found = inline
        elif i + 1 < len(argv):
            found = argv[i + 1]
    return found


_PY_VALUE_OPTIONS = ("-W", "-X")
"""The interpreter's own options that take the next token as their value (`python3 -X dev train.py`)."""


def options_of(argv: list[str] | tuple[str, ...]) -> list[str]:
    """The trainer's options: argv without its leading python, the interpreter's own options (`python3 -u train.py`:
    -u is Python's, never the trainer's) and script tokens."""
    tokens = list(argv)
    if tokens and not _is_flag(tokens[0]) and tokens[0].startswith("python"):
        tokens.pop(0)
        while tokens and tokens[0].startswith("-") and not tokens[0].startswith("--") and len(tokens[0]) > 1:
            flag = tokens.pop(0)
            if flag in ("-m", "-c"):  # a module or a program: what follows it is its own
                return tokens[1:]
            if flag in _PY_VALUE_OPTIONS and tokens:
                tokens.pop(0)
    while tokens and not _is_flag(tokens[0]) and (tokens[0].startswith("python") or tokens[0].endswith(".py")):
        tokens.pop(0)
    return tokens


def judge(argv: list[str] | tuple[str, ...], schema: Schema) -> tuple[list[Finding], list[str], int]:
    """(findings, options under an opaque prefix, options read) for argv (leading python/script tokens skipped); a
    whole trainer command line is also held to the parser's required options."""
    tokens = options_of(argv)
    findings: list[Finding] = []
    opaque: list[str] = []
    seen: dict[str, tuple[str, list[str]]] = {}
    found_by = readers(schema, tokens)
    i, count = 0, 0
    while i < len(tokens):
        token = tokens[i]
        if not _is_flag(token):
            spaced = " (one token holding a space: argparse reads it as a value, not an option; quoted as one word "
            findings.append(Finding(flag=token, problem="stray", text=f"{token!r}: a value no option takes" + (
                spaced + "where two were meant?)" if token.startswith("-") and " " in token else "")))
            i += 1
            continue
        count += 1
        name, eq, inline = token.partition("=")
        ambiguous = _ambiguous(token, name, found_by)
        opt, matches = _resolve(name, schema, tokens, found_by)
        target = opt or (matches[0][2] if matches and ambiguous is None else None)
        n = 0 if eq else _take(target, tokens[i + 1:])
        values = [inline] if eq else tokens[i + 1:i + 1 + n]
        if ambiguous is not None:  # that parser exits here: nothing after it is read
            findings.append(ambiguous)
            i += 1 + n
            continue
        findings += _preparsed(token, tokens[i + 1:], target, found_by)
        i += 1 + n
        if opt is not None and opt.when and not holds(opt.when, tokens, schema):
            findings.append(_not_added(name, tokens, schema))
        if opt is None:
            found = _unresolved(name, matches, schema)
            if found is None:
                opaque.append(name)
                continue
            if found.problem == "unknown":
                found = _unreleased(name, schema, found)
            custom = option(tokens, CUSTOM_GENERATE) if schema.framework == "miles" else None
            if found.problem == "unknown" and custom and custom not in schema.generate_paths:
                found = Finding(flag=name, problem="custom", text=f"{name}: not an option of {schema.framework} "
                                f"{schema.version}; {CUSTOM_GENERATE} {custom} may add it (its generate function's "
                                "add_arguments, which rlcheck cannot read without importing it): not judged")
            findings.append(found)
        if target is None:
            continue
        findings += _check_values(name, target, values)
        dest = target.dest or target.flags[0]
        if dest in seen and seen[dest][1] != values and target.kind != "append":
            first, old = seen[dest]
            findings.append(Finding(flag=name, problem="twice", text=f"{first} {' '.join(old)} then {name} "
                                                                     f"{' '.join(values)}: one option given twice; "
                                                                     f"the last wins: {' '.join(values)}"))
        seen[dest] = (name, values)
    whole = len(tokens) < len(argv)  # a trainer's whole command line (python3 train.py ...), not a list of options
    findings += [Finding(flag=o.flags[0], problem="missing",
                         text=f"{o.flags[0]} is required: the parser exits with 'the following arguments are "
                              f"required: {o.flags[0]}' (a line lost from the launch leaves it out)")
                 for o in schema.options if whole and o.required and (o.dest or o.flags[0]) not in seen]
    return findings, opaque, count


UNJUDGED = {"custom": "a custom generate function", "unreleased": "an unreleased branch of the package"}
"""Findings of options rlcheck cannot judge -> who may add them (the verdict WARNs, naming them)."""


def evaluate(argv: list[str] | tuple[str, ...], schema: Schema, how: str) -> Verdict:
    """The verdict for argv judged against schema; how says why this schema (installed, recipe's framework)."""
    findings, opaque, count = judge(argv, schema)
    which = f"{schema.framework} {schema.version} (schema {schema.name}, {how})"
    notes = [f"not judged (options of a package outside the schema): {', '.join(opaque)}"] if opaque else []
    if not findings:
        return Verdict(status=Status.PASS, failure_id="framework-arg-rejected", details="\n".join(notes),
                       summary=f"{count} option(s) all accepted by {which}")
    unjudged = [f for f in findings if f.problem in UNJUDGED]
    blocking = [f for f in findings if f.problem not in OVERRIDES and f.problem not in UNJUDGED]
    overrides = [f for f in findings if f.problem in OVERRIDES]
    notes = [f.text for f in unjudged] + notes
    if not blocking and unjudged:
        return Verdict(status=Status.WARN, failure_id="framework-arg-rejected",
                       details="\n".join([f.text for f in overrides] + notes),
                       summary=f"{count} option(s) read by {which}; {len(unjudged)} not judged ("
                               f"{' or '.join(dict.fromkeys(UNJUDGED[f.problem] for f in unjudged))} may add them): "
                               f"{', '.join(f.flag for f in unjudged[:4])}")
    if not blocking:  # the parser accepts it; the trainer gets the last value of each option
        return Verdict(status=Status.WARN, failure_id="framework-arg-rejected",
                       details="\n".join([f.text for f in overrides] + notes),
                       summary=f"{count} option(s) accepted by {which}; {len(overrides)} given twice with different "
                               f"values: {'; '.join(f.text for f in overrides[:3])}")
    dead = all(f.problem == "unknown" and f.flag.startswith("--sglang-") for f in blocking)
    failure_id = "sglang-dead-flag" if dead else "framework-arg-rejected"
    return Verdict(status=Status.FAIL, failure_id=failure_id, remedy=catalog.get(failure_id).remedy,
                   details="\n".join([f.text for f in blocking + overrides] + notes),
                   summary=f"{len(blocking)} problem(s) in the argv as {which} parses it: "
                           f"{'; '.join(f.text for f in blocking[:3])}")
