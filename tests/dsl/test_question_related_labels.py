"""Objects of a related entity named by their label in a question ("Which orders
did Felix Hoffmann place?", "Acme Corp 的项目有哪些"): read as a condition across
the one declared relation path (≤ 2 hops) that reaches the entity the value
belongs to; several paths clarify naming them, an entity further away clarifies
saying so. On the shop and on a second catalog (deployments.agency), with the
asking tenant's linked values given as a mapping."""

from __future__ import annotations

import pytest
from deployments.agency import agency_catalog

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.linking import LinkedValue, TenantValues
from qdsl.dsl.question import Reading, problems_text, read_question
from qdsl.dsl.textnorm import normalize_text


def values(*items: tuple[str, str, str]) -> TenantValues:
    out: dict[str, tuple[LinkedValue, ...]] = {}
    for entity, field, value in items:
        key = normalize_text(value)
        out[key] = (*out.get(key, ()), LinkedValue(entity, field, value))
    return out


SHOP_VALUES = values(
    ("customer", "name", "Felix Hoffmann"),
    ("order_line", "title", "Garden Hose"),
    ("product", "name", "Garden Hose"),
)
AGENCY_VALUES = values(
    ("client", "name", "Acme Corp"),
    ("person", "name", "Zoe Park"),
    ("project", "title", "Apollo"),
    ("task", "summary", "Fix login"),
    ("project", "title", "Orion"),
    ("person", "name", "Orion"),
)


def conditions(reading: Reading) -> list[tuple[str, object]]:
    assert reading.understood, reading.problems
    return [(c.field, c.value) for c in reading.conditions]


@pytest.mark.parametrize(
    ("question", "entity", "want"),
    [
        ("Which orders did Felix Hoffmann place?", "order", ("customer.name", "Felix Hoffmann")),
        ("Felix Hoffmann 的订单有哪些", "order", ("customer.name", "Felix Hoffmann")),
        # the order's line is titled so, and that line's product named so: the line,
        # the nearer row, bears it
        ("Which orders contain Garden Hose?", "order", ("lines.title", "Garden Hose")),
        ("包含 Garden Hose 的订单有哪些", "order", ("lines.title", "Garden Hose")),
    ],
)
def test_a_shop_object_named_by_its_label_is_a_related_condition(
    shop_catalog: Catalog, question: str, entity: str, want: tuple[str, str]
) -> None:
    reading = read_question(question, shop_catalog, values=SHOP_VALUES)
    assert reading.entity == entity
    assert conditions(reading) == [want]


@pytest.mark.parametrize(
    ("question", "entity", "want"),
    [
        # many-to-one, one hop
        ("Which projects does Acme Corp have?", "project", ("client.name", "Acme Corp")),
        ("Acme Corp 的项目有哪些", "project", ("client.name", "Acme Corp")),
        # one-to-many then many-to-one
        (
            "Which clients have projects owned by Zoe Park?",
            "client",
            ("projects.owner.name", "Zoe Park"),
        ),
        ("Zoe Park 负责的项目的客户有哪些", "client", ("projects.owner.name", "Zoe Park")),
        # one-to-many twice
        (
            "Which clients have the task Fix login?",
            "client",
            ("projects.tasks.summary", "Fix login"),
        ),
        # many-to-one twice
        (
            "Which comments are on tasks of Zoe Park?",
            "comment",
            ("task.assignee.name", "Zoe Park"),
        ),
    ],
)
def test_a_second_catalog_reads_its_related_labels(
    question: str, entity: str, want: tuple[str, str]
) -> None:
    reading = read_question(question, agency_catalog(), values=AGENCY_VALUES)
    assert reading.entity == entity
    assert conditions(reading) == [want]


@pytest.mark.parametrize(
    ("question", "paths"),
    [
        # a task's assignee, or the owner of its project?
        ("Which tasks has Zoe Park?", ("project.owner.name", "assignee.name")),
        # the task's project, or a project its assignee owns?
        ("Apollo 的任务有哪些", ("project.title", "assignee.owned_projects.title")),
    ],
)
def test_several_paths_to_the_entity_clarify_naming_them(
    question: str, paths: tuple[str, ...]
) -> None:
    reading = read_question(question, agency_catalog(), values=AGENCY_VALUES)
    assert not reading.understood
    (problem,) = reading.problems
    assert (problem.reason, problem.detail) == ("ambiguous", "relation_paths")
    assert set(problem.could) == set(paths)
    assert all(p in problems_text(reading.problems, reading.entity, "en") for p in paths)


@pytest.mark.parametrize(
    ("catalog", "question", "tenant_values", "word"),
    [
        ("shop", "Which products has Felix Hoffmann bought?", SHOP_VALUES, "felix hoffmann"),
        ("shop", "Felix Hoffmann 买过哪些商品", SHOP_VALUES, "felix hoffmann"),
        # comment -> task -> project -> client
        ("agency", "List the comments of Acme Corp", AGENCY_VALUES, "acme corp"),
    ],
)
def test_an_entity_three_relations_away_clarifies_saying_so(
    shop_catalog: Catalog,
    catalog: str,
    question: str,
    tenant_values: TenantValues,
    word: str,
) -> None:
    cat = shop_catalog if catalog == "shop" else agency_catalog()
    reading = read_question(question, cat, values=tenant_values)
    assert not reading.understood and not reading.conditions
    far = [p for p in reading.problems if p.text == word]
    assert [(p.reason, p.detail) for p in far] == [("unplaced", "too_far")]
    text = problems_text(far, reading.entity, reading.language)
    assert "two relations" in text or "两层以上" in text


def test_a_value_on_two_paths_that_part_is_not_placed() -> None:
    """ "Orion" titles a project and names a person: from a comment, its task's
    project and its task's assignee, neither on the other's path; neither is guessed."""
    reading = read_question(
        "Which comments are on tasks of Orion?", agency_catalog(), values=AGENCY_VALUES
    )
    assert not reading.understood and not reading.conditions
    (problem,) = [p for p in reading.problems if p.text == "orion"]
    assert problem.detail == "other_entity"
    assert set(problem.could) == {"project.title", "person.name"}


def test_a_relation_verb_without_a_related_condition_stays_a_problem(
    shop_catalog: Catalog,
) -> None:
    for question in ("Which orders did we place?", "Which orders contain cancelled items?"):
        reading = read_question(question, shop_catalog, values=SHOP_VALUES)
        assert not reading.understood, question
    reading = read_question("Which orders did Felix Hoffmann place?", shop_catalog)
    # without the tenant's values the name is unknown words, never dropped
    assert not reading.understood
