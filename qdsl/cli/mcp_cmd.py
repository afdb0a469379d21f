"""`qdsl mcp`: the MCP server (docs/mcp.md), and `qdsl mcp token add|list|revoke`.

`qdsl mcp --tenant T` serves one tenant on stdio (the host spawns it);
`qdsl mcp --http HOST:PORT` serves streamable HTTP, each request's bearer token
naming its tenant. Start-up problems (no SDK, no tenant, a missing database)
are reported like any command's, with exit 2 / 8; once serving, a failing call
is the caller's typed error and the server goes on.
"""

from __future__ import annotations

import gc
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

import click

from qdsl.cli.runner import Outcome, run_operation
from qdsl.cli.state import current_state
from qdsl.dsl.errors import QdslError, UsageError

if TYPE_CHECKING:
    from qdsl.mcp.http_server import HttpOptions


def _require_sdk() -> None:
    from qdsl.mcp import INSTALL_HINT, sdk_available

    if not sdk_available():
        raise UsageError(
            "mcp_not_installed",
            "`qdsl mcp` needs its extra (the MCP Python SDK, PyPI `mcp`, and structlog), "
            "which is not installed",
            hint=INSTALL_HINT,
        )


def _fail(exc: QdslError) -> int:
    from qdsl.envelope import emit_error

    return emit_error("mcp", exc, json_mode=current_state().json_mode)


@click.group("mcp", invoke_without_command=True)
@click.option("--tenant", default=None, help="stdio: the one tenant this server answers for.")
@click.option(
    "--http",
    "http_address",
    default=None,
    metavar="HOST:PORT",
    help="Serve streamable HTTP at http://HOST:PORT/mcp; tenants come from bearer tokens.",
)
@click.option(
    "--max-concurrency",
    type=click.IntRange(1, 1024),
    default=4,
    show_default=True,
    help="Calls run at once; past it a call is refused with policy/server_busy.",
)
@click.option(
    "--timeout-ms", type=int, default=None, help="Statement timeout of each call (default 5000)."
)
@click.option(
    "--call-timeout",
    type=click.FloatRange(0.1, 86400),
    default=120.0,
    show_default=True,
    help="Seconds one call may take in all before it is cancelled.",
)
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="NAME[:PORT]",
    help="HTTP: a Host clients may use besides the address bound (a DNS name, a proxy's "
    "host); repeatable. Any other Host or Origin is refused (DNS rebinding).",
)
@click.option(
    "--request-timeout",
    type=click.FloatRange(0.1, 3600),
    default=10.0,
    show_default=True,
    help="HTTP: seconds a request's headers and body may take to arrive.",
)
@click.option(
    "--max-unauthenticated",
    type=click.IntRange(1, 100_000),
    default=64,
    show_default=True,
    help="HTTP: connections without a valid token yet; past it the one waiting longest is closed.",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 256),
    default=1,
    show_default=True,
    help="HTTP: server processes accepting on the one address (each with its own "
    "--max-concurrency); past 1, MCP is served without sessions.",
)
@click.option("--log-level", type=click.Choice(["DEBUG", "INFO", "WARNING"]), default="INFO")
@click.pass_context
def mcp_group(  # noqa: PLR0917 - click passes every option
    ctx: click.Context,
    /,
    tenant: str | None,
    http_address: str | None,
    max_concurrency: int,
    timeout_ms: int | None,
    call_timeout: float,
    allow_hosts: tuple[str, ...],
    request_timeout: float,
    max_unauthenticated: int,
    workers: int,
    log_level: str,
) -> None:
    """Serve qdsl over the Model Context Protocol (stdio, or HTTP with --http)."""
    if ctx.invoked_subcommand is not None:
        return
    try:
        _require_sdk()
        if (tenant is None) == (http_address is None):
            raise UsageError(
                "bad_arguments",
                "give --tenant T (stdio) or --http HOST:PORT (tenants from tokens), not both",
                hint="qdsl mcp --tenant t1   or   qdsl mcp --http 127.0.0.1:8765",
            )
        if workers > 1 and http_address is None:
            raise UsageError(
                "bad_arguments",
                "--workers is for --http: a stdio server is one process its host spawned",
                hint="qdsl mcp --http 127.0.0.1:8765 --workers 2",
            )
        code = _serve(
            tenant,
            http_address,
            ServerOptions(max_concurrency, timeout_ms, call_timeout, log_level, workers),
            _http_options(allow_hosts, request_timeout, max_unauthenticated, workers),
        )
    except QdslError as exc:
        code = _fail(exc)
    ctx.exit(code)


@dataclass(frozen=True)
class ServerOptions:
    max_concurrency: int
    timeout_ms: int | None
    call_timeout: float
    log_level: str
    workers: int = 1


