"""The one Transformer from the Lark parse tree to the plan IR.

Every rule of ``grammar.lark`` has a method here; a rule without one is a
defect and raises instead of passing a tree through. Words that name enum
members (query type, contract, checks, ...) are resolved by ``dsl.plan.closure``,
the same as in the JSON form. Nodes parsed from text carry their spans.
"""

from __future__ import annotations

import json
import math
import unicodedata
from collections.abc import Callable
from typing import Any, TypeVar

from lark import Token, Transformer
from lark.tree import Meta
from pydantic import ValidationError

from qdsl.dsl.errors import InternalError, PlanError, QdslError
from qdsl.dsl.ir import (
    EmptyPolicy,
    Filter,
    Grouping,
    Measure,
    ObjectRef,
    Operator,
    Plan,
    RetrievalPolicy,
    Scalar,
    Scope,
    Sort,
    SortDirection,
    Span,
    Value,
    ValueSource,
)
from qdsl.dsl.plan import closure

T = TypeVar("T")


def excerpt(text: str, line: int, column: int) -> str:
    """The faulty line and a caret under `column` (both 1-based).

    Wide (CJK) characters take two cells and tabs are kept, so the caret lines
    up in a terminal.
    """
    lines = text.split("\n")
    source = lines[line - 1] if 0 < line <= len(lines) else ""
    source = source.rstrip("\r")
    pad: list[str] = []
    for char in source[: max(column - 1, 0)]:
        if char == "\t":
            pad.append("\t")
        elif unicodedata.east_asian_width(char) in ("W", "F"):
            pad.append("  ")
        else:
            pad.append(" ")
    return f"{source}\n{''.join(pad)}^"


def located(error: QdslError, text: str, line: int, column: int) -> QdslError:
    """`error` with the position and caret excerpt of where it was written."""
    error.details = {
        "line": line,
        "column": column,
        "excerpt": excerpt(text, line, column),
        **error.details,
    }
    return error


def span_of(meta: Meta | None) -> Span | None:
    # None: parsed without positions (`parse_text(..., spans=False)`).
    if meta is None or meta.empty:
        return None
    # Lark's own integers: nothing to validate (a span is provenance only).
    return Span.model_construct(
        line=meta.line,
        column=meta.column,
        end_line=meta.end_line,
        end_column=meta.end_column,
        start_pos=meta.start_pos,
        end_pos=meta.end_pos,
    )


def _start(meta: Meta | None) -> tuple[int, int]:
    """Line and column where a node starts (1, 1 when unknown)."""
    if meta is None or meta.empty:
        return 1, 1
    return meta.line, meta.column


# A clause as its rule reduced it: name, payload, where it was written. A plain
# tuple: a plan text has a clause per line or so, and a tuple costs a tenth of
# a frozen dataclass to build.
_Clause = tuple[str, Any, Meta | None]


