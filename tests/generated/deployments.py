"""Hypothesis strategies for whole deployments: catalog, column types, rows, facts.

A deployment has 1–3 entities drawn from the noun bank, each with fields of
every kind (tests/generated/vocab.py) stored in a SQL type that can hold it on
the dialect (`COLUMN_TYPES`), int or text ids, and rows for two tenants whose
ids and values overlap (row n has the same id in both tenants, with other
content; a tenant may hold no row of an entity). Facts are stored under any
alias spelling of their value; a many-valued predicate holds up to three
values per object; now and then a fact is about an object the table does not
hold. Three times in four a deployment of two or more entities declares a
relation: one entity's key column holds the other's ids (`relation`), mostly
one its tenant holds, now and then none, an id no tenant holds, or one only the
other tenant holds (the isolation case: that parent never counts).

`gaps` names column types left out until the product serves them (the test
module's KNOWN_GAPS says which and why; the questions leave out the other gaps'
shapes); everything else is drawn.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from generated.model import (
    TENANTS,
    Deployment,
    Dialect,
    Entity,
    Fact,
    Field,
    Passages,
    Relation,
    Row,
    Value,
)
from generated.vocab import BY_KIND, NOUNS, Concept, Noun
from hypothesis import strategies as st

# The SQL types a deployer may store each kind of field in, per dialect. A tag after
# the type says how the value is written where the type alone does not fix it.
COLUMN_TYPES: dict[Dialect, dict[str, tuple[str, ...]]] = {
    "sqlite": {
        "text": ("TEXT", "VARCHAR(64)"),
        "enum": ("TEXT", "VARCHAR(64)"),
        "integral": ("INTEGER", "REAL", "NUMERIC"),
        "decimal": ("REAL", "NUMERIC"),
        "date": ("DATE", "TEXT"),
        "datetime": ("DATETIME", "TEXT space", "TEXT iso"),
        "bool": ("BOOLEAN", "INTEGER"),
        "id": ("INTEGER", "TEXT"),
    },
    "postgresql": {
        "text": ("TEXT", "VARCHAR(64)"),
        "enum": ("TEXT", "VARCHAR(64)"),
        "integral": ("INTEGER", "BIGINT", "NUMERIC", "DOUBLE PRECISION"),
        "decimal": ("NUMERIC", "DOUBLE PRECISION"),
        "date": ("DATE",),
        "datetime": ("TIMESTAMP", "TIMESTAMPTZ"),
        "bool": ("BOOLEAN",),
        "id": ("INTEGER", "BIGINT", "TEXT", "VARCHAR(32)", "UUID"),
    },
}

# Clocks that put "last month", "this week" and "last year" across year and month ends.
NOWS = (
    datetime(2026, 6, 15, 10, 30, tzinfo=UTC),
    datetime(2026, 1, 3, 8, 0, tzinfo=UTC),
    datetime(2025, 12, 31, 23, 0, tzinfo=UTC),
    datetime(2026, 3, 1, 0, 30, tzinfo=UTC),
)
MAX_ROWS = 9


def type_slot(concept: Concept) -> str:
    if concept.kind == "number":
        integral = (
            concept.lo == concept.lo.to_integral() and concept.step == concept.step.to_integral()
        )
        return "integral" if integral else "decimal"
    return concept.kind


def allowed_types(dialect: Dialect, slot: str, gaps: frozenset[str]) -> tuple[str, ...]:
    """The column types drawn for a slot: every one that fits, less the known gaps."""
    return tuple(t for t in COLUMN_TYPES[dialect][slot] if f"{dialect}:{slot}:{t}" not in gaps)


@st.composite
def _field(draw: st.DrawFn, concept: Concept, dialect: Dialect, gaps: frozenset[str]) -> Field:
    if concept.kind == "fact":
        return Field(concept, None)
    types = allowed_types(dialect, type_slot(concept), gaps)
    nullable = concept.kind in ("number", "date", "datetime") and draw(st.booleans())
    return Field(concept, draw(st.sampled_from(types)), nullable)


def _usable(concept: Concept, dialect: Dialect, gaps: frozenset[str]) -> bool:
    if concept.kind == "fact":
        return True
    return bool(allowed_types(dialect, type_slot(concept), gaps))


# Passage and section column names a deployer may choose (none the demo uses), and the
# texts they hold: words no label, name or vocabulary word shares, so that a text
# search for a label never finds a row by its passage.
PASSAGE_COLUMNS = ("content", "description", "details", "abstract_text")
SECTION_COLUMNS = ("chapter", "part")
SECTIONS = ("Overview", "Part 2", "总则", "附录")
PASSAGE_TEXTS = (
    "Steps are logged, reviewed and archived in order.",
    "流程依次登记、复核并归档。",
    "Every request passes two reviews before it is filed; " * 5,
    "每一项申请在归档前须经两轮复核，" * 14,
)


@st.composite
def passages(draw: st.DrawFn) -> Passages | None:
    """Whether the entity is documented, and in which columns."""
    if draw(st.booleans()):
        return None
    return Passages(
        draw(st.sampled_from(PASSAGE_COLUMNS)),
        draw(st.sampled_from((None, *SECTION_COLUMNS))),
        draw(st.booleans()),
    )


@st.composite
def entities(
    draw: st.DrawFn, noun: Noun, dialect: Dialect, gaps: frozenset[str], documented: bool = False
) -> Entity:
    ids = allowed_types(dialect, "id", gaps)
    chosen: list[Concept] = []
    for kind in BY_KIND:
        pool = [c for c in BY_KIND[kind] if _usable(c, dialect, gaps)]
        # most kinds appear in most entities; a second field of a kind now and then
        for _ in range(draw(st.sampled_from([0, 1, 1, 1, 2]))):
            if pool:
                concept = draw(st.sampled_from(pool))
                pool.remove(concept)
                chosen.append(concept)
    fields = tuple(draw(_field(c, dialect, gaps)) for c in chosen)
    label = draw(st.sampled_from(allowed_types(dialect, "text", gaps)))
    quoted = draw(passages()) if documented else None
    return Entity(noun, draw(st.sampled_from(ids)), label, fields, quoted)


def _number(draw: st.DrawFn, c: Concept) -> Decimal:
    steps = int((c.hi - c.lo) / c.step)
    return c.lo + c.step * draw(st.integers(0, steps))


def value_of(draw: st.DrawFn, f: Field, now: datetime) -> Value:
    """One column value of field `f` (None for an absent one), as the oracle holds it."""
    c = f.concept
    if f.nullable and draw(st.integers(0, 4)) == 0:
        return None
    if f.kind in ("enum",):
        return draw(st.sampled_from([v.canon for v in c.values]))
    if f.kind == "text":
        return draw(st.sampled_from(c.names))
    if f.kind == "bool":
        return draw(st.booleans())
    if f.kind == "number":
        return _number(draw, c)
    if f.kind == "date":
        return (now - timedelta(days=draw(st.integers(-30, 800)))).date()
    assert f.kind == "datetime"
    moment = now - timedelta(minutes=draw(st.integers(-30 * 1440, 800 * 1440)))
    return moment.replace(second=0, microsecond=0)


def _row(draw: st.DrawFn, ent: Entity, n: int, now: datetime) -> Row:
    row: Row = {"id": ent.id_of(n), "label": draw(st.sampled_from(ent.noun.labels))}
    for f in ent.fields:
        if f.kind != "fact":
            row[f.name] = value_of(draw, f, now)
    if ent.passages is not None:
        row[ent.passages.column] = draw(st.sampled_from(PASSAGE_TEXTS))
        if ent.passages.section is not None:
            row[ent.passages.section] = draw(st.sampled_from((None, *SECTIONS)))
    return row


def _facts(draw: st.DrawFn, tenant: str, ent: Entity, ids: Iterable[str]) -> list[Fact]:
    out: list[Fact] = []
    for f in ent.fields:
        if f.kind != "fact":
            continue
        c = f.concept
        for entity_id in ids:
            most = 3 if c.many else 1
            picked = draw(st.lists(st.sampled_from(c.values), max_size=most, unique=True))
            for v in picked:
                spelled = draw(st.sampled_from(v.spellings))
                out.append(Fact(tenant, ent.name, entity_id, c.key, spelled, v.canon))
    return out


# the key column types that hold a parent's ids, by the parent's id type
KEY_TYPES: dict[str, tuple[str, ...]] = {
    "INTEGER": ("INTEGER", "BIGINT"),
    "BIGINT": ("BIGINT", "INTEGER"),
    "TEXT": ("TEXT", "VARCHAR(32)"),
    "VARCHAR(32)": ("VARCHAR(32)", "TEXT"),
    "UUID": ("UUID",),
}


@st.composite
def relation(
    draw: st.DrawFn, child: Entity, parent: Entity, dialect: Dialect, gaps: frozenset[str]
) -> Relation:
    """The child's many-to-one relation to the parent, named and worded from the nouns;
    its key column stores the parent's ids in an id type that fits them."""
    ids = allowed_types(dialect, "id", gaps)
    key_sql = draw(st.sampled_from([t for t in KEY_TYPES[parent.id_sql] if t in ids]))
    name = draw(st.sampled_from([parent.name, f"{parent.name}_ref"]))
    p, c = parent.noun, child.noun
    return Relation(
        name,
        child.name,
        parent.name,
        draw(st.sampled_from([f"{parent.name}_id", f"{parent.name}_key"])),
        key_sql,
        (p.zh, p.en, p.en_plural),
        draw(st.sampled_from([c.en_plural, f"{child.name}_items"])),
        (c.zh, c.en, c.en_plural),
    )


