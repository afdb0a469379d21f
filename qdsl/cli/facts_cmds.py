"""`qdsl facts load FILE`, `qdsl facts stats`, `qdsl facts prune --stale`.

A thin layer over facts.load (validate, normalize, upsert in one transaction)
and facts.maintenance. The database is `--db` / QDSL_DATABASE_URL, else the
embedded demo file; it must already exist (`qdsl db upgrade` creates qdsl's
tables). The catalog is `--catalog` / QDSL_CATALOG, else the demo catalog.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import click

from qdsl.cli.runner import Outcome, run_operation
from qdsl.cli.state import current_catalog, current_state, current_url
from qdsl.dsl.errors import UsageError

if TYPE_CHECKING:
    from sqlalchemy import Engine

# Files smaller than this load without a progress bar.
_PROGRESS_BYTES = 4 * 1024 * 1024


@contextmanager
def _engine() -> Iterator[Engine]:
    from qdsl.facts.db import existing_engine

    engine = existing_engine(current_url())
    try:
        yield engine
    finally:
        engine.dispose()


def _now(raw: str | None) -> datetime:
    """--now, else QDSL_NOW, else the wall clock (facts age on any database alike)."""
    from qdsl.deployment import parse_now, wall_clock

    return parse_now(raw) or parse_now(os.environ.get("QDSL_NOW")) or wall_clock()


def _check_tenant(tenant: str | None) -> None:
    if tenant is not None and (not tenant.strip() or any(ord(c) < 32 for c in tenant)):
        raise UsageError(
            "bad_tenant",
            "--tenant is blank or holds control characters",
            hint="pass the tenant id as stored in tenant_id",
        )


@click.group("facts")
def facts_group() -> None:
    """Load, inspect and prune semantic_facts."""


class _Counting(io.RawIOBase):
    """A binary stream that counts the bytes read from it (for the progress bar)."""

    def __init__(self, raw: IO[bytes]) -> None:
        super().__init__()
        self.raw, self.count = raw, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.raw.read(len(buffer))
        buffer[: len(data)] = data
        self.count += len(data)
        return len(data)


def _open(path: str) -> tuple[IO[bytes], int]:
    if path == "-":
        return sys.stdin.buffer, 0
    try:
        handle = Path(path).open("rb")  # noqa: SIM115 - closed by the caller
    except FileNotFoundError:
        raise UsageError(
            "input_not_found",
            f"no such facts file: {path}",
            hint="check the path, or pass - to read stdin",
        ) from None
    except OSError as exc:
        raise UsageError(
            "input_unreadable",
            f"cannot read {path}: {exc.strerror}",
            hint="check the path and its permissions",
        ) from None
    return handle, Path(path).stat().st_size


def _load(path: str, fmt: str | None, tenant: str | None, json_mode: bool) -> dict[str, Any]:
    from qdsl.facts.fact_files import Format, guess_format, read_rows
    from qdsl.facts.load import load_facts

    catalog = current_catalog()
    handle, size = _open(path)
    counted = _Counting(handle)
    stream = io.BufferedReader(counted)
    show = size >= _PROGRESS_BYTES and not json_mode and sys.stderr.isatty()
    chosen: Format = "csv" if fmt == "csv" else "jsonl" if fmt == "jsonl" else guess_format(path)
    try:
        with _engine() as engine:
            rows = read_rows(stream, chosen)
            load = partial(
                load_facts, rows, engine=engine, catalog=catalog, tenant=tenant,
                stop_on_signals=True,
            )
            if not show:
                return load().to_dict()
            with click.progressbar(length=size, label="loading facts", file=sys.stderr) as bar:
                seen = [0]

                def progress(_rows: int) -> None:
                    bar.update(counted.count - seen[0])
                    seen[0] = counted.count

                callback: Callable[[int], None] = progress
                return load(progress=callback).to_dict()
    finally:
        if handle is not sys.stdin.buffer:
            handle.close()


@facts_group.command("load")
@click.argument("file")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["jsonl", "csv"]),
    default=None,
    help="File format (default: csv for *.csv, else jsonl; stdin is jsonl).",
)
@click.option(
    "--tenant",
    default=None,
    help="Load only this tenant's facts: a row of another tenant rejects the file.",
)
@click.pass_context
def load_cmd(ctx: click.Context, /, file: str, fmt: str | None, tenant: str | None) -> None:
    """Load facts from FILE (JSONL or CSV; - for stdin): validated, normalized, upserted.

    One row per fact with tenant_id, entity_type, entity_id, predicate,
    value_text and optionally value_num, source_type, source_ref, confidence,
    observed_at, valid_until. The file loads completely or not at all; a bad
    row is named by its line. SIGINT or SIGTERM cancels the load on the
    database too.
    """
    from qdsl.facts.load_session import LoadInterrupted

    def body() -> Outcome:
        data = _load(file, fmt, tenant, current_state().json_mode)
        return Outcome(
            data=data,
            human=(
                f"{data['rows']} row(s): {data['inserted']} inserted, {data['updated']} "
                f"updated, {data['unchanged']} unchanged ({len(data['tenants'])} tenant(s))"
            ),
            next_ops=[{"operation": "facts stats", "argv": ["qdsl", "--json", "facts", "stats"]}],
        )

    try:
        code = run_operation("facts load", body)
    except LoadInterrupted as stop:
        # The statement was cancelled and the transaction rolled back: say so, and
        # exit as a process ended by that signal does (128 + its number).
        sys.stderr.write(f"qdsl: facts load stopped by {stop}; nothing was loaded\n")
        sys.stderr.flush()
        code = 128 + stop.signum
    ctx.exit(code)


@facts_group.command("stats")
@click.option("--tenant", default=None, help="Only this tenant (needed under forced RLS).")
@click.option("--now", "now_text", default=None, help="Clock for staleness (ISO-8601).")
@click.pass_context
def stats_cmd(ctx: click.Context, /, tenant: str | None, now_text: str | None) -> None:
    """Rows per tenant, entity type and predicate, and the share that is stale."""

    def body() -> Outcome:
        from qdsl.facts.maintenance import fact_stats

        _check_tenant(tenant)
        with _engine() as engine:
            groups = [g.to_dict() for g in fact_stats(engine, now=_now(now_text), tenant=tenant)]
        from qdsl.cli.tables import Table, render

        rows = sum(g["rows"] for g in groups)
        stale = sum(g["stale"] for g in groups)
        table = Table(("tenant", "entity type", "predicate", "rows", "stale", "stale share"))
        for g in groups:
            table.add(
                g["tenant"],
                g["entity_type"],
                g["predicate"],
                g["rows"],
                g["stale"],
                f"{g['stale_share']:.1%}",
            )
        share = round(stale / rows, 4) if rows else 0.0
        return Outcome(
            data={"groups": groups, "rows": rows, "stale": stale, "stale_share": share},
            human=render([table, f"{rows} fact(s), {stale} stale ({share:.1%})"]),
        )

    ctx.exit(run_operation("facts stats", body))


@facts_group.command("prune")
@click.option("--stale", is_flag=True, required=True, help="Drop facts past their valid_until.")
@click.option("--tenant", default=None, help="Only this tenant (needed under forced RLS).")
@click.option("--now", "now_text", default=None, help="Clock for staleness (ISO-8601).")
@click.option("--dry-run", is_flag=True, help="Count what would be dropped; drop nothing.")
@click.pass_context
def prune_cmd(
    ctx: click.Context, /, stale: bool, tenant: str | None, now_text: str | None, dry_run: bool
) -> None:
    """Delete stale facts (valid_until before now)."""

    def body() -> Outcome:
        from qdsl.facts.maintenance import prune_stale

        if not stale:
            raise UsageError(
                "bad_arguments", "say what to prune: --stale", hint="qdsl facts prune --stale"
            )
        _check_tenant(tenant)
        with _engine() as engine:
            count = prune_stale(engine, now=_now(now_text), tenant=tenant, dry_run=dry_run)
        verb = "would delete" if dry_run else "deleted"
        return Outcome(
            data={"deleted": 0 if dry_run else count, "stale": count, "dryRun": dry_run},
            human=f"{verb} {count} stale fact(s)",
        )

    ctx.exit(run_operation("facts prune", body))
