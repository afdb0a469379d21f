"""The input channels of every command that takes a plan (docs/cli.md, docs/envelopes.md).

A command decorated with `@plan_input_options` receives the keyword arguments
`plan`, `input_json`, `input_path`, `input_ref`, `pick`, `pick_as` and
`file_input`; it passes them on unchanged to `read_plan_input(**kw)`, which
returns the plan source text (text or JSON form, BOM dropped) and warnings
for the envelope.

Channels (exactly one gives the plan):
  --plan TEXT          the plan inline, text or JSON (told apart by a leading `{`)
  --input-json JSON    the JSON form inline (must be a JSON object)
  --input -            the plan on stdin
  --input PATH         the plan from a file, under the file-input policy
  --input-ref ID       a stored result (`qdsl refs list`); `--pick EXPR` is a
                       JMESPath expression over the stored envelope (default
                       `data`), e.g. `data.plan` or `data.items[0].id`.

`--pick-as FIELD` says what the picked value becomes:
  plan (default)  the value is the plan: a string is plan text or JSON, an
                  object is the JSON form.
  NAME (other)    the value fills the placeholder `$NAME` of the plan given by
                  another channel, which is then required. In a text plan each
                  `$NAME` (or `"$NAME"`) becomes a literal: strings are quoted
                  and must hold no quote, backslash or control character (so
                  the value can never change the plan's structure), numbers
                  are written as numbers. In a JSON plan each string value
                  exactly equal to "$NAME" is replaced by the value, whatever
                  its JSON type. A placeholder that does not occur is an error.
  Example: qdsl run --tenant t1 --input-ref R --pick 'data.items[0].id' \\
             --pick-as pid --plan 'status project where id = $pid'

File-input policy for `--input PATH` (not for `--input -`): `--allow-file-input`
/ `--no-file-input`, else QDSL_FILE_INPUT, else `[io] file_input` in
`<state dir>/config.toml`, else `warn`. `warn` prints one line on stderr (never
stdout); `deny` raises `policy/file_input_denied` (exit 6) whose hint is the
inline command to use instead.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from qdsl.dsl.errors import PolicyError, UsageError
from qdsl.dsl.settings.limits import (
    check_json_depth,
    has_surrogate,
    read_bounded,
    read_file_bounded,
)

F = TypeVar("F", bound=Callable[..., Any])

BOM = "\ufeff"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_UNSAFE_IN_LITERAL = re.compile(r'["\\\x00-\x1f\x7f]')


def plan_input_options(func: F) -> F:
    """Add the plan input channel options to a click command."""
    options = [
        click.option("--plan", "plan", metavar="TEXT", help="The plan inline (text or JSON)."),
        click.option("--input-json", "input_json", metavar="JSON", help="The plan as JSON."),
        click.option(
            "--input",
            "input_path",
            metavar="PATH|-",
            help="Read the plan from stdin (-) or a file (file-input policy applies).",
        ),
        click.option("--input-ref", "input_ref", metavar="ID", help="Take input from a ref."),
        click.option("--pick", "pick", metavar="EXPR", help="JMESPath into the ref's envelope."),
        click.option(
            "--pick-as",
            "pick_as",
            metavar="FIELD",
            help="What the picked value becomes: plan (default) or NAME for $NAME in the plan.",
        ),
        click.option(
            "--allow-file-input/--no-file-input",
            "file_input",
            default=None,
            help="Override the file-input policy for --input PATH.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def drop_bom(text: str) -> str:
    return text.removeprefix(BOM)


def read_stdin(what: str = "stdin") -> str:
    """Standard input as text: at most QDSL_MAX_INPUT_BYTES, UTF-8, BOM dropped."""
    return decode_input(read_bounded(sys.stdin.buffer, "input_bytes", what), what)


def load_json_text(text: str, what: str, subtype: str) -> Any:
    """A JSON document from a channel: nesting bounded before parsing, no NaN or
    Infinity, no lone surrogate in any string or key. Failures are usage errors
    named `subtype` (the limits keep their own subtypes)."""
    check_json_depth(text, what)
    try:
        doc = json.loads(text, parse_constant=_no_constant)
    except (json.JSONDecodeError, ValueError) as exc:
        where = (
            f": {exc.msg} (line {exc.lineno}, column {exc.colno})"
            if isinstance(exc, json.JSONDecodeError)
            else f": {exc}"
        )
        raise UsageError(
            subtype,
            f"{what} is not valid JSON{where}",
            hint=f"pass {what} as one JSON document, or - to read it from stdin",
        ) from None
    if _any_surrogate(doc):
        raise UsageError(
            subtype,
            f"{what} holds a lone surrogate escape (such as \\ud800), which is no character",
            hint="escape a character outside the BMP as a surrogate pair, or send UTF-8",
        )
    return doc


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _any_surrogate(node: Any) -> bool:
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if has_surrogate(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def decode_input(raw: bytes, source: str) -> str:
    try:
        return drop_bom(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise UsageError(
            "bad_encoding",
            f"{source} is not UTF-8 (byte {exc.start})",
            hint="save the plan as UTF-8",
        ) from None


def read_plan_input(
    *,
    plan: str | None = None,
    input_json: str | None = None,
    input_path: str | None = None,
    input_ref: str | None = None,
    pick: str | None = None,
    pick_as: str | None = None,
    file_input: bool | None = None,
) -> tuple[str, list[str]]:
    """Return (plan source text, warnings) from the one channel given."""
    warnings: list[str] = []
    if (pick is not None or pick_as is not None) and input_ref is None:
        raise UsageError(
            "pick_without_ref",
            "--pick and --pick-as need --input-ref",
            hint="add --input-ref ID (see `qdsl refs list`)",
        )
    target = (pick_as or "plan").strip()
    if not _NAME.match(target):
        raise UsageError(
            "bad_pick_as",
            f"--pick-as must be `plan` or a placeholder name, got {pick_as!r}",
            hint="for example --pick-as plan, or --pick-as pid with $pid in the plan",
        )
    ref_is_plan = input_ref is not None and target == "plan"
    given = [
        name
        for name, value in (
            ("--plan", plan),
            ("--input-json", input_json),
            ("--input", input_path),
        )
        if value is not None
    ]
    if ref_is_plan:
        given.append("--input-ref")
    if not given:
        if input_ref is not None:
            raise UsageError(
                "missing_plan_template",
                f"--pick-as {target} fills ${target} of a plan, but no plan was given",
                hint=f"add --plan '... ${target} ...', or use --pick-as plan",
            )
        raise UsageError(
            "missing_input",
            "no plan given",
            hint="give one of --plan TEXT, --input-json JSON, --input - (stdin), "
            "--input-ref ID [--pick EXPR]",
        )
    if len(given) > 1:
        raise UsageError(
            "conflicting_inputs",
            f"give the plan through exactly one channel, got {' and '.join(given)}",
            hint="keep one of them (a ref value can fill a placeholder: --pick-as NAME)",
        )

    if ref_is_plan:
        assert input_ref is not None
        return _plan_from_value(read_ref_value(input_ref, pick), input_ref), warnings

    if plan is not None:
        source = drop_bom(plan)
    elif input_json is not None:
        source = drop_bom(input_json)
        _check_json_object(source, "--input-json")
    else:
        assert input_path is not None
        source = _read_input_path(input_path, file_input)

    if input_ref is not None:
        value = read_ref_value(input_ref, pick)
        source = fill_placeholder(source, target, value)
    return source, warnings


def read_ref_value(ref_id: str, pick: str | None) -> Any:
    """The value of JMESPath `pick` (default `data`) over a stored envelope.

    The ref is read as the command's `--tenant`: a ref made for another
    tenant is `ref/ref_not_found`, exactly like one that does not exist.
    """
    from qdsl.cli.refs_listing import reader_tenant
    from qdsl.cli.runner import command_tenant
    from qdsl.envelope.jmes import search
    from qdsl.envelope.store import open_store

    record, document = open_store().load_json(ref_id, tenant=reader_tenant(command_tenant()))
    expr = pick if pick is not None and pick.strip() else "data"
    value = search(expr, document, document_bytes=record.bytes)
    if value is None:
        raise UsageError(
            "pick_empty",
            f"--pick {expr!r} selects nothing in ref {ref_id}",
            hint=f"look at the stored result: qdsl refs get {ref_id} 'keys(@)'",
        )
    return value


def _plan_from_value(value: Any, ref_id: str) -> str:
    if isinstance(value, str):
        return drop_bom(value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    raise UsageError(
        "pick_not_plan",
        f"the value picked from ref {ref_id} is a {type(value).__name__}, not a plan",
        hint="pick a plan (text or object), or fill a placeholder with --pick-as NAME",
    )


def fill_placeholder(source: str, name: str, value: Any) -> str:
    """Substitute `$name` in a text or JSON plan (see the module doc)."""
    if source.lstrip().startswith("{"):
        doc = _check_json_object(source, "the plan")
        count = 0

        def walk(node: Any) -> Any:
            nonlocal count
            if node == f"${name}":
                count += 1
                return value
            if isinstance(node, dict):
                return {k: walk(v) for k, v in node.items()}
            if isinstance(node, list):
                return [walk(v) for v in node]
            return node

        filled = walk(doc)
        if count:
            return json.dumps(filled, ensure_ascii=False)
    else:
        literal = text_literal(value, name)
        pattern = re.compile(r'"\$' + re.escape(name) + r'"|\$' + re.escape(name) + r"(?!\w)")
        filled_text, count = pattern.subn(lambda _m: literal, source)
        if count:
            return filled_text
    raise UsageError(
        "unused_pick",
        f"--pick-as {name}: the plan has no ${name} placeholder",
        hint=f"write ${name} where the value goes, or use --pick-as plan",
    )


def text_literal(value: Any, name: str) -> str:
    """A plan-text literal that cannot alter the plan's structure."""
    if isinstance(value, bool) or value is None or isinstance(value, dict | list):
        raise UsageError(
            "pick_not_scalar",
            f"--pick-as {name}: a text plan takes a string or number, got {type(value).__name__}",
            hint=f'pick a scalar, or use a JSON plan with "${name}" as a value',
        )
    if isinstance(value, int | float):
        if not math.isfinite(value):
            raise UsageError("pick_not_scalar", "not a finite number", hint="pick a number")
        return repr(value)
    text = str(value)
    if _UNSAFE_IN_LITERAL.search(text):
        raise UsageError(
            "unsafe_pick_value",
            f"--pick-as {name}: the value holds a quote, backslash or control character",
            hint=f'use a JSON plan with "${name}" as the value instead of a text plan',
        )
    return f'"{text}"'