def _parent_key(
    draw: st.DrawFn, parent: Entity, *, mine: int, theirs: int, beyond: int
) -> str | None:
    """The parent id a child row holds: mostly one of its tenant's parents, now and then
    none, one no tenant holds, or one only the other tenant holds (the same id names
    another parent there: it must never make the child match)."""
    how = draw(st.integers(0, 9))
    if how == 0:
        return None
    if how == 1 or (not mine and theirs <= mine):
        return parent.id_of(beyond + draw(st.integers(1, 3)))
    if how == 2 and theirs > mine:
        return parent.id_of(draw(st.integers(mine + 1, theirs)))
    if not mine:
        return parent.id_of(draw(st.integers(mine + 1, theirs)))
    return parent.id_of(draw(st.integers(1, mine)))


@st.composite
def deployments(
    draw: st.DrawFn, dialect: Dialect, gaps: frozenset[str] = frozenset()
) -> Deployment:
    now = draw(st.sampled_from(NOWS))
    nouns = draw(
        st.lists(st.sampled_from(NOUNS), min_size=1, max_size=3, unique_by=lambda n: n.key)
    )
    # at most one entity answers explanations (a catalog has one default for them)
    ents = tuple(draw(entities(n, dialect, gaps, documented=i == 0)) for i, n in enumerate(nouns))
    rels: tuple[Relation, ...] = ()
    if len(ents) > 1 and "relations" not in gaps and draw(st.integers(0, 3)):
        child, parent = draw(st.permutations(ents))[:2]
        rels = (draw(relation(child, parent, dialect, gaps)),)
    counts = {(t, e.name): draw(st.integers(0, MAX_ROWS)) for t in TENANTS for e in ents}
    rows: list[tuple[tuple[str, str], tuple[Row, ...]]] = []
    facts: list[Fact] = []
    for tenant in TENANTS:
        other = next(t for t in TENANTS if t != tenant)
        for ent in ents:
            count = counts[tenant, ent.name]
            these = tuple(_row(draw, ent, n, now) for n in range(1, count + 1))
            for rel in (r for r in rels if r.child == ent.name):
                parent = next(e for e in ents if e.name == rel.parent)
                mine, theirs = counts[tenant, parent.name], counts[other, parent.name]
                beyond = max(mine, theirs)
                for row in these:
                    row[rel.key] = _parent_key(
                        draw, parent, mine=mine, theirs=theirs, beyond=beyond
                    )
            rows.append(((tenant, ent.name), these))
            ids = [str(r["id"]) for r in these]
            if draw(st.integers(0, 3)) == 0:
                # facts about an object the table does not hold (deleted, not loaded yet)
                ids.append(ent.id_of(count + 1))
            facts += _facts(draw, tenant, ent, ids)
    return Deployment(dialect, now, ents, tuple(rows), tuple(facts), rels)


