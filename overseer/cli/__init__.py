"""The ``overseer`` command line."""

from __future__ import annotations

import logging

import click

from overseer._version import __version__
from overseer.cli import _audit_checks  # noqa: F401  (registers audit checkpoint, verify, rescore, report)
from overseer.cli._audit import audit_group
from overseer.cli._bench import bench_group
from overseer.cli._demo import demo
from overseer.cli._detector import detector_group
from overseer.cli._mcp import mcp_group
from overseer.cli._policy import policy_group
from overseer.cli._prm import prm_group
from overseer.cli._score import score
from overseer.cli._ui import ui

__all__ = ["cli", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="overseer")
@click.option("-v", "--verbose", count=True, help="More logging (-vv for debug).")
def cli(verbose: int) -> None:
    """Process oversight for tool-using AI agents: score every step, enforce a policy, keep an audit trail."""
    level = logging.WARNING - 10 * verbose
    logging.basicConfig(level=max(level, logging.DEBUG), format="%(levelname)s %(name)s: %(message)s")


cli.add_command(policy_group)
cli.add_command(score)
cli.add_command(audit_group)
cli.add_command(bench_group)
cli.add_command(demo)
cli.add_command(prm_group)
cli.add_command(detector_group)
cli.add_command(ui)
cli.add_command(mcp_group)


def main() -> None:
    """Entry point of the ``overseer`` script."""
    cli()
