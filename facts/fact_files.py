"""Reading fact rows from JSONL and CSV files (or stdin), with their line numbers.

Each item is `(line, row)`: `row` is a mapping of the file's fields, or a
string saying why that line could not be read as a row; facts.load reports
both kinds the same way (`validation/facts_rejected`, every line named).
Line numbers are physical lines of the file, split on `\\n` (a CSV record
spanning lines is numbered by its last line). A leading UTF-8 BOM is dropped.
CSV cells that are empty read as absent.

Every file is read within bounds, whatever it holds (a file is user input:
an export, a pipe, `/dev/zero`):

* a line (JSONL) or record (CSV) is at most MAX_LINE_BYTES: one longer is
  reported and the file is not read further, so an endless line costs at most
  that much memory and time. No valid row comes near it: its key columns are
  at most a few hundred characters and its value must fit the lookup index
  (facts.index_bounds, under 2.7 KB);
* a line that is not UTF-8 is reported by line and byte, and reading goes on;
* a JSON line nested deeper than `[limits] json_depth` (QDSL_MAX_JSON_DEPTH)
  is refused before the parser recurses into it; a number the parser will
  not convert (over Python's 4,300 digits) is the line's fault;
* a CSV field is at most the csv module's field limit (131,072 characters);
  a record that breaks the CSV syntax ends the reading, reported by line.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator, Mapping
from typing import IO, Any, Literal

from qdsl.dsl.errors import QdslError
from qdsl.dsl.settings.limits import check_json_depth

Format = Literal["jsonl", "csv"]
Row = tuple[int, Mapping[str, Any] | str]

__all__ = ["MAX_LINE_BYTES", "Format", "Row", "guess_format", "read_rows"]

MAX_LINE_BYTES = 1024 * 1024
_BOM = b"\xef\xbb\xbf"
_STOPPED = "; the file was not read further"


def guess_format(name: str) -> Format:
    """`csv` for a `.csv` file, else `jsonl` (also for stdin)."""
    return "csv" if name.lower().endswith(".csv") else "jsonl"


class _Unreadable(Exception):
    """A line that ends the reading: (line, reason)."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(reason)
        self.line, self.reason = line, reason


def _lines(stream: IO[bytes]) -> Iterator[tuple[int, bytes]]:
    """The file's physical lines with their numbers, none over MAX_LINE_BYTES.

    One more byte than the bound is read to tell a line that is too long,
    which raises _Unreadable (the rest of that line is never read).
    """
    number = 0
    while True:
        raw = stream.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        number += 1
        if number == 1:
            raw = raw.removeprefix(_BOM)
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            raise _Unreadable(number, f"the line is longer than {MAX_LINE_BYTES:,} bytes{_STOPPED}")
        yield number, raw


def _decoded(raw: bytes) -> str:
    """The line as text, or ValueError naming the first byte that is not UTF-8."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"the line is not UTF-8 text (byte 0x{raw[exc.start]:02x} at byte {exc.start + 1}); "
            "convert the file to UTF-8 (iconv -t UTF-8)"
        ) from None


def _json_row(text: str) -> Mapping[str, Any] | str:
    try:
        check_json_depth(text, "the line")
    except QdslError as exc:
        return exc.message
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return f"not JSON ({exc.msg} at column {exc.colno})"
    except (ValueError, RecursionError) as exc:
        # a number of more digits than int() converts; RecursionError cannot
        # follow the depth check, and is the line's fault if it ever does
        return f"not JSON that can be read ({str(exc).split(':')[0][:80]})"
    return value if isinstance(value, dict) else "not a JSON object"


def _jsonl(stream: IO[bytes]) -> Iterator[Row]:
    try:
        for line, raw in _lines(stream):
            try:
                text = _decoded(raw)
            except ValueError as exc:
                yield line, str(exc)
                continue
            if text.strip():
                yield line, _json_row(text)
    except _Unreadable as stop:
        yield stop.line, stop.reason


class _CsvLines:
    """The decoded lines the csv reader pulls, with the size of the current record."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.lines = _lines(stream)
        self.number = 0
        self.record_bytes = 0

    def __iter__(self) -> Iterator[str]:
        for number, raw in self.lines:
            self.number = number
            self.record_bytes += len(raw)
            if self.record_bytes > MAX_LINE_BYTES:
                raise _Unreadable(
                    self.number, f"the record is longer than {MAX_LINE_BYTES:,} bytes{_STOPPED}"
                )
            try:
                yield _decoded(raw)
            except ValueError as exc:
                # a record may span lines: one undecodable line spoils the rest
                raise _Unreadable(self.number, f"{exc}{_STOPPED}") from None


def _csv(stream: IO[bytes]) -> Iterator[Row]:
    lines = _CsvLines(stream)
    reader = csv.reader(lines)
    try:
        header: list[str] | None = None
        for record in reader:
            lines.record_bytes = 0
            if header is None:
                header = record
                continue
            if not record:
                continue  # a blank line
            if len(record) > len(header):
                yield lines.number, "more cells than the header names"
                continue
            yield lines.number, {k: v for k, v in zip(header, record, strict=False) if v != ""}
    except _Unreadable as stop:
        yield stop.line, stop.reason
    except csv.Error as exc:
        yield lines.number, f"not CSV ({exc}){_STOPPED}"


def read_rows(stream: IO[bytes], fmt: Format) -> Iterator[Row]:
    """The rows of a JSONL or CSV byte stream (see the module's bounds)."""
    return _csv(stream) if fmt == "csv" else _jsonl(stream)
