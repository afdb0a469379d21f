"""`qdsl eval CASES`: run a file of questions with expected answers (qdsl.evaluate).

Prints a summary with the TrustSQL reliability scores, then one row per case
that is not right (safe / wrong, the status, the text that left and why;
`--show all` lists the right ones too): a table on a terminal, aligned columns
when piped. With `--json` the report is the
envelope's data. Exits 5 when any case is wrong.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import click

from qdsl.cli.runner import Outcome, run_operation
from qdsl.cli.state import current_deployment

if TYPE_CHECKING:
    from qdsl.cli.tables import Block
    from qdsl.evaluate import Report

EXIT_WRONG = 5
Show = Literal["all", "not-right", "wrong"]
_TEXT_WIDTH = 100
_SHOWN: dict[str, tuple[str, ...]] = {
    "all": ("right", "safe", "wrong"),
    "not-right": ("safe", "wrong"),
    "wrong": ("wrong",),
}


def _one_line(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def summary(report: Report) -> str:
    n = len(report.results)
    right, safe, wrong = (report.tally(v) for v in ("right", "safe", "wrong"))
    rate = f"{100 * right / n:.1f}%" if n else "-"
    scores = ", ".join(
        f"c={name}: {report.reliability(c):+.3f}" for name, c in report.penalties().items()
    )
    return (
        f"{n} cases: {right} right ({rate}), {safe} safe, {wrong} wrong\n"
        f"reliability (TrustSQL, +1 right / 0 abstained / -c wrong, per case): {scores}"
    )


def blocks(report: Report, show: Show) -> list[Block]:
    """The summary, then one row per case (a rich table on a terminal, plain columns piped)."""
    from qdsl.cli.tables import Table

    table = Table(("verdict", "case", "tenant", "question", "status", "text that left", "why"))
    for r in report.results:
        if r.verdict in _SHOWN[show]:
            table.add(
                r.verdict,
                r.case.id,
                r.case.tenant,
                r.case.question,
                r.status,
                _one_line(r.text, _TEXT_WIDTH),
                "; ".join(r.reasons),
            )
    hidden = sum(1 for r in report.results if r.verdict not in _SHOWN[show])
    note = [f"({hidden} other cases not listed: --show all lists every case)"] if hidden else []
    # The summary leads: a long table is cut from the end when it goes to the ref store.
    return [summary(report), table, *note]


@click.command("eval")
@click.argument("cases_path", metavar="CASES", type=click.Path(dir_okay=False))
@click.option("--now", "now_text", default=None, help="Clock for cases without `now` (ISO-8601).")
@click.option(
    "--show",
    type=click.Choice(["all", "not-right", "wrong"]),
    default="not-right",
    show_default=True,
    help="Which cases the table lists (the summary counts all).",
)
@click.pass_context
def eval_cmd(ctx: click.Context, /, cases_path: str, now_text: str | None, show: Show) -> None:
    """Ask every question of CASES (TOML or JSONL) and judge the answers."""

    def body() -> Outcome:
        from qdsl.cli.tables import render
        from qdsl.evaluate import load_cases
        from qdsl.service import Service

        cases = load_cases(cases_path)
        # --now, then QDSL_NOW, then the demo's fixed clock (demo database) or the wall
        # clock: the clock of every case without its own `now`
        deployment = current_deployment(now_text)
        try:
            report = Service(deployment).eval(cases)
        finally:
            deployment.close()
        return Outcome(
            data=report.to_dict(),
            human=render(blocks(report, show)),
            exit_code=EXIT_WRONG if report.tally("wrong") else 0,
        )

    ctx.exit(run_operation("eval", body))
