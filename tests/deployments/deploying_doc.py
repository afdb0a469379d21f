"""The commands of docs/deploying.md, as its tests run them.

The commands come from the document's fenced `sh` blocks (a block marked
`sh sqlite` or `sh postgresql` runs on that database only), in order; each
`text` block after a command is that command's expected output.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "deploying.md"
FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


@dataclass
class Command:
    argv: list[str]
    expected: str | None = None


def doc_commands(dialect: str) -> list[Command]:
    out: list[Command] = []
    for info, body in FENCE.findall(DOC.read_text(encoding="utf-8")):
        lang, *only = info.split()
        if lang == "text" and out:
            out[-1].expected = body
        if lang != "sh" or (only and dialect not in only):
            continue
        for line in body.replace("\\\n", " ").splitlines():
            argv = shlex.split(line, comments=True)
            if argv:
                out.append(Command(argv))
    return out
