"""Start-up cost: agent hosts call qdsl once per step, so heavy imports stay lazy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HEAVY = ("sqlalchemy", "pydantic", "lark", "jmespath", "alembic")


def _loaded_after(code: str, state_dir: Path) -> list[str]:
    probe = (
        "import json, sys\n"
        f"{code}\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}"
        " or m == 'sqlalchemy.ext.asyncio')), file=sys.stderr)\n"
    )
    env = {**os.environ, "QDSL_STATE_DIR": str(state_dir)}
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True
    )
    loaded: list[str] = json.loads(done.stderr.strip().splitlines()[-1])
    return loaded


def test_refs_list_loads_no_heavy_library(tmp_path: Path) -> None:
    code = (
        "from qdsl.cli.main import main\n"
        "try:\n    main(['--json', 'refs', 'list'])\nexcept SystemExit:\n    pass"
    )
    assert _loaded_after(code, tmp_path) == []


def test_the_sync_api_does_not_load_sqlalchemy_asyncio(tmp_path: Path) -> None:
    assert "sqlalchemy.ext.asyncio" not in _loaded_after("import qdsl.api", tmp_path)
