"""The known-failure catalogue (data: rlcheck/data/failures/*.toml).

It is the single source for the log scanner, the e2e watcher, the report and the docs.

Every load checks each entry's fields. The costly part of the validation, every signature compiled with every
installed engine and run against its examples and near misses, runs when the catalogue's text (or the code
that validates it, or an engine) changes: once it passed, a record keyed by all of them is kept in the cache
directory (scan_engines.cache_dir) and later loads of the same text skip it. Without a cache directory every
load validates in full; validate_catalog() always does (the tests call it).
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import hashlib
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from rlcheck import data_types, scan_engines

DATA_DIR = Path(__file__).parent / "data" / "failures"
LAYERS = ("image", "recipe", "cluster", "ray", "sglang", "megatron", "slime", "kernel", "reward", "any")
FAMILIES = ("nccl", "cuda", "oom", "abi", "transport", "compiler", "ray", "sglang", "megatron", "conversion",
            "slime", "reward", "image", "recipe", "cluster", "kernel", "uncatalogued")
"""Root-cause families an entry belongs to (`family`, default: its layer where that is a family)."""
ROLES = ("cause", "consequence", "invariant", "fallback")
"""cause: names why a run stopped; consequence: a line that follows a cause (an actor death, a wrapper, a
retry): an incident is named by its first cause; invariant: a routine line (SGLang's retraction) the watcher
notes and judges by its metric invariants, never a reason to stop a run by itself; fallback: the uncatalogued
entry, named only on a line no other entry names."""
FALLBACK_ID = "uncatalogued"
_SITE = re.compile(r"[\w.-]+/[\w.-]+@[0-9a-f]{7,40} [\w./-]+::[\w.:~<>-]+")
SEVERITIES = ("crash", "hang", "silent", "degraded")
_ID = re.compile(r"[a-z0-9][a-z0-9.-]*[a-z0-9]")
_TEST_ID = re.compile(r"(checks|reproducers|kernels|testcases|tests)/[\w/]+\.py::test_\w+")
ENTRY_FIELDS = {
    "id": "str", "layer": "str", "severity": "str", "title": "str", "signatures": "list[str]",
    "examples": "list[str]", "near_misses": "list[str]", "cause": "str", "remedy": "str", "upstream": "list[str]",
    "affected": "list[table]", "reproducer": "str", "only_when": "str", "family": "str", "role": "str",
    "raise_sites": "list[str]",
}
REQUIRED = ("id", "layer", "severity", "title", "signatures", "examples", "near_misses", "cause", "remedy")
AFFECTED_FIELDS = {"package": "str", "specifier": "str"}
TRAITS = {
    "dsa": "the job runs DeepSeek sparse attention (SGLang's nsa backend or a GLM-5 / DeepSeek-V3.2 spec)",
}
"""Job traits an entry may be tied to (`only_when`): a line it shares with a general entry names it only there."""


class CatalogError(ValueError):
    """A catalogue entry is malformed; the message names the file and the entry id."""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Affected:
    package: str
    """Distribution name as pip knows it (e.g. 'uvicorn', 'megatron-core')."""
    specifier: str
    """PEP 440 range where the failure is live, e.g. '>=0.9.dev0,<0.1.11'."""

    def __post_init__(self) -> None:
        if _VALIDATED.get():
            return
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        try:
            SpecifierSet(self.specifier)
        except InvalidSpecifier as exc:
            raise ValueError(f"specifier={self.specifier!r}: a PEP 440 range such as '>=2.0,<3'") from exc

    def contains(self, version: str) -> bool:
        from packaging.specifiers import SpecifierSet
        from packaging.version import InvalidVersion, Version

        try:
            return SpecifierSet(self.specifier).contains(Version(version), prereleases=True)
        except InvalidVersion:
            return False


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class KnownFailure:
    id: str
    """Stable id, used by checks, reproducers, verdicts and the report."""
    layer: str
    severity: str
    """crash (the job dies), hang (waits forever), silent (runs wrong), degraded (runs worse)."""
    title: str
    signatures: tuple[str, ...]
    """Regexes; a log line that matches one of them is this failure."""
    examples: tuple[str, ...]
    """Real log lines each signature set must match."""
    near_misses: tuple[str, ...]
    """Lines that look alike and must not match this entry."""
    cause: str
    remedy: str
    upstream: tuple[str, ...] = ()
    affected: tuple[Affected, ...] = ()
    """Package ranges where the failure is live; empty when it is not tied to a version."""
    reproducer: str = ""
    """Reproducer test id ('' while none exists)."""
    source: str = ""
    """File the entry was loaded from."""
    only_when: str = ""
    """A job trait (TRAITS): on a job known to lack it, the watcher lets the next matching entry name the line
    (a NaN in the grad norm is the sparse-MLA kernel bug only where sparse attention runs). '' = always."""
    family: str = ""
    """Root-cause family (FAMILIES); '' = the layer's own family."""
    role: str = "cause"
    """ROLES: cause, consequence (named only when no cause line is in its incident) or fallback."""
    raise_sites: tuple[str, ...] = ()
    """Where upstream raises or logs the message: 'owner/repo@commit path::function'."""

    def __post_init__(self) -> None:
        if not _ID.fullmatch(self.id):
            raise ValueError(f"id={self.id!r}: lowercase letters, digits, '.' and '-'")
        if self.layer not in LAYERS:
            raise ValueError(f"layer={self.layer!r}: one of {', '.join(LAYERS)}")
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity={self.severity!r}: one of {', '.join(SEVERITIES)}")
        for field in ("title", "cause", "remedy"):
            if not getattr(self, field).strip():
                raise ValueError(f"{field}='': required")
        if not self.signatures or not self.examples or not self.near_misses:
            raise ValueError("signatures, examples and near_misses: each needs at least one line")
        if self.reproducer and not _TEST_ID.fullmatch(self.reproducer):
            raise ValueError(f"reproducer={self.reproducer!r}: a test id such as "
                             "'reproducers/test_repro_x.py::test_repro_x' (the preflight check that guards an entry "
                             "is the check registry's to say)")
        if self.family and self.family not in FAMILIES:
            raise ValueError(f"family={self.family!r}: one of {', '.join(FAMILIES)} (or leave it out)")
        if self.role not in ROLES:
            raise ValueError(f"role={self.role!r}: one of {', '.join(ROLES)}")
        if (self.role == "fallback") != (self.id == FALLBACK_ID):
            raise ValueError(f"role={self.role!r}: 'fallback' is the {FALLBACK_ID} entry's alone")
        for site in self.raise_sites:
            if not _SITE.fullmatch(site):
                raise ValueError(f"raise_sites entry {site!r}: 'owner/repo@<commit, 7-40 hex> path::function'")
        if self.only_when and self.only_when not in TRAITS:
            raise ValueError(f"only_when={self.only_when!r}: one of {', '.join(TRAITS)} (or leave it out)")
        if not _VALIDATED.get():
            _check_signatures(self.signatures, self.examples, self.near_misses)

    @property
    def family_name(self) -> str:
        """The entry's family: its own, else its layer's."""
        return self.family or (self.layer if self.layer in FAMILIES else "cluster")

    @property
    def patterns(self) -> tuple[re.Pattern[str], ...]:
        return tuple(_compile(s) for s in self.signatures)

    def live_in(self, versions: dict[str, str | None]) -> bool | None:
        """True when every affected package is installed inside its range, False when one is outside,
        None when the entry has no range or a package is not installed."""
        if not self.affected:
            return None
        for a in self.affected:
            installed = versions.get(a.package)
            if installed is None:
                return None
            if not a.contains(installed):
                return False
        return True


@functools.cache
def _compile(signature: str) -> re.Pattern[str]:
    try:
        return re.compile(signature)
    except re.error as exc:
        raise ValueError(f"signature {signature!r} does not compile: {exc}") from exc


def _check_signatures(signatures: tuple[str, ...], examples: tuple[str, ...], near_misses: tuple[str, ...]) -> None:
    """Every signature compiles with every installed engine (the scanner's and the watcher's), and every
    engine finds each example and none of the near misses: one engine's dialect never hides a miss."""
    for signature in signatures:
        _compile(signature)
        for engine in scan_engines.ENGINES:
            error = scan_engines.compile_error(signature, engine)
            if error:
                raise ValueError(f"signature {signature!r} does not compile with {engine}: {error}")
    for engine in scan_engines.ENGINES:
        finder = scan_engines.make_finder(engine, list(signatures))
        for line in examples:
            if not finder.ids_in(line.encode()):
                raise ValueError(f"example {line!r} matches none of the signatures (engine {engine})")
        for line in near_misses:
            if finder.ids_in(line.encode()):
                raise ValueError(f"near miss {line!r} matches a signature (engine {engine})")


def _entry(raw: object, path: Path) -> KnownFailure:
    if not isinstance(raw, dict):
        raise CatalogError(f"{path.name}: [[failure]] entry {raw!r} is not a table")
    ident = raw.get("id", "<no id>")
    try:
        data_types.check_fields(raw, ENTRY_FIELDS, REQUIRED)
        for item in raw.get("affected", ()):
            data_types.check_fields(item, AFFECTED_FIELDS, tuple(AFFECTED_FIELDS))
        return KnownFailure(**{
            **raw,
            "signatures": tuple(raw.get("signatures", ())),
            "examples": tuple(raw.get("examples", ())),
            "near_misses": tuple(raw.get("near_misses", ())),
            "upstream": tuple(raw.get("upstream", ())),
            "raise_sites": tuple(raw.get("raise_sites", ())),
            "affected": tuple(Affected(**a) for a in raw.get("affected", ())),
            "source": path.name,
        })
    except (TypeError, ValueError) as exc:
        raise CatalogError(f"{path.name}: entry {ident!r}: {exc}") from exc


def load_file(path: Path) -> list[KnownFailure]:
    try:
        text = path.read_bytes()
    except OSError as exc:
        raise CatalogError(f"{path}: cannot read catalogue file: {exc}") from exc
    return [_entry(item, path) for item in _tables(path, text)]


def _tables(path: Path, data: bytes) -> list[object]:
    """The [[failure]] tables of one file, as TOML gives them (each one checked by _entry)."""
    import tomllib  # only when the text is new: a text validated before is read from its compiled form

    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise CatalogError(f"{path}: cannot read catalogue file: {exc}") from exc
    extra = set(raw) - {"failure"}
    if extra:
        raise CatalogError(f"{path.name}: unknown top-level keys {sorted(extra)}: only [[failure]] tables")
    entries = raw.get("failure", [])
    if not isinstance(entries, list):
        raise CatalogError(f"{path.name}: 'failure' is a single table ([failure]); entries are an array of "
                           f"tables: write [[failure]]")
    return entries


_VALIDATED: contextvars.ContextVar[bool] = contextvars.ContextVar("rlcheck_catalog_validated", default=False)
"""True while entries are built from a text whose signatures were validated before (its compiled form says so)."""
_VALIDATORS = ("catalog.py", "scan_engines.py", "data_types.py")
"""The code a validation depends on besides the text: a change to it validates again."""
COMPILED_FORMAT = 1


def catalog_key(texts: list[tuple[str, bytes]]) -> str:
    """What a validation of these files holds for: their names and text, the validating code, the engines."""
    here = Path(__file__).parent
    code = [hashlib.sha256((here / name).read_bytes()).hexdigest() for name in _VALIDATORS]
    files = [(name, hashlib.sha256(data).hexdigest()) for name, data in texts]
    return scan_engines.key_of("catalog", COMPILED_FORMAT, files, code, scan_engines.engines_fingerprint())


@contextlib.contextmanager
def _trusting() -> Iterator[None]:
    token = _VALIDATED.set(True)
    try:
        yield
    finally:
        _VALIDATED.reset(token)


def _read_dir(data_dir: Path) -> list[tuple[Path, bytes]]:
    found = []
    for path in sorted(data_dir.glob("*.toml")):
        try:
            found.append((path, path.read_bytes()))
        except OSError as exc:
            raise CatalogError(f"{path}: cannot read catalogue file: {exc}") from exc
    return found


Tables = list[tuple[Path, list[object]]]


def _build(tables: Tables) -> dict[str, KnownFailure]:
    entries: dict[str, KnownFailure] = {}
    for path, items in tables:
        for item in items:
            entry = _entry(item, path)
            if entry.id in entries:
                first = entries[entry.id].source
                raise CatalogError(f"{path.name}: entry {entry.id!r}: duplicate id (first in {first})")
            entries[entry.id] = entry
    return entries


def validate_catalog(data_dir: Path | None = None) -> dict[str, KnownFailure]:
    """All entries, validated in full whatever the cache holds (every signature with every engine against its
    examples and near misses); CatalogError on the first fault. The tests call this."""
    return _build([(path, _tables(path, data)) for path, data in _read_dir(data_dir or DATA_DIR)])


def load_catalog(data_dir: Path | None = None) -> dict[str, KnownFailure]:
    """All entries by id (DATA_DIR when no directory is given); a malformed entry or a duplicate id raises
    CatalogError naming the file and the entry. Signatures are validated in full unless this same text passed
    before (see the module's doc)."""
    return _load_catalog(data_dir or DATA_DIR)


_LOADED: list[dict[str, KnownFailure]] = []


def is_loaded(known: dict[str, KnownFailure]) -> bool:
    """known is a catalogue load_catalog returned (not a hand-made subset): its compiled form may be cached."""
    return any(known is loaded for loaded in _LOADED)


def _compiled(key: str, files: list[tuple[Path, bytes]]) -> Tables | None:
    """The tables kept when this exact text last passed validation; None when there is no such record (or it
    does not hold one table list per file, in order)."""
    import json

    payload = scan_engines.read_cached("catalog", key)
    if payload is None:
        return None
    try:
        doc = json.loads(payload)
    except ValueError:
        return None
    if (not isinstance(doc, dict) or doc.get("key") != key or not isinstance(doc.get("files"), list)
            or [name for name, _ in doc["files"]] != [path.name for path, _ in files]):
        return None
    return [(path, items) for (path, _), (_, items) in zip(files, doc["files"], strict=True)]


@functools.cache
def _load_catalog(data_dir: Path) -> dict[str, KnownFailure]:
    import json

    files = _read_dir(data_dir)
    key = catalog_key([(path.name, data) for path, data in files])
    tables = _compiled(key, files)
    if tables is not None:
        try:
            with _trusting():
                entries = _build(tables)
        except CatalogError:  # a record that does not build is not the text that passed: validate it anew
            tables = None
    if tables is None:
        tables = [(path, _tables(path, data)) for path, data in files]
        entries = _build(tables)  # in full: raises on any fault, and then nothing is recorded
        doc = {"key": key, "files": [[path.name, items] for path, items in tables]}
        scan_engines.write_cached("catalog", key, json.dumps(doc).encode())
    _LOADED.append(entries)
    return entries


def job_traits(argv: list[str] | tuple[str, ...]) -> frozenset[str]:
    """The TRAITS a job's argv shows (read from the options SLIME/Miles pass on, never guessed)."""
    traits: set[str] = set()
    for i, token in enumerate(argv):
        value = argv[i + 1] if i + 1 < len(argv) else ""
        if token.startswith("--sglang-nsa-") or (token == "--sglang-attention-backend" and value == "nsa"):
            traits.add("dsa")
        if token == "--spec" and any(m in value for m in ("glm5", "deepseek_v32", "dsv32")):
            traits.add("dsa")
    return frozenset(traits)


# What a job's own log says about its traits: SLIME/Miles echo the argv and the HF config, SGLang names the model
# class it loaded ("Load weight end. type=<Arch>"). GLM-5 loads as DeepSeek-V3.2's class (THUDM/slime#1787).
_DSA_IN_LOG = re.compile(r"DeepseekV32ForCausalLM|--sglang-nsa-|--sglang-attention-backend[= ]nsa\b"
                         r"|attention_backend['\"]?[:=] ?['\"]?nsa\b")
_MODEL_IN_LOG = re.compile(r"Load weight end\. type=\w+|['\"]architectures['\"]: \[|--sglang-attention-backend[= ]\w")


def log_traits(lines: Iterable[str]) -> frozenset[str] | None:
    """The TRAITS a job's log shows (its argv echo, its model's class); None when it shows nothing of the model
    (then every entry may name a line, as for a job whose traits are unknown)."""
    seen_model = False
    for line in lines:
        if _DSA_IN_LOG.search(line, 0, 4096):
            return frozenset({"dsa"})
        seen_model = seen_model or bool(_MODEL_IN_LOG.search(line, 0, 4096))
    return frozenset() if seen_model else None


def get(failure_id: str) -> KnownFailure:
    catalog = load_catalog()
    if failure_id not in catalog:
        raise KeyError(f"unknown failure id {failure_id!r}: valid are {', '.join(sorted(catalog))}")
    return catalog[failure_id]


def installed_versions(packages: list[str] | tuple[str, ...]) -> dict[str, str | None]:
    """Installed distribution versions, None where not installed."""
    from importlib import metadata

    found: dict[str, str | None] = {}
    for name in packages:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found
