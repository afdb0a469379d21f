"""Reading fact rows from JSONL and CSV files (or stdin), with their line numbers.

Each item is `(line, row)`: `row` is a mapping of the file's fields, or a
string saying why that line could not be read as a row (bad JSON, not an
object); facts.load reports both kinds the same way. A leading UTF-8 BOM is
dropped. CSV cells that are empty read as absent. Line numbers are physical
lines of the file (a CSV record spanning lines is numbered by its last line).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Mapping
from typing import IO, Any, Literal

from qdsl.dsl.errors import UsageError

Format = Literal["jsonl", "csv"]
Row = tuple[int, Mapping[str, Any] | str]

__all__ = ["Format", "Row", "guess_format", "read_rows"]


def guess_format(name: str) -> Format:
    """`csv` for a `.csv` file, else `jsonl` (also for stdin)."""
    return "csv" if name.lower().endswith(".csv") else "jsonl"


def _text(stream: IO[bytes]) -> io.TextIOWrapper:
    return io.TextIOWrapper(stream, encoding="utf-8-sig", newline="")


def _jsonl(text: io.TextIOWrapper) -> Iterator[Row]:
    for line, raw in enumerate(text, start=1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            yield line, f"not JSON ({exc.msg} at column {exc.colno})"
            continue
        yield line, value if isinstance(value, dict) else "not a JSON object"


def _csv(text: io.TextIOWrapper) -> Iterator[Row]:
    reader = csv.DictReader(text)
    for record in reader:
        if None in record:
            yield reader.line_num, "more cells than the header names"
            continue
        yield reader.line_num, {k: v for k, v in record.items() if v not in (None, "")}


def read_rows(stream: IO[bytes], fmt: Format) -> Iterator[Row]:
    """The rows of a JSONL or CSV byte stream; UsageError for text that is not UTF-8."""
    text = _text(stream)
    try:
        yield from (_csv(text) if fmt == "csv" else _jsonl(text))
    except UnicodeDecodeError:
        raise UsageError(
            "bad_encoding",
            "the facts file is not UTF-8 text",
            hint="convert it to UTF-8 (iconv -t UTF-8) and load it again",
        ) from None
    finally:
        text.detach()
