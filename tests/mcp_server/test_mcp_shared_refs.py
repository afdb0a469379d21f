"""Two `qdsl mcp --http` processes of one deployment with the PostgreSQL ref
store (issue 11, item 6): a ref made through one is read through the other,
by the same tenant only. Each process has a state dir of its own (as on two
hosts; only the tokens file is copied), so nothing is shared through files."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import anyio
import pytest
from mcp_helpers import HttpServer, error_of, http_session, ok_data, server_env, structured

pytestmark = pytest.mark.pg


def test_a_ref_made_by_one_server_is_read_by_the_next(pg_url: str, tmp_path: Path) -> None:
    first_state, second_state = tmp_path / "host-a" / "state", tmp_path / "host-b" / "state"
    first_state.parent.mkdir()
    second_state.parent.mkdir()
    settings = {"QDSL_REF_THRESHOLD": "2048", "QDSL_REF_STORE": "postgresql"}
    first = HttpServer.start(["--db", pg_url], server_env(first_state, **settings), first_state)
    try:
        t1, _ = first.token("t1")
        t2, _ = first.token("t2")
        (second_state / "mcp").mkdir(parents=True)
        shutil.copy2(first_state / "mcp" / "tokens.jsonl", second_state / "mcp" / "tokens.jsonl")
        second = HttpServer.start(
            ["--db", pg_url], server_env(second_state, **settings), second_state
        )
        try:

            async def body() -> None:
                async with http_session(first.url, t1) as a:
                    made = structured(await a.call_tool("ask", {"question": "list all projects"}))
                assert made["resultPersisted"] is True
                ref = made["refId"]
                async with http_session(second.url, t1) as b:
                    read = await b.read_resource(f"qdsl://refs/{ref}")
                    text = read.contents[0].text  # type: ignore[union-attr]
                    assert hashlib.sha256(text.encode()).hexdigest() == made["sha256"]
                    assert json.loads(text)["operation"] == "ask"
                    picked = {"ref_id": ref, "expr": "data.answer_contract"}
                    got = ok_data(await b.call_tool("get_ref", picked))
                    assert got["value"] == json.loads(text)["data"]["answer_contract"]
                    listed = [str(r.uri) for r in (await b.list_resources()).resources]
                    assert f"qdsl://refs/{ref}" in listed
                async with http_session(second.url, t2) as other:
                    refused = error_of(await other.call_tool("get_ref", {"ref_id": ref}))
                    assert refused["code"] == "ref/ref_not_found"
                    listed = [str(r.uri) for r in (await other.list_resources()).resources]
                    assert f"qdsl://refs/{ref}" not in listed

            anyio.run(body)
        finally:
            assert second.stop() == 0, second.log.read_text()
    finally:
        assert first.stop() == 0, first.log.read_text()
    for state in (first_state, second_state):
        assert not (state / "refs").exists() or not any((state / "refs").rglob("*.json"))
