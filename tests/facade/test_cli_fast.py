"""The console script's front door (`qdsl.cli.fast`): `--version` and `refs list`
print exactly what the click commands print, without loading click or
importlib.metadata; every other call reaches the click command line."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from qdsl._version import DISTRIBUTION, __version__
from qdsl.cli.fast import refs_list_request, version_request

FAST = "import sys; from qdsl.cli.fast import main; sys.argv[0] = 'qdsl'; main()"
FULL = "import sys; from qdsl.cli.main import main; sys.argv[0] = 'qdsl'; main()"
TRACE = re.compile(r'"traceId":"[0-9a-f]+"')


def _run(code: str, args: list[str], state: Path) -> tuple[int, str, str]:
    env = {**os.environ, "QDSL_STATE_DIR": str(state)}
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, check=False
    )
    return done.returncode, TRACE.sub('"traceId":"-"', done.stdout), done.stderr


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A state dir holding a shared ref and one of tenant t1."""
    from qdsl.envelope.store import open_store

    monkeypatch.setenv("QDSL_STATE_DIR", str(tmp_path))
    store = open_store()
    store.put("run", b'{"a": 1}\n')
    store.put("ask", b'{"b": 2}\n', tenant="t1")
    return tmp_path


CASES = [
    ["--version"],
    ["--json", "--version"],
    ["--version", "--json"],
    ["refs", "list"],
    ["--json", "refs", "list"],
    ["refs", "list", "--json", "--tenant", "t1"],
    ["--json", "refs", "list", "--tenant=t1"],
    ["refs", "list", "--tenant", ""],
    ["--json", "refs", "list", "--tenant", "no such tenant!"],
]


@pytest.mark.parametrize("args", CASES, ids=" ".join)
def test_the_front_door_prints_what_the_click_command_prints(
    args: list[str], state: Path
) -> None:
    assert _run(FAST, args, state) == _run(FULL, args, state)


def test_the_version_is_the_wheel_metadata_version(state: Path) -> None:
    assert __version__ == version(DISTRIBUTION)
    assert _run(FAST, ["--version"], state) == (0, f"qdsl {__version__}\n", "")
    code, out, _ = _run(FAST, ["--json", "refs", "list", "--tenant", "t1"], state)
    assert code == 0 and json.loads(out)["data"]["count"] == 2


@pytest.mark.parametrize("args", [["--version"], ["--json", "refs", "list", "--tenant", "t1"]])
def test_the_front_door_loads_neither_click_nor_importlib_metadata(
    args: list[str], state: Path
) -> None:
    probe = (
        "import atexit, sys\n"
        "atexit.register(lambda: print(sorted(m for m in sys.modules if m == 'click'"
        " or m.startswith(('click.', 'importlib.metadata', 'sqlalchemy', 'pydantic'))),"
        " file=sys.stderr))\n" + FAST.replace("; ", "\n")
    )
    code, _out, err = _run(probe, args, state)
    assert code == 0
    assert err.strip().splitlines()[-1] == "[]"


def test_the_ref_listing_loads_no_heavy_standard_module(state: Path) -> None:
    # `dataclasses` (with `inspect`), `secrets` (hmac, random), `calendar`
    # (locale) and OpenSSL's hashlib were most of `refs list`'s start-up.
    # (`--tenant` still loads `dataclasses`, through the limits it checks.)
    heavy = ("dataclasses", "inspect", "secrets", "calendar", "hashlib", "click")
    probe = (
        "import atexit, sys\n"
        f"atexit.register(lambda: print(sorted(set(sys.modules) & set({heavy!r})),"
        " file=sys.stderr))\n" + FAST.replace("; ", "\n")
    )
    code, out, err = _run(probe, ["--json", "refs", "list"], state)
    assert code == 0 and json.loads(out)["data"]["count"] == 1
    assert err.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--help"],
        ["--version", "--db", "x"],
        ["refs", "list", "--help"],
        ["refs", "list", "--tenant"],
        ["refs", "list", "--tenant", "a", "--tenant", "b"],
        ["refs", "list", "--tenant", "--json"],
        ["refs", "show", "r1"],
        ["--db", "sqlite:///x", "refs", "list"],
        ["ask", "--version"],
    ],
)
def test_anything_else_goes_to_the_click_command_line(args: list[str]) -> None:
    assert version_request(args) is None
    assert refs_list_request(args) is None


def test_the_fast_forms_are_recognized() -> None:
    assert version_request(["--version"]) is False
    assert version_request(["--json", "--version"]) is True
    assert refs_list_request(["refs", "list"]) == (False, None)
    assert refs_list_request(["--json", "refs", "list", "--tenant", "t9"]) == (True, "t9")
    assert refs_list_request(["refs", "list", "--tenant=t9", "--json"]) == (True, "t9")