def _http_options(
    allow_hosts: tuple[str, ...], request_timeout: float, max_unauthenticated: int, workers: int
) -> HttpOptions:
    from qdsl.mcp.http_server import HttpOptions

    for name in allow_hosts:
        if not name.strip() or any(c.isspace() or c in "/,\"'" for c in name):
            raise UsageError(
                "bad_allow_host",
                f"--allow-host takes a host name, optionally with :PORT, got {name!r}",
                hint="for example --allow-host mcp.example.com or --allow-host 10.0.0.5:8765",
            )
    return HttpOptions(
        request_timeout_s=request_timeout,
        max_unauthenticated=max_unauthenticated,
        allow_hosts=tuple(n.strip() for n in allow_hosts),
        stateless=workers > 1,
    )


def _serve(
    tenant: str | None, http_address: str | None, opts: ServerOptions, http: HttpOptions
) -> int:
    import anyio

    from qdsl.dsl.tenant import valid_tenant
    from qdsl.envelope.store import collect_at_start
    from qdsl.executor.run import timeout_from_env
    from qdsl.mcp.http_server import parse_address
    from qdsl.mcp.logs import configure as configure_logging
    from qdsl.mcp.service import ServerConfig, Service
    from qdsl.mcp.tokens import TokenFile

    if tenant is not None:
        tenant = valid_tenant(tenant)
    if http_address is not None:
        parse_address(http_address)
        # a tokens file that cannot be read is refused now, naming its bad line
        TokenFile.default().records()
    timeout_from_env(opts.timeout_ms)  # a bad value is a usage error now, not on every call
    state = current_state()
    config = ServerConfig(
        db_url=state.db_url,
        catalog_path=state.catalog_path,
        read_url=state.read_db_url,
        max_concurrency=opts.max_concurrency,
        timeout_ms=opts.timeout_ms,
        call_timeout_s=opts.call_timeout,
    )
    configure_logging(opts.log_level)
    sock = None
    if http_address is not None and opts.workers > 1:
        from qdsl.mcp.prefork import fork_workers, prepare_demo

        if state.db_url is None:
            prepare_demo()
        # before anything opens a connection or a thread: a worker inherits nothing open
        forked = fork_workers(opts.workers, http_address)
        if isinstance(forked, int):
            return forked  # the parent, once the workers have ended
        sock = forked
    from qdsl.envelope.backends import set_deployment_database

    # the database served is the PostgreSQL ref store's default (QDSL_REF_STORE)
    set_deployment_database(state.db_url)
    collect_at_start()
    service = Service(config)
    service.open()
    # What start-up made (modules, the catalog, the compiled grammar) lives as
    # long as the server: out of the collector's sight, a large result's
    # collections walk only the objects of calls.
    gc.freeze()
    if tenant is not None:
        from qdsl.mcp.transports import serve_stdio

        anyio.run(serve_stdio, service, tenant)
    else:
        from qdsl.mcp.http_server import serve_http

        assert http_address is not None
        anyio.run(serve_http, service, http_address, TokenFile.default(), http, sock)
    sys.stderr.flush()
    return 0


@mcp_group.group("token")
def token_group() -> None:
    """Bearer tokens of `qdsl mcp --http`, each bound to one tenant."""


@token_group.command("add")
@click.option("--tenant", required=True, help="The tenant the token answers for.")
@click.option("--label", default=None, help="A note to tell tokens apart (shown by list).")
@click.pass_context
def token_add(ctx: click.Context, tenant: str, label: str | None) -> None:
    """Make a new token for TENANT and print it, once; only its hash is kept."""

    def body() -> Outcome:
        from qdsl.mcp.tokens import TokenFile

        token, record = TokenFile.default().add(tenant, label)
        data = {**record.public(), "token": token}
        human = (
            f"{token}\n(token {record.token_id} for tenant {record.tenant}; it is shown only "
            "now: send it as `Authorization: Bearer <token>`)"
        )
        return Outcome(data=data, human=human)

    ctx.exit(run_operation("mcp token add", body))


@token_group.command("list")
@click.pass_context
def token_list(ctx: click.Context) -> None:
    """The tokens (ids, tenants, when made and revoked), never the secrets."""

    def body() -> Outcome:
        from qdsl.cli.tables import Table, render
        from qdsl.mcp.tokens import TokenFile

        rows = [r.public() for r in TokenFile.default().records().values()]
        table = Table(("id", "tenant", "label", "created", "revoked"))
        for r in rows:
            table.add(r["id"], r["tenant"], r["label"] or "", r["createdAt"], r["revokedAt"] or "")
        return Outcome(
            data={"tokens": rows, "count": len(rows)},
            human=render([table]) if rows else "(no tokens)",
        )

    ctx.exit(run_operation("mcp token list", body))


@token_group.command("revoke")
@click.argument("token_id", metavar="ID")
@click.pass_context
def token_revoke(ctx: click.Context, token_id: str) -> None:
    """Revoke token ID: a server refuses it (401) from its next request on."""

    def body() -> Outcome:
        from qdsl.mcp.tokens import TokenFile

        record = TokenFile.default().revoke(token_id)
        return Outcome(
            data=record.public(), human=f"revoked {record.token_id} (tenant {record.tenant})"
        )

    ctx.exit(run_operation("mcp token revoke", body))
