"""The catalogue compiled once: its validation runs when its text changes (and here, in full), a scan loads the
Hyperscan database kept in the cache directory, and a cache file that is torn, altered or not this user's alone is
compiled anew, never loaded."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import types
from pathlib import Path

import pytest

from rlcheck import catalog, scan, scan_engines

ROOT = Path(__file__).resolve().parents[1]
LOGS = ROOT / "tests" / "data" / "logs"
needs_hyperscan = pytest.mark.skipif("hyperscan" not in scan_engines.ENGINES, reason="hyperscan is not installed")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "cache"
    monkeypatch.setenv(scan_engines.CACHE_ENV, str(where))
    return where


SMALL = """
[[failure]]
id = "alpha-fault"
layer = "ray"
severity = "crash"
title = "alpha"
signatures = ["ALPHA failed: \\\\w+"]
examples = ["x ALPHA failed: disk"]
near_misses = ["ALPHA passed: disk"]
cause = "c"
remedy = "r"

[[failure]]
id = "beta-fault"
layer = "sglang"
severity = "hang"
title = "beta"
signatures = ["^BETA$", "beta [0-9]+ stuck"]
examples = ["BETA", "beta 12 stuck"]
near_misses = ["BETA!", "beta x stuck"]
cause = "c"
remedy = "r"
affected = [{ package = "sglang", specifier = ">=0.4,<0.5" }]
"""


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A small catalogue of its own: load_catalog keeps one load per folder, so each test reads its own."""
    where = tmp_path / "failures"
    where.mkdir()
    (where / "small.toml").write_text(SMALL, encoding="utf-8")
    return where


