"""Every facts file is read within bounds, and over one it is a bad line, never exit 1
(issue 25, F5).

A 100,000-deep JSON line, a lone surrogate, a 200 KB CSV field, text that is
not UTF-8, an endless line, numbers Python will not convert, and on
PostgreSQL a value longer than the lookup index holds each exited 1; now
each is `validation/facts_rejected` (exit 3) naming its line, on SQLite and
PostgreSQL, and nothing is loaded.
"""

from __future__ import annotations

import io
import json
import random
import string
from collections.abc import Callable
from pathlib import Path

import pytest
import sqlalchemy as sa
from hypothesis import given, settings
from hypothesis import strategies as st
from load_support import cli_load, fact, fresh_url, jsonl, rejected, stored_count

from qdsl.facts import fact_files, index_bounds
from qdsl.facts.db import make_engine
from qdsl.facts.tables import semantic_facts


@pytest.fixture
def url(dialect: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    return fresh_url(dialect, tmp_path, request)


def _file(tmp_path: Path, data: bytes, name: str = "facts.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


GOOD = jsonl([fact("1")])
CSV_HEADER = b"tenant_id,entity_type,entity_id,predicate,value_text\n"


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"[" * 100_000 + b"\n", "nesting is over the limit of 64 levels"),
        (b'{"a": ' * 50_000 + b"\n", "nesting is over the limit of 64 levels"),
        (json.dumps(fact(value="\ud800")).encode() + b"\n", "lone surrogate"),
        (b'{"tenant_id": "t1", "entity_id": ' + b"7" * 5000 + b"}\n", "4300 digits"),
        (jsonl([fact(value_num=10**400)]), "value_num must be a number"),
        (jsonl([fact(observed_at="9999-12-31T23:59:59-14:00")]), "observed_at must be an ISO"),
        (json.dumps(fact(**{"\ud800": 1})).encode() + b"\n", "unknown field(s) '\\ud800'"),
    ],
    ids=["deep-array", "deep-object", "surrogate", "long-int", "huge-num", "far-instant",
         "surrogate-key"],
)
def test_hostile_json_lines_are_bad_lines(
    url: str, tmp_path: Path, data: bytes, reason: str
) -> None:
    result = cli_load(url, _file(tmp_path, GOOD + data + GOOD))
    problems = rejected(result)
    assert [p["line"] for p in problems] == [2]
    assert reason in problems[0]["reason"]
    assert stored_count(url) == 0


def test_a_surrogate_escape_in_a_value_is_refused_by_the_api_too(url: str) -> None:
    from qdsl.dsl.catalog import demo_catalog
    from qdsl.facts.load import FactsRejected, load_facts

    engine = make_engine(url)
    try:
        with pytest.raises(FactsRejected) as info:
            load_facts([fact(value="ok \udc80")], engine=engine, catalog=demo_catalog())
    finally:
        engine.dispose()
    assert "lone surrogate" in info.value.details["problems"][0]["reason"]


def test_a_line_that_is_not_utf8_is_named_and_the_rest_is_read(url: str, tmp_path: Path) -> None:
    latin1 = json.dumps(fact("2", value="café"), ensure_ascii=False).encode("latin-1") + b"\n"
    binary = bytes(range(256)).replace(b"\n", b"") + b"\n"
    data = GOOD + latin1 + binary + jsonl([fact("3", predicate="colour")])
    problems = rejected(cli_load(url, _file(tmp_path, data)))
    assert [p["line"] for p in problems] == [2, 3, 4]
    assert problems[0]["reason"].startswith("the line is not UTF-8 text (byte 0xe9 at byte")
    assert "not UTF-8" in problems[1]["reason"]
    assert "colour" in problems[2]["reason"]
    assert stored_count(url) == 0


def test_a_200_kb_csv_field_is_a_bad_line(url: str, tmp_path: Path) -> None:
    data = CSV_HEADER + b"t1,project,1,market_theme,ok\n" + b"t1,project,2,market_theme,"
    data += b"x" * 200_000 + b"\nt1,project,3,market_theme,ok\n"
    problems = rejected(cli_load(url, _file(tmp_path, data, "facts.csv")))
    assert problems == [{"line": 3, "reason": "not CSV (field larger than field limit (131072)); "
                         "the file was not read further"}]
    assert stored_count(url) == 0


def test_a_csv_line_that_is_not_utf8_is_named(url: str, tmp_path: Path) -> None:
    data = CSV_HEADER + "t1,project,1,market_theme,café\n".encode("latin-1")
    problems = rejected(cli_load(url, _file(tmp_path, data, "facts.csv")))
    assert [p["line"] for p in problems] == [2]
    assert "not UTF-8" in problems[0]["reason"]


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_an_endless_line_is_read_to_the_bound_only(fmt: str) -> None:
    class Zeros(io.RawIOBase):
        served = 0

        def readable(self) -> bool:
            return True

        def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
            buffer[:] = b"\0" * len(buffer)
            Zeros.served += len(buffer)
            return len(buffer)

    rows = list(fact_files.read_rows(io.BufferedReader(Zeros()), fmt))  # type: ignore[arg-type]
    assert rows == [
        (1, f"the line is longer than {fact_files.MAX_LINE_BYTES:,} bytes; "
         "the file was not read further")
    ]
    assert Zeros.served < 2 * fact_files.MAX_LINE_BYTES


