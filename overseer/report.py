"""``overseer audit report``: one self-contained HTML file for governance review, with PNG plots inside it.

The file opens offline (no script, no external resource: the plots are PNG data URIs). Its sections: totals by
action and by review label; blocked and flagged rates over time; decisions by rule; the per-step score curves of
the trajectories with the most flagged, blocked or escalated steps; and those trajectories' steps as text. Every
value from the store is escaped (Jinja2 autoescape), so tool output shows as text.
"""

from __future__ import annotations

import base64
import io
from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from overseer._text import printable
from overseer._version import __version__
from overseer.exceptions import MissingDependencyError
from overseer.store import AuditStore, StoredStep

__all__ = ["build_report", "write_report"]

NOT_ALLOWED = ("flag", "sanitize", "block", "escalate", "resample")
COLORS = {
    "block": "#c0392b",
    "flag": "#d68910",
    "sanitize": "#117a65",
    "escalate": "#8e44ad",
    "resample": "#2e86c1",
    "allow": "#27ae60",
}


def _figure(width: float, height: float) -> Any:
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingDependencyError("the HTML report", "report") from None
    return Figure(figsize=(width, height), dpi=100, layout="constrained")


def _png(fig: Any) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def _bin(span: timedelta) -> tuple[timedelta, str]:
    """A bin width that gives a readable number of points over ``span``."""
    for width, fmt in (
        (timedelta(minutes=1), "%H:%M"),
        (timedelta(minutes=10), "%H:%M"),
        (timedelta(hours=1), "%m-%d %H:00"),
        (timedelta(days=1), "%Y-%m-%d"),
        (timedelta(days=7), "%Y-%m-%d"),
    ):
        if span / width <= 60:
            return width, fmt
    return timedelta(days=30), "%Y-%m"


def _legend_outside(ax: Any) -> None:
    """The legend to the right of the plot, never over the data."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)


def _whole_numbers(axis: Any) -> None:
    """Ticks at whole numbers only (steps and counts have no fractions)."""
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True))


def rates_figure(steps: Sequence[StoredStep]) -> Any:
    """The share of steps blocked and flagged per time bin (y from zero), or None without steps."""
    if not steps:
        return None
    first = min(s.created_at for s in steps)
    last = max(s.created_at for s in steps)
    width, fmt = _bin(last - first)
    bins: dict[int, Counter[str]] = defaultdict(Counter)
    for s in steps:
        bins[int((s.created_at - first) / width)][s.action] += 1
    keys = sorted(bins)
    fig = _figure(8, 3)
    ax = fig.subplots()
    top = 0.0
    for action in ("block", "flag", "escalate"):
        ys = [100 * bins[k][action] / sum(bins[k].values()) for k in keys]
        if any(ys):
            ax.plot(keys, ys, marker="o", color=COLORS[action], label=f"{action}ed" if action != "flag" else "flagged")
            top = max(top, *ys)
    ax.set_ylabel("% of steps")
    ax.set_ylim(0, min(100.0, max(5.0, top * 1.15)))
    ax.set_xticks(keys[:: max(1, len(keys) // 8)])
    ax.set_xticklabels([(first + k * width).strftime(fmt) for k in keys[:: max(1, len(keys) // 8)]], fontsize=8)
    ax.set_title(f"Blocked and flagged steps over time (bins of {width})")
    if ax.get_legend_handles_labels()[0]:
        _legend_outside(ax)
    ax.grid(alpha=0.3)
    return fig


def rates_over_time(steps: Sequence[StoredStep]) -> str | None:
    """PNG: the share of steps blocked and flagged per time bin."""
    fig = rates_figure(steps)
    return None if fig is None else _png(fig)


def rules_figure(steps: Sequence[StoredStep], top: int = 15) -> Any:
    """How many steps each rule flagged, blocked, escalated or resampled (whole counts), or None."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for s in steps:
        if s.action in NOT_ALLOWED:
            counts[s.rule or "(default / scorer error)"][s.action] += 1
    if not counts:
        return None
    rules = sorted(counts, key=lambda r: -sum(counts[r].values()))[:top][::-1]
    fig = _figure(8, 0.8 + 0.35 * len(rules))
    ax = fig.subplots()
    left = [0] * len(rules)
    for action in NOT_ALLOWED:
        values = [counts[r][action] for r in rules]
        if any(values):
            ax.barh(rules, values, left=left, color=COLORS[action], label=action)
            left = [a + b for a, b in zip(left, values, strict=True)]
    ax.set_xlabel("steps")
    _whole_numbers(ax.xaxis)
    ax.set_title("Decisions by rule")
    _legend_outside(ax)
    ax.tick_params(axis="y", labelsize=8)
    return fig


