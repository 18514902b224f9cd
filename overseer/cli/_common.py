"""What the CLI commands share: the console, safe printing of untrusted text, error handling, time filters."""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from functools import wraps
from typing import Any, TypeVar

import click
from pydantic import ValidationError
from rich.console import Console
from rich.text import Text

from overseer._text import printable
from overseer.exceptions import OverseerError

F = TypeVar("F", bound=Callable[..., Any])

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)


def safe(text: object, limit: int | None = None) -> Text:
    """Untrusted text (tool output, arguments) as a rich Text: no markup, no terminal escape codes."""
    value = printable(str(text))
    if limit is not None and len(value) > limit:
        value = value[: limit - 1] + "\N{HORIZONTAL ELLIPSIS}"
    return Text(value)


def fail(message: str, code: int = 2) -> None:
    """Print an error (no traceback) and exit."""
    err_console.print(Text("error: ", style="bold red") + safe(message), soft_wrap=True)
    sys.exit(code)


def handle_errors(fn: F) -> F:
    """Turn overseer's own errors into a message and exit status 2, without a traceback."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except OverseerError as err:
            fail(str(err))
        except ValidationError as err:  # a value given on the command line that a record refuses
            first = err.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "value"
            fail(f"{where}: {first['msg']}")
        except KeyboardInterrupt:
            fail("interrupted", 130)

    return wrapper  # type: ignore[return-value]


_RELATIVE = re.compile(r"^(\d+)\s*([smhdw])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


class TimeParam(click.ParamType[datetime]):
    """An ISO date or time (UTC unless it says otherwise), or an age such as ``30m``, ``2h``, ``7d``."""

    name = "time"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> datetime:
        if isinstance(value, datetime):
            return value
        text = str(value).strip()
        match = _RELATIVE.match(text)
        if match:
            return datetime.now(UTC) - timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            self.fail(f"{value!r} is neither an ISO time nor an age like 30m, 2h, 7d", param, ctx)
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


ACTION_STYLE = {
    "allow": "green",
    "flag": "yellow",
    "sanitize": "blue",
    "block": "bold red",
    "resample": "cyan",
    "escalate": "magenta",
}


def action_text(action: str) -> Text:
    """An action, coloured."""
    return Text(action, style=ACTION_STYLE.get(action, ""))


@contextlib.contextmanager
def progress_bar(label: str, unit: str) -> Iterator[Callable[[int, int], None]]:
    """A progress bar on standard error (a terminal only); yields ``advance(done, total)``."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    with Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(unit),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err_console,
        disable=not err_console.is_terminal,
        transient=True,
    ) as bar:
        task = bar.add_task(label, total=None)

        def advance(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield advance