# -- every column type, every run --------------------------------------------------------
# The drawn deployments reach every column type over a run only by chance; the type
# matrix reaches each for sure: its k-th deployment stores every field in the k-th
# type its slot allows (cycling), with rows made from the row number.

_MATRIX_FIELDS = ("level", "city", "salary", "premium", "hired_on", "created_at", "remote", "area")


def matrix_size(dialect: Dialect, gaps: frozenset[str]) -> int:
    return max(len(allowed_types(dialect, slot, gaps)) for slot in COLUMN_TYPES[dialect])


def _matrix_value(f: Field, n: int, now: datetime) -> Value:
    c = f.concept
    if f.nullable and n % 4 == 3:
        return None
    if f.kind == "enum":
        return c.values[n % len(c.values)].canon
    if f.kind == "text":
        return c.names[n % len(c.names)]
    if f.kind == "bool":
        return n % 2 == 0
    if f.kind == "number":
        return c.lo + c.step * ((n * 7) % int((c.hi - c.lo) / c.step))
    if f.kind == "date":
        return (now - timedelta(days=(n * 97) % 800 - 3)).date()
    return (now - timedelta(minutes=(n * 99991) % (800 * 1440) - 60)).replace(second=0)


def _matrix_rows(
    ent: Entity, now: datetime
) -> tuple[list[tuple[tuple[str, str], tuple[Row, ...]]], list[Fact]]:
    rows: list[tuple[tuple[str, str], tuple[Row, ...]]] = []
    facts: list[Fact] = []
    area = next(f.concept for f in ent.fields if f.kind == "fact")
    for t, (tenant, count) in enumerate(zip(TENANTS, (6, 4), strict=True)):
        these = []
        for n in range(1, count + 1):
            label = ent.noun.labels[(n + t) % len(ent.noun.labels)]
            row: Row = {"id": ent.id_of(n), "label": label}
            row.update({f.name: _matrix_value(f, n + 2 * t, now) for f in ent.fields if f.sql})
            these.append(row)
            if n % 3:
                v = area.values[(n + t) % len(area.values)]
                spelled = v.spellings[n % len(v.spellings)]
                facts.append(Fact(tenant, ent.name, ent.id_of(n), area.key, spelled, v.canon))
        rows.append(((tenant, ent.name), tuple(these)))
    return rows, facts


