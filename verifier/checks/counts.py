"""no_total_count_substitution: a filtered answer that is really the unfiltered total.

The trap this product exists for: "有没有 A 股项目" answered "有 137 个项目".
The executor reads the tenant's unfiltered total (`baseline_total`) as a guard;
an answer whose numbers equal it while the filtered match count differs is
substituting the total for the answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from qdsl.dsl.ir import AnswerContract, ValueSource
from qdsl.dsl.numerals import rewrite_numerals, to_digits
from qdsl.verifier.checks.base import Subject, error, warning
from qdsl.verifier.model import Issue

NAME = "no_total_count_substitution"

_BRACKETS = re.compile(r"\[[^\[\]]*\]")
_TAGGED = re.compile(r"#[\w-]+|\b[A-Za-z_]+:[\w#.:-]+")
_DATES = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?")
_NUMBER = re.compile(r"(?<![0-9A-Za-z.:#/_-])\d+(?![0-9A-Za-z.:/_%-])")
_JOINERS = (
    r"(?:\s*(?:和|与|跟|及|、|,|，|and|vs\.?|versus|with)\s*(?:[A-Za-z\u4e00-\u9fff]+\s*)?\d+)*"
)


def match_count(s: Subject) -> int:
    if s.result.count is not None:
        return s.result.count
    return len(s.result.rows)


def _referents(s: Subject) -> list[str]:
    """Words that name an entity, so "项目 64" / "run 12" are ids, not amounts."""
    words = {s.plan.entity_type, s.result.entity_type}
    catalog = s.context.catalog
    for name in list(words):
        spec = catalog.entities.get(name)
        if spec is not None:
            words.update(spec.synonyms)
    for ref in s.plan.scope.referenced_objects:
        words.add(ref.entity_type)
    for spec in catalog.entities.values():
        words.update(spec.synonyms)
        words.add(spec.name)
    # a key as answers write it, in words ("upcoming visit 3" for upcoming_visit)
    words.update([w.replace("_", " ") for w in words])
    return sorted((w for w in words if w), key=len, reverse=True)


def _spans(pattern: re.Pattern[str] | str, text: str) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(pattern, text)]


def stated_numbers(s: Subject) -> list[int]:
    """Integers the text states as amounts: ids, citations, dates, labels and
    attribute values ("预算：250000", "64: active") are not amounts.

    Number words count too ("一百三十七个", "fourteen projects"): the text is
    read after `rewrite_numerals`, and every shield is found in that text.
    """
    rewritten = rewrite_numerals(s.answer.text)
    text = rewritten.text
    shielded = _spans(_BRACKETS, text) + _spans(_DATES, text) + _spans(_TAGGED, text)
    words = "|".join(re.escape(w) for w in _referents(s))
    # "Yes: 137 A-share projects" counts projects, though a colon leads it.
    counts_entities = re.compile(rf"(?i)[^,，.。;；、:：()（）\[\]\n]*?(?:{words})")
    if words:
        shielded += _spans(rf"(?i)(?:{words})\s*(?:#|no\.?\s*)?\d+{_JOINERS}", text)
    row_ids = {r.entity_id for r in s.result.rows}
    for row in s.result.rows:
        if not row.label:
            continue
        digits = to_digits(row.label)
        if digits.strip().isdigit():
            # A label that is only digits could be the amount itself: shield it only
            # where it names its own match ("69 (#2)"), as the renderer writes it.
            named = rf"(?<!\d){re.escape(row.label)}\s*[(（]#{re.escape(row.entity_id)}[)）]"
            shielded += [rewritten.span(a, b) for a, b in _spans(named, s.answer.text)]
            continue
        # Rewritten alone, a label may differ from its rewrite in context ("三号"
        # before "个"): shield both its rewrite and where the original one lands.
        shielded += _spans(re.escape(digits), text)
        shielded += [rewritten.span(a, b) for a, b in _spans(re.escape(row.label), s.answer.text)]
    found: list[int] = []
    for m in _NUMBER.finditer(text):
        start, end = m.span()
        if any(a <= start and end <= b for a, b in shielded):
            continue
        before, after = text[:start].rstrip(), text[end:].lstrip()
        if after.startswith((":", "：")):
            continue  # a subject's key ("64: active"), not a claimed amount
        if before.endswith((":", "：")) and not (words and counts_entities.match(after)):
            continue  # an attribute's value ("预算：250000"), unless it counts entities
        if m.group() in row_ids and before.endswith(("(", "（")) and after.startswith((")", "）")):
            continue
        found.append(int(m.group()))
    return found


def _states(s: Subject, amount: int) -> bool:
    """Whether the text states `amount` as an amount (`stated_numbers`), reading
    the shields only when some number in the text has that value at all."""
    text = rewrite_numerals(s.answer.text).text
    if not any(int(m.group()) == amount for m in _NUMBER.finditer(text)):
        return False
    return amount in stated_numbers(s)


def no_total_count_substitution(s: Subject) -> Iterator[Issue]:
    answer = s.answer
    if answer.contract is not AnswerContract.COUNT_SCALAR and "count" in answer.data:
        yield error(NAME, f"a {answer.contract.value} answer carries a `count`")
    filtered = [f for f in s.plan.filters if f.value_source is not ValueSource.DEFAULT]
    scope = s.plan.scope
    if not filtered and not scope.referenced_objects and scope.project_id is None:
        return
    baseline = s.result.baseline_total
    if baseline is None:
        yield warning(NAME, "the result has no baseline_total; total substitution unchecked")
        return
    matched = match_count(s)
    if baseline == matched:
        return
    for key, value in answer.data.items():
        if isinstance(value, int) and not isinstance(value, bool) and value == baseline:
            yield error(
                NAME,
                f"data.{key} = {value} is the unfiltered total, not the {matched} matching",
            )
    if _states(s, baseline):
        yield error(
            NAME,
            f"the text states {baseline}, the unfiltered total, not the {matched} matching",
        )
