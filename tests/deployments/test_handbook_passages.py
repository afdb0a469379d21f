"""Explanations quote what the catalog names (issue 21 item 5): the passage column
and the section column come from `passage` / `passage_section`, never from a
column name written in the renderer. The expected passages are the rows
themselves, read back from the deployment's own data file.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable

import pytest
from small import HANDBOOK, build, catalog_of

from qdsl.api import AnswerOptions, plan_and_answer
from qdsl.dsl.catalog import Catalog, CatalogError, catalog_from_mapping
from qdsl.facts.db import make_engine

_ROW = re.compile(r"VALUES \('([^']*)', '([^']*)', '([^']*)', '([^']*)', '([^']*)'\)")


def _rows(tenant: str) -> dict[str, tuple[str, str, str]]:
    """id -> (heading, content, chapter) of `tenant`, from data.sql."""
    out: dict[str, tuple[str, str, str]] = {}
    for line in (HANDBOOK / "data.sql").read_text(encoding="utf-8").splitlines():
        found = _ROW.search(line)
        if found and found.group(1) == tenant:
            out[found.group(2)] = (found.group(3), found.group(4), found.group(5))
    return out


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.pg)])
def handbook_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    if request.param == "sqlite":
        url = f"sqlite+pysqlite:///{tmp_path_factory.mktemp('hb') / 'handbook.sqlite3'}"
    else:
        factory: Callable[[], str] = request.getfixturevalue("pg_database_factory")
        url = factory()
    build(HANDBOOK, url)
    return url


def _explain(url: str, question: str, tenant: str, catalog: Catalog) -> list[dict[str, object]]:
    engine = make_engine(url)
    try:
        result = plan_and_answer(
            question, tenant, engine=engine, options=AnswerOptions(catalog=catalog)
        )
    finally:
        engine.dispose()
    assert result.status == "answered", (result.status, result.text)
    assert result.answer_contract == "explanation_with_citations"
    passages: list[dict[str, object]] = result.data["passages"]
    return passages


@pytest.mark.parametrize(
    ("question", "tenant", "expected"),
    [
        ("Explain expense claims", "acme", "HB-1"),
        ("What is parental leave?", "acme", "HB-2"),
        ("报销怎么审批", "acme", "HB-3"),
        ("Explain expense claims", "globex", "HB-1"),
    ],
)
def test_passages_quote_the_declared_columns(
    handbook_url: str, question: str, tenant: str, expected: str
) -> None:
    rows = _rows(tenant)
    passages = _explain(handbook_url, question, tenant, catalog_of(HANDBOOK))
    assert expected in {p["id"] for p in passages}
    for p in passages:
        heading, content, chapter = rows[str(p["id"])]
        assert p["title"] == heading
        assert p["text"] == content  # every passage here is under the excerpt bound
        assert p["section"] == chapter


def test_without_passage_keys_the_first_searched_column_is_quoted(handbook_url: str) -> None:
    text = (HANDBOOK / "catalog.toml").read_text(encoding="utf-8")
    text = text.replace('passage = "content"\n', "").replace('passage_section = "chapter"\n', "")
    catalog = catalog_from_mapping(tomllib.loads(text))
    assert catalog.entity("guide").passage_column == "content"
    rows = _rows("acme")
    passages = _explain(handbook_url, "Explain parental leave", "acme", catalog)
    assert passages
    for p in passages:
        assert p["text"] == rows[str(p["id"])][1]
        assert p["section"] is None


@pytest.mark.parametrize(
    ("replace", "by", "where"),
    [
        ('passage = "content"', 'passage = "chapter"', "passage"),
        ('passage_section = "chapter"', 'passage_section = "author"', "passage_section"),
    ],
)
def test_undeclared_passage_columns_are_refused(replace: str, by: str, where: str) -> None:
    text = (HANDBOOK / "catalog.toml").read_text(encoding="utf-8").replace(replace, by)
    with pytest.raises(CatalogError, match=where):
        catalog_from_mapping(tomllib.loads(text))