def _count_validations(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = catalog._check_signatures

    def counted(*args: object) -> None:
        calls.append(1)
        real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(catalog, "_check_signatures", counted)
    return calls


def _break_first_example(data_dir: Path) -> None:
    """The catalogue with one example that no signature of its entry finds."""
    path = data_dir / "small.toml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('"x ALPHA failed: disk"', '"a line no signature finds"'), encoding="utf-8")


def test_the_packaged_catalogue_passes_the_full_validation():
    known = catalog.validate_catalog()
    assert known.keys() == catalog.load_catalog().keys()


def test_a_second_load_of_the_same_text_skips_the_signature_validation(cache, data_dir, tmp_path, monkeypatch):
    calls = _count_validations(monkeypatch)
    first = catalog.load_catalog(data_dir)
    assert len(calls) == len(first)  # every entry validated in full: the text was new
    same = tmp_path / "same"  # the same text in another folder: a new load, the same key
    shutil.copytree(data_dir, same)
    calls.clear()
    second = catalog.load_catalog(same)
    assert calls == []
    assert [dataclass_fields(e) for e in second.values()] == [dataclass_fields(e) for e in first.values()]


def dataclass_fields(entry: catalog.KnownFailure) -> tuple[object, ...]:
    return tuple(getattr(entry, f) for f in entry.__dataclass_fields__ if f != "source") + (entry.source,)


def test_the_key_changes_with_the_text_the_file_names_and_the_validating_code(data_dir, monkeypatch):
    texts = [(p.name, p.read_bytes()) for p in sorted(data_dir.glob("*.toml"))]
    key = catalog.catalog_key(texts)
    assert catalog.catalog_key(list(texts)) == key
    edited = [(texts[0][0], texts[0][1] + b"\n# a comment\n"), *texts[1:]]
    renamed = [("other.toml", texts[0][1]), *texts[1:]]
    assert len({key, catalog.catalog_key(edited), catalog.catalog_key(renamed), catalog.catalog_key(texts[1:])}) == 4
    monkeypatch.setattr(scan_engines, "engines_fingerprint", lambda: ["another engine"])
    assert catalog.catalog_key(texts) != key


def test_the_key_is_made_of_the_catalogue_tag_the_format_the_files_the_code_and_the_engines(data_dir):
    """The record's name: its own tag (no other cache's key of the same parts takes it), the record format, each
    file's name and text, each validating module's text and the engines, hashed as every cache key is."""
    texts = [(p.name, p.read_bytes()) for p in sorted(data_dir.glob("*.toml"))]
    here = Path(catalog.__file__).parent
    code = [hashlib.sha256((here / name).read_bytes()).hexdigest()
            for name in ("catalog.py", "scan_engines.py", "data_types.py")]
    files = [[name, hashlib.sha256(text).hexdigest()] for name, text in texts]
    assert catalog.catalog_key(texts) == scan_engines.key_of(
        "catalog", catalog.COMPILED_FORMAT, files, code, scan_engines.engines_fingerprint())
    assert catalog.catalog_key(texts) != scan_engines.key_of(
        "hyperscan-db", catalog.COMPILED_FORMAT, files, code, scan_engines.engines_fingerprint())


def test_a_record_of_another_format_is_not_read(cache, data_dir, tmp_path, monkeypatch):
    catalog.load_catalog(data_dir)  # recorded under this format
    texts = [(p.name, p.read_bytes()) for p in sorted(data_dir.glob("*.toml"))]
    key = catalog.catalog_key(texts)
    monkeypatch.setattr(catalog, "COMPILED_FORMAT", catalog.COMPILED_FORMAT + 1)  # a later rlcheck's records
    assert catalog.catalog_key(texts) != key
    calls = _count_validations(monkeypatch)
    same = tmp_path / "same"
    shutil.copytree(data_dir, same)
    assert len(catalog.load_catalog(same)) == 2
    assert len(calls) == 2  # each entry validated in full: the record of the other format was not read


@pytest.mark.parametrize("module", ["catalog.py", "scan_engines.py", "data_types.py"])
def test_the_key_changes_with_each_module_that_validates(module, data_dir, tmp_path, monkeypatch):
    """An rlcheck whose validating code changed validates the same text anew: a record of the old code is not
    trusted."""
    texts = [(p.name, p.read_bytes()) for p in sorted(data_dir.glob("*.toml"))]
    key = catalog.catalog_key(texts)
    code = tmp_path / "rlcheck"
    code.mkdir()
    for name in ("catalog.py", "scan_engines.py", "data_types.py"):
        shutil.copy2(Path(catalog.__file__).parent / name, code / name)
    monkeypatch.setattr(catalog, "__file__", str(code / "catalog.py"))
    assert catalog.catalog_key(texts) == key  # the same code, elsewhere: the same key
    with (code / module).open("a", encoding="utf-8") as f:
        f.write("\n# an edit\n")
    assert catalog.catalog_key(texts) != key


MORE = """
[[failure]]
id = "gamma-fault"
layer = "cluster"
severity = "degraded"
title = "gamma"
signatures = ["GAMMA slow"]
examples = ["GAMMA slow on node 3"]
near_misses = ["GAMMA fast"]
cause = "c"
remedy = "r"
"""


@pytest.mark.parametrize("record", [
    pytest.param(lambda key: [key, [["more.toml", []], ["small.toml", []]]], id="a-list-not-an-object"),
    pytest.param(lambda key: {"key": "0" * 64, "files": [["more.toml", []], ["small.toml", []]]},
                 id="another-key-inside"),
    pytest.param(lambda key: {"key": key, "files": {"more.toml": [], "small.toml": []}}, id="files-not-a-list"),
    pytest.param(lambda key: {"key": key, "files": [["more.toml", []]]}, id="one-file-missing"),
    pytest.param(lambda key: {"key": key, "files": [["more.toml", []], ["small.toml", []], ["x.toml", []]]},
                 id="one-file-too-many"),
    pytest.param(lambda key: {"key": key, "files": [["small.toml", []], ["more.toml", []]]}, id="files-reordered"),
    pytest.param(lambda key: {"key": key}, id="no-files"),
])
def test_a_record_that_is_not_this_texts_is_validated_anew_and_rewritten(record, cache, data_dir, tmp_path,
                                                                          monkeypatch):
    """A record under this text's key (its file intact) that does not hold this text's tables, one list per file
    in order, is never built from: the text is validated in full, and its own record replaces it."""
    (data_dir / "more.toml").write_text(MORE, encoding="utf-8")
    first = catalog.load_catalog(data_dir)
    (path,) = cache.glob("catalog-*.bin")
    key = path.name.removeprefix("catalog-").removesuffix(".bin")
    good = scan_engines.read_cached("catalog", key)
    scan_engines.write_cached("catalog", key, json.dumps(record(key)).encode())  # every table emptied
    calls = _count_validations(monkeypatch)
    same = tmp_path / "same"
    shutil.copytree(data_dir, same)
    again = catalog.load_catalog(same)
    assert list(again) == ["gamma-fault", "alpha-fault", "beta-fault"] == list(first)
    assert [dataclass_fields(e) for e in again.values()] == [dataclass_fields(e) for e in first.values()]
    assert len(calls) == 3  # every entry validated
    assert scan_engines.read_cached("catalog", key) == good


def test_a_broken_catalogue_is_refused_after_the_good_one_was_recorded(cache, data_dir, tmp_path):
    catalog.load_catalog(data_dir)  # the good text: validated and recorded
    broken = tmp_path / "broken"
    shutil.copytree(data_dir, broken)
    _break_first_example(broken)
    with pytest.raises(catalog.CatalogError, match="matches none of the signatures"):
        catalog.load_catalog(broken)
    with pytest.raises(catalog.CatalogError, match="matches none of the signatures"):
        catalog.validate_catalog(broken)


def test_a_broken_catalogue_is_never_recorded(cache, data_dir, tmp_path, monkeypatch):
    _break_first_example(data_dir)
    with pytest.raises(catalog.CatalogError):
        catalog.load_catalog(data_dir)
    again = tmp_path / "again"
    shutil.copytree(data_dir, again)
    with pytest.raises(catalog.CatalogError):
        catalog.load_catalog(again)
    assert not list(cache.glob("catalog-*"))


def test_a_record_of_other_files_is_not_taken_for_this_text(cache, data_dir, tmp_path, monkeypatch):
    catalog.load_catalog(data_dir)
    (record,) = cache.glob("catalog-*.bin")
    key = record.name.removeprefix("catalog-").removesuffix(".bin")
    # The record, rewritten with an intact checksum, names other files: the load validates in full.
    scan_engines.write_cached("catalog", key, b'{"key": "%s", "files": [["x.toml", []]]}' % key.encode())
    calls = _count_validations(monkeypatch)
    same = tmp_path / "same"
    shutil.copytree(data_dir, same)
    assert catalog.load_catalog(same).keys() == catalog.load_catalog(data_dir).keys()
    assert calls


def test_no_cache_directory_validates_every_load(data_dir, tmp_path, monkeypatch):
    monkeypatch.setenv(scan_engines.CACHE_ENV, "")
    assert scan_engines.cache_dir() is None
    catalog.load_catalog(data_dir)
    calls = _count_validations(monkeypatch)
    same = tmp_path / "same"
    shutil.copytree(data_dir, same)
    catalog.load_catalog(same)
    assert len(calls) == len(catalog.load_catalog(same))


def test_the_cache_directory_follows_xdg_and_refuses_a_shared_folder(tmp_path, monkeypatch):
    monkeypatch.delenv(scan_engines.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert scan_engines.cache_dir() == tmp_path / "xdg" / "rlcheck"
    assert (tmp_path / "xdg" / "rlcheck").stat().st_mode & 0o777 == 0o700
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")  # not absolute: ignored, as the XDG spec says
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert scan_engines.cache_dir() == tmp_path / "home" / ".cache" / "rlcheck"
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # anyone could plant a database here
    monkeypatch.setenv(scan_engines.CACHE_ENV, str(shared))
    assert scan_engines.cache_dir() is None
    shared.chmod(0o700)
    assert scan_engines.cache_dir() == shared
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    monkeypatch.setenv(scan_engines.CACHE_ENV, str(blocked / "sub"))
    assert scan_engines.cache_dir() is None


def test_a_cached_payload_is_read_back_only_intact_and_under_its_own_key(cache):
    scan_engines.write_cached("t", "k1", b"payload")
    assert scan_engines.read_cached("t", "k1") == b"payload"
    assert scan_engines.read_cached("t", "k2") is None
    path = cache / "t-k1.bin"
    data = bytearray(path.read_bytes())
    data[-1] ^= 1  # one bit of the payload flipped: the checksum no longer holds
    path.write_bytes(bytes(data))
    assert scan_engines.read_cached("t", "k1") is None
    scan_engines.write_cached("t", "k1", b"payload")
    os.rename(path, cache / "t-k3.bin")  # a file of another key under this name: its header says so
    os.symlink(cache / "t-k3.bin", path)
    assert scan_engines.read_cached("t", "k1") is None  # a link is not followed
    path.unlink()
    (cache / "t-k3.bin").rename(path)
    assert scan_engines.read_cached("t", "k1") == b"payload"
    path.chmod(0o666)  # writable by others: not this user's alone
    assert scan_engines.read_cached("t", "k1") is None
    path.chmod(0o600)
    path.write_bytes(path.read_bytes()[:40])  # torn
    assert scan_engines.read_cached("t", "k1") is None


def test_a_cache_file_is_written_for_this_user_alone_and_never_through_a_planted_link(cache, tmp_path, monkeypatch):
    monkeypatch.setattr(scan_engines, "time", types.SimpleNamespace(monotonic_ns=lambda: 42))  # the temp file's name
    scan_engines.write_cached("t", "k1", b"payload")
    assert (cache / "t-k1.bin").stat().st_mode & 0o777 == 0o600  # readable and writable by this user alone
    victim = tmp_path / "victim"
    victim.write_bytes(b"someone else's file\n")
    os.symlink(victim, cache / f".t-k2.{os.getpid()}-42.tmp")  # planted where the next write makes its temp file
    scan_engines.write_cached("t", "k2", b"payload")
    assert victim.read_bytes() == b"someone else's file\n"  # the link is neither followed nor written through
    assert scan_engines.read_cached("t", "k2") is None  # nothing kept this time: the next run compiles again


def test_an_interrupt_while_writing_is_not_swallowed_when_the_temp_file_is_already_gone(cache, monkeypatch):
    def interrupted(src: str, dst: str) -> None:
        os.unlink(src)  # a cache cleaner took the temp file
        raise KeyboardInterrupt

    monkeypatch.setattr(scan_engines.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        scan_engines.write_cached("t", "k1", b"payload")
    assert list(cache.iterdir()) == []


def _count_compiles(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per Hyperscan database compiled from now on (a database loaded from the cache adds none)."""
    compiled: list[int] = []
    real = scan_engines._database

    def counting(p: list[str], f: int) -> object:
        compiled.append(1)
        return real(p, f)

    monkeypatch.setattr(scan_engines, "_database", counting)
    return compiled


@needs_hyperscan
def test_a_corrupt_database_file_is_compiled_anew_and_rewritten(cache, monkeypatch):
    patterns = ["BETA", "^GAMMA$"]
    flag = scan_engines._hyperscan.HS_FLAG_MULTILINE
    compiled = _count_compiles(monkeypatch)
    scan_engines._cached_database(patterns, flag)
    scan_engines._cached_database(patterns, flag)
    assert len(compiled) == 1  # the second came from the cache
    (path,) = cache.glob("hsdb-*.bin")
    good = path.read_bytes()
    path.write_bytes(good[:-100] + bytes(100))  # Hyperscan itself would load this one
    db = scan_engines._cached_database(patterns, flag)
    assert len(compiled) == 2
    assert path.read_bytes() == good  # rewritten
    found: list[int] = []
    db.scan(b"x BETA y\nGAMMA\n", match_event_handler=lambda i, *_: found.append(i))
    assert sorted(found) == [0, 1]
    scan_engines._cached_database(["BETA"], flag)  # other patterns: another key, compiled
    assert len(compiled) == 3


@needs_hyperscan
def test_a_payload_hyperscan_cannot_load_is_compiled_anew(cache, monkeypatch):
    patterns = ["DELTA"]
    flag = scan_engines._hyperscan.HS_FLAG_MULTILINE
    scan_engines._cached_database(patterns, flag)
    (path,) = cache.glob("hsdb-*.bin")
    key = path.name.removeprefix("hsdb-").removesuffix(".bin")
    scan_engines.write_cached("hsdb", key, b"not a database")  # intact checksum, not a database
    db = scan_engines._cached_database(patterns, flag)
    found: list[int] = []
    db.scan(b"DELTA", match_event_handler=lambda i, *_: found.append(i))
    assert found == [0]
    assert scan_engines.read_cached("hsdb", key) != b"not a database"


def _findings(matcher: scan.Matcher) -> tuple[list[tuple[str, str, int, str]], dict[str, int], int]:
    result = scan.scan_paths([str(LOGS)], matcher)
    return [(f.failure_id, f.path, f.line_no, f.line) for f in result.findings], result.counts, result.files


@needs_hyperscan
def test_scan_results_are_the_same_from_the_cached_database_and_a_fresh_one(cache, monkeypatch):
    from rlcheck import field_corpus

    known = catalog.load_catalog()
    lines = [x.line for x in field_corpus.load()]
    fresh_matcher = scan.Matcher(known)  # compiled (and kept)
    fresh = _findings(fresh_matcher), [fresh_matcher.match_line(line) for line in lines]
    assert len(list(cache.glob("hsdb-*"))) == 2

    def no_compile(*_: object) -> None:
        raise AssertionError("compiled although the cache holds the database")

    monkeypatch.setattr(scan_engines, "_database", no_compile)
    cached = scan.Matcher(known)
    assert (_findings(cached), [cached.match_line(line) for line in lines]) == fresh
    (findings, counts, files), named = fresh
    assert len(counts) > 5 and files > 5 and sum(map(bool, named)) > 50  # the corpora name many entries


@needs_hyperscan
def test_a_hand_made_catalogue_is_compiled_in_memory_only(cache, data_dir):
    known = catalog.load_catalog(data_dir)
    assert scan.Matcher(known).match_line("BETA") == ["beta-fault"]
    kept = sorted(cache.glob("hsdb-*"))
    assert len(kept) == 2
    subset = {"beta-fault": known["beta-fault"]}
    assert scan.Matcher(subset).match_line("beta 3 stuck") == ["beta-fault"]
    assert sorted(cache.glob("hsdb-*")) == kept


def test_a_payload_under_another_keys_name_is_refused_and_an_empty_one_kept(cache):
    scan_engines.write_cached("t", "k3", b"payload")  # intact, of key k3 (as long as k1: its checksum lines up)
    (cache / "t-k3.bin").rename(cache / "t-k1.bin")
    assert scan_engines.read_cached("t", "k1") is None  # its header names k3
    assert scan_engines.read_cached("t", "k3") is None  # and k3 has no file now
    scan_engines.write_cached("t", "k1", b"")  # the shortest intact file: header, checksum line, no payload
    assert scan_engines.read_cached("t", "k1") == b""
    path = cache / "t-k1.bin"
    path.write_bytes(path.read_bytes()[:-1])  # its checksum's newline cut off
    assert scan_engines.read_cached("t", "k1") is None


# Recorded /proc/cpuinfo (the first processor of each): an AWS c5 (Skylake-SP, AVX-512), a Broadwell host (no
# AVX-512), an AWS Graviton2 (aarch64: 'Features') and a POWER9 host (ppc64le: no features line).
SKYLAKE_FLAGS = ("fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ss "
                 "ht syscall nx pdpe1gb rdtscp lm constant_tsc rep_good nopl xtopology nonstop_tsc cpuid pni pclmulqdq "
                 "ssse3 fma cx16 pcid sse4_1 sse4_2 x2apic movbe popcnt aes xsave avx f16c rdrand hypervisor lahf_lm "
                 "abm 3dnowprefetch bmi1 avx2 smep bmi2 erms invpcid mpx avx512f avx512dq rdseed adx smap clflushopt "
                 "clwb avx512cd avx512bw avx512vl xsaveopt xsavec xgetbv1 xsaves ida arat pku ospke")
BROADWELL_FLAGS = ("fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 "
                   "ht syscall nx pdpe1gb rdtscp lm constant_tsc rep_good nopl xtopology cpuid pni pclmulqdq ssse3 fma "
                   "cx16 pcid sse4_1 sse4_2 x2apic movbe popcnt aes xsave avx f16c rdrand hypervisor lahf_lm abm "
                   "3dnowprefetch bmi1 avx2 smep bmi2 erms invpcid rdseed adx smap xsaveopt arat")
GRAVITON2_FEATURES = ("fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop "
                      "asimddp ssbs")


def _x86(model: str, flags: str) -> bytes:
    return (f"processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\nmodel name\t: {model}\n"
            f"stepping\t: 4\nmicrocode\t: 0x2006e05\ncpu MHz\t\t: 3000.000\ncache size\t: 25344 KB\nfpu\t\t: yes\n"
            f"fpu_exception\t: yes\ncpuid level\t: 13\nwp\t\t: yes\nflags\t\t: {flags}\n"
            f"bugs\t\t: cpu_meltdown spectre_v1 spectre_v2 spec_store_bypass l1tf mds swapgs\nbogomips\t: 6000.00\n"
            f"clflush size\t: 64\n\nprocessor\t: 1\nvendor_id\t: GenuineIntel\nflags\t\t: fpu\n").encode()


SKYLAKE = _x86("Intel(R) Xeon(R) Platinum 8124M CPU @ 3.00GHz", SKYLAKE_FLAGS)
BROADWELL = _x86("Intel(R) Xeon(R) CPU E5-2686 v4 @ 2.30GHz", BROADWELL_FLAGS)
GRAVITON2 = (f"processor\t: 0\nBogoMIPS\t: 243.75\nFeatures\t: {GRAVITON2_FEATURES}\nCPU implementer\t: 0x41\n"
             "CPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n\n"
             "processor\t: 1\nBogoMIPS\t: 243.75\nFeatures\t: fp\n").encode()
POWER9 = (b"processor\t: 0\ncpu\t\t: POWER9 (architected), altivec supported\nclock\t\t: 2200.000000MHz\n"
          b"revision\t: 2.2 (pvr 004e 1202)\n\ntimebase\t: 512000000\nplatform\t: pSeries\n")


def _cpuinfo(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, text: bytes | None) -> None:
    """_cpu_features reads text as /proc/cpuinfo (None: there is none, as where /proc is not mounted); any other
    path it opens is missing."""
    recorded = tmp_path / "cpuinfo"
    recorded.unlink(missing_ok=True)
    if text is not None:
        recorded.write_bytes(text)

    def recorded_open(path: str, *args: object, **kwargs: object) -> object:
        if path != "/proc/cpuinfo":
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
        return open(recorded, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(scan_engines, "open", recorded_open, raising=False)


@pytest.mark.parametrize(("text", "features"), [
    (SKYLAKE, SKYLAKE_FLAGS),  # x86-64: the first processor's 'flags' line, after the colon, trimmed
    (BROADWELL, BROADWELL_FLAGS),
    (GRAVITON2, GRAVITON2_FEATURES),  # aarch64: its 'Features' line
    (POWER9, ""),  # neither line: nothing (the machine's name in the key still tells it apart)
    (None, ""),  # no /proc/cpuinfo at all
])
def test_the_cpu_features_are_the_flags_or_features_line_of_proc_cpuinfo(text, features, tmp_path, monkeypatch):
    _cpuinfo(monkeypatch, tmp_path, text)
    assert scan_engines._cpu_features() == features


@pytest.mark.parametrize(("text", "features"), [
    # a byte past ASCII (a vendor's UTF-8 model name) neither stops the read nor changes with the locale: each is
    # U+FFFD, in the flags line too, so the same bytes give the same key under any locale
    (_x86("Intel\xae Xeon\xae Gold 6148", "fpu avx512f"), "fpu avx512f"),
    (_x86("Xeon", "fpu \xae avx512f"), "fpu \ufffd\ufffd avx512f"),
    (b"flags\t\t: fpu sse2:x avx2\n", "fpu sse2:x avx2"),  # all after the first colon, a later colon kept
    (b"flags\n", "flags"),  # a line cut before its colon: the line itself, not an error
])
def test_the_cpu_features_are_read_as_ascii_after_the_first_colon(text, features, tmp_path, monkeypatch):
    _cpuinfo(monkeypatch, tmp_path, text)
    assert scan_engines._cpu_features() == features


def test_a_cache_key_is_the_sha256_of_its_parts_as_compact_json():
    parts = ("hyperscan-db", "0.7.8", "x86_64", "fpu avx512f", 4, ["BETA", "^GAMMA$"])
    compact = b'["hyperscan-db","0.7.8","x86_64","fpu avx512f",4,["BETA","^GAMMA$"]]'
    assert scan_engines.key_of(*parts) == hashlib.sha256(compact).hexdigest()
    assert scan_engines.key_of("catalog", {"small.toml": "9f2c"}) == hashlib.sha256(
        b'["catalog",{"small.toml":"9f2c"}]').hexdigest()  # a mapping's too: no space after its colon
    assert scan_engines.key_of("a", "b") != scan_engines.key_of("a,b") != scan_engines.key_of(["a", "b"])


def _host(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, version: str, machine: str, cpuinfo: bytes) -> None:
    assert scan_engines._hyperscan is not None
    monkeypatch.setattr(scan_engines._hyperscan, "__version__", version)
    monkeypatch.setattr(scan_engines.os, "uname", lambda: types.SimpleNamespace(machine=machine))
    _cpuinfo(monkeypatch, tmp_path, cpuinfo)


@needs_hyperscan
def test_a_database_is_kept_under_hyperscan_the_machine_the_cpu_the_flag_and_the_patterns(cache, tmp_path,
                                                                                          monkeypatch):
    _host(monkeypatch, tmp_path, "0.7.8", "x86_64", SKYLAKE)
    flag = scan_engines._hyperscan.HS_FLAG_MULTILINE
    scan_engines._cached_database(["BETA", "^GAMMA$"], flag)
    named = f'["hyperscan-db","0.7.8","x86_64","{SKYLAKE_FLAGS}",{flag},["BETA","^GAMMA$"]]'
    assert [p.name for p in cache.iterdir()] == [f"hsdb-{hashlib.sha256(named.encode()).hexdigest()}.bin"]


@needs_hyperscan
@pytest.mark.parametrize("other", [
    ("0.7.9", "x86_64", SKYLAKE),  # another Hyperscan
    ("0.7.8", "aarch64", SKYLAKE),  # another machine
    ("0.7.8", "x86_64", BROADWELL),  # another CPU: one without AVX-512 must never load a database built with it
    ("0.7.8", "x86_64", GRAVITON2),
    ("0.7.8", "x86_64", None),
])
def test_a_database_kept_on_one_host_is_compiled_anew_on_another(other, cache, tmp_path, monkeypatch):
    patterns, flag = ["BETA", "^GAMMA$"], scan_engines._hyperscan.HS_FLAG_MULTILINE
    compiled = _count_compiles(monkeypatch)
    _host(monkeypatch, tmp_path, "0.7.8", "x86_64", SKYLAKE)
    scan_engines._cached_database(patterns, flag)
    scan_engines._cached_database(patterns, flag)
    assert len(compiled) == 1  # the second run loaded it
    _host(monkeypatch, tmp_path, *other)
    db = scan_engines._cached_database(patterns, flag)
    assert len(compiled) == 2 and len(list(cache.glob("hsdb-*.bin"))) == 2  # compiled, and kept beside the first
    found: list[int] = []
    db.scan(b"x BETA y\nGAMMA\n", match_event_handler=lambda i, *_: found.append(i))
    assert sorted(found) == [0, 1]
    _host(monkeypatch, tmp_path, "0.7.8", "x86_64", SKYLAKE)
    scan_engines._cached_database(patterns, flag)
    assert len(compiled) == 2  # back on the first host: its own database, loaded
