"""Run every benchmark module (`benchmarks/bench_*.py`) in turn, each through its `main()`."""

from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    names = sorted(p.stem for p in Path(__file__).parent.glob("bench_*.py"))
    worst = 0
    for name in names:
        print(f"== {name}", flush=True)
        module = importlib.import_module(f"benchmarks.{name}")
        # Some benchmarks read sys.argv themselves and take no arguments.
        takes_argv = bool(inspect.signature(module.main).parameters)
        result = module.main(list(argv or [])) if takes_argv else module.main()
        worst = max(worst, int(result or 0))
    return worst


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
