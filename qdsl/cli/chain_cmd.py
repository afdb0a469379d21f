"""`qdsl chain --steps JSON`: several operations in one process (docs/envelopes.md).

Steps are `[{"op": "run", "input": {...}}, ...]`. `op` is a command name as
typed on the command line ("parse", "run", "refs get"; "refs.get" also works).
`input` maps the command's parameter names (as in `--help`, dashes or
underscores: "tenant", "plan", "input_json", "dialect", an argument such as
"expr") to values; an object or list given to a text option is passed as JSON,
so `{"plan": {...}}` hands over a JSON plan.

A string value that starts with `$.` is a reference: a JMESPath expression,
after the `$.`, over `{"steps": [<envelope of step 0>, ...]}`, e.g.
`"$.steps[0].data.answer.items[0].id"`. It is replaced by the value it selects
(of any JSON type); selecting nothing is an error. (Write `$$.` for a literal
string starting with `$.`.)

Each step runs the very command body the CLI runs: a module may expose
`op_<name>(input) -> Outcome` (e.g. `refs_cmds.op_refs_get`); otherwise the
click command is invoked in-process with `runner.CAPTURE` set, so it hands its
Outcome back instead of printing. Only the last result is printed, through
the same envelope and budget; a step that fails stops the chain with its error
(details name the step), and a step that ends with a non-zero exit code (a
failed verdict) ends the chain there with its result.

All steps serve one tenant (a step for another is `usage/chain_mixed_tenants`),
and a chain's result too large to print is stored as a ref of that tenant; a
`refs get` step reads a tenant's ref only with `"tenant"` in its input.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from typing import Any

import click

from qdsl.cli.inputs import drop_bom, load_json_text, read_stdin
from qdsl.cli.runner import CAPTURE, Outcome, run_operation
from qdsl.dsl.errors import QdslError, UsageError

MAX_STEPS = 50
Op = Callable[[dict[str, Any]], Outcome]


def canonical_op(name: str) -> str:
    return " ".join(name.replace(".", " ").replace("_", " ").split()).lower()


def _command(op: str) -> click.Command:
    from qdsl.cli.main import COMMANDS

    head, *rest = op.split(" ")
    target = COMMANDS.get(head)
    if target is None:
        raise _unknown_op(op)
    module_name, attr = target.split(":")
    cmd = getattr(importlib.import_module(module_name), attr)
    for part in rest:
        if not isinstance(cmd, click.Group) or part not in cmd.commands:
            raise _unknown_op(op)
        cmd = cmd.commands[part]
    if isinstance(cmd, click.Group) and not cmd.invoke_without_command:
        raise _unknown_op(op)
    assert isinstance(cmd, click.Command)
    return cmd


def _unknown_op(op: str) -> UsageError:
    from qdsl.cli.main import COMMANDS

    return UsageError(
        "unknown_op",
        f"chain has no operation {op!r}",
        hint="use a command name: " + ", ".join(sorted(set(COMMANDS) - {"chain"})) + ", refs get",
    )


def resolve_op(op: str) -> Op:
    """The in-process callable of an operation."""
    name = canonical_op(op)
    if name == "chain":
        raise UsageError("nested_chain", "a chain step cannot be a chain", hint="flatten it")
    cmd = _command(name)
    module = importlib.import_module(cmd.callback.__module__) if cmd.callback else None
    direct = getattr(module, "op_" + name.replace(" ", "_"), None) if module else None
    if callable(direct):
        return direct  # type: ignore[no-any-return]
    return lambda inputs: _invoke(name, cmd, inputs)


def _argv(name: str, cmd: click.Command, inputs: dict[str, Any]) -> list[str]:
    params = {p.name: p for p in cmd.params if p.name}
    options: list[str] = []
    positional: list[str] = []
    for raw_key, value in inputs.items():
        key = raw_key.replace("-", "_")
        param = params.get(key)
        if param is None:
            raise UsageError(
                "unknown_input",
                f"step op {name!r} has no input {raw_key!r}",
                hint="inputs: " + ", ".join(sorted(params)),
            )
        if isinstance(param, click.Argument):
            positional.append(_text(value))
            continue
        assert isinstance(param, click.Option)
        if param.is_flag and isinstance(value, bool):
            if value:
                options.append(param.opts[0])
            elif param.secondary_opts:
                options.append(param.secondary_opts[0])
            continue
        values = value if param.multiple and isinstance(value, list) else [value]
        for v in values:
            options += [param.opts[0], _text(v)]
    return [*options, "--", *positional] if positional else options


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _invoke(name: str, cmd: click.Command, inputs: dict[str, Any]) -> Outcome:
    parent = click.get_current_context()
    argv = _argv(name, cmd, inputs)
    captured: list[Outcome] = []
    token = CAPTURE.set(captured)
    try:
        sub = cmd.make_context(name, argv, parent=parent)
        with sub:
            cmd.invoke(sub)
    except click.exceptions.Exit:
        pass
    except click.ClickException as exc:
        raise UsageError(
            "bad_step_input", exc.format_message(), hint=f"see `qdsl {name} --help`"
        ) from None
    finally:
        CAPTURE.reset(token)
    if not captured:
        raise UsageError(
            "not_chainable", f"{name!r} does not produce a result", hint="chain result commands"
        )
    return captured[-1]


def _resolve_refs(value: Any, steps: list[dict[str, Any]], index: int) -> Any:
    if isinstance(value, str):
        if value.startswith("$$."):
            return value[1:]
        if value.startswith("$."):
            from qdsl.envelope.jmes import search

            found = search(value[2:], {"steps": steps})
            if found is None:
                raise UsageError(
                    "chain_ref_empty",
                    f"{value!r} selects nothing",
                    hint=f"steps 0..{index - 1} are available; check the path, e.g. "
                    "$.steps[0].data",
                    details={"step": index},
                )
            return found
        return value
    if isinstance(value, dict):
        return {k: _resolve_refs(v, steps, index) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve_refs(v, steps, index) for v in value]
    return value


def parse_steps(text: str) -> list[dict[str, Any]]:
    steps = load_json_text(drop_bom(text), "--steps", "bad_steps")
    if not isinstance(steps, list) or not steps:
        raise UsageError("bad_steps", "--steps must be a non-empty JSON list", hint="[{...}]")
    if len(steps) > MAX_STEPS:
        raise UsageError("bad_steps", f"at most {MAX_STEPS} steps", hint="split the chain")
    for i, step in enumerate(steps):
        ok = isinstance(step, dict) and isinstance(step.get("op"), str)
        ok = ok and isinstance(step.get("input", {}), dict) and set(step) <= {"op", "input"}
        if not ok:
            raise UsageError(
                "bad_steps",
                f"step {i} must be {{'op': NAME, 'input': {{...}}}}",
                hint='e.g. {"op": "refs get", "input": {"ref": "r...", "expr": "data"}}',
                details={"step": i},
            )
    return steps


def run_chain(steps: list[dict[str, Any]]) -> Outcome:
    from qdsl.envelope.emit import success_envelope

    envelopes: list[dict[str, Any]] = []
    warnings: list[str] = []
    last = Outcome(data=None)
    tenants: set[str] = set()
    for i, step in enumerate(steps):
        op = canonical_op(step["op"])
        try:
            inputs = _resolve_refs(step.get("input", {}), envelopes, i)
            last = resolve_op(op)(inputs)
            tenants |= _one_tenant(tenants, last.tenant, i)
        except QdslError as exc:
            exc.details = {**exc.details, "chainStep": i, "chainOp": op}
            exc.message = f"chain step {i} ({op}): {exc.message}"
            raise
        warnings += [f"step {i} ({op}): {w}" for w in last.warnings]
        envelopes.append(
            success_envelope(
                op, last.data, warnings=last.warnings, next_ops=last.next_ops, trace_id="-"
            )
        )
        if last.exit_code:
            if i < len(steps) - 1:
                warnings.append(f"chain stopped at step {i} ({op}): exit code {last.exit_code}")
            break
    return Outcome(
        data=last.data,
        warnings=warnings,
        next_ops=last.next_ops,
        human=last.human,
        trace_id=last.trace_id,
        exit_code=last.exit_code,
        tenant=next(iter(tenants), None),
    )


def _one_tenant(seen: set[str], tenant: str | None, index: int) -> set[str]:
    """A chain passes values between its steps, so all of them serve one tenant.

    The chain's result (and its ref, if too large to print) belongs to it.
    """
    if tenant is None or tenant in seen:
        return set()
    if seen:
        raise UsageError(
            "chain_mixed_tenants",
            f"step {index} runs for another tenant than the steps before it",
            hint="a chain serves one tenant: give every step the same tenant, "
            "or run a chain per tenant",
            details={"step": index},
        )
    return {tenant}


@click.command("chain")
@click.option("--steps", "steps_json", required=True, metavar="JSON|-", help="Steps (- = stdin).")
@click.pass_context
def chain_cmd(ctx: click.Context, steps_json: str) -> None:
    """Run several operations in one process; print only the last result.

    --steps is a JSON list (or - to read it from stdin) of steps:

    \b
      [{"op": "ask", "input": {"question": "...", "tenant": "t1"}},
       {"op": "compile", "input": {"plan": "$.steps[0].data.plan"}}]

    \b
    op     a command as typed on the command line: parse, fmt, compile,
           run, ask, verify, catalog, schema, refs get, ... ("refs.get" works)
    input  the command's options and arguments by name, as in its --help
           (dashes or underscores: tenant, plan, input_json, dialect, expr);
           an object or list given to a text option is passed as JSON

    A string value that starts with "$." is a reference: the rest is a
    JMESPath expression over {"steps": [<envelope of step 0>, ...]}, e.g.
    "$.steps[0].data.answer.items[0].id", replaced by the value it selects
    (any JSON type; selecting nothing is an error). Write "$$." for a
    literal string that starts with "$.".

    A failing step stops the chain with its error (details name the step);
    a step that exits non-zero (a failed verdict) ends the chain with its
    result. At most 50 steps.

    All steps serve one tenant: a "refs get" step reads a tenant's ref only
    with "tenant" in its input, and a result too large to print is stored
    as a ref of that tenant.
    """

    def body() -> Outcome:
        text = steps_json
        if text == "-":
            text = read_stdin()
        return run_chain(parse_steps(text))

    ctx.exit(run_operation("chain", body))
