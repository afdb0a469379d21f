"""Relation words in a question: a value or a yes/no field of a related entity
("orders of customers in Berlin", "有退款的订单") read as a condition across the
declared relation that reaches it (`customer.city`, `payments.refunded`); a
field of a related entity with no value ("each order's customer city") as a
field shown through many-to-one relations (a projection of `customer.city`).

An object of a related entity named by its label, or by a linked text value
("Which orders did Felix Hoffmann place?", "包含 Garden Hose 的订单"), is such a
value: the tenant's value index ties the words to `customer.name`, and the
condition is `customer.name = "Felix Hoffmann"`. A value two related entities
hold is placed only where one lies on the other's path (an order's line titled
"Garden Hose" and that line's product named so): the nearer row bears it
(`lines.title`); paths that part stay a problem.

Only declared relations are followed (at most two hops, `dsl.catalog.relations`),
and only when exactly one path from the asked entity reaches the entity the
word belongs to: a word two paths could carry is ambiguous and the problem names
the paths (a task's `assignee.name` or its `project.owner.name`), so no answer is
built on a guess of the path; an entity declared relations reach only in more
hops ("products Felix Hoffmann bought": product ← lines → order → customer) is
a problem saying so. A related entity named in the question with no condition
through it is reported too ("customers with orders" states nothing the plan
language can carry yet).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from qdsl.dsl.catalog import Cardinality, Catalog, EntitySpec, FieldSpec, FieldType
from qdsl.dsl.catalog.relations import MAX_HOPS, rows_path
from qdsl.dsl.ir import Operator
from qdsl.dsl.question.model import Kind, Piece, Problem, Sense

if TYPE_CHECKING:
    from qdsl.dsl.question.conditions import Builder

SEPARATOR = "."


def paths_to(catalog: Catalog, main: str) -> dict[str, list[tuple[str, ...]]]:
    """Entity -> every declared relation path (≤ MAX_HOPS) from `main` reaching it."""
    out: dict[str, list[tuple[str, ...]]] = {}

    def walk(here: str, prefix: tuple[str, ...], seen: tuple[str, ...]) -> None:
        for name, step in catalog.relation_steps.get(here, {}).items():
            if step.target in seen:
                continue  # back to an entity already on the path: no new rows
            path = (*prefix, name)
            out.setdefault(step.target, []).append(path)
            if len(path) < MAX_HOPS:
                walk(step.target, path, (*seen, step.target))

    walk(main, (), (main,))
    return out


def related_spec(catalog: Catalog, ent: EntitySpec, name: str) -> FieldSpec | None:
    """The spec of `relation.field` (or of an own field) on `ent`, if declared."""
    if SEPARATOR not in name:
        return ent.filter_spec(name)
    *names, last = name.split(SEPARATOR)
    here = ent.name
    for rel in names:
        step = catalog.relation_steps.get(here, {}).get(rel)
        if step is None:
            return None
        here = step.target
    target = catalog.entities.get(here)
    spec = target.filter_spec(last) if target is not None else None
    return spec if spec is not None and not spec.sensitive and spec.column else None


def place(catalog: Catalog, main: str, p: Piece) -> Sense | None:
    """The piece as a sense on `main` through the one relation path that reaches
    it: a value of a related field (a label too: "orders Felix Hoffmann placed" is
    `customer.name`), or a related yes/no field (value "true")."""
    paths = paths_to(catalog, main)
    found: dict[str, Sense] = {}
    for s in p.senses:
        if s.entity is None or s.field is None or s.entity == main:
            continue
        reach = paths.get(s.entity, [])
        if len(reach) != 1:
            return None
        spec = catalog.entities[s.entity].filter_spec(s.field)
        if spec is None or spec.sensitive or spec.column is None:
            return None
        field = SEPARATOR.join((*reach[0], s.field))
        if s.kind in (Kind.VALUE, Kind.LINKED) and s.value is not None:
            found[field] = Sense(Kind.VALUE, main, field, s.value)
        elif s.kind is Kind.FIELD and spec.type is FieldType.BOOL:
            found[field] = Sense(Kind.VALUE, main, field, "true")
        else:
            return None
    return _nearest(found)


def _nearest(found: dict[str, Sense]) -> Sense | None:
    """The one sense; of several, the one whose path every other continues ("Garden
    Hose" titles an order's line and names that line's product: the line, the
    nearer row, bears it). Two fields of one entity, or paths that part, stay
    ambiguous."""
    if len(set(found.values())) <= 1:
        return next(iter(found.values()), None)
    for field, sense in found.items():
        path = field.split(SEPARATOR)[:-1]
        others = [f.split(SEPARATOR)[:-1] for f in found if f != field]
        if all(len(o) > len(path) and o[: len(path)] == path for o in others):
            return sense
    return None


def unplaced(catalog: Catalog, main: str, p: Piece) -> Problem:
    """Why a piece of other entities is not applied: several declared paths reach the
    entity (which one is meant is not guessed), it lies beyond MAX_HOPS relations,
    or no relation reaches it."""
    paths = paths_to(catalog, main)
    others = sorted({f"{x.entity}.{x.field}" if x.field else str(x.entity) for x in p.senses})
    entities = {s.entity for s in p.senses if s.entity is not None and s.entity != main}
    filterable = all(
        s.entity in entities and (s.field is None or _column(catalog, s.entity, s.field))
        for s in p.senses
    )
    if not entities or not filterable:
        return Problem(p.text, "unplaced", tuple(others), "other_entity")
    if all(len(paths.get(e, [])) > 1 for e in entities):
        could = tuple(
            SEPARATOR.join((*path, s.field)) if s.field else SEPARATOR.join(path)
            for s in p.senses
            for path in paths[s.entity or ""]
        )
        return Problem(p.text, "ambiguous", tuple(dict.fromkeys(could)), "relation_paths")
    if all(e not in paths and reachable(catalog, main, e) for e in entities):
        return Problem(p.text, "unplaced", tuple(others), "too_far")
    return Problem(p.text, "unplaced", tuple(others), "other_entity")


def _column(catalog: Catalog, entity: str, field: str) -> bool:
    spec = catalog.entities[entity].filter_spec(field)
    return spec is not None and not spec.sensitive and spec.column is not None


def reachable(catalog: Catalog, start: str, goal: str) -> bool:
    """Whether declared relations lead from `start` to `goal` at all."""
    seen, todo = {start}, [start]
    while todo:
        for step in catalog.relation_steps.get(todo.pop(), {}).values():
            if step.target == goal:
                return True
            if step.target not in seen:
                seen.add(step.target)
                todo.append(step.target)
    return False


def related_entity(catalog: Catalog, main: str, p: Piece) -> str | None:
    """The related entity an entity word names, when one declared path reaches it."""
    if p.kind is not Kind.ENTITY:
        return None
    paths = paths_to(catalog, main)
    named = {s.entity for s in p.senses if s.kind is Kind.ENTITY and s.entity}
    reached = [e for e in named if len(paths.get(e, [])) == 1]
    return reached[0] if len(reached) == 1 and len(named) == 1 else None


def through(catalog: Catalog, main: str, entity: str, fields: set[str]) -> bool:
    """Whether some condition field goes through the path reaching `entity` (or
    is that path: a condition on the related rows themselves)."""
    reach = paths_to(catalog, main).get(entity, [])
    if len(reach) != 1:
        return False
    path = SEPARATOR.join(reach[0])
    return any(f == path or f.startswith(path + SEPARATOR) for f in fields)


def named_rows(catalog: Catalog, main: str, p: Piece) -> str | None:
    """The relation path to the one related entity an absence or presence piece
    names ("without a payment": `payments`), when one declared path reaches it."""
    named = {s.entity for s in p.senses if s.kind is Kind.ENTITY and s.entity}
    if len(named) != 1 or main in named:
        return None
    reach = paths_to(catalog, main).get(named.pop(), [])
    return SEPARATOR.join(reach[0]) if len(reach) == 1 else None


def settle_rows(b: Builder, main: str) -> None:
    """Conditions on related rows beside conditions through the same path: some
    row is implied by a condition on a field of it ("orders with a payment by
    card": the card payment is one), so it goes; no row beside a field of them
    ("orders without a card payment") is a "none of them" the plan language
    cannot state, so it stays a problem rather than a contradiction."""
    rows = [
        c
        for c in b.conditions
        if c.operator is Operator.IS_NULL and rows_path(b.catalog, main, c.field)
    ]
    for c in rows:
        others = [o for o in b.conditions if o is not c and o.field.startswith(c.field + SEPARATOR)]
        if not others:
            continue
        b.conditions.remove(c)
        if c.value is not False:
            b.problem(c.text, "unplaced", (c.field,), "negation")


def shown_field(catalog: Catalog, main: str, p: Piece) -> str | None:
    """A field word of a related entity that names no condition ("each order's
    customer city"): the `relation.field` a projection shows, when one path of
    many-to-one steps reaches it (a row has one such related row)."""
    if p.kind is not Kind.FIELD:
        return None
    paths = paths_to(catalog, main)
    found: set[str] = set()
    for s in p.senses:
        if s.kind is not Kind.FIELD or s.entity is None or s.field is None or s.entity == main:
            continue
        reach = paths.get(s.entity, [])
        spec = catalog.entities[s.entity].fields.get(s.field)
        if len(reach) != 1 or spec is None or spec.sensitive or spec.column is None:
            return None
        field = SEPARATOR.join((*reach[0], s.field))
        if spec.type is FieldType.BOOL or not _single(catalog, main, field):
            return None
        found.add(field)
    return found.pop() if len(found) == 1 else None


def absorb(
    catalog: Catalog,
    main: str,
    p: Piece,
    *,
    negated: bool,
    values: list[tuple[Sense, bool, str]],
    named: list[tuple[str, str]],
    shown: list[str] | None = None,
) -> bool:
    """Take a piece of another entity as a relation word, if a declared path
    carries it: a related value joins `values`, a related entity word `named`,
    a related field shown (not negated) `shown`."""
    if shown is not None and not negated:
        field = shown_field(catalog, main, p)
        if field is not None:
            shown.append(field)
            return True
    sense = place(catalog, main, p)
    if sense is not None and negated and not _single(catalog, main, sense.field or ""):
        # "customers without a cancelled order" is no condition on some related
        # row: the plan language cannot state it, so it stays a problem
        return False
    if sense is not None:
        values.append((sense, negated, p.text))
        return True
    entity = related_entity(catalog, main, p)
    if entity is not None:
        named.append((entity, p.text))
        return True
    return False


def check_named(
    b: Builder, main: str, named: list[tuple[str, str]], shown: tuple[str, ...] = ()
) -> None:
    """A related entity named with no condition nor shown field through it is not
    understood."""
    fields = {c.field for c in b.conditions} | set(shown)
    for entity, text in named:
        if not through(b.catalog, main, entity, fields):
            b.problem(text, "unplaced", (entity,), "other_entity")


def _single(catalog: Catalog, main: str, field: str) -> bool:
    """Whether every step of the field's path reaches one row (many-to-one)."""
    here = main
    for name in field.split(SEPARATOR)[:-1]:
        step = catalog.relation_steps.get(here, {}).get(name)
        if step is None or step.cardinality is not Cardinality.MANY_TO_ONE:
            return False
        here = step.target
    return True
