"""The tables `ask` prints for a person: one column per value, none repeated."""

from __future__ import annotations

from qdsl.cli.answer_tables import answer_blocks
from qdsl.cli.tables import Table


def _columns(answer: dict[str, object]) -> tuple[str, ...]:
    (table,) = answer_blocks(answer)
    assert isinstance(table, Table)
    return table.columns


def test_the_label_is_not_repeated_beside_its_own_column() -> None:
    # issue 23: `ask` showed `label` and the name column with the same text
    items = [
        {"id": "E-1", "label": "Alice Wang", "full_name": "Alice Wang", "city": "shanghai"},
        {"id": "E-2", "label": "Bo Li", "full_name": "Bo Li", "city": "beijing"},
    ]
    assert _columns({"items": items, "total": 2}) == ("id", "full_name", "city")


def test_the_label_stays_when_no_column_holds_it() -> None:
    items = [{"id": "E-1", "label": "Alice Wang", "city": "shanghai"}]
    assert _columns({"items": items, "total": 1}) == ("id", "label", "city")
    # a column equal to the label on one row only is another value, not the label
    items = [
        {"id": "E-1", "label": "Alice Wang", "alias": "Alice Wang"},
        {"id": "E-2", "label": "Bo Li", "alias": "Bobby"},
    ]
    assert _columns({"items": items, "total": 2}) == ("id", "label", "alias")
