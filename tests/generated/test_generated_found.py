"""The minimal examples the generated-deployment property found, kept and asked again.

tests/generated/found.toml holds each example Hypothesis shrank a failure to:
a deployment, its questions and the oracle's answers. Every example is built
on each dialect whose column types it uses and asked again: RIGHT or SAFE,
never WRONG, never an error. An example of a shape the product does not
serve yet names its gaps (keys of KNOWN_GAPS): on a dialect where one is still
known it is expected to fail, strictly, so the fix shows here as the reminder
to remove the gap from KNOWN_GAPS; after that the example runs as any other.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from generated.deployments import COLUMN_TYPES
from generated.found import Example, expect_of, load
from generated.model import Deployment, Dialect
from generated.oracle import expected
from generated.runner import ask_all
from test_generated_deployments import KNOWN_GAPS

EXAMPLES = load()


def _serves(dep: Deployment, dialect: Dialect) -> bool:
    types = {t for slot in COLUMN_TYPES[dialect].values() for t in slot}
    used = {e.id_sql for e in dep.entities} | {e.label_sql for e in dep.entities}
    used |= {f.sql for e in dep.entities for f in e.fields if f.sql is not None}
    used |= {r.key_sql for r in dep.relations}
    return used <= types


def _cases() -> list[object]:
    out: list[object] = []
    for i, ex in enumerate(EXAMPLES, start=1):
        for dialect in ("sqlite", "postgresql"):
            if not _serves(ex.deployment, dialect):
                continue
            marks: list[pytest.MarkDecorator] = [pytest.mark.pg] if dialect == "postgresql" else []
            gaps = ex.open_gaps(dialect, KNOWN_GAPS)
            if gaps:
                why = "; ".join(f"{g}: {KNOWN_GAPS[g]}" for g in gaps)
                marks.append(pytest.mark.xfail(strict=True, reason=why))
            out.append(pytest.param(ex, dialect, marks=marks, id=f"{i}-{dialect}"))
    return out


def test_the_file_holds_examples_of_every_class() -> None:
    assert len(EXAMPLES) >= 5
    assert all(ex.title and ex.questions for ex in EXAMPLES)
    # every gap still known has an example that shows it
    shown = {g for ex in EXAMPLES for g in ex.gaps}
    assert set(KNOWN_GAPS) <= shown, sorted(set(KNOWN_GAPS) - shown)


@pytest.mark.parametrize("example", EXAMPLES, ids=[str(i) for i in range(1, len(EXAMPLES) + 1)])
def test_the_stored_answers_are_the_oracles(example: Example) -> None:
    dep = example.deployment
    assert [expect_of(expected(dep, q)) for q in example.questions] == list(example.expects)


@pytest.mark.parametrize(("example", "dialect"), _cases())
def test_found_examples_answer_right_or_safe(
    example: Example, dialect: Dialect, request: pytest.FixtureRequest
) -> None:
    build = request.getfixturevalue(f"{'sqlite' if dialect == 'sqlite' else 'pg'}_deployments")
    dep = replace(example.deployment, dialect=dialect)
    with build(dep) as engine:
        done = ask_all(dep, engine, example.questions)
    bad = [a.line() for a in done if a.verdict.outcome in ("wrong", "error")]
    assert not bad, f"{example.title}:\n" + "\n".join(bad)
