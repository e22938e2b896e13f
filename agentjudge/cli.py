"""The root ``agentjudge`` command and the commands that later layers fill in."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agentjudge import datasets_cli, judge_cli, replay_cli, sandboxes_cli, serve_cli
from agentjudge.console import console, print_problems

__all__ = ["app", "main"]

app = typer.Typer(
    help="Agent-as-a-judge runtime: replay agent trajectories into sandboxes and judge them.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
    pretty_exceptions_enable=False,
)
app.add_typer(datasets_cli.app, name="datasets")
app.add_typer(sandboxes_cli.app, name="sandboxes")
app.command()(replay_cli.replay)
app.command()(serve_cli.serve)
app.command()(judge_cli.judge)


def _not_yet(command: str, issue: int, dataset: Path | None = None) -> None:
    """Validate what can be validated, then say plainly that the command is not built yet."""
    if dataset is not None:
        from dataset.store import load_dataset

        loaded = load_dataset(dataset, partial=True)
        errors, _ = print_problems(p for p in loaded.problems if p.severity == "error")
        console.print(
            f"{dataset}: {len(loaded.trajectories)} valid trajectory(ies), {errors} error(s)",
            markup=False,
        )
    console.print(
        f"`agentjudge {command}` is not implemented yet (planned in issue #{issue}); "
        "nothing was run.",
        markup=False,
    )
    raise typer.Exit(2)


@app.command()
def report(
    results: Annotated[Path, typer.Argument(help="A results file written by `judge`.")],
) -> None:
    """Write the Markdown and HTML report of a results file (not built yet)."""
    _not_yet("report", 7)


def main() -> None:
    """Console-script entry point."""
    app()
