"""Secrets inlined into a launch: a token in the trainer's argv or the runtime env's env_vars.

Ray records both in plain text (the job's entrypoint and runtime env are shown by `ray job list`, the dashboard
and the job's metadata), so a value placed there is published to everyone who can read the cluster. Found by
the name that holds it and by the shape of well-known token formats; the value itself is never printed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from rlcheck.verdict import Status, Verdict

# Names that hold a secret: the last word (between underscores, dashes read as underscores) is TOKEN, SECRET,
# PASS(WORD), PAT or CREDENTIALS, or it ends in an API/access/secret/private/auth key. Whole words at the end, so
# TOKENIZERS_PARALLELISM, PYTHONPATH, --moe-token-dispatcher-type, --max-tokens-per-gpu and SLIME's dict-key
# flags (--input-key, --label-key, --reward-key) are not secrets; HF_TOKEN, GITHUB_PAT, WANDB_API_KEY are, and so is
# SLIME's and Miles' --wandb-key (Miles' launch helper get_default_wandb_args writes WANDB_API_KEY's value after it).
SECRET_NAME = re.compile(r"(^|_)(TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|PASS|PAT|CREDENTIALS?)$"
                         r"|(^|_)(API|ACCESS|SECRET|PRIVATE|AUTH|WANDB)_?KEY$|(^|_)SECRET_", re.IGNORECASE)
# Well-known token shapes: Hugging Face, GitHub (classic and fine-grained), AWS access key ids.
SECRET_VALUE = {
    "hf-token": re.compile(r"\bhf_[A-Za-z0-9]{30,}"),
    "github-token": re.compile(r"\b(gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"),
    "aws-access-key": re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"),
}
REDACTED = "<redacted>"
"""What rlcheck writes in place of a secret. The marker is no value: what it hid is recorded beside it when the Job is
written (Job.inline_secrets), and the finder judges that record, never the marker."""
# A value that only names where the secret comes from is not the secret.
_REFERENCE = re.compile(r"^(\$\{?\w+\}?|<[^>]*>|\*+|[0-9.]+|true|false)?$", re.IGNORECASE)
REMEDY = ("Keep the value out of the launch: put it in a Kubernetes secret or the workers' own environment and "
          "list only its name; then rotate it, since Ray has already recorded it in the job's metadata")


def secret_name(name: str) -> bool:
    """An env var or flag name (dashes read as underscores) that names a secret."""
    return bool(SECRET_NAME.search(name.lstrip("-").replace("-", "_")))


def value_shape(value: str) -> str | None:
    """The token format a value looks like (hf-token, github-token, aws-access-key), or None."""
    return next((kind for kind, pattern in SECRET_VALUE.items() if pattern.search(value)), None)


def _inlined(value: str) -> bool:
    """A value, not a reference, a placeholder, an empty string or rlcheck's own marker."""
    return not _REFERENCE.match(value.strip())


def is_marker(value: str) -> bool:
    """rlcheck's redaction marker, alone or after `--flag=` (<redacted>, <redacted:hf-token>)."""
    return value.partition("=")[2 if value.startswith("--") else 0].startswith(REDACTED[:-1])


def redacted_places(argv: Sequence[str], env: Mapping[str, str]) -> list[str]:
    """Where a Job written before rlcheck recorded its findings holds the marker (the secret it hid was found then)."""
    return ([f"env {name} (redacted by rlcheck job capture)" for name, value in env.items() if is_marker(value)]
            + [f"argv token {i} (redacted by rlcheck job capture)" for i, t in enumerate(argv) if is_marker(t)])


def find_inline_secrets(argv: Sequence[str], env: Mapping[str, str]) -> list[str]:
    """Where secrets sit, as 'env NAME (by name)' / 'argv token 7 (hf-token shape)': never the value."""
    found: list[str] = []
    for name, value in env.items():
        shape = value_shape(value)
        if secret_name(name) and _inlined(value):
            found.append(f"env {name} (by name)")
        elif shape:
            found.append(f"env {name} ({shape} shape)")
    for i, token in enumerate(argv):
        flag, eq, inline = token.partition("=")
        if eq and flag.startswith("--") and secret_name(flag) and _inlined(inline):
            found.append(f"argv {flag}= (by name)")
        elif i and argv[i - 1].startswith("--") and "=" not in argv[i - 1] and secret_name(argv[i - 1]) \
                and not token.startswith("--") and _inlined(token):
            found.append(f"argv {argv[i - 1]} value (by name)")
        elif shape := value_shape(token):
            found.append(f"argv token {i} ({shape} shape)")
    return found


def evaluate_inline_secrets(argv: Sequence[str], env: Mapping[str, str], recorded: Sequence[str] = ()) -> Verdict:
    """recorded: what the finder found before the Job was written with its secrets redacted."""
    found = list(dict.fromkeys([*recorded, *find_inline_secrets(argv, env)]))
    if not found:
        return Verdict(status=Status.PASS,
                       summary=f"no secret in {len(argv)} argv token(s) or {len(env)} runtime env var(s)")
    return Verdict(status=Status.FAIL, remedy=REMEDY,
                   summary=f"{len(found)} secret value(s) inlined into the launch: {'; '.join(found)}",
                   details="values not shown; Ray keeps argv and runtime env in the job's metadata")


def redact(argv: Sequence[str]) -> list[str]:
    """argv with secret-named flag values and token-shaped values replaced (REDACTED keeps the kind)."""
    out: list[str] = []
    for i, token in enumerate(argv):
        flag, eq, _ = token.partition("=")
        if eq and flag.startswith("--") and secret_name(flag) and token.partition("=")[2]:
            out.append(f"{flag}={REDACTED}")
        elif i and argv[i - 1].startswith("--") and "=" not in argv[i - 1] and secret_name(argv[i - 1]) \
                and not token.startswith("--") and token:  # an empty value is no secret: kept as it is
            out.append(REDACTED)
        elif (shape := value_shape(token)) is not None:
            out.append(f"<redacted:{shape}>")
        else:
            out.append(token)
    return out