def matrix(dialect: Dialect, k: int, gaps: frozenset[str], now: datetime = NOWS[0]) -> Deployment:
    """The k-th deployment of the type matrix: an entity with a field of every kind, and
    while PostgreSQL DATE columns cannot be shown (KNOWN_GAPS), one without them so that
    the other types are shown in snapshots and comparisons."""
    concepts = {c.key: c for kind in BY_KIND.values() for c in kind}
    fields = []
    for name in _MATRIX_FIELDS:
        c = concepts[name]
        types = allowed_types(dialect, type_slot(c), gaps) if c.kind != "fact" else ("",)
        sql = types[k % len(types)] or None
        fields.append(Field(c, sql, nullable=c.kind in ("number", "date", "datetime")))
    ids = allowed_types(dialect, "id", gaps)
    labels = allowed_types(dialect, "text", gaps)
    nouns = [NOUNS[(k + i) % len(NOUNS)] for i in range(2)]
    ents = [Entity(nouns[0], ids[k % len(ids)], labels[k % len(labels)], tuple(fields))]
    if dialect == "postgresql" and "postgresql:date_in_snapshots" in gaps:
        undated = tuple(f for f in fields if f.sql != "DATE")
        ents.append(Entity(nouns[1], ids[(k + 1) % len(ids)], labels[k % len(labels)], undated))
    rows: list[tuple[tuple[str, str], tuple[Row, ...]]] = []
    facts: list[Fact] = []
    for ent in ents:
        more_rows, more_facts = _matrix_rows(ent, now)
        rows += more_rows
        facts += more_facts
    return Deployment(dialect, now, tuple(ents), tuple(rows), tuple(facts))
