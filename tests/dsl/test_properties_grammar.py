"""(b) Strings generated from the grammar itself either normalize or fail with a
typed user error, never any other exception.

Generation uses `hypothesis.extra.lark.from_lark` over the syntax helper's
grammar file (its Earley-built Lark instance: the cached LALR one is loaded
without the grammar object from_lark walks). Raw from_lark output glues tokens
together and is mostly a syntax error, so a second strategy draws each terminal
from the catalog's own vocabulary followed by a space: most of those strings
parse, and the normalizer sees real work.
"""

from __future__ import annotations

from functools import cache

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.lark import from_lark, get_terminal_names
from lark import Lark
from strategies import plans as raw_plans

from qdsl.dsl.catalog import demo_catalog
from qdsl.dsl.errors import QdslError, UserError
from qdsl.dsl.ir import AnswerContract, EmptyPolicy, Plan, QueryType, VerifierCheck
from qdsl.dsl.normalize import NormalizedPlan, PlanContext, normalize
from qdsl.dsl.plan.parser import make_parser, parse_text
from qdsl.dsl.plan.printer import to_text

CAT = demo_catalog()
CTX = PlanContext(tenant_id="t1")
SETTINGS = settings(max_examples=200, deadline=None)


@cache
def grammar() -> Lark:
    return make_parser("earley")


def _vocabulary() -> list[str]:
    words = {*CAT.entities, "projcet", "tsak", "nothing"}
    for ent in CAT.entities.values():
        words |= {*ent.synonyms, *ent.names, *ent.fields, *ent.sorts, *ent.whitelisted}
        words |= {ent.id, ent.label}
    words |= {q.value for q in QueryType} | {"exists", "how_many", "有没有"}
    words |= {c.value for c in AnswerContract} | {c.value for c in VerifierCheck}
    words |= {e.value for e in EmptyPolicy} | {"v1", "v2", "evidence", "matched_evidence"}
    words |= {"facts_first", "fallback_text", "require_fresh_fact", "freshness_days", "t1", "t2"}
    return sorted(w for w in words if w.isidentifier())


def _quoted_values() -> list[str]:
    out = {"2026-01-01", "2026-11-01T00:00:00Z", "x", "", "64"}
    for ent in CAT.entities.values():
        for f in ent.fields.values():
            out |= set(f.values) | {a for al in f.aliases.values() for a in al}
    return sorted('"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"' for v in out)


CLAUSES = (
    "contract",
    "where",
    "select",
    "order",
    "limit",
    "tenant",
    "project",
    "about",
    "retrieval",
    "verify",
    "on_empty",
)


def _spaced(words: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return words.map(lambda w: w + " ")


@cache
def spaced(start: str | None = None) -> st.SearchStrategy[str]:
    """from_lark with every terminal drawn from the catalog's vocabulary, space-separated."""
    lark = grammar()
    explicit: dict[str, st.SearchStrategy[str]] = {
        "WS": st.sampled_from([" ", "\n", "\t "]),
        "COMMENT": st.just("# note\n"),
        "NAME": _spaced(
            st.one_of(st.sampled_from(_vocabulary()), st.from_regex(r"[a-z_]{1,6}", fullmatch=True))
        ),
        "STRING": _spaced(
            st.one_of(
                st.sampled_from(_quoted_values()),
                st.from_regex(r'"[^"\\\n]{0,6}"', fullmatch=True),
            )
        ),
        "INT": _spaced(st.sampled_from(["1", "5", "20", "64", "200", "1000000000"])),
        "NUMBER": _spaced(
            st.one_of(st.integers(-5, 10**6).map(str), st.sampled_from(["0.5", "1e3", "-2.25"]))
        ),
        "COMPARE": _spaced(st.sampled_from(["=", "!=", "~=", "contains", ">", ">=", "<", "<="])),
        "DIRECTION": _spaced(st.sampled_from(["asc", "desc"])),
    }
    for term in lark.terminals:
        if term.pattern.type == "str":
            explicit[term.name] = st.just(term.pattern.value + " ")
    # from_lark refuses explicit strategies for terminals the start rule cannot reach.
    terminals, rules, ignored = lark.grammar.compile([start or "start"], ())
    reachable = get_terminal_names(terminals, rules, ignored)
    explicit = {k: v for k, v in explicit.items() if k in reachable}
    return from_lark(lark, start=start, explicit=explicit)


@cache
def plans_text() -> st.SearchStrategy[str]:
    """A valid-looking header, then clauses each generated from its own grammar rule."""
    header = st.tuples(
        st.sampled_from(["", "plan v1\n"]),
        st.sampled_from([*(q.value for q in QueryType), "exists", "how_many", "有没有"]),
        st.sampled_from(sorted({*CAT.entities, "项目", "projects", "projcet"})),
    ).map(lambda t: f"{t[0]}{t[1]} {t[2]}\n")
    clause = st.sampled_from(CLAUSES).flatmap(spaced)
    return st.tuples(header, st.lists(clause, max_size=4)).map(lambda t: t[0] + "\n".join(t[1]))


def _normalize_text(text: str) -> NormalizedPlan | None:
    try:
        return normalize(parse_text(text), CAT, CTX)
    except QdslError as exc:
        assert isinstance(exc, UserError), exc.to_dict()
        return None


# Raw strings are nearly all syntax errors: fewer examples buy the same assurance.
@settings(max_examples=100, deadline=None)
@given(st.deferred(lambda: from_lark(grammar())))
def test_raw_grammar_strings_normalize_or_fail_typed(text: str) -> None:
    _normalize_text(text)


@SETTINGS
@given(st.deferred(lambda: plans_text() | spaced()))
def test_vocabulary_grammar_strings_normalize_or_fail_typed(text: str) -> None:
    out = _normalize_text(text)
    if out is None:
        return
    # A normalized plan prints to text that parses and normalizes back to itself.
    printed = to_text(out.plan)
    assert normalize(parse_text(printed), CAT, CTX) == NormalizedPlan(plan=out.plan), printed


@SETTINGS
@given(raw_plans, st.sampled_from([None, *sorted(CAT.entities)]))
def test_arbitrary_ir_normalizes_or_fails_typed(plan: Plan, entity: str | None) -> None:
    # The syntax helper's plans name arbitrary entities; half the time bind one for real.
    if entity is not None:
        plan = plan.model_copy(update={"entity_type": entity, "answer_contract": None})
    try:
        out = normalize(plan, CAT, CTX)
    except QdslError as exc:
        assert isinstance(exc, UserError), exc.to_dict()
        return
    assert normalize(out.plan, CAT, CTX) == NormalizedPlan(plan=out.plan)
