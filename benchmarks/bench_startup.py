"""Start-up of the `qdsl` command against `python -c pass`, and what it imports.

Each command runs as a fresh process (the installed `qdsl` console script, an
empty state dir), interleaved with `python -c pass` of the same interpreter.
Both may write bytecode (into a temporary PYTHONPYCACHEPREFIX, even where
PYTHONDONTWRITEBYTECODE is set), as an installed wheel has it: otherwise every
start would compile each module from source.
Then `python -X importtime` of each command (the lowest figure per module over
several runs): the import time in all, the part beyond what `python -c pass`
imports, and the heaviest modules of that part (cumulative, as CPython reports).

    python -m benchmarks.bench_startup [--quick] [--repeats N]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from benchmarks import harness as H

COMMANDS = {
    "version": ("qdsl --version", ["--version"], H.at_most(1.5)),
    "refs_list": ("qdsl --json refs list", ["--json", "refs", "list"], H.at_most(2)),
}


def qdsl_script() -> str:
    return str(Path(sys.executable).with_name("qdsl"))


@dataclass
class Imports:
    """Per module, the lowest self and cumulative µs over a few runs (less noise)."""

    own: dict[str, int] = field(default_factory=dict)
    cumulative: dict[str, int] = field(default_factory=dict)

    def add(self, stderr: str) -> None:
        for line in stderr.splitlines():
            parts = [p.strip() for p in line.removeprefix("import time:").split("|")]
            if not line.startswith("import time:") or not parts[0].isdigit():
                continue
            own, cumulative, name = int(parts[0]), int(parts[1]), parts[2]
            self.own[name] = min(own, self.own.get(name, own))
            self.cumulative[name] = min(cumulative, self.cumulative.get(name, cumulative))

    def ms(self, names: Iterable[str]) -> float:
        return sum(self.own[n] for n in names) / 1000


def import_profile(code: str, args: list[str], env: dict[str, str], runs: int) -> Imports:
    found = Imports()
    for _ in range(runs):
        proc = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", code, *args],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        found.add(proc.stderr)
    return found


# what the console script runs (pyproject.toml, [project.scripts])
ENTRY = "import sys; from qdsl.cli.fast import main; sys.argv[0] = 'qdsl'; main()"


def profile_row(label: str, found: Imports, base: Imports) -> list[str]:
    extra = [n for n in found.own if n not in base.own]
    heavy = sorted(extra, key=lambda n: -found.cumulative[n])[:6]
    return [
        label,
        f"{found.ms(found.own):.1f} ({len(found.own)})",
        f"{found.ms(extra):.1f} ({len(extra)})",
        ", ".join(f"{n} {found.cumulative[n] / 1000:.1f}" for n in heavy),
    ]


def run(repeats: int, runs: int) -> tuple[list[H.Ratio], list[list[str]]]:
    ratios = []
    with tempfile.TemporaryDirectory(prefix="qdsl-bench-") as state:
        env = {
            **os.environ,
            "QDSL_STATE_DIR": state,
            "PYTHONPYCACHEPREFIX": str(Path(state) / "pycache"),
        }
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        base = import_profile("pass", [], env, runs)
        profiles = [profile_row("python -c pass", base, base)]
        python = partial(
            subprocess.run,
            [sys.executable, "-c", "pass"],
            env=env,
            capture_output=True,
            check=True,
        )
        for key, (label, args, goal) in COMMANDS.items():
            command = partial(
                subprocess.run, [qdsl_script(), *args], env=env, capture_output=True, check=True
            )
            ratios.append(
                H.record(
                    key,
                    H.measure(
                        label, (label, command), ("python -c pass", python), goal, repeats=repeats
                    ),
                )
            )
            found = import_profile(ENTRY, args, env, runs)
            profiles.append(profile_row(label, found, base))
    return ratios, profiles


def main(argv: list[str] | None = None) -> int:
    parser = H.arguments("bench_startup", __doc__)
    parser.add_argument("--repeats", type=int, default=20)
    args, _ = parser.parse_known_args(argv)
    ratios, profiles = run(2 if args.quick else args.repeats, 1 if args.quick else 7)
    H.print_ratios("Start-up vs `python -c pass` (fresh processes, interleaved)", ratios)
    print("### Imports (`python -X importtime`, lowest of several runs)\n")
    head = [
        "command",
        "imports ms (modules)",
        "beyond python -c pass, ms (modules)",
        "heaviest of those, cumulative ms",
    ]
    print(H.table(profiles, head))
    print(flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
