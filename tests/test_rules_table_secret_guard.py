"""What counts as a secret and what scrub hides, as a rule table (rlcheck/secret_guard.py): a name's words, the
qualifiers that may follow a secret word, each weak word on both sides of what the words before it say, values
that only name a secret, every token shape and its near miss, the length bound on both sides, and the scrub of
NAME=value, --flag value, NAME: value, "NAME": "value", URLs and documents, each as the whole text written. Token
values are built at run time (no secret-shaped literal is committed)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rlcheck import secret_guard as sg

HF = "hf_" + "Ab1" * 12
GH = "ghp_" + "x1Y" * 12
PAT = "github_pat_" + "11AB" + "_c9D" * 15
OPENAI = "sk-" + "T3Blbk" * 8
PROJ = "sk-proj-" + "aB3_-" * 10
ANT = "sk-ant-api03-" + "Zx9-" * 20
AWS = "AKIA" + "ABCDEFGH23456789"
JWT = "eyJ" + "hbGciOiJIUzI1NiJ9" + ".eyJ" + "zdWIiOiIxMjM0In0" + "." + "s1G" * 8
SLACK = "xoxb-" + "1234567890-" + "aZ" * 12
GITLAB = "glpat-" + "x7Y" * 7
GOOGLE = "AIza" + "S9x" * 11 + "Q0"
PEM = "-----BEGIN " + "RSA PRIVATE KEY-----"
PW = "Pw" + "9x" * 6


@pytest.fixture(autouse=True)
def no_remembered_values() -> Iterator[None]:
    """Each row starts with nothing remembered, and leaves what other tests remembered as it was."""
    kept = set(sg._KNOWN)
    sg._KNOWN.clear()
    yield
    sg._KNOWN.clear()
    sg._KNOWN.update(kept)


@pytest.mark.parametrize(("name", "words", "flag"), [
    ("--wandb-key", ["WANDB", "KEY"], True), ("-k", ["K"], True), ("trainer.logger.api_key", ["API", "KEY"], False),
    ("--cfg.hf-token", ["HF", "TOKEN"], True), ("__HF__TOKEN_", ["HF", "TOKEN"], False), ("a.b.", [], False),
    ("", [], False), ("x-y_z", ["X", "Y", "Z"], False),
])
def test_rules_table_secret_guard_words(name, words, flag):
    assert sg._words(name) == (words, flag)


@pytest.mark.parametrize(("word", "qualifier"), [
    ("RO", True), ("BASE64", True), ("2", True), ("10", True), ("V2", True), ("V10", True), ("V", False),
    ("VX", False), ("X2", False), ("RO2", False), ("2A", False),
])
def test_rules_table_secret_guard_qualifier(word, qualifier):
    assert sg._qualifier(word) is qualifier


@pytest.mark.parametrize(("words", "i", "flag", "text_before", "data_before", "secret"), [
    (["TOKEN"], 0, False, False, False, True), (["PAD", "TOKEN"], 1, False, True, False, False),
    (["X", "TOKEN"], 1, True, False, True, True),  # data words do not judge TOKEN
    (["KEY"], 0, False, False, False, False), (["KEYS"], 0, True, False, False, False),
    (["RM", "KEY"], 1, False, False, False, True), (["RM", "KEYS"], 1, False, False, False, True),
    (["RM", "KEY"], 1, False, False, True, False),
    (["RM", "KEY"], 1, True, False, False, False), (["API", "KEY"], 1, True, False, False, True),
    (["API", "KEYS"], 1, True, False, True, True), (["KEY", "API"], 1, True, False, False, False),
    (["PASS"], 0, False, False, False, True), (["PAT"], 0, True, True, True, True),
    (["PWD"], 0, False, False, False, False), (["DB", "PWD"], 1, False, False, False, True),
    (["PASSWORD"], 0, False, False, False, False), (["PASSES"], 0, False, False, False, False),
])
def test_rules_table_secret_guard_weak_head(words, i, flag, text_before, data_before, secret):
    assert sg._weak_head(words, i, flag, text_before, data_before) is secret


@pytest.mark.parametrize(("name", "secret"), [
    ("HF_TOKEN", True), ("HF_TOKEN_V2", True), ("HF_TOKEN_2_RO", True), ("HF_TOKEN_V", False),
    ("HF_TOKEN_RO_X", False),  # every word after the secret word must be a qualifier, not only the next
    ("HF_TOKEN_X", False), ("HF_TOKEN_X_RO", False), ("TOKEN_X", False), ("TOKEN_RO", True), ("TOKEN_PAD", False),
    ("MY_SECRET", True), ("MYSECRET", True), ("SECRET", True), ("SECRETS_DIR", False), ("MY_SECRET_FILE", False),
    ("DB_PASSWORD_FILE_2", True),  # the last word decides: 2 is no pointer
    ("PASSWORD_ID", False), ("APIKEY_FILE", False), ("APIKEY_PROD", True), ("API_KEY_FILE", False),
    ("KEY", False), ("X_KEY", True), ("CACHE_KEY", False), ("CACHE_X_KEY", False), ("PAD_X_TOKEN", False),
    ("X_PAD_TOKEN", False), ("--api-keys", True), ("--rm-key", False), ("--wandb-key", True),
    ("GOOGLE_APPLICATION_CREDENTIALS", False), ("google-application-credentials", False),
    ("GOOGLE_APPLICATION_CREDENTIALS_2", True), ("", False), ("---", False), ("DB_PWD", True), ("PWD", False),
])
def test_rules_table_secret_guard_names(name, secret):
    assert sg.is_secret_name(name) is secret


@pytest.mark.parametrize(("value", "reference"), [
    ("", True), ("  ", True), ("true", True), ("TRUE", True), ("'null'", True), ('"no"', True), ("None", True),
    ("$X", True), ("${X}", True), ('"${X}"', True), ("<redacted>", True), ("{{ secrets.X }}", True),
    ("%(x)s", True), ("***", True), ("*", True), ("1.5", True), ("12", True), ("1.2.3", True),
    ("abc", False), ("X", False), ("x$", False), ("{x}", False), ("%x", False), ("1e5", False), ("-1", False),
    ("hunter22", False), (".", False), ("**a", False),
])
def test_rules_table_secret_guard_reference(value, reference):
    assert sg.is_reference(value) is reference


URL = "postgres://rl:" + PW + "@db.internal:5432/rl"


@pytest.mark.parametrize(("value", "kind"), [
    (HF, "hf-token"), (GH, "github-token"), (PAT, "github-token"), (OPENAI, "openai-key"), (PROJ, "openai-key"),
    (ANT, "anthropic-key"), (AWS, "aws-access-key"), (JWT, "jwt"), (SLACK, "slack-token"), (GITLAB, "gitlab-token"),
    (GOOGLE, "google-api-key"), (PEM, "private-key"), (URL, "url-credentials"), ("x " + URL, "url-credentials"),
    (f"{URL} {HF}", "hf-token"),  # a shape before the URL's password
    ("postgres://rl:${DB_PASS}@db/rl " + "redis://:" + PW + "@cache", "url-credentials"),  # the second URL's
    ("postgres://rl:${DB_PASS}@db/rl", None), ("http://127.0.0.1:8265", None), ("postgres://rl@db/rl", None),
    ("hf_" + "A" * 29, None), ("gh", None), ("no literal at all", None), ("", None),
])
def test_rules_table_secret_guard_shape(value, kind):
    assert sg.secret_shape(value) == kind


@pytest.mark.parametrize(("value", "hidden"), [
    ("abc123", "<redacted>"), ('"abc123",', '"<redacted>",'), ("(abc123)", "(<redacted>)"), ("abc.", "<redacted>."),
    ("[{abc}];", "[{<redacted>}];"), ("a(a", "<redacted>"), ("'${X}'", "'${X}'"), ('""', '""'), ("", ""),
    ("8192", "8192"), ('"abc"x', '"<redacted>'),
])
def test_rules_table_secret_guard_hide(value, hidden):
    assert sg.hide(value) == hidden


@pytest.mark.parametrize(("text", "scrubbed"), [
    ("no names here", "no names here"),
    ("HF_TOKEN=abc123 python", "HF_TOKEN=<redacted> python"),
    ("A_TOKEN=1x2y3z B_TOKEN=4a5b6c end", "A_TOKEN=<redacted> B_TOKEN=<redacted> end"),
    ("--hf-token abc123 --seed 1", "--hf-token <redacted> --seed 1"),
    ("--api-key\n\tsecretvalue more", "--api-key\n\t<redacted> more"),
    ("--hf-token --seed 1", "--hf-token --seed 1"), ("--api-key", "--api-key"),
    ("DB_PASSWORD: hunter22", "DB_PASSWORD: <redacted>"),
    ('{"DB_PASSWORD": "hunter22", "N": 1}', '{"DB_PASSWORD": "<redacted>", "N": 1}'),
    ("{'DB_PASSWORD': 'hunter22'}", "{'DB_PASSWORD': '<redacted>'}"),
    ("HF_TOKEN abc123", "HF_TOKEN abc123"), ("-hf-token abc123", "-hf-token abc123"),
    ("HF_TOKEN: $HF_TOKEN", "HF_TOKEN: $HF_TOKEN"), ("HF_TOKEN=", "HF_TOKEN="),
    ("MAX_TOKENS=8192 --tokenizer-type HuggingFaceTokenizer", "MAX_TOKENS=8192 --tokenizer-type HuggingFaceTokenizer"),
    ("x=HF_TOKEN=abc123", "x=HF_TOKEN=abc123"), ("(HF_TOKEN=abc123)", "(HF_TOKEN=<redacted>)"),
    ("DB_PASSWORD:: hunter22", "DB_PASSWORD:: hunter22"),
    ("python HF_TOKEN=abc123", "python HF_TOKEN=<redacted>"), ('HF_TOKEN="abc123"', 'HF_TOKEN="<redacted>"'),
    ("HF_TOKEN=a", "HF_TOKEN=<redacted>"),
    ("HF_TOKEN=abc123 --api-key xyz789 end", "HF_TOKEN=<redacted> --api-key <redacted> end"),
    ("--api-key xyz789 HF_TOKEN=abc123", "--api-key <redacted> HF_TOKEN=<redacted>"),
])
def test_rules_table_secret_guard_scrub_names(text, scrubbed):
    assert sg.scrub_text(text, known=()) == scrubbed


@pytest.mark.parametrize(("text", "scrubbed"), [
    (f"a {HF} b", "a <redacted:hf-token> b"), (f"{GH}/{AWS}", "<redacted:github-token>/<redacted:aws-access-key>"),
    (f"k={PEM}", "k=<redacted:private-key>"),
    (f"{SLACK} {GITLAB} {GOOGLE}", "<redacted:slack-token> <redacted:gitlab-token> <redacted:google-api-key>"),
    (f"{OPENAI}, {ANT}, {JWT}", "<redacted:openai-key>, <redacted:anthropic-key>, <redacted:jwt>"),
    (f"db {URL}", "db postgres://rl:<redacted>@db.internal:5432/rl"),
    (f"{URL} and redis://:{PW}x@cache", "postgres://rl:<redacted>@db.internal:5432/rl and redis://:<redacted>@cache"),
    ("postgres://rl:${DB_PASS}@db/rl", "postgres://rl:${DB_PASS}@db/rl"), ("http://127.0.0.1:8265", "http://127.0.0.1:8265"),
])
def test_rules_table_secret_guard_scrub_shapes(text, scrubbed):
    assert sg.scrub_text(text, known=()) == scrubbed


def test_rules_table_secret_guard_scrub_text_known_values_first():
    assert sg.scrub_text("a longSecretValue b longSecret", ["longSecretValue", "longSecret"]) == \
        "a <redacted> b <redacted>"
    assert sg.scrub_text("HF_TOKEN=longSecretValue", ["longSecretValue"]) == "HF_TOKEN=<redacted>"


def test_rules_table_secret_guard_scrub_reads_this_process_by_default(monkeypatch):
    monkeypatch.setenv("RULES_TABLE_API_KEY", "envSecret0001")
    sg.remember(["rememberedSecret01"])
    assert sg.scrub_text("x envSecret0001 rememberedSecret01") == "x <redacted> <redacted>"
    assert sg.scrub({"a": ["envSecret0001"], "b": "rememberedSecret01"}) == {"a": ["<redacted>"], "b": "<redacted>"}
    assert sg.scrub_text("x envSecret0001", known=()) == "x envSecret0001"
    assert sg.scrub("x envSecret0001", known=[]) == "x envSecret0001"


@pytest.mark.parametrize(("doc", "scrubbed"), [
    ("HF_TOKEN=abc123", "HF_TOKEN=<redacted>"),
    ({"HF_TOKEN": "abc", "EMPTY_TOKEN": "", "REF_TOKEN": "${X}", "N": 3, "PATH": "/usr/bin"},
     {"HF_TOKEN": "<redacted>", "EMPTY_TOKEN": "", "REF_TOKEN": "${X}", "N": 3, "PATH": "/usr/bin"}),
    ({"API_KEYS": ["--api-key", "k1k1k1"], 7: "knownValue01", "x": (1, None, "knownValue01")},
     {"API_KEYS": ["--api-key", "k1k1k1"], 7: "<redacted>", "x": [1, None, "<redacted>"]}),  # strings apart
    ({"nested": {"DB_PASSWORD": "hunter22", "note": "DB_PASSWORD=hunter22"}},
     {"nested": {"DB_PASSWORD": "<redacted>", "note": "DB_PASSWORD=<redacted>"}}),
    (("a", ["knownValue01"]), ["a", ["<redacted>"]]), (3.5, 3.5), (None, None), ({1, 2}, {1, 2}),
])
def test_rules_table_secret_guard_scrub_document(doc, scrubbed):
    assert sg.scrub(doc, known=["knownValue01"]) == scrubbed


@pytest.mark.parametrize(("value", "strings"), [
    ("a", ["a"]), ({"k": "v", 1: ["x", ("y", {"z"})], "n": None}, ["k", "v", "x", "y", "z", "n"]),
    (frozenset({"f"}), ["f"]), (3, []), (b"bytes", []),
])
def test_rules_table_secret_guard_strings_in(value, strings):
    assert list(sg.strings_in(value)) == strings


ENV = {"HF_TOKEN": "12345678", "SHORT_TOKEN": "1234567", "WANDB_API_KEY": "abcdefghijkl", "PATH": "/usr/local/bin"}


def test_rules_table_secret_guard_values_known_and_leaked():
    assert sg.secret_values(ENV) == {"HF_TOKEN": "12345678", "WANDB_API_KEY": "abcdefghijkl"}  # 8 chars on
    assert sg.known_values(ENV) == ["abcdefghijkl", "12345678"]  # longest first
    sg.remember(["rememberedValue1", "short", "${HF_TOKEN}", "12345678"])
    assert sg.known_values(ENV) == ["rememberedValue1", "abcdefghijkl", "12345678"]
    assert sg.known_values({}) == ["rememberedValue1"]  # too short, a reference, a number: never remembered
    sg.remember(["abcdefgh", "abcdefg"])  # 8 characters on
    assert sg.known_values({}) == ["rememberedValue1", "abcdefgh"]
    assert sg.known_values({"A_TOKEN": "zzzzzzzzz", "B_TOKEN": "aaaaaaaaaaaa"}) == ["rememberedValue1", "aaaaaaaaaaaa",
                                                                                    "zzzzzzzzz", "abcdefgh"]
    assert sg.leaked_names({"argv": ["--x", "pre-12345678"], "k": {"abcdefghijkl": 1}}, ENV) == ["HF_TOKEN",
                                                                                                  "WANDB_API_KEY"]
    assert sg.leaked_names(["abcdefghijk", "/usr/local/bin"], ENV) == []
    assert sg.leaked_names(["12345678"], {"PATH": "12345678"}) == []
