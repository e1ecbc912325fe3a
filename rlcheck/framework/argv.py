"""Judge a job's argv as the framework's parsers will read it (catalogue: framework-arg-rejected, sglang-dead-flag).

SLIME parses its argv twice: Megatron's parser with SLIME's options added, with unknown options ignored
(parse_known_args, no abbreviations), and a separate SGLang parser that takes unique prefixes of its options
(argparse's default). An option neither knows is dropped without a word; a prefix of an SGLang option sets that
option. Miles adds everything to Megatron's parser and parses strictly: an unknown option is an error; with
`--train-backend fsdp` (read by a pre-parse of Miles' own options that takes a unique prefix, so `--train-back fsdp`
too; SLIME's pre-parse reads the whole flag only) it builds its FSDP parser instead (FSDPArgs' options and Miles'
own, none of Megatron's, and argparse's default allow_abbrev), so there a Megatron option is an error and a unique
prefix sets an option. Both exit on a value of the wrong type, a choice not offered, or an ambiguous prefix. The last
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
    """'type', 'choice', 'missing-value', 'unknown', 'abbreviation', 'ambiguous', 'twice' or 'stray'."""
    text: str


def _is_flag(token: str) -> bool:
    return token.startswith("-") and len(token) > 1 and not _NEGATIVE.match(token)


def holds(when: tuple[str, str] | None, tokens: Sequence[str], schema: Schema) -> bool:
    """Whether a condition of the schema (Option.when, Parser.abbrev_when) holds for these options: the option's
    value in the argv, else its default (Miles' --train-backend left out is megatron)."""
    if when is None:
        return True
    given = condition(tokens, when[0], schema)
    default = schema.by_flag[when[0]].default if when[0] in schema.by_flag else None
    return (given if given is not None else default) == when[1]


BACKEND = "--train-backend"


def _abbreviates(name: str, flag: str, schema: Schema) -> bool:
    """Whether the pre-parse over the framework's own options (those under no `when`) reads name as flag: no own
    option is called name, and flag's is the only own option it is a prefix of (argparse's allow_abbrev)."""
    own = [o for o in schema.options if o.when is None]
    if any(name in o.flags for o in own):
        return False
    return {id(o) for o in own for f in o.flags if f.startswith(name)} == {id(schema.by_flag[flag])}


def condition(tokens: Sequence[str], flag: str, schema: Schema) -> str | None:
    """The value the framework reads for an option a condition names: the last one given (`option`); where the
    schema's framework picks its backend by an abbreviating pre-parse (Schema.backend_abbrev: Miles), a unique prefix
    of --train-backend among its own options sets it too (`--train-back fsdp`)."""
    if flag != BACKEND or not schema.backend_abbrev or flag not in schema.by_flag:
        return option(tokens, flag)
    return option(tokens, flag, also=lambda name: name.startswith("--") and flag.startswith(name)
                  and _abbreviates(name, flag, schema))


def _resolve(name: str, schema: Schema, tokens: Sequence[str]) -> tuple[Option | None, list[Option]]:
    """(the option exactly: the variant whose condition holds, else the first, whose `when` says what adds it; or the
    options of abbreviating parsers, as this argv builds them, that this name is a prefix of)."""
    if name in schema.variants:
        found = schema.variants[name]
        return next((o for o in found if holds(o.when, tokens, schema)), found[0]), []
    prefixed = [p.name for p in schema.parsers if p.abbrev or (p.abbrev_when and holds(p.abbrev_when, tokens, schema))]
    matches = {id(o): o for o in schema.options if o.parser in prefixed and holds(o.when, tokens, schema)
               for f in o.flags if f.startswith(name) and name.startswith("--")}
    return None, list(matches.values())


def _take(opt: Option | None, rest: list[str]) -> int:
    """How many of the following tokens argparse gives this option (an unknown one keeps its loose values)."""
    loose = next((i for i, t in enumerate(rest) if _is_flag(t)), len(rest))
    if opt is None or opt.nargs in ("*", "+"):
        return loose
    if not opt.takes_values:
        return 0
    if opt.nargs == "?":
        return min(loose, 1)
    return min(loose, opt.nargs if isinstance(opt.nargs, int) else 1)


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


def _unresolved(name: str, matches: list[Option], schema: Schema) -> Finding | None:
    if len(matches) == 1:
        when = schema.parser(matches[0].parser).abbrev_when
        why = f" (with {when[0]} {when[1]} {schema.framework} builds it with argparse's allow_abbrev)" if when else ""
        return Finding(flag=name, problem="abbreviation",
                       text=f"{name}: not an option, but the {matches[0].parser} parser{why} takes it as an "
                            f"abbreviation of {matches[0].flags[0]} and sets that")
    if matches:
        return Finding(flag=name, problem="ambiguous", text=f"{name}: ambiguous abbreviation of "
                                                            f"{', '.join(m.flags[0] for m in matches[:4])}: the parser "
                                                            f"exits")
    if name.startswith(schema.opaque_prefixes):
        return None
    lenient = all(p.lenient for p in schema.parsers)
    fate = "dropped without a word (parse_known_args)" if lenient else "rejected: unrecognized arguments"
    return Finding(flag=name, problem="unknown", text=f"{name}: no {schema.framework} {schema.version} parser has it: "
                                                      f"{fate}")


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
    i, count = 0, 0
    while i < len(tokens):
        token = tokens[i]
        if not _is_flag(token):
            findings.append(Finding(flag=token, problem="stray", text=f"{token!r}: a value no option takes"))
            i += 1
            continue
        count += 1
        name, eq, inline = token.partition("=")
        opt, matches = _resolve(name, schema, tokens)
        target = opt or (matches[0] if len(matches) == 1 else None)
        n = 0 if eq else _take(target, tokens[i + 1:])
        values = [inline] if eq else tokens[i + 1:i + 1 + n]
        i += 1 + n
        if opt is not None and opt.when and not holds(opt.when, tokens, schema):
            findings.append(_not_added(name, tokens, schema))
        if opt is None:
            found = _unresolved(name, matches, schema)
            if found is None:
                opaque.append(name)
                continue
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


def evaluate(argv: list[str] | tuple[str, ...], schema: Schema, how: str) -> Verdict:
    """The verdict for argv judged against schema; how says why this schema (installed, recipe's framework)."""
    findings, opaque, count = judge(argv, schema)
    which = f"{schema.framework} {schema.version} (schema {schema.name}, {how})"
    notes = [f"not judged (options of a package outside the schema): {', '.join(opaque)}"] if opaque else []
    if not findings:
        return Verdict(status=Status.PASS, failure_id="framework-arg-rejected", details="\n".join(notes),
                       summary=f"{count} option(s) all accepted by {which}")
    unjudged = [f for f in findings if f.problem == "custom"]
    blocking = [f for f in findings if f.problem not in OVERRIDES and f.problem != "custom"]
    overrides = [f for f in findings if f.problem in OVERRIDES]
    notes = [f.text for f in unjudged] + notes
    if not blocking and unjudged:
        return Verdict(status=Status.WARN, failure_id="framework-arg-rejected",
                       details="\n".join([f.text for f in overrides] + notes),
                       summary=f"{count} option(s) read by {which}; {len(unjudged)} not judged (a custom generate "
                               f"function may add them): {', '.join(f.flag for f in unjudged[:4])}")
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
