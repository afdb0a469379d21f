"""What an HTTP request passes before the SDK sees it (issue 25 R5 / L1 / F2,
issue 23 item 9).

* every refused request is logged with its reason (a request with no token
  was not), and its 401 carries `WWW-Authenticate: Bearer ...
  resource_metadata="..."`, the resource metadata being served (RFC 9728);
* Host / Origin are checked on every bind address, not only on 127.0.0.1
  (bound to 127.0.0.2, 8 of 11 rebinding probes were accepted);
* a request must arrive within `--request-timeout` (600 slow connections were
  held 30 s each), and at most `--max-unauthenticated` connections wait
  without a valid token (past it, the one waiting longest is closed);
* a tokens file with a bad line: the start is refused naming the line, a
  running server answers 503 to everyone (fail closed) and names the line in
  its log, `mcp token list` exits 2 naming it (a bad byte made every request
  a 500, `token list` exit 1, and put the bearer token in the log 4 times).

No wait is asserted on; each is event-driven with a generous bound.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp_helpers import QDSL, WAIT_S, HttpServer, cli_json, log_events, server_env

from qdsl.mcp.tokens import TokenFile

ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}


@pytest.fixture
def served(sqlite_url: str, tmp_path: Path) -> Iterator[HttpServer]:
    state = tmp_path / "state"
    server = HttpServer.start(["--db", sqlite_url], server_env(state), state)
    yield server
    assert server.stop() == 0, server.log.read_text()[-2000:]


def _post(url: str, headers: dict[str, str], **kwargs: Any) -> httpx2.Response:
    with httpx2.Client(timeout=WAIT_S) as client:
        return client.post(url, json=INIT, headers={**ACCEPT, **headers}, **kwargs)


def _refusals(server: HttpServer) -> list[dict[str, Any]]:
    return [e for e in log_events(server.log) if e["event"] == "request_refused"]


def _wait_for(found: Any, what: str) -> Any:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        value = found()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"no {what} within {WAIT_S} s")


def test_every_refusal_is_logged_and_answered_with_the_bearer_challenge(
    served: HttpServer,
) -> None:
    token, token_id = served.token("t1")
    revoked, revoked_id = served.token("t1")
    cli_json(["mcp", "token", "revoke", revoked_id], served.state_dir)
    base = served.url.removesuffix("/mcp")
    metadata_url = f"{base}/.well-known/oauth-protected-resource/mcp"
    probes = {
        "no_token": {},
        "not_bearer": {"Authorization": "Basic dDE6dDE="},
        "unknown_token": {"Authorization": "Bearer qdsl_" + "x" * 43},
        "revoked_token": {"Authorization": f"Bearer {revoked}"},
    }
    for reason, headers in probes.items():
        answer = _post(served.url, headers)
        assert answer.status_code == 401, reason
        challenge = answer.headers["www-authenticate"]
        assert challenge.startswith('Bearer realm="qdsl", ')
        assert f'resource_metadata="{metadata_url}"' in challenge
        # RFC 6750 3.1: an error code only when credentials were sent
        sent = reason in ("unknown_token", "revoked_token")
        assert ('error="invalid_token"' in challenge) == sent
    assert _post(served.url, {"Authorization": f"Bearer {token}"}).status_code == 200

    refused = _wait_for(lambda: len(_refusals(served)) >= 4 and _refusals(served), "refusals")
    assert [e["reason"] for e in refused] == list(probes)
    assert all(e["status"] == 401 and e["client"].startswith("127.0.0.1:") for e in refused)
    assert refused[-1]["token_id"] == revoked_id
    text = served.log.read_text()
    assert token not in text and revoked not in text and token_id not in text

    with httpx2.Client(timeout=WAIT_S) as client:
        metadata = client.get(metadata_url)
    assert metadata.status_code == 200
    assert metadata.json() == {
        "resource": served.url,
        "bearer_methods_supported": ["header"],
        "resource_name": "qdsl",
    }


# Rebinding probes: a page of another origin, or a name that resolves to us.
PROBES = [
    {"Host": "evil.example"},
    {"Host": "evil.example:{port}"},
    {"Host": "127.0.0.2.evil.example:{port}"},
    {"Host": "{addr}.nip.io:{port}"},
    {"Host": "127.0.0.2:{port}.evil.example"},
    {"Host": "localhost.evil.example:{port}"},
    {"Origin": "http://evil.example"},
    {"Origin": "http://evil.example:{port}"},
    {"Origin": "http://{addr}:{port}.evil.example"},
    {"Origin": "null"},
    {"Host": "evil.example", "Origin": "http://evil.example"},
]


@pytest.mark.parametrize("addr", ["127.0.0.2", "127.0.0.1"])
def test_host_and_origin_are_checked_on_every_bind_address(
    addr: str, sqlite_url: str, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    server = HttpServer.start(["--db", sqlite_url], server_env(state), state, bind=f"{addr}:0")
    try:
        token, _ = server.token("t1")
        port = server.url.rsplit(":", 1)[1].removesuffix("/mcp")
        auth = {"Authorization": f"Bearer {token}"}
        accepted = []
        for probe in PROBES:
            headers = {k: v.format(addr=addr, port=port) for k, v in probe.items()}
            status = _post(server.url, {**auth, **headers}).status_code
            accepted += [headers] if status not in (403, 421) else []
        assert accepted == []
        assert _post(server.url, auth).status_code == 200
        assert _post(server.url, {**auth, "Origin": f"http://{addr}:{port}"}).status_code == 200
        refused = [e["reason"] for e in _refusals(server)]
        assert set(refused) == {"bad_host", "bad_origin"} and len(refused) == len(PROBES)
    finally:
        assert server.stop() == 0


def test_allow_host_names_the_hosts_a_proxy_or_dns_name_brings(
    sqlite_url: str, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    server = HttpServer.start(
        ["--db", sqlite_url],
        server_env(state),
        state,
        ("--allow-host", "mcp.example.test", "--allow-host", "10.1.2.3:8443"),
        bind="127.0.0.2:0",
    )
    try:
        auth = {"Authorization": f"Bearer {server.token('t1')[0]}"}
        for fine in (
            {"Host": "mcp.example.test"},
            {"Host": "mcp.example.test:443", "Origin": "https://mcp.example.test"},
            {"Host": "10.1.2.3:8443", "Origin": "https://10.1.2.3:8443"},
        ):
            assert _post(server.url, {**auth, **fine}).status_code == 200, fine
        for refused in ({"Host": "10.1.2.3:8444"}, {"Host": "other.example.test"}):
            assert _post(server.url, {**auth, **refused}).status_code == 421, refused
    finally:
        assert server.stop() == 0


def _connect(server: HttpServer) -> socket.socket:
    host, port = server.url.removeprefix("http://").removesuffix("/mcp").rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=WAIT_S)
    return sock


def _closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closes `sock` (read until it does, or WAIT_S passes)."""
    try:
        while sock.recv(4096):
            pass
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False
    return True