def by_rule(steps: Sequence[StoredStep], top: int = 15) -> str | None:
    """PNG: how many steps each rule flagged, blocked, escalated or resampled."""
    fig = rules_figure(steps, top)
    return None if fig is None else _png(fig)


def curve_figure(trajectory_id: str, steps: Sequence[StoredStep]) -> Any:
    """Every score of a trajectory per step, lines only between adjacent steps that have it; or None."""
    series: dict[str, dict[int, float]] = defaultdict(dict)
    for s in steps:
        for sc in s.scores:
            series[sc.name][s.index] = sc.value
    if not series:
        return None
    fig = _figure(8, 2.6)
    ax = fig.subplots()
    for s in steps:
        if s.action in NOT_ALLOWED:
            ax.axvline(s.index, color=COLORS[s.action], alpha=0.35, linewidth=3)
    for name, values in sorted(series.items()):
        xs = list(range(min(values), max(values) + 1))
        ys = [values.get(i, float("nan")) for i in xs]  # a gap where the step has no such score: no line across it
        ax.plot(xs, ys, marker="o", markersize=3, label=name)
    ax.axhline(0.5, color="#999", linestyle="--", linewidth=1)
    ax.set_ylim(-0.05, 1.05)
    ax.set_xlabel("step")
    _whole_numbers(ax.xaxis)
    ax.set_ylabel("score")
    ax.set_title(trajectory_id[:80], fontsize=9)
    _legend_outside(ax)
    ax.grid(alpha=0.3)
    return fig


def score_curve(trajectory_id: str, steps: Sequence[StoredStep]) -> str | None:
    """PNG: every score of a trajectory per step, with the steps that were not allowed marked."""
    fig = curve_figure(trajectory_id, steps)
    return None if fig is None else _png(fig)


def build_report(
    store: AuditStore,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    trajectories: int = 10,
) -> str:
    """The report as one HTML document."""
    try:
        from jinja2 import Environment, FileSystemLoader, select_autoescape
    except ImportError:
        raise MissingDependencyError("the HTML report", "report") from None
    steps = store.list_steps(since=since, until=until, limit=None, newest_first=False)
    reviews = store.list_reviews()
    step_ids = {s.id for s in steps}
    reviews = [r for r in reviews if r.step_id in step_ids]
    by_trajectory: dict[str, list[StoredStep]] = defaultdict(list)
    for s in steps:
        by_trajectory[s.trajectory_id].append(s)
    worst = sorted(
        (t for t, ss in by_trajectory.items() if any(s.action in NOT_ALLOWED for s in ss)),
        key=lambda t: (
            -sum(s.action == "block" for s in by_trajectory[t]),
            -sum(s.action in NOT_ALLOWED for s in by_trajectory[t]),
            t,
        ),
    )[:trajectories]
    review_by_step: dict[str, list[Any]] = defaultdict(list)
    for r in reviews:
        review_by_step[r.step_id].append(r)
    actions = Counter(s.action for s in steps)
    rules = Counter((s.rule or "(default / scorer error)", s.action) for s in steps if s.action in NOT_ALLOWED)
    env = Environment(
        loader=FileSystemLoader(Path(__file__).parent / "_templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=printable,  # terminal escape codes and control characters never reach the page
    )
    return env.get_template("report.html").render(
        version=__version__,
        generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        store=repr(store),
        since=since,
        until=until,
        first=steps[0].created_at if steps else None,
        last=steps[-1].created_at if steps else None,
        n_steps=len(steps),
        n_trajectories=len(by_trajectory),
        actions=[(a, actions[a]) for a in ("allow", *NOT_ALLOWED) if actions[a]],
        labels=Counter(r.label for r in reviews).most_common(),
        n_reviews=len(reviews),
        unreviewed=sum(1 for s in steps if s.action in NOT_ALLOWED and s.id not in review_by_step),
        rules=sorted(rules.items(), key=lambda kv: -kv[1]),
        rates_png=rates_over_time(steps),
        rules_png=by_rule(steps),
        worst=[(t, by_trajectory[t], score_curve(t, by_trajectory[t])) for t in worst],
        modes={t: _mode(store, t) for t in worst},
        reviews=review_by_step,
    )


def _mode(store: AuditStore, trajectory_id: str) -> str | None:
    """``replay`` or ``observe`` when the run's verdicts were recorded and not applied; ``None`` when enforced."""
    found = store.get_trajectory(trajectory_id)
    mode = found[0].metadata.get("mode") if found is not None else None
    return mode if mode in ("replay", "observe") else None


def write_report(store: AuditStore, out: Path, **kwargs: Any) -> None:
    """Write :func:`build_report` to ``out``."""
    out.write_text(build_report(store, **kwargs), encoding="utf-8")
