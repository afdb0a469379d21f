"""The public API: one import root, one typed options object, a path or a Catalog."""

from __future__ import annotations

import dataclasses
from importlib.resources import files
from pathlib import Path

import pytest
from sqlalchemy import Engine
from test_cli_startup import _loaded_after

import qdsl
from qdsl.dsl.catalog import demo_catalog
from qdsl.facts.demo import DEMO_NOW


def test_every_public_name_is_importable_from_qdsl() -> None:
    for name in qdsl.__all__:
        assert getattr(qdsl, name) is not None, name
    from qdsl import AnswerOptions, AnswerResult, LLMPlanner, PlanContext, load_catalog

    assert dataclasses.is_dataclass(AnswerOptions) and dataclasses.is_dataclass(AnswerResult)
    assert callable(load_catalog) and PlanContext is not None and LLMPlanner is not None
    with pytest.raises(AttributeError):
        _ = qdsl.no_such_name  # type: ignore[attr-defined]


def test_import_qdsl_loads_no_heavy_library(tmp_path: Path) -> None:
    assert _loaded_after("import qdsl", tmp_path) == []


def test_options_are_one_frozen_object() -> None:
    options = qdsl.AnswerOptions(now=DEMO_NOW)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.now = None  # type: ignore[misc]
    with pytest.raises(TypeError):
        qdsl.AnswerOptions(DEMO_NOW)  # type: ignore[misc]  # keyword-only


def test_catalog_option_takes_a_path_or_a_catalog(
    sqlite_engine: Engine, tmp_path: Path
) -> None:
    path = tmp_path / "catalog.toml"
    path.write_text(
        files("qdsl.facts.demo").joinpath("catalog.toml").read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    question = "现在有多少个项目"
    answers = [
        qdsl.plan_and_answer(
            question,
            tenant_id="t1",
            engine=sqlite_engine,
            options=qdsl.AnswerOptions(catalog=catalog, now=DEMO_NOW),
        )
        for catalog in (str(path), path, demo_catalog())
    ]
    assert {a.status for a in answers} == {"answered"}
    assert len({a.data["count"] for a in answers}) == 1