class PlanTransformer(Transformer[Token, Plan]):
    """Builds a raw (not yet normalized) `Plan` from a parse tree of `text`."""

    def __init__(self, text: str) -> None:
        super().__init__(visit_tokens=False)
        self._text = text

    # -- safety net ---------------------------------------------------------

    def __default__(self, data: Any, children: Any, meta: Any) -> Any:
        # Every rule lands here: rules are handled by `rule_<name>` methods, looked up
        # in one table (faster than Lark's per-node v_args wrappers), and a rule
        # without a handler is a defect, never a tree passed through.
        handler = _HANDLERS.get(str(data))
        if handler is None:
            raise InternalError(
                "unhandled_rule",
                f"the plan transformer has no handler for grammar rule {data!r}",
                hint="this is a qdsl defect: grammar.lark and dsl/plan/transform.py disagree",
            )
        return handler(self, meta, children)

    def _at(self, token: Token, error: QdslError) -> QdslError:
        # A plain string (the lean parser's) has no position: its refusals are
        # raised again, located, by the parse with positions.
        line, column = getattr(token, "line", None), getattr(token, "column", None)
        return located(error, self._text, line or 1, column or 1)

    def _word(self, token: Token, resolve: Callable[[str], Any]) -> Any:
        try:
            return resolve(str(token))
        except PlanError as error:
            raise self._at(token, error) from None

    def _build(
        self,
        meta: Meta | None,
        build: Callable[[], T],
        clause_meta: dict[str, Meta | None] | None = None,
    ) -> T:
        """`build()`, with a model validation error pointed at the clause that caused it."""
        try:
            return build()
        except ValidationError as error:
            raise self._invalid(error, meta, clause_meta) from None

    def _invalid(
        self,
        error: ValidationError,
        meta: Meta | None,
        clause_meta: dict[str, Meta | None] | None = None,
    ) -> PlanError:
        """A model validation error as a plan error, at the clause that caused it."""
        problem = error.errors()[0]
        if clause_meta and problem["loc"] and str(problem["loc"][0]) in clause_meta:
            meta = clause_meta[str(problem["loc"][0])]
        path = ".".join(str(part) for part in problem["loc"])
        error_at = located(
            PlanError(
                "invalid_plan",
                f"{path}: {problem['msg']}" if path else str(problem["msg"]),
                hint="fix the value at the caret",
            ),
            self._text,
            *_start(meta),
        )
        assert isinstance(error_at, PlanError)
        return error_at

    # -- values ---------------------------------------------------------------

    def rule_string(self, meta: Meta | None, children: list[Token]) -> str:
        return self._decode(children[0])

    def _decode(self, token: Token) -> str:
        if "\\" not in token:
            # No escape: the grammar's STRING is then its quotes around the text itself.
            return str(token)[1:-1]
        try:
            value = json.loads(str(token), strict=False)
        except json.JSONDecodeError:
            raise self._at(
                token,
                PlanError(
                    "invalid_string",
                    f"invalid escape in string {token!s}",
                    hint='strings use JSON escapes: \\" \\\\ \\n \\t \\uXXXX',
                ),
            ) from None
        assert isinstance(value, str)
        return value

    def rule_number(self, meta: Meta | None, children: list[Token]) -> int | float:
        text = str(children[0])
        if not any(c in text for c in ".eE"):
            return int(text)
        value = float(text)
        if not math.isfinite(value):
            raise self._at(
                children[0],
                PlanError(
                    "number_out_of_range",
                    f"the number {text} is too large",
                    hint="numbers must be finite (about ±1.8e308 at most)",
                ),
            )
        return value

    def rule_true(self, meta: Meta | None, children: list[Token]) -> bool:
        return True

    def rule_false(self, meta: Meta | None, children: list[Token]) -> bool:
        return False

    def rule_value_list(self, meta: Meta | None, children: list[Scalar]) -> tuple[Scalar, ...]:
        return tuple(children)

    def rule_ident(self, meta: Meta | None, children: list[Token]) -> str:
        # INT and NAME are kept as written, so "0064" stays "0064". Only a STRING
        # starts with a quote (the lean parser's tokens are plain strings).
        token = children[0]
        return self._decode(token) if token.startswith('"') else str(token)

    # -- conditions (operator, value) -------------------------------------------

    def rule_compare(self, meta: Meta | None, children: list[Any]) -> tuple[Operator, Value]:
        token, value = children
        return self._word(token, closure.operator), value

    def rule_in_(self, meta: Meta | None, children: list[Any]) -> tuple[Operator, Value]:
        return Operator.IN, children[0]

    def rule_not_in(self, meta: Meta | None, children: list[Any]) -> tuple[Operator, Value]:
        return Operator.NOT_IN, children[0]

    def rule_between(self, meta: Meta | None, children: list[Any]) -> tuple[Operator, Value]:
        return Operator.BETWEEN, (children[0], children[1])

    def rule_is_null(self, meta: Meta | None, children: list[Any]) -> tuple[Operator, Value]:
        return Operator.IS_NULL, True

    def rule_is_not_null(self, meta: Meta | None, children: list[Any]) -> tuple[Operator, Value]:
        return Operator.IS_NULL, False

    def rule_field_path(self, meta: Meta | None, children: list[Token]) -> str:
        return ".".join(str(name) for name in children)

    def rule_shown_path(self, meta: Meta | None, children: list[Token]) -> str:
        return ".".join(str(name) for name in children)

    def rule_group_path(self, meta: Meta | None, children: list[Token]) -> str:
        return ".".join(str(name) for name in children)

    def rule_filter(self, meta: Meta | None, children: list[Any]) -> Filter:
        name, (operator, value), source = children
        value_source = (
            ValueSource.USER_TEXT if source is None else self._word(source, closure.value_source)
        )
        try:
            return Filter(
                field=str(name),
                operator=operator,
                value=value,
                value_source=value_source,
                span=span_of(meta),
            )
        except ValidationError as error:
            raise self._invalid(error, meta) from None

    # -- clauses ------------------------------------------------------------------

    def rule_version(self, meta: Meta | None, children: list[Token]) -> _Clause:
        token = children[0]
        if str(token) != "v1":
            raise self._at(
                token,
                PlanError(
                    "unsupported_plan_version",
                    f"unsupported plan version {token!s}",
                    hint="write `plan v1` or leave the line out",
                ),
            )
        return ("version", "v1", meta)

    def rule_header(self, meta: Meta | None, children: list[Token]) -> _Clause:
        word, entity = children
        return ("header", (self._word(word, closure.query_type), str(entity)), meta)

    def rule_contract(self, meta: Meta | None, children: list[Token]) -> _Clause:
        return ("contract", self._word(children[0], closure.answer_contract), meta)

    def rule_where(self, meta: Meta | None, children: list[Filter]) -> _Clause:
        return ("where", tuple(children), meta)

    def rule_select(self, meta: Meta | None, children: list[Token]) -> _Clause:
        return ("select", tuple(str(name) for name in children), meta)

    def rule_sort(self, meta: Meta | None, children: list[Token | None]) -> Sort:
        name, direction = children
        assert name is not None
        return Sort(
            field=str(name),
            direction=SortDirection.ASC if direction is None else SortDirection(str(direction)),
            span=span_of(meta),
        )

    def rule_order(self, meta: Meta | None, children: list[Sort]) -> _Clause:
        return ("order", tuple(children), meta)

    def rule_grouping(self, meta: Meta | None, children: list[Token | None]) -> Grouping:
        name, grain = children
        assert name is not None
        return Grouping(
            field=str(name),
            grain=None if grain is None else self._word(grain, closure.grain),
            span=span_of(meta),
        )

    def rule_group(self, meta: Meta | None, children: list[Grouping]) -> _Clause:
        return ("group", tuple(children), meta)

    def rule_limit(self, meta: Meta | None, children: list[Token]) -> _Clause:
        return ("limit", int(children[0]), meta)

    def rule_tenant(self, meta: Meta | None, children: list[str]) -> _Clause:
        return ("tenant", children[0], meta)

    def rule_project(self, meta: Meta | None, children: list[str]) -> _Clause:
        return ("project", children[0], meta)

    def rule_object_ref(self, meta: Meta | None, children: list[Any]) -> ObjectRef:
        entity, ref_id = children
        return self._build(
            meta, lambda: ObjectRef(entity_type=str(entity), id=ref_id, span=span_of(meta))
        )

    def rule_about(self, meta: Meta | None, children: list[ObjectRef]) -> _Clause:
        return ("about", tuple(children), meta)

    def rule_retrieval_item(
        self, meta: Meta | None, children: list[Token | None]
    ) -> tuple[str, Any]:
        name, number = children
        assert name is not None
        try:
            return closure.retrieval_option(str(name), None if number is None else int(number))
        except PlanError as error:
            raise self._at(name, error) from None

    def rule_retrieval(self, meta: Meta | None, children: list[tuple[str, Any]]) -> _Clause:
        settings = dict(_RETRIEVAL_DEFAULTS)
        settings.update(children)
        return ("retrieval", self._build(meta, lambda: RetrievalPolicy(**settings)), meta)

    def rule_verify(self, meta: Meta | None, children: list[Token]) -> _Clause:
        checks = tuple(self._word(token, closure.verifier_check) for token in children)
        return ("verify", checks, meta)

    def rule_on_empty(self, meta: Meta | None, children: list[Token]) -> _Clause:
        policy = self._word(children[0], closure.empty_policy)
        return ("on_empty", policy is EmptyPolicy.CLARIFY, meta)

    # -- the measure (an aggregate's function and field) ------------------------------

    def rule_measure_call(self, meta: Meta | None, children: list[Token | None]) -> _Clause:
        word, field = children
        assert word is not None
        function = self._word(word, closure.aggregation)
        value = None if field is None else str(field)
        measure = self._build(
            meta, lambda: Measure(function=function, field=value, span=span_of(meta))
        )
        return ("measure", measure, meta)

    def rule_measure_named(self, meta: Meta | None, children: list[Token]) -> _Clause:
        name = str(children[0])
        return ("measure", self._build(meta, lambda: Measure(name=name, span=span_of(meta))), meta)

    # -- the plan -------------------------------------------------------------------

    def rule_start(self, meta: Meta | None, children: list[_Clause]) -> Plan:
        seen: dict[str, _Clause] = {}
        for clause in children:
            name = clause[0]
            if name in seen:
                raise located(
                    PlanError(
                        "duplicate_clause",
                        f"the {name} clause is written twice",
                        hint=f"merge the two {name} clauses into one",
                        details={"clause": name},
                    ),
                    self._text,
                    *_start(clause[2]),
                )
            seen[name] = clause
        query_type, entity_type = seen["header"][1]
        fields: dict[str, Any] = {"query_type": query_type, "entity_type": entity_type}
        scope: dict[str, Any] = {}
        metas: dict[str, Meta | None] = {}
        for name, payload, clause_meta in seen.values():
            place = _CLAUSE_FIELDS.get(name)
            if place is not None:
                target, into = place
                (scope if into == "scope" else fields)[target] = payload
                metas[target] = clause_meta
        if scope:
            fields["scope"] = Scope(**scope)
        try:
            return Plan(**fields, span=span_of(meta))
        except ValidationError as error:
            raise self._invalid(error, meta, metas) from None


_HANDLERS: dict[str, Callable[..., Any]] = {
    name.removeprefix("rule_"): handler
    for name, handler in vars(PlanTransformer).items()
    if name.startswith("rule_")
}

# what a retrieval clause starts from (plain values: copied, never shared)
_RETRIEVAL_DEFAULTS: dict[str, Any] = RetrievalPolicy().model_dump()

# clause name -> Plan (or Scope) field it fills (the header and version are read apart)
_CLAUSE_FIELDS: dict[str, tuple[str, str]] = {
    "contract": ("answer_contract", "plan"),
    "where": ("filters", "plan"),
    "select": ("projection", "plan"),
    "order": ("sort", "plan"),
    "group": ("group_by", "plan"),
    "limit": ("limit", "plan"),
    "retrieval": ("retrieval_policy", "plan"),
    "verify": ("verifier_checks", "plan"),
    "on_empty": ("clarify_on_empty", "plan"),
    "measure": ("measure", "plan"),
    "tenant": ("tenant_id", "scope"),
    "project": ("project_id", "scope"),
    "about": ("referenced_objects", "scope"),
}
