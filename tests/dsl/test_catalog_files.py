"""A catalog named by its file is parsed once while the file stays the same.

`catalog_at(path)` serves the same `Catalog` object (so the lexicon, the plan
cache and value linking stay warm) until the file changes; any change is
seen: a rewrite of the same size with the old modification time, a change
inside the clock's granularity (status unchanged, bytes different), a
replaced file. A file that fails to load fails every time.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from qdsl.api import AnswerOptions
from qdsl.dsl.catalog import CatalogError, demo_catalog
from qdsl.dsl.catalog import files as catalog_files
from qdsl.dsl.catalog.files import catalog_at, resolve_catalog_cached

DEMO_TOML = (Path(catalog_files.__file__).parents[2] / "facts" / "demo" / "catalog.toml").read_text(
    encoding="utf-8"
)


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def demo_file(tmp_path: Path) -> Path:
    path = tmp_path / "catalog.toml"
    _write(path, DEMO_TOML)
    return path


def test_an_unchanged_file_gives_the_same_catalog(demo_file: Path) -> None:
    first = catalog_at(demo_file)
    assert first.entities == demo_catalog().entities
    assert catalog_at(demo_file) is first
    assert catalog_at(str(demo_file)) is first
    options = AnswerOptions(catalog=demo_file)
    assert options.settings(demo=True).catalog is options.settings(demo=True).catalog is first


def test_a_settled_unchanged_file_is_not_read_again(
    demo_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = catalog_at(demo_file)  # just written: its bytes are compared next time
    assert catalog_at(demo_file) is first
    later = catalog_files._clock() + 2 * catalog_files.SETTLED_NS
    monkeypatch.setattr(catalog_files, "_clock", lambda: later)
    assert catalog_at(demo_file) is first  # now settled: recorded as such

    def no_read(*_a: object) -> bytes:
        raise AssertionError("read again")

    monkeypatch.setattr(catalog_files, "_bytes", no_read)
    assert catalog_at(demo_file) is first


def test_a_rewrite_of_the_same_size_and_time_is_seen(
    demo_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    later = catalog_files._clock() + 2 * catalog_files.SETTLED_NS
    monkeypatch.setattr(catalog_files, "_clock", lambda: later)
    before = catalog_at(demo_file)  # settled: trusted while its status holds
    times = os.stat(demo_file)
    changed = DEMO_TOML.replace('synonyms = ["项目"', 'synonyms = ["课题"', 1)
    assert changed != DEMO_TOML and len(changed.encode()) == len(DEMO_TOML.encode())
    _write(demo_file, changed)
    os.utime(demo_file, ns=(times.st_atime_ns, times.st_mtime_ns))
    after = catalog_at(demo_file)
    assert after is not before
    assert "课题" in after.entities["project"].synonyms


def test_an_edit_the_status_does_not_show_is_seen(
    demo_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Within the clock's granularity a write may leave every time as it was: a
    file whose times were recent when read is compared byte for byte."""
    status = ((1, 1, 1, 1, 1), False)
    monkeypatch.setattr(catalog_files, "_status", lambda _p: status)
    before = catalog_at(demo_file)
    assert catalog_at(demo_file) is before  # same bytes: same object
    _write(demo_file, DEMO_TOML.replace('synonyms = ["项目"', 'synonyms = ["课题"', 1))
    after = catalog_at(demo_file)
    assert after is not before and "课题" in after.entities["project"].synonyms


def test_a_replaced_file_and_the_environment_are_followed(
    demo_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = catalog_at(demo_file)
    other = tmp_path / "new.toml"
    _write(other, DEMO_TOML.replace('synonyms = ["项目"', 'synonyms = ["课题"', 1))
    os.replace(other, demo_file)
    assert "课题" in catalog_at(demo_file).entities["project"].synonyms
    assert catalog_at(demo_file) is not before
    monkeypatch.setenv("QDSL_CATALOG", str(demo_file))
    assert resolve_catalog_cached() is catalog_at(demo_file)
    monkeypatch.delenv("QDSL_CATALOG")
    assert resolve_catalog_cached() is demo_catalog()


def test_a_file_that_fails_fails_every_time(demo_file: Path, tmp_path: Path) -> None:
    catalog_at(demo_file)
    _write(demo_file, "entities = [")
    for _ in range(2):
        with pytest.raises(CatalogError) as err:
            catalog_at(demo_file)
        assert err.value.subtype == "invalid_catalog"
    _write(demo_file, DEMO_TOML)
    assert catalog_at(demo_file).entities == demo_catalog().entities
    with pytest.raises(CatalogError) as missing:
        catalog_at(tmp_path / "nowhere.toml")
    assert missing.value.subtype == "catalog_unreadable"
