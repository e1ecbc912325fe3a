"""Secrets inlined into a launch: a token in the trainer's argv, a `VAR=value` or `env VAR=value` prefix of the
entrypoint, the runtime env's env_vars, or a value handed over as a secret (--job-env) reused anywhere.

Ray records all of them in plain text (the job's entrypoint and runtime env are shown by `ray job list`, the dashboard
and the job's metadata), so a value placed there is published to everyone who can read the cluster. Found by the name
that holds it and by the shape of well-known token formats (rlcheck.secret_guard, the one rule); the value itself is
never printed: a finding says where (`env HF_TOKEN`, `argv token 7`, `entrypoint prefix HF_TOKEN`) and by which rule.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from typing import NamedTuple, Protocol

from rlcheck.secret_guard import REDACTED, is_reference, scrub_text
from rlcheck.secret_guard import is_secret_name as secret_name
from rlcheck.secret_guard import secret_shape as value_shape
from rlcheck.verdict import Status, Verdict

__all__ = ["REDACTED", "evaluate_inline_secrets", "evaluate_launch", "find_inline_secrets", "known_places",
           "redact", "redact_entrypoint", "redacted_places", "secret_name", "unique_places", "value_shape"]

REMEDY = ("Keep the value out of the launch: put it in a Kubernetes secret or the workers' own environment and "
          "list only its name; then rotate it, since Ray has already recorded it in the job's metadata")
_ASSIGN = re.compile(r"(-{0,2}[A-Za-z_][\w.-]*)=(.*)", re.DOTALL)
_SHELL_VAR = re.compile(r"[A-Za-z_]\w*")
_SEPARATORS = frozenset({"&&", "||", ";", "|", "&", "(", ")", "{", "}", "then", "do", "else"})
_WRAPPERS = frozenset({"env", "export", "exec", "nohup", "time", "command", "nice"})
_ENV_VALUED = frozenset({"-u", "--unset", "-C", "--chdir"})  # `env -u NAME`: NAME is no command


class Hit(NamedTuple):
    name: str
    """The secret name that holds it ('' when found by shape)."""
    rule: str
    """'by name' or '<kind> shape'."""
    value: str


class Launch(Protocol):
    """What the check reads of a captured Job besides its argv and env."""

    @property
    def entrypoint(self) -> str: ...
    @property
    def intended_argv(self) -> tuple[str, ...]: ...
    @property
    def inline_secrets(self) -> tuple[str, ...]: ...


def token_secret(token: str, before: str = "") -> Hit | None:
    """The secret one token carries: NAME=value or --flag=value under a secret name, the value after a secret --flag
    (`before`), or a well-known token shape."""
    assigned = _ASSIGN.fullmatch(token)
    if assigned and secret_name(assigned.group(1)) and not is_reference(assigned.group(2)):
        return Hit(assigned.group(1), "by name", assigned.group(2))
    if (before.startswith("-") and "=" not in before and secret_name(before) and not token.startswith("-")
            and not is_reference(token)):
        return Hit(before, "by name", token)
    shape = value_shape(token)
    return Hit("", f"{shape} shape", token) if shape else None


def _place(where: str, hit: Hit) -> str:
    return f"{where} ({hit.name}, {hit.rule})" if hit.name else f"{where} ({hit.rule})"


_PLAIN = re.compile(r"[^\s'\"\\]+")
_QUOTED_PLAIN = re.compile(r"[^\"\\]+")


def _double_quoted(command: str, i: int) -> tuple[str, int]:
    """The text of the double-quoted string opening at i, and the index after its closing quote."""
    parts: list[str] = []
    i += 1
    while i < len(command) and command[i] != '"':
        if plain := _QUOTED_PLAIN.match(command, i):
            parts.append(plain.group())
            i = plain.end()
        else:  # a backslash: it escapes only " \\ $ ` and newline (a line continuation, removed) inside double quotes
            escaped = command[i + 1:i + 2]
            parts.append("" if escaped == "\n" else escaped if escaped in ('"', "\\", "$", "`") else command[i:i + 2])
            i += 2
    return "".join(parts), i + 1


def _split(command: str) -> list[str]:
    """The words of a command as POSIX sh splits them (quotes removed), in linear time (shlex.split is quadratic on a
    long word); an unbalanced quote runs to the end."""
    words: list[str] = []
    parts: list[str] | None = None
    i = 0
    while i < len(command):
        char = command[i]
        if char.isspace():
            if parts is not None:
                words.append("".join(parts))
            parts, i = None, i + 1
            continue
        if command.startswith("\\\n", i):  # a line continuation: removed, it neither ends nor starts a word
            i += 2
            continue
        parts = [] if parts is None else parts
        if char == "'":
            end = command.find("'", i + 1)
            end = len(command) if end < 0 else end
            parts.append(command[i + 1:end])
            i = end + 1
        elif char == '"':
            text, i = _double_quoted(command, i)
            parts.append(text)
        elif char == "\\":
            parts.append(command[i + 1:i + 2])
            i += 2
        else:
            plain = _PLAIN.match(command, i)
            assert plain is not None  # char is none of space, quote, backslash
            parts.append(plain.group())
            i = plain.end()
    return words if parts is None else [*words, "".join(parts)]


def _command(tokens: Sequence[str], skip: frozenset[str], where: str, depth: int = 0) -> list[tuple[str, Hit]]:
    """(place, hit) in a shell command: `VAR=value` and `env [-i] [-u X] VAR=value` prefixes of each command, then its
    words not in `skip` (the trainer argv, judged as such); a word holding a command (bash -c '...') is read too."""
    found: list[tuple[str, Hit]] = []
    prefix, env_options, skip_next = True, False, False
    for i, token in enumerate(tokens):
        if skip_next:
            skip_next = False
            continue
        assigned = _ASSIGN.fullmatch(token)
        if token in _SEPARATORS:
            prefix, env_options = True, False
        elif prefix and assigned and _SHELL_VAR.fullmatch(assigned.group(1)):
            if hit := token_secret(token):
                found.append((f"{where} prefix {assigned.group(1)}", hit._replace(name="")))
        elif prefix and token in _WRAPPERS:
            env_options = token == "env"
        elif prefix and env_options and token.startswith("-"):
            skip_next = token in _ENV_VALUED
        else:
            prefix = False
            if token in skip:
                continue
            inner = _command(_split(token), skip, f"{where} token {i}:", depth + 1) \
                if depth < 2 and len(token.split(maxsplit=1)) > 1 else []
            if inner:
                found += inner
            elif hit := token_secret(token, tokens[i - 1] if i else ""):
                found.append((f"{where} token {i}", hit))
    return found


def _env(env: Mapping[str, str]) -> list[tuple[str, Hit]]:
    found: list[tuple[str, Hit]] = []
    for name, value in env.items():
        if secret_name(name) and not is_reference(value):
            found.append((f"env {name}", Hit("", "by name", value)))
        elif shape := value_shape(value):
            found.append((f"env {name}", Hit("", f"{shape} shape", value)))
    return found


def find_inline_secrets(argv: Sequence[str], env: Mapping[str, str], entrypoint: str = "",
                        intended: Sequence[str] = ()) -> list[str]:
    """Where secrets sit, as 'env NAME (by name)', 'argv token 7 (--hf-token, by name)', 'argv token 3 (hf-token
    shape)', 'entrypoint prefix HF_TOKEN (by name)': never the value."""
    found = _env(env) + [(f"argv token {i}", hit) for i, token in enumerate(argv)
                         if (hit := token_secret(token, argv[i - 1] if i else ""))]
    command = _split(entrypoint) if entrypoint else list(intended)
    found += _command(command, frozenset(argv), "entrypoint")
    return [_place(where, hit) for where, hit in found]


