"""Facts kept per image (rlcheck/repro/image_facts.py) as a rule table: when a kept fact is read back, when the
package is asked again (every key term, --no-cache, no cache folder, a corrupt entry) and what is never kept."""

from __future__ import annotations

import pytest

from rlcheck.repro import image_facts

FACT = {"version": "1.0", "flags": ["a", "b"]}


class Asked:
    """A collector that counts how often the package was asked."""

    def __init__(self, fact=FACT):
        self.fact, self.times = fact, 0

    def __call__(self):
        self.times += 1
        return self.fact


def _recall(asked, source="collector v1", files=()):
    return image_facts.recall("demo", source, list(files), asked)


def test_asked_once_then_read_back(facts_folder):
    asked = Asked()
    first = _recall(asked)
    assert (first.fact, first.note, asked.times) == (FACT, "asked the package; kept for the next run on this image", 1)
    second = _recall(asked)
    assert second.fact == FACT and asked.times == 1
    assert second.note.startswith("kept for this image, made ") and " by rlcheck " in second.note
    assert second.note.endswith("(--no-cache asks the package again)")
    assert [p.parent for p in facts_folder.glob("*.json")] == [facts_folder]


@pytest.mark.parametrize("change", ["source", "file content", "file gone", "name"])
def test_every_key_term_is_a_miss(facts_folder, tmp_path, change):
    file = tmp_path / "server_args.py"
    file.write_text("v1")
    asked = Asked()
    image_facts.recall("demo", "collector v1", [file], asked)
    name, source = "demo", "collector v1"
    if change == "source":
        source = "collector v2"
    elif change == "file content":
        file.write_text("v2")
    elif change == "file gone":
        file.unlink()
    else:
        name = "other"
    image_facts.recall(name, source, [file], asked)
    assert asked.times == 2
    image_facts.recall(name, source, [file], asked)  # and the new key is kept in turn
    assert asked.times == 2


def test_a_new_distribution_on_the_childrens_path_is_a_miss(facts_folder, tmp_path, monkeypatch):
    asked = Asked()
    _recall(asked)
    site = tmp_path / "site"
    (site / "sglang-9.9.dist-info").mkdir(parents=True)
    monkeypatch.setenv("PYTHONPATH", str(site))
    assert image_facts.child_path()[0] == str(site)
    _recall(asked)
    assert asked.times == 2


def test_find_package_looks_where_a_child_imports_from_and_imports_nothing(tmp_path, monkeypatch):
    (tmp_path / "site" / "pkgdemo").mkdir(parents=True)
    (tmp_path / "site" / "pkgdemo" / "__init__.py").write_text("raise SystemExit('imported')")
    assert image_facts.find_package("pkgdemo") == []
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "site"))
    assert image_facts.find_package("pkgdemo") == [tmp_path / "site" / "pkgdemo"]


def test_no_cache_asks_every_time_and_keeps_nothing(facts_folder):
    image_facts.switch_off("--no-cache")
    asked = Asked()
    assert _recall(asked).note == "asked the package (facts cache off: --no-cache)"
    _recall(asked)
    assert asked.times == 2 and not facts_folder.exists()


def test_no_cache_folder_of_this_users_own_asks_every_time(facts_folder, monkeypatch):
    monkeypatch.setenv("RLCHECK_CACHE_DIR", "")
    asked = Asked()
    note = _recall(asked).note
    assert note == ("asked the package (facts cache off: no cache folder of this user's alone (RLCHECK_CACHE_DIR is "
                    "empty, or the folder is shared))")
    _recall(asked)
    assert asked.times == 2


def test_a_collector_that_gives_nothing_keeps_nothing(facts_folder):
    asked = Asked(fact=None)
    assert (_recall(asked).fact, _recall(asked).note) == (None, "asked the package; nothing kept")
    assert asked.times == 2 and not facts_folder.exists()


def test_a_folder_that_cannot_be_written_says_so_and_still_gives_the_fact(facts_folder):
    facts_folder.parent.mkdir(parents=True)
    facts_folder.write_text("a file where the folder should be")
    recalled = _recall(Asked())
    assert recalled.fact == FACT
    assert recalled.note.startswith(f"ignored a corrupt entry ({facts_folder}/")  # its entry cannot even be read
    assert f"; asked the package; could not keep it in {facts_folder}: " in recalled.note


def test_a_corrupt_entry_is_named_asked_again_and_replaced(facts_folder):
    asked = Asked()
    _recall(asked)
    (entry,) = facts_folder.glob("*.json")
    entry.write_text("{not json")
    again = _recall(asked)
    assert asked.times == 2 and again.fact == FACT
    assert again.note.startswith(f"ignored a corrupt entry ({entry}: not an rlcheck cache entry (")
    assert again.note.endswith("); asked the package; kept for the next run on this image")
    assert _recall(asked).note.startswith("kept for this image")


@pytest.mark.parametrize(("payloads", "whole"), [
    ([{"fact": {}}], True),
    ([{"fact": {"a": 1}}], True),
    ([], False),
    ([{"fact": {}}, {"fact": {}}], False),
    ([{"fact": []}], False),
    ([{"verdict": {"status": "PASS"}}], False),
])
def test_an_entry_holds_exactly_one_fact_object(payloads, whole):
    assert image_facts.complete(payloads) is whole
