"""Start-up of the `qdsl` command against `python -c pass`, and what it imports.

Each command runs as a fresh process (the installed `qdsl` console script, an
empty state dir), interleaved with `python -c pass` of the same interpreter.
Both may write bytecode (into a temporary PYTHONPYCACHEPREFIX, even where
PYTHONDONTWRITEBYTECODE is set), as an installed wheel has it: otherwise every
start would compile each module from source.
Then `python -X importtime` of each command: the total import time and the
top-level packages that cost the most (cumulative µs as CPython reports them).

    python -m benchmarks.bench_startup [--quick] [--repeats N]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from functools import partial
from pathlib import Path

from benchmarks import harness as H

COMMANDS = {
    "version": ("qdsl --version", ["--version"], H.at_most(1.5)),
    "refs_list": ("qdsl --json refs list", ["--json", "refs", "list"], H.at_most(2)),
}


def qdsl_script() -> str:
    return str(Path(sys.executable).with_name("qdsl"))


def import_profile(args: list[str], env: dict[str, str]) -> tuple[float, list[tuple[int, str]]]:
    """Total import ms and the top-level packages by cumulative µs, for `qdsl <args>`."""
    # what the console script runs (pyproject.toml, [project.scripts])
    code = "import sys; from qdsl.cli.fast import main; sys.argv[0] = 'qdsl'; main()"
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code, *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    total = 0
    top: list[tuple[int, str]] = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:"):
            continue
        parts = [p.strip() for p in line.removeprefix("import time:").split("|")]
        if len(parts) != 3 or not parts[0].isdigit():
            continue
        total += int(parts[0])
        name = parts[2]
        if not name.startswith(" ") and "." not in name:
            top.append((int(parts[1]), name))
    return total / 1000, sorted(top, reverse=True)


def run(repeats: int) -> tuple[list[H.Ratio], list[list[str]]]:
    ratios = []
    profiles = []
    with tempfile.TemporaryDirectory(prefix="qdsl-bench-") as state:
        env = {
            **os.environ,
            "QDSL_STATE_DIR": state,
            "PYTHONPYCACHEPREFIX": str(Path(state) / "pycache"),
        }
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        python = partial(
            subprocess.run, [sys.executable, "-c", "pass"], env=env, capture_output=True,
            check=True,
        )
        for key, (label, args, goal) in COMMANDS.items():
            command = partial(
                subprocess.run, [qdsl_script(), *args], env=env, capture_output=True, check=True
            )
            ratios.append(
                H.record(key, H.measure(label, (label, command), ("python -c pass", python), goal,
                                        repeats=repeats))
            )
            total, top = import_profile(args, env)
            heavy = ", ".join(f"{name} {us / 1000:.1f}" for us, name in top[:6])
            profiles.append([label, f"{total:.1f}", heavy])
    return ratios, profiles


def main(argv: list[str] | None = None) -> int:
    parser = H.arguments("bench_startup", __doc__)
    parser.add_argument("--repeats", type=int, default=20)
    args, _ = parser.parse_known_args(argv)
    ratios, profiles = run(2 if args.quick else args.repeats)
    H.print_ratios("Start-up vs `python -c pass` (fresh processes, interleaved)", ratios)
    print("### Imports (`python -X importtime`)\n")
    print(H.table(profiles, ["command", "imports ms", "top-level packages, cumulative ms"]))
    print(flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
