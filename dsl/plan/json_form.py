"""Plan JSON -> raw IR: ``parse_json``.

The JSON form uses the field names of docs/plan-language.md. Enum words go through the same
closure as the text form (``"exists"`` -> existence, ``"=="`` -> equals).
Validation reports every problem at once, each at its RFC 6901 JSON pointer;
names must be identifiers, exactly as in the text grammar, so nothing the
text form could not say reaches the IR.
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import ValidationError

from qdsl.dsl.errors import PlanError
from qdsl.dsl.ir import Operator, Plan
from qdsl.dsl.plan import closure
from qdsl.dsl.plan.printer import NAME_RE
from qdsl.dsl.settings.limits import check_json_depth

Problem = dict[str, str]
# Where a value sits, as pointer parts: rendered (RFC 6901) only when a problem is found.
At = tuple[str | int, ...]

_PLAN_KEYS = frozenset(Plan.model_fields) - {"span"}
# field -> (resolver, valid stand-in used after a recorded problem)
_ENUM_FIELDS: dict[str, tuple[Callable[[str], Any], Any]] = {
    "query_type": (closure.query_type, "unknown"),
    "answer_contract": (closure.answer_contract, None),
}


def pointer(*parts: str | int) -> str:
    """RFC 6901: ``("filters", 0, "a/b")`` -> ``"/filters/0/a~1b"``."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def parse_json(source: str | bytes | Mapping[str, Any]) -> Plan:
    """Validate a JSON plan (text or an already-decoded mapping) into the raw IR."""
    data = _decode(source) if isinstance(source, str | bytes) else source
    if not isinstance(data, Mapping):
        raise _invalid([{"pointer": "", "message": "a plan is a JSON object"}])
    problems: list[Problem] = []
    cleaned = _Cleaner(problems).plan(data)
    plan: Plan | None = None
    try:
        plan = Plan.model_validate(cleaned)
    except ValidationError as error:
        problems.extend(_pydantic_problems(error))
    if problems or plan is None:
        raise _invalid(problems)
    return plan


def _decode(source: str | bytes) -> Any:
    text = source.decode("utf-8", "replace") if isinstance(source, bytes) else source
    text = text.removeprefix("\ufeff")
    check_json_depth(text, "the plan")
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as error:
        raise PlanError(
            "invalid_json",
            f"the plan is not valid JSON: {error.msg}",
            hint=f"check the JSON at line {error.lineno}, column {error.colno}",
            details={"line": error.lineno, "column": error.colno, "position": error.pos},
        ) from None
    except ValueError as error:
        raise PlanError(
            "invalid_json",
            str(error),
            hint="NaN and Infinity are not JSON numbers",
            details={"line": None, "column": None, "position": None},
        ) from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"the plan is not valid JSON: {name} is not allowed")


def _invalid(problems: list[Problem]) -> PlanError:
    unique: list[Problem] = []
    for problem in sorted(problems, key=lambda p: _pointer_key(p["pointer"])):
        if problem not in unique:
            unique.append(problem)
    first = unique[0]
    where = first["pointer"] or "/"
    more = f" (and {len(unique) - 1} more)" if len(unique) > 1 else ""
    return PlanError(
        "invalid_plan",
        f"invalid plan at {where}: {first['message']}{more}",
        hint="fix every problem listed in details.problems; `qdsl schema` shows the plan shape",
        details={"pointer": first["pointer"], "problems": unique},
    )


def _pointer_key(where: str) -> list[tuple[int, int, str]]:
    """Document order: array indexes compare as numbers. An index is ASCII digits:
    `str.isdigit` also holds for "¹" or "٣", which a key may be and int() refuses."""
    return [
        (0, int(part), "") if part.isascii() and part.isdigit() else (1, 0, part)
        for part in where.split("/")
    ]


def _pydantic_problems(error: ValidationError) -> list[Problem]:
    out: list[Problem] = []
    for item in error.errors():
        where = pointer(*item["loc"])
        if item["type"] == "extra_forbidden":
            message = f"unknown key {str(item['loc'][-1])!r}"
        else:
            message = str(item["msg"])
        out.append({"pointer": where, "message": message})
    return out


