"""The output budget (docs/envelopes.md): what is printed when a result is too large.

What is printed is counted as `envelope.encode` writes it. The large-result
envelope starts with the ref fields, in this order: refId, resultPersisted,
outputBytes, sha256, expiresAt, previewTruncated, largeOutputNotice, degraded;
then the envelope with a compacted preview of the same shape, whose cuts are
listed in `meta.preview`. Compaction levels are tried until one fits, first
with the rendered answer (`data.text`) whole, then with it shortened too; if
none fits, a minimal envelope (data null) is printed, which always fits
because the threshold is never below settings.MIN_THRESHOLD.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from qdsl.envelope.compact import LEVELS, Limits, compact, compact_with_cuts, shorten
from qdsl.envelope.encode import dumps, stdout_bytes

# What a person reads: kept whole whenever the budget allows.
WHOLE = ("data.text",)


@dataclass(frozen=True)
class RefFields:
    ref_id: str | None
    persisted: bool
    output_bytes: int
    sha256: str
    expires_at: str | None
    budget: int
    failure: str | None = None
    tenant: str | None = None  # the ref is readable only with this --tenant

    def get_argv(self, expr: str) -> str:
        tenant = f" --tenant {_shell_word(self.tenant)}" if self.tenant is not None else ""
        return f"qdsl --json refs get{tenant} {self.ref_id} {expr}"

    def head(self, short: bool = False) -> dict[str, Any]:
        return {
            "refId": self.ref_id,
            "resultPersisted": self.persisted,
            "outputBytes": self.output_bytes,
            "sha256": self.sha256,
            "expiresAt": self.expires_at,
            "previewTruncated": True,
            "largeOutputNotice": self.notice(short),
            "degraded": not self.persisted,
        }

    def notice(self, short: bool = False) -> str:
        size = f"The result is {self.output_bytes} bytes, over the {self.budget}-byte budget"
        if self.persisted:
            if short:
                return f"{size}; full result in ref {self.ref_id}."
            return (
                f"{size}. The full envelope is stored as ref {self.ref_id} until "
                f"{self.expires_at}; `data` below is a compacted preview. Read it with "
                f"`{self.get_argv('<JMESPath>')}` or pass a value on with "
                f"`--input-ref {self.ref_id} --pick <JMESPath>`."
            )
        if short:
            return f"{size}; it could NOT be stored, the preview is incomplete."
        return (
            f"{size} and could NOT be stored ({self.failure}); `data` below is an "
            "incomplete preview. Fix the state dir or rerun with QDSL_REF_THRESHOLD=0 "
            "to print the result whole."
        )


def _shell_word(text: str) -> str:
    if text and all(c.isalnum() or c in "-_.:@" for c in text):
        return text
    return "'" + text.replace("'", "'\\''") + "'"


def _cut_warnings(warnings: Sequence[str], lim: Limits) -> list[str]:
    out = [shorten(str(w), lim.string) for w in warnings[: lim.items]]
    if len(warnings) > lim.items:
        out.append(f"… {len(warnings) - lim.items} more warnings in the full result")
    return out


def large_envelope(env: dict[str, Any], ref: RefFields, budget: int) -> str:
    """The printed envelope for a result over budget; always within it."""
    from qdsl.envelope.next_ops import first_list_path, refs_get_op

    meta = env.get("meta", {})
    suggestions: list[dict[str, Any]] = []
    if ref.persisted and ref.ref_id:
        path = first_list_path(env.get("data"))
        if path:
            suggestions.append(
                refs_get_op(ref.ref_id, path, "the first item of the result", tenant=ref.tenant)
            )
        suggestions.append(
            refs_get_op(ref.ref_id, "data", "the whole result data", tenant=ref.tenant)
        )
    for whole in (WHOLE, ()):
        for lim in LEVELS:
            data, cuts = compact_with_cuts(env.get("data"), lim, path="data", whole=whole)
            preview: dict[str, Any] = {"cuts": cuts[: lim.items]}
            if len(cuts) > lim.items:
                preview["moreCuts"] = len(cuts) - lim.items
            body = {
                "schemaVersion": env["schemaVersion"],
                "ok": env["ok"],
                "operation": env["operation"],
                "data": data,
                "warnings": _cut_warnings(env.get("warnings", []), lim),
                "meta": {
                    **compact({k: v for k, v in meta.items() if k != "next"}, lim),
                    "preview": preview,
                    "next": suggestions
                    + [compact(n, lim) for n in meta.get("next", [])[: lim.items]],
                },
            }
            text = dumps({**ref.head(), **body})
            if stdout_bytes(text) <= budget:
                return text
    return minimal_envelope(env, ref, budget, suggestions[-1:])


def minimal_envelope(
    env: dict[str, Any], ref: RefFields, budget: int, suggestions: list[dict[str, Any]]
) -> str:
    meta = env.get("meta", {})
    trace = meta.get("traceId")
    base = {
        "schemaVersion": env["schemaVersion"],
        "ok": env["ok"],
        "operation": shorten(str(env["operation"]), 40),
        "data": None,
        "warnings": [],
    }
    for short, next_ops in ((False, suggestions), (True, suggestions), (True, [])):
        candidate = {
            **ref.head(short),
            **base,
            "meta": {"traceId": shorten(str(trace), 64), "next": next_ops},
        }
        text = dumps(candidate)
        if stdout_bytes(text) <= budget:
            return text
    return dumps({**ref.head(True), **base})
