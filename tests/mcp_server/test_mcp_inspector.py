"""A real external client: the MCP Inspector's CLI mode (npm
`@modelcontextprotocol/inspector`) lists and calls the tools over stdio.

The package is installed once into the pytest cache (`npm install --prefix`)
when npm is on PATH; without npm the test is skipped and says why.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from mcp_helpers import QDSL, WAIT_S, server_env

INSPECTOR = "@modelcontextprotocol/inspector@0.15.0"


@pytest.fixture(scope="session")
def inspector(request: pytest.FixtureRequest) -> Path:
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed: the MCP Inspector (an npm package) cannot be run")
    prefix = Path(request.config.cache.mkdir("mcp-inspector"))
    binary = prefix / "node_modules" / ".bin" / "mcp-inspector"
    if not binary.exists():
        done = subprocess.run(
            [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", INSPECTOR],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, f"npm install {INSPECTOR} failed:\n{done.stderr[-2000:]}"
    return binary


def _inspect(binary: Path, state: Path, *method: str) -> dict[str, object]:
    done = subprocess.run(
        [str(binary), "--cli", QDSL, "mcp", "--tenant", "t1", "--method", *method],
        capture_output=True,
        text=True,
        env=server_env(state),
        timeout=WAIT_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_the_inspector_lists_and_calls_the_tools(inspector: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    listed = _inspect(inspector, state, "tools/list")
    tools = {t["name"]: t for t in listed["tools"]}  # type: ignore[attr-defined]
    assert set(tools) == {
        "ask",
        "run_plan",
        "compile_plan",
        "describe_catalog",
        "plan_schema",
        "get_ref",
    }
    assert all(t["annotations"]["readOnlyHint"] is True for t in tools.values())

    called = _inspect(
        inspector,
        state,
        "tools/call",
        "--tool-name",
        "ask",
        "--tool-arg",
        "question=how many projects",
    )
    data = called["structuredContent"]["data"]  # type: ignore[index]
    assert (data["status"], data["answer"]) == ("answered", {"count": 14})
    assert called["content"][0]["text"] == "[answered] There are 14 projects."  # type: ignore[index]
