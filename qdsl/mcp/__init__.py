"""`qdsl mcp`: qdsl as a Model Context Protocol server (docs/mcp.md).

An agent host attaches six read-only tools (`ask`, `run_plan`, `compile_plan`,
`describe_catalog`, `plan_schema`, `get_ref`) and reads large results as
resources (`qdsl://refs/<id>`). The tenant is the server's, never the model's:
fixed at start on stdio, taken from the bearer token over HTTP.

Modules: `service` (the operations), `tools` (their schemas and the call
dispatcher), `results` (envelope -> tool result), `resources` (refs as
resources), `tokens` (the tokens file), `errors`, `logs` (structlog on stderr),
`app` (the SDK server), `transports` (stdio and streamable HTTP).
"""

from __future__ import annotations

INSTALL_HINT = "install the MCP extra: pip install 'qdsl-verified[mcp]'"


def sdk_available() -> bool:
    """Whether the `mcp` extra is installed: the official MCP SDK (PyPI `mcp`) and
    structlog (the server's log)."""
    import importlib.util

    return all(importlib.util.find_spec(name) is not None for name in ("mcp", "structlog"))