def known_places(argv: Sequence[str], env: Mapping[str, str], entrypoint: str, known: Mapping[str, str]) -> list[str]:
    """Where a value handed over as a secret (known: --job-env NAME -> value) reappears, under any name."""
    found: list[str] = []
    for name, value in known.items():
        rule = f"the value of --job-env {name}"
        found += [f"env {k} ({rule})" for k, v in env.items() if value in v]
        found += [f"argv token {i} ({rule})" for i, token in enumerate(argv) if value in token]
        if value in entrypoint and not any(value in token for token in argv):
            found.append(f"entrypoint ({rule})")
    return found


def unique_places(found: Sequence[str]) -> list[str]:
    """One finding per place (the first rule that found it)."""
    first: dict[str, str] = {}
    for finding in found:
        first.setdefault(finding.partition(" (")[0], finding)
    return list(first.values())


def evaluate_inline_secrets(argv: Sequence[str], env: Mapping[str, str], recorded: Sequence[str] = (), *,
                            entrypoint: str = "", intended: Sequence[str] = ()) -> Verdict:
    """recorded: what was found before the Job was written with its secrets redacted (and --job-env values reused)."""
    # What the rules see now first (`--wandb-key, by name` says more than `the value of --job-env ...`).
    found = unique_places([*find_inline_secrets(argv, env, entrypoint, intended), *recorded])
    if not found:
        return Verdict(status=Status.PASS, summary=f"no secret in {len(argv)} argv token(s), {len(env)} runtime env "
                                                   f"var(s) or the entrypoint's prefixes")
    return Verdict(status=Status.FAIL, remedy=REMEDY,
                   summary=f"{len(found)} secret value(s) inlined into the launch: {'; '.join(found)}",
                   details="values not shown; Ray keeps the entrypoint, argv and runtime env in the job's metadata")