class _Cleaner:
    """Applies the enum closure and the checks pydantic cannot phrase well.

    A value that fails is recorded as a problem and replaced by a valid stand-in,
    so that pydantic still reports the problems elsewhere in the plan.
    """

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems

    def problem(self, where: At, message: str) -> None:
        self.problems.append({"pointer": pointer(*where), "message": message})

    def word(self, where: At, value: Any, resolve: Callable[[str], Any], stand_in: Any) -> Any:
        if not isinstance(value, str):
            self.problem(where, "expected a string")
            return stand_in
        try:
            return resolve(value)
        except PlanError as error:
            self.problem(where, f"{error.message}; {error.hint}")
            return stand_in

    def identifier(self, where: At, value: Any) -> Any:
        if isinstance(value, str) and not NAME_RE.fullmatch(value):
            self.problem(where, f"{value!r} is not a name (a letter, then letters, digits or _)")
            return "x"
        return value

    def field_path(self, where: At, value: Any) -> Any:
        """A field, or one reached through declared relations (`customer.city`), as the
        text form writes it: names joined by dots."""
        if isinstance(value, str) and not all(NAME_RE.fullmatch(p) for p in value.split(".")):
            self.problem(
                where,
                f"{value!r} is not a field path (names, a letter then letters, digits or _, "
                "joined by dots)",
            )
            return "x"
        return value

    def unknown_keys(self, where: At, data: Mapping[str, Any]) -> None:
        # `span` is provenance of parsed text, never part of the JSON form.
        if "span" in data:
            self.problem((*where, "span"), "unknown key 'span'")

    def plan(self, data: Mapping[str, Any]) -> dict[str, Any]:
        out = {key: value for key, value in data.items() if key != "span"}
        self.unknown_keys((), data)
        for key in data:
            if key not in _PLAN_KEYS and key != "span":
                close = difflib.get_close_matches(str(key), sorted(_PLAN_KEYS), n=1)
                guess = f"; did you mean {close[0]!r}?" if close else ""
                self.problem((key,), f"unknown key {key!r}{guess}")
                out.pop(key)
        for key, (resolve, stand_in) in _ENUM_FIELDS.items():
            if out.get(key) is not None:
                out[key] = self.word((key,), out[key], resolve, stand_in)
        if "entity_type" in out:
            out["entity_type"] = self.identifier(("entity_type",), out["entity_type"])
        self.strict(out, (), _PLAN_TYPES)
        if isinstance(out.get("retrieval_policy"), Mapping):
            out["retrieval_policy"] = dict(out["retrieval_policy"])
            self.strict(out["retrieval_policy"], ("retrieval_policy",), _POLICY_TYPES)
        out["filters"] = self.each("filters", out.get("filters"), self.filter)
        out["sort"] = self.each("sort", out.get("sort"), self.sort)
        out["group_by"] = self.each("group_by", out.get("group_by"), self.grouping)
        out["projection"] = self.each(
            "projection",
            out.get("projection"),
            lambda i, v: self.field_path(("projection", i), v),
        )
        out["verifier_checks"] = self.each(
            "verifier_checks",
            out.get("verifier_checks"),
            lambda i, v: self.word(
                ("verifier_checks", i), v, closure.verifier_check, "evidence_backed"
            ),
        )
        if isinstance(out.get("scope"), Mapping):
            out["scope"] = self.scope(out["scope"])
        if isinstance(out.get("measure"), Mapping):
            out["measure"] = self.measure(out["measure"])
        return {key: value for key, value in out.items() if value is not _ABSENT}

    def strict(self, data: dict[str, Any], at: At, types: Mapping[str, str]) -> None:
        """No coercion: `"limit": "5"` or `true` is refused, not read as 5 or 1.
        (pydantic's lax mode would take them; the plan's author meant something else.)"""
        for key, kind in types.items():
            value = data.get(key)
            if value is None:
                continue
            ok = (
                isinstance(value, bool)
                if kind == "bool"
                else isinstance(value, str)
                if kind == "str"
                else isinstance(value, int) and not isinstance(value, bool)
            )
            if not ok:
                word = {"bool": "true or false", "str": "a string", "int": "a whole number"}[kind]
                self.problem((*at, key), f"expected {word}, got {_json_type(value)}")
                data[key] = _STAND_INS[kind]

    def each(self, key: str, items: Any, clean: Callable[[int, Any], Any]) -> Any:
        if items is None:
            return _ABSENT
        if not isinstance(items, list | tuple):
            return items  # pydantic says what is wrong with it
        return [clean(i, item) for i, item in enumerate(items)]

    def filter(self, index: int, item: Any) -> Any:
        if not isinstance(item, Mapping):
            return item
        at = ("filters", index)
        self.unknown_keys(at, item)
        out = {key: value for key, value in item.items() if key != "span"}
        if "field" in out:
            out["field"] = self.field_path((*at, "field"), out["field"])
        if out.get("value_source") is not None:
            out["value_source"] = self.word(
                (*at, "value_source"), out["value_source"], closure.value_source, "default"
            )
        raw_op = out.get("operator")
        if raw_op is None:
            return out  # pydantic reports the missing operator
        if isinstance(raw_op, str) and closure.is_not_null_word(raw_op):
            out["operator"] = Operator.IS_NULL
            if out.get("value") is None:
                out["value"] = False
        else:
            out["operator"] = self.word((*at, "operator"), raw_op, closure.operator, None)
        if out["operator"] is None:
            out["operator"] = Operator.EQUALS
            out["value"] = ""
            return out
        out["value"] = self.value((*at, "value"), out["operator"], out.get("value"))
        return out

    def value(self, where: At, op: Operator, value: Any) -> Any:
        if op is Operator.IS_NULL:
            if value is None:
                return True  # `{"operator": "is_null"}` reads as "is null"
            if not isinstance(value, bool):
                self.problem(where, "is_null takes true (is null) or false (is not null)")
                return True
            return value
        if op in (Operator.IN, Operator.NOT_IN, Operator.BETWEEN):
            if not isinstance(value, list | tuple) or not value:
                self.problem(where, f"{op.value} takes a non-empty list of values")
                return [""] * (2 if op is Operator.BETWEEN else 1)
            if op is Operator.BETWEEN and len(value) != 2:
                self.problem(where, "between takes exactly two values [low, high]")
                return ["", ""]
            return [self.scalar((*where, i), v) for i, v in enumerate(value)]
        if isinstance(value, list | tuple):
            self.problem(where, f"{op.value} takes one value, not a list (use in for several)")
            return ""
        if value is None:
            self.problem(where, f"{op.value} needs a value (use is_null to test for null)")
            return ""
        return self.scalar(where, value)

    def scalar(self, where: At, value: Any) -> Any:
        if isinstance(value, bool | int | str):
            return value
        if isinstance(value, float) and math.isfinite(value):
            return value
        self.problem(where, "a value is a string, a finite number, true or false")
        return ""

    def sort(self, index: int, item: Any) -> Any:
        if not isinstance(item, Mapping):
            return item
        at = ("sort", index)
        self.unknown_keys(at, item)
        out = {key: value for key, value in item.items() if key != "span"}
        if "field" in out:
            out["field"] = self.identifier((*at, "field"), out["field"])
        if out.get("direction") is not None:
            out["direction"] = self.word(
                (*at, "direction"), out["direction"], closure.sort_direction, "asc"
            )
        return out

    def grouping(self, index: int, item: Any) -> Any:
        if not isinstance(item, Mapping):
            return item
        at = ("group_by", index)
        self.unknown_keys(at, item)
        out = {key: value for key, value in item.items() if key != "span"}
        if "field" in out:
            out["field"] = self.field_path((*at, "field"), out["field"])
        if out.get("grain") is not None:
            out["grain"] = self.word((*at, "grain"), out["grain"], closure.grain, "day")
        return out

    def scope(self, data: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(data)
        self.strict(out, ("scope",), _SCOPE_TYPES)
        if "tenant_bound" in out and out["tenant_bound"] is not True:
            self.problem(
                ("scope", "tenant_bound"),
                "tenant_bound must be true: a plan cannot leave its tenant "
                "(the tenant is bound from the caller's context)",
            )
            out["tenant_bound"] = True
        refs = out.get("referenced_objects")
        if isinstance(refs, list | tuple):
            out["referenced_objects"] = [self.ref(i, r) for i, r in enumerate(refs)]
        return out

    def measure(self, data: Mapping[str, Any]) -> dict[str, Any]:
        at: At = ("measure",)
        self.unknown_keys(at, data)
        out = {key: value for key, value in data.items() if key != "span"}
        self.strict(out, at, {"field": "str", "name": "str"})
        for key in ("field", "name"):
            if key in out:
                out[key] = self.identifier((*at, key), out[key])
        if out.get("function") is not None:
            out["function"] = self.word(
                (*at, "function"), out["function"], closure.aggregation, "count"
            )
        return out

    def ref(self, index: int, item: Any) -> Any:
        if not isinstance(item, Mapping):
            return item
        at = ("scope", "referenced_objects", index)
        self.unknown_keys(at, item)
        out = {key: value for key, value in item.items() if key != "span"}
        if "entity_type" in out:
            out["entity_type"] = self.identifier((*at, "entity_type"), out["entity_type"])
        if isinstance(out.get("id"), int) and not isinstance(out.get("id"), bool):
            out["id"] = str(out["id"])  # ids are text; `64` and `"64"` name the same object
        self.strict(out, at, {"entity_type": "str", "id": "str"})
        return out


_ABSENT: Any = object()
# Scalar fields checked without coercion (JSON type names per field).
_PLAN_TYPES = {"limit": "int", "clarify_on_empty": "bool", "plan_version": "str"}
_POLICY_TYPES = {
    "facts_first": "bool",
    "allow_fallback_text": "bool",
    "require_fresh_fact": "bool",
    "freshness_days": "int",
}
_SCOPE_TYPES = {"tenant_id": "str", "project_id": "str"}
_STAND_INS: dict[str, Any] = {"bool": False, "str": "x", "int": 1}


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list | tuple) else "an object"
