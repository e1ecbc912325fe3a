"""What counts as a secret, the one rule rlcheck has: secret names by family, token values by shape, and the values
this process was handed as secrets; `scrub` hides all three in anything rlcheck writes.

Values are compared raw, string by string, never after JSON encoding (which escapes a token holding
a quote, a backslash or non-ASCII, so the escaped text no longer contains it). Every pattern here is linear on
hostile input: each starts only where its run of characters starts, and no quantifier nests.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

REDACTED = "<redacted>"
"""What rlcheck writes in place of a secret; by shape it is `<redacted:hf-token>`."""
MIN_SECRET_CHARS = 8
"""Shorter values ('1', 'true') would be found everywhere; they are too short to look for as text."""

# Words that name a secret wherever they stand, unless the name ends in a word for where it is kept (below).
_STRONG_ENDINGS = ("SECRET", "SECRETS", "PASSWORD", "PASSWORDS", "PASSWD", "PASSPHRASE", "CREDENTIAL", "CREDENTIALS")
_STRONG_WORDS = frozenset({"APIKEY", "APIKEYS", "ACCESSKEY", "SECRETKEY", "PRIVATEKEY", "AUTHKEY", "MASTERKEY",
                           "ACCESSTOKEN", "AUTHTOKEN", "APITOKEN", "BEARERTOKEN", "REFRESHTOKEN"})
# A last word that says the name points at the secret (a file, a path, a Kubernetes secret's name), not holds it.
_POINTER_WORDS = frozenset({"FILE", "FILES", "PATH", "PATHS", "DIR", "NAME", "NAMES", "REF", "MOUNT", "ARN", "ID",
                            "ENV", "VAR", "LEN", "LENGTH", "TYPE", "POLICY", "FORMAT", "PROVIDER", "STORE"})
_POINTER_NAMES = frozenset({"GOOGLE_APPLICATION_CREDENTIALS"})  # by convention a path to a key file
# Words that may follow the secret word: HF_TOKEN_RO, WANDB_API_KEY_PROD, GH_PAT_2.
_QUALIFIERS = frozenset({"RO", "RW", "READ", "WRITE", "READONLY", "PROD", "PRODUCTION", "DEV", "STAGING", "STG",
                         "TEST", "CI", "LOCAL", "REMOTE", "PRIMARY", "SECONDARY", "BACKUP", "OLD", "NEW", "ORG",
                         "USER", "ADMIN", "BOT", "VALUE", "RAW", "B64", "BASE64"})
# TOKEN after these is a piece of text or a count, not a credential: --fim-pad-token, --bucket-time-to-first-token.
_TEXT_TOKEN_WORDS = frozenset({"EOD", "EOS", "BOS", "PAD", "UNK", "SEP", "CLS", "MASK", "FIM", "PREFIX", "SUFFIX",
                               "MIDDLE", "SPECIAL", "STOP", "IMAGE", "VIDEO", "AUDIO", "THINK", "NEWLINE", "FIRST",
                               "LAST", "NEXT", "PER", "MAX", "MIN", "NUM", "TOTAL"})
# A flag's KEY is a dict key (SLIME's --input-key, --label-key, --reward-key) unless one of these says whose key.
_KEY_SENSE = frozenset({"API", "ACCESS", "SECRET", "PRIVATE", "AUTH", "SIGNING", "ENCRYPTION", "CLIENT", "LICENSE",
                        "MASTER", "SERVICE", "ACCOUNT", "SESSION", "SSH", "WANDB", "OPENAI", "ANTHROPIC", "HF",
                        "HUGGINGFACE", "GEMINI", "GOOGLE", "AZURE", "AWS", "GCP", "MISTRAL", "COHERE", "GROQ",
                        "DEEPSEEK", "TOGETHER", "FIREWORKS", "OPENROUTER", "DASHSCOPE", "XAI", "COMET", "NEPTUNE",
                        "SWANLAB", "NGC", "STRIPE"})
# An env var's *_KEY is a credential unless one of these says it keys data (CACHE_KEY, REWARD_KEY, KEY_PREFIX).
_KEY_DATA = frozenset({"INPUT", "LABEL", "METADATA", "REWARD", "TOOL", "PROMPT", "RESPONSE", "ANSWER", "SORT",
                       "CACHE", "PRIMARY", "PARTITION", "FIELD", "COLUMN", "DATA", "QUERY", "HASH", "GROUP", "DICT",
                       "MAP", "LOOKUP", "ROUTING", "SHARD", "TEACHER", "CHECKER", "IMAGE", "SAMPLE", "MESSAGES"})


def _words(name: str) -> tuple[list[str], bool]:
    """The upper-case words of a name (its last dotted part; dashes read as underscores), and whether it is a flag."""
    flag = name.startswith("-")
    last = name.rpartition(".")[2]  # a flag's leading dashes read as underscores: empty words, left out
    return [w for w in last.upper().replace("-", "_").split("_") if w], flag


def _qualifier(word: str) -> bool:
    return word in _QUALIFIERS or word.isdigit() or (word[0] == "V" and word[1:].isdigit())


def _weak_head(words: list[str], i: int, flag: bool, text_before: bool, data_before: bool) -> bool:
    """TOKEN, KEY(S), PASS, PAT or PWD at i names a secret (given what the words before it say)."""
    word = words[i]
    if word == "TOKEN":
        return not text_before
    if word in ("KEY", "KEYS"):
        return i > 0 and (words[i - 1] in _KEY_SENSE if flag else not data_before)
    return word in ("PASS", "PAT") or (word == "PWD" and i > 0)


def is_secret_name(name: str) -> bool:
    """An env var, flag (--wandb-key) or config key (trainer.api_key) whose value is a secret. Linear in the name."""
    words, flag = _words(name)
    if not words or "_".join(words) in _POINTER_NAMES:
        return False
    qualified_after = [True] * len(words)  # every word after i may follow a secret word (HF_TOKEN_RO)
    for i in range(len(words) - 2, -1, -1):
        qualified_after[i] = qualified_after[i + 1] and _qualifier(words[i + 1])
    text_before = data_before = False
    for i, word in enumerate(words):
        if word in _STRONG_WORDS or word.endswith(_STRONG_ENDINGS):
            if words[-1] not in _POINTER_WORDS:
                return True
        elif qualified_after[i] and _weak_head(words, i, flag, text_before, data_before):
            return True
        text_before, data_before = text_before or word in _TEXT_TOKEN_WORDS, data_before or word in _KEY_DATA
    return False


# Token formats, each anchored where its run of characters starts (so a 1 MB token is scanned once).
SHAPES: dict[str, re.Pattern[str]] = {
    "hf-token": re.compile(r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{30,}"),
    "github-token": re.compile(r"(?<![A-Za-z0-9])gh[pousr]_[A-Za-z0-9]{30,}|(?<![A-Za-z0-9_])github_pat_\w{30,}"),
    "anthropic-key": re.compile(r"(?<![\w-])sk-ant-[\w-]{20,}"),
    "openai-key": re.compile(r"(?<![\w-])sk-(?:proj|svcacct|admin)-[\w-]{20,}|(?<![\w-])sk-[A-Za-z0-9]{32,}"),
    "aws-access-key": re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])"),
    "jwt": re.compile(r"(?<![\w-])eyJ[\w-]{5,}\.eyJ[\w-]{5,}\.[\w-]{10,}"),
    "slack-token": re.compile(r"(?<![A-Za-z0-9-])xox[baprs]-[A-Za-z0-9-]{10,}"),
    "gitlab-token": re.compile(r"(?<![\w-])glpat-[\w-]{20,}"),
    "google-api-key": re.compile(r"(?<![\w-])AIza[\w-]{35}"),
    "private-key": re.compile(r"-----BEGIN [A-Z ]{0,20}PRIVATE KEY-----"),
}
# A literal each shape holds: a text without it is not searched by that pattern (most text has none).
_SHAPE_LITERALS = {"hf-token": ("hf_",), "github-token": ("gh", "github_pat_"), "anthropic-key": ("sk-ant-",),
                   "openai-key": ("sk-",), "aws-access-key": ("AKIA", "ASIA"), "jwt": ("eyJ",), "slack-token": ("xox",),
                   "gitlab-token": ("glpat-",), "google-api-key": ("AIza",), "private-key": ("PRIVATE KEY",)}
_ANY_LITERAL = re.compile("|".join(re.escape(lit) for lits in _SHAPE_LITERALS.values() for lit in lits) + "|://")
# scheme://user:password@host: the password (group 1) is the secret; user@host and host:port are not.
URL_CREDENTIALS = re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@]*:([^\s/@]+)@")
_LITERALS = frozenset({"", "true", "false", "none", "null", "yes", "no"})


def is_reference(value: str) -> bool:
    """A value that only names where the secret comes from (${HF_TOKEN}, $X, <redacted>, {{ secrets.X }}, ***), a
    number, a boolean or nothing: not itself a secret."""
    text = value.strip().strip("\"'")
    return (text.lower() in _LITERALS or text.startswith(("$", "<", "{{", "%(")) or set(text) <= set("*")
            or text.replace(".", "").isdigit())


def _url_password(value: str) -> re.Match[str] | None:
    return next((m for m in URL_CREDENTIALS.finditer(value) if not is_reference(m.group(1))), None)


def secret_shape(value: str) -> str | None:
    """The token format a value holds (hf-token, github-token, openai-key, jwt, url-credentials, ...), or None."""
    if not _ANY_LITERAL.search(value):
        return None
    kind = next((kind for kind, pattern in SHAPES.items() if _may_hold(value, kind) and pattern.search(value)), None)
    return kind or ("url-credentials" if "://" in value and _url_password(value) else None)


def _may_hold(text: str, kind: str) -> bool:
    return any(literal in text for literal in _SHAPE_LITERALS[kind])


_KNOWN: set[str] = set()


def remember(values: Iterable[str]) -> None:
    """Values this process was handed as secrets (--job-env HF_TOKEN=...): every scrub hides them from now on, under
    whatever name they reappear."""
    _KNOWN.update(v for v in values if len(v) >= MIN_SECRET_CHARS and not is_reference(v))


def known_values(environ: Mapping[str, str]) -> list[str]:
    """What scrub looks for as text, longest first: remembered values and this process's secret variables."""
    return sorted({*_KNOWN, *secret_values(environ).values()}, key=len, reverse=True)


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