def _check_json_object(source: str, what: str) -> dict[str, Any]:
    doc = load_json_text(source, what, "bad_input_json")
    if not isinstance(doc, dict):
        raise UsageError(
            "bad_input_json",
            f"{what} must be a JSON object, got {type(doc).__name__}",
            hint="wrap the plan in {...}",
        )
    return doc


def _read_input_path(path: str, file_input: bool | None) -> str:
    if path == "-":
        return read_stdin()
    policy, source = _file_policy(file_input)
    if policy == "deny":
        inline = _inline_command(path)
        raise PolicyError(
            "file_input_denied",
            f"reading the plan from a file is denied by the file-input policy ({source})",
            hint=f"pass the plan inline: {inline}",
            retryable=False,
            details={"policy": "deny", "source": source, "inline_command": inline},
        )
    if policy == "warn":
        sys.stderr.write(
            f"qdsl: warning: reading the plan from file {path!r} (file-input policy warn); "
            f"prefer: {_inline_command(path)}\n"
        )
        sys.stderr.flush()
    try:
        raw = read_file_bounded(path, "input_bytes", f"input file {path}")
    except FileNotFoundError:
        raise UsageError(
            "input_not_found", f"no such input file: {path}", hint="check the path"
        ) from None
    except OSError as exc:
        raise UsageError(
            "input_unreadable",
            f"cannot read input file {path}: {exc.strerror}",
            hint="check the path and its permissions, or pass the plan with --input -",
        ) from None
    return decode_input(raw, f"input file {path}")


def _file_policy(file_input: bool | None) -> tuple[str, str]:
    if file_input is not None:
        return ("allow" if file_input else "deny"), "flag"
    from qdsl.envelope.settings import io_settings

    settings = io_settings()
    source = {"env": "QDSL_FILE_INPUT", "config": "[io] file_input"}.get(
        settings.file_input_source, "default"
    )
    return settings.file_input, source


def _inline_command(path: str) -> str:
    ctx = click.get_current_context(silent=True)
    command = ctx.command_path if ctx is not None else "qdsl <command>"
    if not command.startswith("qdsl"):
        command = "qdsl " + command
    from qdsl.cli.state import current_state

    if current_state().json_mode:
        command = command.replace("qdsl", "qdsl --json", 1)
    quoted = path if re.fullmatch(r"[\w./-]+", path) else "'" + path.replace("'", "'\\''") + "'"
    return f"{command} --input - < {quoted}"
