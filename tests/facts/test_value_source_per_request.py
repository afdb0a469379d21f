"""The pipeline's default value source across requests, on both dialects.

`plan_and_answer` without `values=` makes a `DatabaseValues` per request over
the engine it runs on. It holds no values (they live in the TTL cache keyed by
URL, catalog content and tenant), so making one is cheap once the catalog's
link fields and the URL's key are known; it never keeps an engine alive; and
a change of the data is seen as a long-lived source sees it: after
`qdsl index refresh` (which forgets the cached values) or the cache's TTL.
"""

from __future__ import annotations

import gc
import weakref

import pytest
from shipping import catalog, insert, shipment
from sqlalchemy import Engine

from qdsl import AnswerOptions, plan_and_answer
from qdsl.facts import value_index as vi
from qdsl.facts.db import make_engine
from qdsl.facts.index_refresh import refresh_index

CAT = catalog()
QUESTION = "有没有 EMS 的运单"


def _ask(engine: Engine) -> tuple[str, object]:
    r = plan_and_answer(QUESTION, "acme", engine=engine, options=AnswerOptions(catalog=CAT))
    return r.status, r.plan.to_json_dict() if r.plan is not None else None


def test_requests_reuse_link_fields_and_see_refreshed_values(
    ship: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    insert(ship, [shipment("acme", "1", carrier="顺丰")])
    refresh_index(ship, CAT)
    before = _ask(ship)
    assert before[0] == "clarify"  # "EMS" names nothing acme has
    found = []
    monkeypatch.setattr(vi, "link_fields", lambda *a: found.append(a) or ())
    assert _ask(ship) == before  # link fields were found once, for this content
    assert not found
    monkeypatch.undo()

    insert(ship, [shipment("acme", "2", carrier="EMS")])
    assert _ask(ship) == before  # cached for the TTL: the index was not refreshed
    refresh_index(ship, CAT)  # what `qdsl index refresh` does: forgets the cached values
    status, plan = _ask(ship)
    assert status == "answered"
    (flt,) = plan["filters"]  # type: ignore[index]
    assert flt["field"] == "carrier" and str(flt["value"]).casefold() == "ems", flt


def test_a_request_keeps_no_engine_alive(ship_db: tuple[str, Engine]) -> None:
    url, _ = ship_db
    engine = make_engine(url)
    _ask(engine)
    gone = weakref.ref(engine)
    engine.dispose()
    del engine
    gc.collect()
    assert gone() is None