def test_a_slow_request_is_cut_at_the_request_timeout(sqlite_url: str, tmp_path: Path) -> None:
    state = tmp_path / "state"
    server = HttpServer.start(
        ["--db", sqlite_url], server_env(state), state, ("--request-timeout", "1")
    )
    try:
        token, _ = server.token("t1")
        port = server.url.rsplit(":", 1)[1].removesuffix("/mcp")
        silent = _connect(server)  # connects and sends nothing
        headers = _connect(server)  # its headers, never finished
        headers.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode())
        body = _connect(server)  # whole headers, a tenth of its body
        body.sendall(
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n"
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            "Content-Length: 1000\r\n\r\n".encode()
            + b"{" * 100
        )
        for sock in (silent, headers, body):
            with sock:
                assert _closed_by_server(sock)
        # a request that arrives in time is answered, however long the server takes
        assert _post(server.url, {"Authorization": f"Bearer {token}"}).status_code == 200
    finally:
        assert server.stop() == 0
    timeouts = [e for e in log_events(server.log) if e["event"] == "request_timeout"]
    assert len(timeouts) == 3


def test_unauthenticated_connections_are_capped_the_longest_waiting_dropped(
    sqlite_url: str, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    server = HttpServer.start(
        ["--db", sqlite_url],
        server_env(state),
        state,
        ("--max-unauthenticated", "3", "--request-timeout", "3600"),
    )
    try:
        token, _ = server.token("t1")
        port = server.url.rsplit(":", 1)[1].removesuffix("/mcp")
        held = []
        for _ in range(3):  # each accepted and held: a whole request answered on it
            sock = _connect(server)
            sock.sendall(f"GET /nothing HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            assert sock.recv(4096).startswith(b"HTTP/1.1 401")
            held.append(sock)
        newest = _connect(server)  # one more: the one waiting longest goes
        with held[0]:
            assert _closed_by_server(held[0])
        newest.sendall(f"GET /nothing HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        assert newest.recv(4096).startswith(b"HTTP/1.1 401")  # it was taken, and served
        # a client with a token is served, however many connections wait without one
        auth = {"Authorization": f"Bearer {token}"}
        for _ in range(5):
            assert _post(server.url, auth).status_code == 200
        for sock in (*held[1:], newest):
            sock.close()
    finally:
        assert server.stop() == 0
    dropped = [e for e in log_events(server.log) if e["event"] == "connection_dropped"]
    assert dropped and dropped[0]["reason"] == "too_many_unauthenticated"


def _bad_line(tokens: Path, line: bytes) -> int:
    with tokens.open("ab") as f:
        f.write(line)
    return len(tokens.read_bytes().split(b"\n")) - 1


@pytest.mark.parametrize(
    "bad",
    [b"\xff\n", b"{not json\n", b'{"op": "revoke"}\n', b"[1]\n", b'{"op": "add", "id": "x"'],
    ids=["a bad byte", "not JSON", "a revoke without id", "not an event", "a torn line"],
)
def test_a_tokens_file_with_a_bad_line_authenticates_no_one_and_names_the_line(
    bad: bytes, served: HttpServer
) -> None:
    token, _ = served.token("t1")
    assert _post(served.url, {"Authorization": f"Bearer {token}"}).status_code == 200
    tokens = served.state_dir / "mcp" / "tokens.jsonl"
    line = _bad_line(tokens, bad) + (0 if bad.endswith(b"\n") else 1)

    answer = _post(served.url, {"Authorization": f"Bearer {token}"})
    assert answer.status_code == 503 and answer.headers["retry-after"] == "30"
    assert "line" not in answer.json()["error_description"]  # the operator's, in the log
    logged = _wait_for(
        lambda: [e for e in _refusals(served) if e["reason"] == "tokens_unreadable"], "log line"
    )
    assert logged[0]["line"] == line and logged[0]["level"] == "error"
    error = cli_json(["mcp", "token", "list"], served.state_dir, ok=False)
    assert error["code"] == "usage/tokens_unreadable" and error["details"]["line"] == line
    assert token not in served.log.read_text()

    # fixed (the bad line removed): served again, without a restart
    lines = tokens.read_bytes().split(b"\n")
    tokens.write_bytes(b"\n".join([*lines[: line - 1], b""]))
    assert _post(served.url, {"Authorization": f"Bearer {token}"}).status_code == 200


def test_a_server_does_not_start_on_a_tokens_file_with_a_bad_line(
    sqlite_url: str, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    TokenFile(state).add("t1")
    line = _bad_line(state / "mcp" / "tokens.jsonl", b"\xff\n")
    started = subprocess.run(
        [QDSL, "--json", "--db", sqlite_url, "mcp", "--http", "127.0.0.1:0"],
        capture_output=True,
        env=server_env(state),
        timeout=WAIT_S,
        check=False,
    )
    assert started.returncode == 2, started.stderr[-1000:]
    error = json.loads(started.stderr.decode().strip().splitlines()[-1])["error"]
    assert error["code"] == "usage/tokens_unreadable" and error["details"] == {"line": line}


def test_token_records_are_read_strictly(tmp_path: Path) -> None:
    tokens = TokenFile(tmp_path)
    token, record = tokens.add("t1")
    assert tokens.tenant_of(token) == record
    tokens.revoke(record.token_id)
    assert tokens.tenant_of(token) is None
    assert tokens.lookup(token) is not None  # known, and revoked
    # a revoke line that cannot be read must not bring the token back
    raw = tokens.path.read_bytes().split(b"\n")
    tokens.path.write_bytes(raw[0] + b"\n" + raw[1].replace(b'"revoke"', b'"revok\xff"') + b"\n")
    with pytest.raises(Exception) as caught:
        tokens.tenant_of(token)
    assert getattr(caught.value, "code", None) == "usage/tokens_unreadable"
    assert json.loads(json.dumps(caught.value.details)) == {"line": 2}  # type: ignore[attr-defined]
