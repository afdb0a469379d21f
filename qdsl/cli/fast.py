"""The `qdsl` console script: the most frequent calls answered before click loads.

Agent hosts run qdsl once per step, so start-up is paid on every call. The
version (`qdsl --version`, with or without `--json`) and the ref listing
(`qdsl [--json] refs list [--tenant ID] [--json]`) are served here, printing
exactly what the click commands print; anything else, including any other
spelling of these, goes to the full command line (`qdsl.cli.main`).
"""

from __future__ import annotations

import sys


def print_version(*, json_mode: bool) -> int:
    from qdsl._version import __version__

    if json_mode:
        # docs/envelopes.md: with --json, stdout holds only an envelope.
        from qdsl.envelope import emit_success

        return emit_success("version", {"version": __version__})
    sys.stdout.write(f"qdsl {__version__}\n")
    return 0


def version_request(args: list[str]) -> bool | None:
    """JSON mode if `args` ask for the version alone, else None."""
    if "--version" not in args or not set(args) <= {"--version", "--json"}:
        return None
    return "--json" in args


def refs_list_request(args: list[str]) -> tuple[bool, str | None] | None:
    """(JSON mode, tenant) if `args` are a plain `refs list`, else None."""
    json_mode = False
    rest = list(args)
    while rest and rest[0] == "--json":
        json_mode = True
        rest.pop(0)
    if rest[:2] != ["refs", "list"]:
        return None
    tenant: str | None = None
    options = iter(rest[2:])
    for arg in options:
        if arg == "--json":
            json_mode = True
        elif tenant is None and arg == "--tenant":
            tenant = next(options, None)
            if tenant is None or tenant.startswith("-"):
                return None
        elif tenant is None and arg.startswith("--tenant="):
            tenant = arg.removeprefix("--tenant=")
        else:
            return None
    return json_mode, tenant


def _plain_text(args: list[str]) -> bool:
    # an argument that was not UTF-8 is the full command line's to report
    try:
        for arg in args:
            arg.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def main() -> None:
    args = sys.argv[1:]
    if _plain_text(args):
        json_mode = version_request(args)
        if json_mode is not None:
            sys.exit(print_version(json_mode=json_mode))
        listing = refs_list_request(args)
        if listing is not None:
            from qdsl.cli.outcome import deliver
            from qdsl.cli.refs_listing import list_refs

            json_mode, tenant = listing
            sys.exit(
                deliver("refs list", lambda: list_refs(tenant), json_mode=json_mode, tenant=tenant)
            )
    from qdsl.cli.main import main as full

    full(args)
