"""Human output: tables on a terminal (rich), aligned plain text when piped.

Commands build their `Outcome.human` from `Block`s: a line of text or a
`Table`. On a TTY rich draws them (imported here only then, so piped and
`--json` calls never load it); otherwise they become plain aligned columns
that `cut`/`awk` can read. `--json` never reaches this module.
"""

from __future__ import annotations

import os
import sys
import unicodedata
from collections.abc import Sequence
from typing import Any


class Table:
    """Columns, then rows added as cells. (A plain class: `dataclasses` would
    be the heaviest import of `refs list`'s start-up.)"""

    def __init__(self, columns: tuple[str, ...], *, title: str | None = None) -> None:
        self.columns = columns
        self.rows: list[tuple[str, ...]] = []
        self.title = title

    def add(self, *cells: Any) -> None:
        self.rows.append(tuple(cell_text(c) for c in cells))


Block = str | Table


def cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple | set | frozenset):
        return ", ".join(cell_text(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}={cell_text(v)}" for k, v in value.items())
    return str(value)


def stdout_is_tty() -> bool:
    isatty = getattr(sys.stdout, "isatty", None)
    return bool(isatty and isatty())


def render(blocks: Sequence[Block], *, tty: bool | None = None) -> str:
    """The blocks as one string: rich tables on a terminal, plain columns otherwise."""
    if tty if tty is not None else stdout_is_tty():
        return _rich(blocks)
    return "\n".join(_plain(b) for b in blocks)


def _plain(block: Block) -> str:
    if isinstance(block, str):
        return block
    lines = [block.title] if block.title else []
    widths = [_width(c) for c in block.columns]
    for row in block.rows:
        widths = [max(w, _width(cell)) for w, cell in zip(widths, row, strict=True)]
    for row in [block.columns, *block.rows]:
        cells = [cell + " " * (w - _width(cell)) for cell, w in zip(row, widths, strict=True)]
        lines.append("  ".join(cells).rstrip())
    if not block.rows:
        lines.append("(none)")
    return "\n".join(lines)


def _width(text: str) -> int:
    """Terminal columns: East Asian wide and full-width characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _rich(blocks: Sequence[Block]) -> str:
    import io
    import shutil

    from rich.console import Console
    from rich.table import Table as RichTable
    from rich.text import Text

    buffer = io.StringIO()
    width = shutil.get_terminal_size((100, 24)).columns
    no_color = bool(os.environ.get("NO_COLOR"))
    console = Console(file=buffer, force_terminal=True, width=width, no_color=no_color)
    for block in blocks:
        if isinstance(block, str):
            console.print(block, markup=False, highlight=False)
            continue
        # Cells are data, never rich markup: "[fact:5]" must print as written.
        title = Text(block.title) if block.title else None
        table = RichTable(title=title, title_justify="left", header_style="bold")
        for column in block.columns:
            table.add_column(Text(column), overflow="fold")
        for row in block.rows:
            table.add_row(*(Text(cell) for cell in row))
        console.print(table)
    return buffer.getvalue().rstrip("\n")
