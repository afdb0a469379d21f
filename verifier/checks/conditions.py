"""covers_conditions: the text names the asked entity and every condition.

An answer about "A股 projects" that never says "A股" (or an alias such as
"A-share") may be about something else; the same holds for the entity itself.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.ir import Filter, ValueSource
from qdsl.dsl.textnorm import normalize_text
from qdsl.verifier.checks.base import Subject, error
from qdsl.verifier.model import Issue

NAME = "covers_conditions"

_REQUIRED_SOURCES = frozenset({ValueSource.USER_TEXT, ValueSource.REFERENCED_OBJECT})


def squash(text: str) -> str:
    """Normalized and without spaces: "A 股" and "A股" name the same thing."""
    return normalize_text(text).replace(" ", "")


def entity_names(catalog: Catalog, entity_type: str) -> tuple[str, ...]:
    spec = catalog.entities.get(entity_type)
    # the key, and the key in words as answers write it ("order view" for order_view)
    names = list(dict.fromkeys((entity_type, entity_type.replace("_", " "))))
    if spec is not None:
        names.extend(spec.synonyms)
    return tuple(names)


def _scalar_spellings(value: object) -> list[str]:
    if isinstance(value, bool):
        return []
    if isinstance(value, float) and value.is_integer():
        return [str(int(value)), str(value)]
    text = str(value)
    if len(text) >= 10 and text[4:5] == "-" and text[7:8] == "-":
        return [text, text[:10]]
    return [text]


def value_spellings(catalog: Catalog, entity_type: str, flt: Filter, value: object) -> list[str]:
    """The value and every alias the catalog lists for it."""
    spellings = _scalar_spellings(value)
    if not spellings:
        return []
    spec = catalog.entities.get(entity_type)
    field = spec.fields.get(flt.field) if spec is not None else None
    if field is None or not field.aliases:
        return spellings
    wanted = squash(spellings[0])
    for canonical, aliases in field.aliases.items():
        group = (canonical, *aliases)
        if any(squash(a) == wanted for a in group):
            return [*spellings, *group]
    return spellings


def _values(flt: Filter) -> Iterable[object]:
    if flt.value is None or isinstance(flt.value, bool):
        return ()
    if isinstance(flt.value, tuple):
        return flt.value
    return (flt.value,)


def _label_spans(s: Subject, text: str) -> list[tuple[int, int, bool]]:
    """Where the text holds a match's label, and whether it is written as that match's
    name ("label (#id)").

    A match's own name ("A股量化选股平台") does not state the condition "A股", so a
    spelling wholly inside a longer label does not count. A label that *equals* a
    spelling (a project titled "项目") is told apart from the spelling only where it
    names its match; elsewhere ("符合条件的项目共 1 个") it states the spelling."""
    spans: list[tuple[int, int, bool]] = []
    for label, ids in _labels(s).items():
        marks = tuple(f"(#{i})" for i in ids)
        for start in _occurrences(text, label):
            end = start + len(label)
            after = end
            while after < len(text) and text[after].isspace():
                after += 1
            spans.append((start, end, text.startswith(marks, after)))
    return spans


def _occurrences(text: str, needle: str) -> Iterator[int]:
    """Where `needle` occurs in `text`, left to right, not overlapping (as a literal:
    values are matched with str.find, never compiled into a regex)."""
    if not needle:
        return
    at = text.find(needle)
    while at >= 0:
        yield at
        at = text.find(needle, at + len(needle))


class _Squashed:
    """The text without whitespace, with each kept character's place in the text, so
    a squashed spelling ("A股" for "A 股") is found by str.find and mapped back.

    Places are kept per word (run of non-whitespace), not per character: answer
    texts are long and their words few."""

    def __init__(self, text: str) -> None:
        words = text.split()  # whitespace as str.isspace has it
        # starts[k]: where the k-th word starts in the squashed text; shifts[k]:
        # how far right of that it is in the text.
        self._starts: list[int] = []
        self._shifts: list[int] = []
        squashed = pos = 0
        for word in words:
            at = text.find(word, pos)  # the word cannot start inside the spaces before it
            self._starts.append(squashed)
            self._shifts.append(at - squashed)
            squashed += len(word)
            pos = at + len(word)
        self.text = "".join(words)

    def place(self, at: int) -> int:
        """Where squashed index `at` is in the text."""
        return at + self._shifts[bisect_right(self._starts, at) - 1]

    def spans(self, needle: str) -> Iterator[tuple[int, int]]:
        for at in _occurrences(self.text, needle):
            yield self.place(at), self.place(at + len(needle) - 1) + 1


def _labels(s: Subject) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for r in s.result.rows:
        if r.label:
            out.setdefault(normalize_text(r.label), []).append(normalize_text(r.entity_id))
    return out


def covers_conditions(s: Subject) -> Iterator[Issue]:
    catalog = s.context.catalog
    text = normalize_text(s.answer.text)
    labels = _label_spans(s, text)
    squashed = _Squashed(text)

    def says(spelling: str) -> bool:
        needle = squash(spelling)  # normalize_text leaves no whitespace but " "
        for start, end in squashed.spans(needle):
            if not any(
                a <= start and end <= b and (b - a > end - start or named) for a, b, named in labels
            ):
                return True
        return False

    names = entity_names(catalog, s.plan.entity_type)
    if not any(says(n) for n in names):
        yield error(NAME, f"the text does not name the entity {s.plan.entity_type}")
    for flt in s.plan.filters:
        if flt.value_source not in _REQUIRED_SOURCES:
            continue
        for value in _values(flt):
            spellings = value_spellings(catalog, s.plan.entity_type, flt, value)
            if spellings and not any(says(v) for v in spellings if v):
                yield error(
                    NAME,
                    f"the text does not state the condition {flt.field} "
                    f"{flt.operator.value} {value!r} (nor any alias)",
                )
    for ref in s.plan.scope.referenced_objects:
        if not says(ref.id):
            yield error(NAME, f"the text does not name {ref.entity_type} {ref.id}")
