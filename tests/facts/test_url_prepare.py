"""`prepare_threshold` in a PostgreSQL URL: qdsl's setting, taken out of the URL
(libpq does not know it) and handed to psycopg (docs/scaling.md, the pooler)."""

from __future__ import annotations

import pytest

from qdsl.dsl.errors import UsageError
from qdsl.facts.engines import driver_url, make_engine

BASE = "postgresql://qdsl@127.0.0.1:6432/desk"


@pytest.mark.parametrize(
    ("written", "threshold"), [("none", None), ("off", None), ("None", None), ("0", 0), ("7", 7)]
)
def test_the_setting_reaches_psycopg_and_leaves_the_url(
    written: str, threshold: int | None
) -> None:
    url, args = driver_url(f"{BASE}?prepare_threshold={written}&connect_timeout=5")
    assert args == {"prepare_threshold": threshold}
    assert "prepare_threshold" not in url.query and url.query["connect_timeout"] == "5"
    engine = make_engine(f"{BASE}?prepare_threshold={written}")
    try:
        assert "prepare_threshold" not in engine.url.query
        assert "prepare_threshold" not in engine.dialect.create_connect_args(engine.url)[1]
    finally:
        engine.dispose()


def test_without_it_nothing_changes() -> None:
    url, args = driver_url(BASE)
    assert args == {} and url.render_as_string() == "postgresql+psycopg://qdsl@127.0.0.1:6432/desk"


@pytest.mark.parametrize(
    "url",
    [
        f"{BASE}?prepare_threshold=sometimes",
        f"{BASE}?prepare_threshold=-1",
        f"{BASE}?prepare_threshold=1&prepare_threshold=2",
        "sqlite:///x.sqlite3?prepare_threshold=none",
    ],
)
def test_anything_else_is_a_usage_error(url: str) -> None:
    with pytest.raises(UsageError) as info:
        driver_url(url)
    assert info.value.code == "usage/bad_database_url" and "prepare_threshold" in info.value.hint
