"""`qdsl ask` as one process against importing the libraries it is built on.

A person (or an agent host, once per step) runs `qdsl ask` as a fresh process:
what they wait for is the interpreter, the imports and one answer. The floor
is what no version of qdsl can avoid, `python -c "import sqlalchemy, pydantic,
lark, click"` of the same interpreter. Both run interleaved (issue 24's goal:
≤ 1.5×), on the demo database in one empty state dir (seeded by the warm-up
call), bytecode written as an installed wheel has it. Then
`python -X importtime` of both: what `ask` imports beyond the floor, heaviest
first, to find what its path loads and does not need.

    python -m benchmarks.bench_ask_startup [--quick] [--repeats N]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from functools import partial
from pathlib import Path

from benchmarks import harness as H
from benchmarks.bench_startup import ENTRY, import_profile, profile_row, qdsl_script

QUESTION = "Are there any A-share projects?"
ASK = ["ask", "--tenant", "t1", QUESTION]
FLOOR = "import sqlalchemy, pydantic, lark, click"
GOAL = H.at_most(1.5)


def run(repeats: int, runs: int) -> tuple[H.Ratio, list[list[str]]]:
    with tempfile.TemporaryDirectory(prefix="qdsl-bench-ask-") as state:
        env = {
            **os.environ,
            "QDSL_STATE_DIR": state,
            "PYTHONPYCACHEPREFIX": str(Path(state) / "pycache"),
        }
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        for name in ("QDSL_DATABASE_URL", "QDSL_CATALOG", "QDSL_NOW"):
            env.pop(name, None)
        floor = partial(
            subprocess.run, [sys.executable, "-c", FLOOR], env=env, capture_output=True,
            check=True,
        )
        ask = partial(
            subprocess.run, [qdsl_script(), *ASK], env=env, capture_output=True, check=True
        )
        label = f'qdsl ask "{QUESTION}"'
        ratio = H.record(
            "ask_startup",
            H.measure(label, (label, ask), (f'python -c "{FLOOR}"', floor), GOAL,
                      repeats=repeats),
        )
        base = import_profile(FLOOR, [], env, runs)
        found = import_profile(ENTRY, ASK, env, runs)
        profiles = [
            profile_row(f'python -c "{FLOOR}"', base, base),
            profile_row("qdsl ask", found, base),
        ]
    return ratio, profiles


def main(argv: list[str] | None = None) -> int:
    parser = H.arguments("bench_ask_startup", __doc__)
    parser.add_argument("--repeats", type=int, default=15)
    args, _ = parser.parse_known_args(argv)
    ratio, profiles = run(2 if args.quick else args.repeats, 1 if args.quick else 5)
    H.print_ratios("`qdsl ask` vs importing its libraries (fresh processes, interleaved)",
                   [ratio])
    print("### Imports (`python -X importtime`, lowest of several runs)\n")
    head = [
        "command",
        "imports ms (modules)",
        "beyond the libraries, ms (modules)",
        "heaviest of those, cumulative ms",
    ]
    print(H.table(profiles, head))
    print(flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