_WORD = re.compile(r"\S+")
_STEMS = re.compile(r"TOKEN|KEY|SECRET|PASS|PAT|PWD|CREDENTIAL", re.IGNORECASE)  # in every secret name
_NAME_AT = re.compile(r"[\"'(\[{]*(-{0,2}[A-Za-z_][\w.-]*)")
_OPENERS, _CLOSERS = "\"'([{", "\"',;.)]}"


def hide(value: str) -> str:
    """value with its core (quotes and closing punctuation kept) replaced by REDACTED; a reference stays."""
    core = value.lstrip(_OPENERS).rstrip(_CLOSERS)
    if not core or is_reference(core):
        return value
    start = value.index(core)
    return value[:start] + REDACTED + value[start + len(core):]


def _scrub_names(text: str) -> str:
    """NAME=value, --flag value, NAME: value and "NAME": "value" with a secret name: the value hidden."""
    if not _STEMS.search(text):
        return text
    out: list[str] = []
    pos, pending = 0, False  # pending: the word before named a secret whose value is this word
    for match in _WORD.finditer(text):
        word = match.group()
        if pending and not word.startswith("-"):
            out += [text[pos:match.start()], hide(word)]
            pos, pending = match.end(), False
            continue
        head = _NAME_AT.match(word)
        pending = False
        if head is None or not _STEMS.search(head.group(1)) or not is_secret_name(head.group(1)):
            continue
        rest = word[head.end():]
        if rest.startswith("="):
            out += [text[pos:match.start()], word[:head.end() + 1], hide(rest[1:])]
            pos = match.end()
        elif rest in (":", "\":", "':") or (not rest and head.group(1).startswith("--")):
            pending = True
    return "".join([*out, text[pos:]])


