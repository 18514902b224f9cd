"""``overseer prm``: build step-labelled data, train and evaluate the step scorer."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from overseer.cli._common import console, err_console, handle_errors

READERS = ("asb", "agentprocessbench", "toolemu")


@click.group("prm")
def prm_group() -> None:
    """The process reward model: data, training, evaluation."""


@prm_group.command("data")
@click.argument("dataset", type=click.Choice(READERS))
@click.argument("source", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Write step-labelled trajectories (JSON Lines) here.",
)
@handle_errors
def data(dataset: str, source: Path, out: Path) -> None:
    """Turn a public DATASET file into step-labelled trajectories (the rules are in overseer/prm/datasets.py)."""
    from overseer.prm import datasets

    reader = {
        "asb": datasets.read_asb,
        "agentprocessbench": datasets.read_agentprocessbench,
        "toolemu": datasets.read_toolemu,
    }[dataset]
    n = datasets.write_labelled(reader(source), out)
    console.print(f"{n} trajectories -> {out}")


@prm_group.command("train")
@click.argument("data_files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--out", required=True, type=click.Path(file_okay=False, path_type=Path), help="Model directory to write."
)
@click.option(
    "--base", default="minilm", show_default=True, help="minilm (the PyPI-shipped MiniLM) or a model directory."
)
@click.option("--holdout-models", default="", help="Comma-separated agent models kept out of training, for evaluation.")
@click.option("--epochs", type=float, default=1.0, show_default=True)
@click.option("--batch-size", type=int, default=8, show_default=True)
@click.option("--lr", type=float, default=5e-5, show_default=True)
@click.option("--max-length", type=int, default=384, show_default=True)
@click.option("--max-minutes", type=float, help="Stop training after this long (CPU budgets).")
@click.option("--seed", type=int, default=0, show_default=True)
@handle_errors
def train_command(
    data_files: tuple[Path, ...],
    out: Path,
    base: str,
    holdout_models: str,
    epochs: float,
    batch_size: int,
    lr: float,
    max_length: int,
    max_minutes: float | None,
    seed: int,
) -> None:
    """Train a step scorer on step-labelled DATA_FILES; writes weights, metrics.json and a model card."""
    from overseer.prm.datasets import read_labelled
    from overseer.prm.train import TrainConfig, train

    items = [item for path in data_files for item in read_labelled(path)]
    config = TrainConfig(
        out=str(out),
        base=base,
        epochs=epochs,
        batch_size=batch_size,
        lr=lr,
        max_length=max_length,
        holdout_models=[m for m in holdout_models.split(",") if m],
        max_minutes=max_minutes,
        seed=seed,
    )
    described = "\n".join(f"- `{p.name}`" for p in data_files)
    with Progress(
        TextColumn("training"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("loss {task.fields[loss]:.4f}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err_console,
    ) as bar:
        task = bar.add_task("train", total=None, loss=float("nan"))

        def progress(step: int, total: int, loss: float) -> None:
            bar.update(task, completed=step, total=total, loss=loss)

        metrics = train(config, items, progress=progress, describe_data=described)
    click.echo(json.dumps(metrics, indent=2))
