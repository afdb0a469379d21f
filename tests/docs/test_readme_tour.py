"""The README's tour, run as written against the demo (issue 23: its `chain` step was
a placeholder that failed, and `index refresh --since` could not run on the demo).

Every `$` line of the tour's console block runs in order in one directory with a
fresh state dir, as a reader types it (continuation lines joined, `# …` comments
left to the shell). A `NAME=value` line sets a variable for the lines after it; the
one placeholder, `<refId>`, is the ref the command before it printed. A command
exits 0 unless a comment under it says "exit N:". Where the tour shows what a command
prints, the first line is that output's first line, and each piece of the next
line between "…" elisions is found in the output, in order.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
EXIT = re.compile(r"#\s*exit (\d+):")
ASSIGN = re.compile(r"^([A-Z][A-Z0-9_]*)=(.*)$")


@dataclass
class Step:
    command: str
    shown: list[str] = field(default_factory=list)


def tour() -> list[Step]:
    text = README.read_text(encoding="utf-8")
    start = text.index("## A tour")
    block = text[text.index("```console\n", start) + len("```console\n") :]
    block = block[: block.index("\n```")]
    steps: list[Step] = []
    joining = False
    for line in block.splitlines():
        if line.startswith("$ "):
            steps.append(Step(line[2:]))
            joining = line.endswith("\\")
        elif joining or line.startswith("  #"):
            steps[-1].command += "\n" + line
            joining = line.endswith("\\")
        elif line.strip():
            steps[-1].shown.append(line)
    return steps


def test_the_tour_runs_as_written(tmp_path: Path) -> None:
    steps = tour()
    assert len(steps) >= 15
    (tmp_path / "tests").symlink_to(ROOT / "tests")  # `qdsl eval tests/cases/demo.toml`
    bin_dir = Path(sys.executable).parent
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "QDSL_STATE_DIR": str(tmp_path / "state"),
    }
    for name in ("QDSL_CATALOG", "QDSL_DATABASE_URL", "QDSL_NOW"):
        env.pop(name, None)
    ref: str | None = None
    for step in steps:
        assigned = ASSIGN.match(step.command)
        if assigned:
            env[assigned.group(1)] = shlex.split(assigned.group(2))[0]
            continue
        command = step.command
        if "<refId>" in command:
            assert ref is not None, f"no ref printed before: {command}"
            command = command.replace("<refId>", ref)
        found = EXIT.search(command)
        expected = int(found.group(1)) if found else 0
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        where = f"$ {step.command}\n{done.stdout[-1500:]}{done.stderr[-1500:]}"
        assert done.returncode == expected, where
        if done.stdout.startswith("{"):
            ref = json.loads(done.stdout).get("refId") or ref
        if step.shown:
            lines = done.stdout.splitlines()
            assert lines and lines[0] == step.shown[0], where
            rest = "\n".join(lines[1:])
            at = 0
            for piece in (p.strip() for p in " ".join(step.shown[1:]).split("…")):
                if piece:
                    at = rest.find(piece, at)
                    assert at >= 0, f"{where}\nmissing: {piece!r}"