def _scrub_shapes(text: str) -> str:
    if not _ANY_LITERAL.search(text):
        return text
    for kind, pattern in SHAPES.items():
        if _may_hold(text, kind):
            text = pattern.sub(f"<redacted:{kind}>", text)
    if "://" not in text:
        return text

    def password(m: re.Match[str]) -> str:
        if is_reference(m.group(1)):
            return m.group()
        return m.group()[:m.start(1) - m.start()] + REDACTED + "@"
    return URL_CREDENTIALS.sub(password, text)


def scrub_text(text: str, known: Iterable[str] | None = None) -> str:
    """text with every secret hidden: known values (default: remembered ones and this process's secret variables),
    token shapes, then values under secret names."""
    for value in known_values(os.environ) if known is None else known:
        text = text.replace(value, REDACTED)
    return _scrub_names(_scrub_shapes(text))


def scrub(doc: Any, known: Iterable[str] | None = None) -> Any:
    """A JSON-like document with every secret hidden: each string as scrub_text does, and the string value of a
    secret-named key ({"HF_TOKEN": "..."}) whole. Tuples come back as lists."""
    values = known_values(os.environ) if known is None else list(known)
    if isinstance(doc, str):
        return scrub_text(doc, values)
    if isinstance(doc, Mapping):
        return {k: (REDACTED if isinstance(k, str) and isinstance(v, str) and is_secret_name(k) and v
                    and not is_reference(v) else scrub(v, values)) for k, v in doc.items()}
    if isinstance(doc, (list, tuple)):
        return [scrub(item, values) for item in doc]
    return doc
