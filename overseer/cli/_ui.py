"""``overseer ui``: serve the review web page."""

from __future__ import annotations

import os
import secrets

import click
from rich.text import Text

from overseer.cli._common import console, fail, handle_errors
from overseer.exceptions import MissingDependencyError
from overseer.policy import load_policy
from overseer.store import AuditStore, default_store_url


@click.command("ui")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (loopback by default).")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True)
@click.option(
    "--token",
    envvar="OVERSEER_UI_TOKEN",
    help="Require this token from every client [env OVERSEER_UI_TOKEN]; one is generated when --host is not loopback.",
)
@click.option(
    "--store", "store_url", help="Audit store URL [default: $OVERSEER_STORE or sqlite:///.overseer/audit.db]."
)
@click.option(
    "--policy",
    "policy_files",
    multiple=True,
    help="A policy of yours (repeatable): its decisions show their rule's conditions (shipped policies are known).",
)
@handle_errors
def ui(host: str, port: int, token: str | None, store_url: str | None, policy_files: tuple[str, ...]) -> None:
    """Serve the review page: the queue of flagged, blocked and escalated steps, trajectories, review buttons."""
    try:
        import uvicorn

        from overseer.ui import create_app, is_loopback
    except ImportError:
        raise MissingDependencyError("the review page", "ui") from None
    loopback = is_loopback(host)
    if not loopback and not token:
        token = secrets.token_urlsafe(24)
    if token is not None and len(token) < 16:
        fail("--token must be at least 16 characters")
    policies = [load_policy(f) for f in policy_files]
    store = AuditStore(store_url or default_store_url())
    app = create_app(store, token=token, loopback=loopback, policies=policies)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}/" + (f"?token={token}" if token else "")
    console.print(Text.assemble(("overseer review page: ", "bold"), url))
    if not loopback:
        console.print("listening beyond loopback: anyone who can reach this address needs the token above")
    console.print(f"store: {store!r}; Ctrl-C stops")
    try:
        uvicorn.run(app, host=host, port=port, log_level=os.environ.get("OVERSEER_UI_LOG", "warning"))
    finally:
        store.close()
