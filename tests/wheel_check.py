"""Install the built wheel into a fresh venv and use it as a user would.

Run by `make wheel-check` (and so by CI): builds the wheel from this checkout,
installs it non-editable into a new virtualenv, and, from a directory outside
the checkout with an empty state dir, runs `qdsl demo`, one `ask`, and
`qdsl db upgrade` against a fresh PostgreSQL database (created and dropped
here). It also proves the wheel puts exactly one import package, `qdsl`, into
site-packages and that importing it loads none of the bare component names.

Exits non-zero with the failing step on stderr.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the name on the package index, from qdsl/_version.py without importing qdsl
DISTRIBUTION = re.search(
    r'^DISTRIBUTION = "([^"]+)"', (ROOT / "qdsl" / "_version.py").read_text(), re.M
).group(1)  # type: ignore[union-attr]
COMPONENTS = ("dsl", "executor", "facts", "verifier", "envelope")
PG_ADMIN = os.environ.get("QDSL_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")


def _run(argv: list[str], *, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.stderr.write(f"FAILED ({done.returncode}): {' '.join(argv)}\n")
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        raise SystemExit(1)
    return done.stdout


def build_wheel(out: Path) -> Path:
    """Build from a clean copy: setuptools reuses `build/lib` in the source
    tree, where a module deleted since the last build would still be shipped."""
    source = out / "src"
    shutil.copytree(
        ROOT, source,
        ignore=shutil.ignore_patterns(".git", ".venv", "build", "*.egg-info", "__pycache__",
                                      ".mypy_cache", ".ruff_cache", ".pytest_cache",
                                      ".hypothesis"),
    )
    _run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "-w", str(out), str(source)],
        cwd=out,
    )
    (wheel,) = out.glob(f"{DISTRIBUTION.replace('-', '_')}-*.whl")
    return wheel


def _site_packages(python: Path, cwd: Path) -> Path:
    return Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                     cwd=cwd).strip())


def _pg_database(action: str, name: str) -> None:
    import psycopg

    url = PG_ADMIN.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(url, autocommit=True) as conn:
        if action == "create":
            conn.execute(f'CREATE DATABASE "{name}"')  # name is generated here, not input
        else:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="qdsl-wheel-") as tmp:
        work = Path(tmp)
        wheel = build_wheel(work)
        venv = work / "venv"
        _run([sys.executable, "-m", "venv", str(venv)], cwd=work)
        python = venv / "bin" / "python"
        qdsl = venv / "bin" / "qdsl"
        # by the distribution's name (a direct reference: that name, from the wheel just
        # built), its dependencies from the index as a user's install takes them
        _run([str(python), "-m", "pip", "install", "-q",
              f"{DISTRIBUTION} @ {wheel.as_uri()}"], cwd=work)

        site = _site_packages(python, work)
        ours = sorted(p.name for p in site.iterdir() if p.name.lower().startswith("qdsl"))
        if ours != ["qdsl", f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info"]:
            sys.stderr.write(f"site-packages holds {ours}, expected qdsl and its dist-info\n")
            return 1
        clashes = sorted(n for n in COMPONENTS if (site / n).exists())
        if clashes:
            sys.stderr.write(f"the wheel installed top-level packages {clashes}\n")
            return 1
        probe = (
            "import sys, qdsl, qdsl.api, qdsl.cli.main; "
            f"print(sorted(n for n in sys.modules if n.split('.')[0] in {set(COMPONENTS)!r}))"
        )
        loaded = _run([str(python), "-c", probe], cwd=work).strip()
        if loaded != "[]":
            sys.stderr.write(f"importing qdsl loaded bare component modules: {loaded}\n")
            return 1

        state = work / "state"
        env = {**os.environ, "QDSL_STATE_DIR": str(state)}
        env.pop("QDSL_DATABASE_URL", None)
        env.pop("QDSL_CATALOG", None)
        # the console script's version comes from the wheel's own _version.py
        shown = _run([str(qdsl), "--version"], cwd=work, env=env)
        if shown != f"qdsl {wheel.name.split('-')[1]}\n":
            sys.stderr.write(f"qdsl --version printed {shown!r} from {wheel.name}\n")
            return 1
        _run([str(qdsl), "demo"], cwd=work, env=env)
        out = _run([str(qdsl), "--json", "ask", "--tenant", "t1", "有多少个港股项目"],
                   cwd=work, env=env)
        answer = json.loads(out)["data"]
        if answer["status"] != "answered" or answer["answer_contract"] != "count_scalar":
            sys.stderr.write(f"unexpected answer from the wheel: {out[:2000]}\n")
            return 1

        name = f"qdsl_wheel_{uuid.uuid4().hex[:10]}"
        _pg_database("create", name)
        try:
            base = PG_ADMIN.rsplit("/", 1)[0]
            out = _run([str(qdsl), "--json", "--db", f"{base}/{name}", "db", "upgrade"],
                       cwd=work, env=env)
            revision = json.loads(out)["data"]["revision"]
        finally:
            _pg_database("drop", name)
        print(f"wheel check passed: {wheel.name}; demo, ask (count_scalar), "
              f"db upgrade on PostgreSQL to {revision}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
