"""What counts as a secret in what rlcheck sends to Ray: secret-like names, and this process's secret values.

Values are compared raw, string by string, never after JSON encoding (which escapes a token holding
a quote, a backslash or non-ASCII, so the escaped text no longer contains it).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

# A word (between _ or -) that ends in TOKEN, SECRET or PASS/PASSWORD/PASSWD/PASSPHRASE, the word PAT
# (a personal access token), or a name ending in KEY: GH_PAT, DB_PASS, OPENAI_KEY, HF_TOKEN, CLIENT_SECRET.
# PAT and TOKEN are matched as words, so PATH, PYTHONPATH and TOKENIZERS_PARALLELISM are not secrets.
SECRET_NAME = re.compile(
    r"(?:^|[_-])(?:[A-Z0-9]*(?:TOKENS?|SECRETS?|PASS|PASSWORDS?|PASSWD|PASSPHRASE)|PAT|CREDENTIALS?)(?:$|[_-])"
    r"|(?:^|[_-])(?:API|ACCESS|PRIVATE|SECRET)?KEYS?$",
    re.IGNORECASE,
)
MIN_SECRET_CHARS = 8
"""Shorter values ('1', 'true') would be found everywhere; they are too short to be a credential."""


def is_secret_name(name: str) -> bool:
    return SECRET_NAME.search(name) is not None


def strings_in(value: Any) -> Iterator[str]:
    """Every string in a JSON-like value: dict keys and values, list items, nested to any depth."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from strings_in(key)
            yield from strings_in(item)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            yield from strings_in(item)


def secret_values(environ: Mapping[str, str]) -> dict[str, str]:
    """This process's secret variables worth looking for: name -> value."""
    return {k: v for k, v in environ.items() if is_secret_name(k) and len(v) >= MIN_SECRET_CHARS}


def leaked_names(sent: Any, environ: Mapping[str, str]) -> list[str]:
    """Names of the secret variables whose raw value appears inside any string of what is sent."""
    secrets = secret_values(environ)
    if not secrets:
        return []
    texts = list(strings_in(sent))
    return sorted(name for name, value in secrets.items() if any(value in text for text in texts))