def test_a_csv_record_over_the_bound_stops_the_reading() -> None:
    # many small quoted fields, each ending its line: every line is short, the record is not
    record = b'"a\n",' * (fact_files.MAX_LINE_BYTES // 5 + 10) + b"x\n"
    rows = list(fact_files.read_rows(io.BytesIO(CSV_HEADER + record), "csv"))
    assert len(rows) == 1 and rows[0][1] == (
        f"the record is longer than {fact_files.MAX_LINE_BYTES:,} bytes; "
        "the file was not read further"
    )


# -- the value bound of the lookup index ----------------------------------------------


def test_the_btree_bound_is_postgresqls() -> None:
    # BTMaxItemSize, as PostgreSQL's error names it
    assert index_bounds.btree_max_item(8192) == 2704
    assert index_bounds.btree_max_item(32768) == 10896
    # 8 (header) + 3 + 8 + 13 + 101 (1-byte headers, unaligned) = 133, rounded up to 8
    assert index_bounds.index_entry_bytes(["t1", "project", "market_theme", "x" * 100]) == 136
    # past 126 bytes a text takes a 4-byte header, 4-byte aligned: 8 + 24 + (0) + 131 = 163 -> 168
    assert index_bounds.index_entry_bytes(["t1", "project", "market_theme", "x" * 127]) == 168


def test_a_5000_character_value_is_a_bad_line(url: str, tmp_path: Path) -> None:
    value = "".join(chr(0x4E00 + i % 2000) for i in range(5000))
    problems = rejected(cli_load(url, _file(tmp_path, GOOD + jsonl([fact("2", value=value)]))))
    assert problems == [{
        "line": 2,
        "reason": "value_text is too long to index: normalized it is 15,000 bytes of UTF-8, and "
        "the facts lookup index holds at most 2,668 with this tenant, entity type and predicate",
    }]
    assert stored_count(url) == 0


def _incompressible(n: int, rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(n))


@pytest.mark.parametrize("tenant", ["t1", "租户" * 30, "t" * 64])
def test_the_longest_accepted_value_loads_and_one_byte_more_is_refused(
    url: str, tmp_path: Path, tenant: str
) -> None:
    limit = index_bounds.btree_max_item()
    room = index_bounds.value_room((tenant, "project", "market_theme"), limit)
    rng = random.Random(room)
    longest, over = _incompressible(room, rng), _incompressible(room + 1, rng)
    rows = [fact("1", value=longest, tenant_id=tenant), fact("2", value=over, tenant_id=tenant)]
    problems = rejected(cli_load(url, _file(tmp_path, jsonl(rows))))
    assert [p["line"] for p in problems] == [2]
    assert f"holds at most {room:,}" in problems[0]["reason"]
    loaded = cli_load(url, _file(tmp_path, jsonl(rows[:1]), "longest.jsonl"))
    assert loaded.exit_code == 0, loaded.output
    assert stored_count(url) == 1


def test_one_byte_over_the_bound_is_what_postgresql_refuses(
    pg_database_factory: Callable[[], str],
) -> None:
    """The bound is exact, not a guess: written past the loader, PostgreSQL's own
    B-tree takes the longest accepted value and refuses one byte more."""
    from qdsl.facts.db import upgrade

    url = pg_database_factory()
    upgrade(url)
    engine = make_engine(url)
    rng = random.Random(7)
    try:
        for tenant, predicate in (("t1", "market_theme"), ("租户" * 30, "p" * 128)):
            limit = index_bounds.btree_max_item()
            room = index_bounds.value_room((tenant, "project", predicate), limit)
            for size, fits in ((room, True), (room + 1, False)):
                row = fact(tenant_id=tenant, predicate=predicate, value=_incompressible(size, rng))
                row.update(value_norm=row["value_text"], source_type="load",
                           observed_at="2026-01-01T00:00:00Z")
                try:
                    with engine.begin() as conn:
                        conn.execute(semantic_facts.insert(), row)
                    stored = True
                except sa.exc.OperationalError as exc:
                    assert "index row size" in str(exc.orig)
                    stored = False
                assert stored is fits, (tenant, size)
    finally:
        engine.dispose()


@settings(max_examples=50)
@given(texts=st.lists(st.text(max_size=700), min_size=1, max_size=5))
def test_a_prefix_with_its_room_never_exceeds_the_bound(texts: list[str]) -> None:
    texts = [t.encode("utf-8", "replace").decode("utf-8") for t in texts]
    prefix, limit = texts[:-1], index_bounds.btree_max_item()
    room = index_bounds.value_room(prefix, limit)
    if room > 0:
        assert index_bounds.index_entry_bytes([*prefix, "x" * room]) <= limit
    if room > 126:  # past the short header the bound is exact
        assert index_bounds.index_entry_bytes([*prefix, "x" * (room + 1)]) > limit