def evaluate_launch(argv: Sequence[str], env: Mapping[str, str], job: Launch | None) -> Verdict:
    """The check on a launch: a built-in recipe (job None) or a captured Job with its entrypoint and records."""
    if job is None:
        return evaluate_inline_secrets(argv, env)
    return evaluate_inline_secrets(argv, env, job.inline_secrets, entrypoint=job.entrypoint,
                                   intended=job.intended_argv)


def is_marker(value: str) -> bool:
    """rlcheck's redaction marker, alone or after `--flag=` (<redacted>, <redacted:hf-token>)."""
    return value.partition("=")[2 if value.startswith("--") else 0].startswith(REDACTED[:-1])


def redacted_places(argv: Sequence[str], env: Mapping[str, str], entrypoint: str = "") -> list[str]:
    """Where a Job written before rlcheck recorded its findings holds the marker (the secret it hid was found then)."""
    return ([f"env {name} (redacted by rlcheck job capture)" for name, value in env.items() if is_marker(value)]
            + [f"argv token {i} (redacted by rlcheck job capture)" for i, t in enumerate(argv) if is_marker(t)]
            + (["entrypoint (redacted by rlcheck job capture)"] if REDACTED[:-1] in entrypoint else []))


def redact(argv: Sequence[str]) -> list[str]:
    """argv with each secret hidden: a secret-named value by REDACTED, a token shape by <redacted:kind>."""
    out: list[str] = []
    for i, token in enumerate(argv):
        hit = token_secret(token, argv[i - 1] if i else "")
        if hit and hit.rule == "by name":
            out.append(token[:len(token) - len(hit.value)] + REDACTED)
        else:
            out.append(scrub_text(token))
    return out


def redact_entrypoint(entrypoint: str) -> str:
    """The entrypoint as written, each secret value hidden where it stands; re-quoted token by token only when a
    value cannot be found as written (shell escapes inside it)."""
    tokens = _split(entrypoint)
    values = sorted({hit.value for _, hit in _command(tokens, frozenset(), "") if hit.rule == "by name"},
                    key=len, reverse=True)
    out = entrypoint
    for value in values:  # whole words only: a one-letter value must not hide that letter everywhere
        out = re.sub(r"(?:(?<=[\s='\"])|^)" + re.escape(value) + r"(?=[\s'\";&|)]|$)", REDACTED, out)
    if any(hit.rule == "by name" for _, hit in _command(_split(out), frozenset(), "")):
        out = shlex.join(redact(tokens))
    return scrub_text(out)
