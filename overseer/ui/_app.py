"""The review web page: a queue of steps waiting for judgement, each trajectory with its score curve, review buttons.

Everything shown comes from tool outputs and model text, which an attacker may control. Three layers keep it
text: Jinja2 escapes every value (autoescape on, no ``|safe`` anywhere), the score curve is SVG built from numbers
only, and a Content-Security-Policy allows scripts from this server's ``/static/`` and nothing inline. Writes need a
per-server CSRF token (in a ``<meta>`` tag, sent back in a header), so another site cannot post reviews through the
reviewer's browser. On loopback the page is open to the machine's users; bound elsewhere it needs a token (a
bearer header, or ``?token=`` once, which sets a same-site cookie). On loopback the Host header must be a loopback
name, which stops DNS-rebinding pages from reading it.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import secrets
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, FileSystemLoader, select_autoescape
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from overseer._text import printable
from overseer.policy import BUILTIN_POLICIES, Policy, describe_when, load_policy
from overseer.steps import REVIEW_LABELS, Review
from overseer.store import AuditStore, StoredStep
from overseer.store.export import FORMATS, export_rows, render_export, step_json
from overseer.ui._views import reason_parts, results_by_call, step_view
from overseer.verdict import ACTIONS

__all__ = ["create_app", "is_loopback"]

HERE = Path(__file__).parent
QUEUE_ACTIONS = ("flag", "sanitize", "block", "escalate", "resample")
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1", "[::1]"}
MEDIA = {"jsonl": "application/x-ndjson", "csv": "text/csv; charset=utf-8", "parquet": "application/vnd.apache.parquet"}


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) is this machine only."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _curve(steps: Sequence[StoredStep], width: int = 720, plot_height: int = 160) -> dict[str, Any]:
    """The score curve as numbers for an SVG: markers where a score exists, lines only between adjacent steps.

    A score that a step did not receive (the injection check on a tool call, say) is not drawn there, so a line
    never crosses a step where its score does not exist; the x axis is labelled with step numbers, and the legend
    sits under the plot, not over it.
    """
    pad = 28
    n = max(len(steps) - 1, 1)

    def x(i: int) -> float:
        return round(pad + (width - 2 * pad) * i / n, 1)

    def y(v: float) -> float:
        return round(pad + (plot_height - 2 * pad) * (1.0 - min(max(v, 0.0), 1.0)), 1)

    series: dict[str, dict[int, float]] = {}
    for step in steps:
        for sc in step.scores:
            series.setdefault(sc.name, {})[step.index] = sc.value
    lines = []
    for k, (name, values) in enumerate(sorted(series.items())):
        runs: list[list[int]] = []
        for index in sorted(values):
            if runs and runs[-1][-1] == index - 1:
                runs[-1].append(index)
            else:
                runs.append([index])
        segments = [" ".join(f"{x(i)},{y(values[i])}" for i in run) for run in runs if len(run) > 1]
        dots = [(x(i), y(v), i, round(v, 3)) for i, v in sorted(values.items())]
        lines.append({"name": name, "segments": segments, "dots": dots, "color": k % 6})
    every = max(1, -(-len(steps) // 20))  # at most about 20 labels
    ticks = [{"x": x(s.index), "label": s.index} for s in steps if s.index % every == 0]
    markers = [{"x": x(s.index), "action": s.action, "index": s.index} for s in steps if s.action != "allow"]
    columns = 4
    legend = [
        {"x": pad + (i % columns) * (width - 2 * pad) // columns, "y": plot_height + 24 + 14 * (i // columns)}
        for i in range(len(lines))
    ]
    for line, place in zip(lines, legend, strict=True):
        line["legend"] = place
    height = plot_height + 30 + 14 * (-(-len(lines) // columns))
    return {
        "width": width,
        "height": height,
        "pad": pad,
        "lines": lines,
        "markers": markers,
        "ticks": ticks,
        "y_half": y(0.5),
        "y_top": y(1.0),
        "y_bottom": y(0.0),
        "x_left": x(0),
        "x_right": x(n),
    }


def _date(value: str | None) -> datetime | None:
    """A ``YYYY-MM-DD`` (or ISO time) filter value as UTC, or ``None`` when absent or not a date."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _conditions(policies: Sequence[Policy]) -> dict[tuple[str, str], str]:
    """(policy id, rule name) -> the rule's conditions in words, for the shipped policies and ``policies``."""
    known = [load_policy(name) for name in BUILTIN_POLICIES] + list(policies)
    return {(p.id, rule.name): describe_when(rule) for p in known for rule in p.rules}


def create_app(
    store: AuditStore, *, token: str | None = None, loopback: bool = True, policies: Sequence[Policy] = ()
) -> Starlette:
    """The review page over ``store``. ``token``: required from every client; ``loopback``: check Host names.

    ``policies``: your own policies, so that a decision they made shows its rule's conditions (the shipped ones are
    known already); a decision of a policy the page does not know shows its reason only.
    """
    env = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=printable,  # terminal escape codes and control characters never reach the page
    )
    csrf = secrets.token_urlsafe(32)
    conditions = _conditions(policies)

    def page(request: Request, template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        html = env.get_template(template).render(csrf=csrf, store=repr(store), path=request.url.path, **context)
        return HTMLResponse(html, status_code=status_code)

    def queue(request: Request) -> Response:
        params = request.query_params
        actions = [a for a in params.getlist("action") if a in QUEUE_ACTIONS] or [
            "flag",
            "sanitize",
            "block",
            "escalate",
        ]
        rule = params.get("rule") or None
        try:
            limit = min(max(int(params.get("limit", "100")), 1), 1000)
        except ValueError:
            limit = 100
        since = _date(params.get("since"))
        agent, tool, text = (params.get(k, "").strip() or None for k in ("agent", "tool", "q"))
        tasks = {t.id: t.task or "" for t in store.list_trajectories(limit=None)}
        steps = store.list_steps(
            actions=actions,
            rule=rule,
            agent=agent,
            tool=tool,
            since=since,
            unreviewed=True,
            limit=None if text else limit,
        )
        if text:  # the task's text, case-insensitively
            steps = [s for s in steps if text.casefold() in tasks.get(s.trajectory_id, "").casefold()][:limit]
        reviewed = store.list_reviews()
        return page(
            request,
            "queue.html",
            steps=steps,
            tasks=tasks,
            step_refs=lambda reason: [ref for _, ref in reason_parts(reason) if ref is not None],
            actions=actions,
            all_actions=QUEUE_ACTIONS,
            rule=rule or "",
            agent=agent or "",
            tool=tool or "",
            q=text or "",
            since=params.get("since", "") if since else "",
            limit=limit,
            n_reviews=len(reviewed),
            recent=sorted(reviewed, key=lambda r: r.at, reverse=True)[:10],
        )

    def trajectory(request: Request) -> Response:
        ident = request.path_params["ident"]
        found = store.get_trajectory(ident)
        if found is None:
            return page(request, "missing.html", status_code=404, what=f"trajectory {ident}")
        header, steps = found
        results = results_by_call(steps)
        reviews: dict[str, list[Review]] = {}
        for r in store.list_reviews(trajectory_id=ident):
            reviews.setdefault(r.step_id, []).append(r)
        return page(
            request,
            "trajectory.html",
            trajectory=header,
            metadata=json.dumps(header.metadata, ensure_ascii=False, indent=1) if header.metadata else "",
            steps=steps,
            reviews=reviews,
            meanings=REVIEW_LABELS,
            curve=_curve(steps),
            views={s.id: step_view(s, s.id in reviews, results.get(s.call_id or "")) for s in steps},
            conditions={s.id: conditions.get((s.policy, s.rule or "")) for s in steps},
            step_text=lambda s: json.dumps(step_json(s)["step"], ensure_ascii=False, indent=1),
        )

    async def add_review(request: Request) -> Response:
        if not hmac.compare_digest(request.headers.get("x-csrf-token", ""), csrf):
            return JSONResponse({"error": "missing or wrong CSRF token; reload the page"}, status_code=403)
        try:
            body = await request.json()
        except ValueError:
            return JSONResponse({"error": "the body is not JSON"}, status_code=400)
        if not isinstance(body, dict):
            return JSONResponse({"error": "the body must be a JSON object"}, status_code=400)
        step = store.get_step(str(body.get("step_id", "")))
        if step is None:
            return JSONResponse({"error": f"no step {body.get('step_id')!r}"}, status_code=404)
        if str(body.get("label") or "").strip() not in REVIEW_LABELS:
            return JSONResponse({"error": f"label must be one of {', '.join(REVIEW_LABELS)}"}, status_code=400)
        try:
            review = Review(
                trajectory_id=step.trajectory_id,
                step_id=step.id,
                index=step.index,
                reviewer=str(body.get("reviewer") or "").strip(),
                reviewer_kind="human",
                label=str(body.get("label") or "").strip(),
                comment=(str(body["comment"]).strip() or None) if body.get("comment") else None,
            )
        except ValidationError as err:
            fields = ", ".join(".".join(map(str, e["loc"])) for e in err.errors())
            return JSONResponse({"error": f"missing or invalid: {fields}"}, status_code=400)
        store.add_review(review)
        return JSONResponse(review.model_dump(mode="json"), status_code=201)

    def export(request: Request) -> Response:
        fmt = request.query_params.get("format", "jsonl")
        if fmt not in FORMATS:
            return JSONResponse({"error": f"format must be one of {', '.join(FORMATS)}"}, status_code=400)
        actions = [a for a in request.query_params.getlist("action") if a in ACTIONS]
        only_reviewed = request.query_params.get("reviewed") == "1"
        rows = export_rows(store, actions=actions)
        if only_reviewed:
            rows = [r for r in rows if r["reviews"]]
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        return Response(
            render_export(rows, fmt),
            media_type=MEDIA[fmt],
            headers={"Content-Disposition": f'attachment; filename="overseer-reviews-{stamp}.{fmt}"'},
        )

    def health(request: Request) -> Response:
        return JSONResponse({"ok": True, "steps": store.count()})

    async def guard(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        host = _hostname(request.headers.get("host", ""))
        if loopback and not is_loopback(host):
            return Response("this page answers on loopback names only", status_code=421, media_type="text/plain")
        if token is not None:
            offered = request.query_params.get("token")
            if offered is not None and hmac.compare_digest(offered, token):
                rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
                target = request.url.path + (f"?{urlencode(rest)}" if rest else "")
                response: Response = RedirectResponse(target, status_code=303)
                response.set_cookie("overseer_token", token, httponly=True, samesite="strict")
                return _secure(response)
            bearer = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
            cookie = request.cookies.get("overseer_token", "")
            if not (hmac.compare_digest(bearer, token) or hmac.compare_digest(cookie, token)):
                return _secure(
                    Response(
                        "a token is required: open the URL that `overseer ui` printed, or send Authorization: Bearer",
                        status_code=401,
                        media_type="text/plain",
                    )
                )
        return _secure(await call_next(request))

    app = Starlette(
        routes=[
            Route("/", queue),
            Route("/t/{ident:path}", trajectory),
            Route("/api/reviews", add_review, methods=["POST"]),
            Route("/export", export),
            Route("/healthz", health),
            Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
        ],
        middleware=[Middleware(BaseHTTPMiddleware, dispatch=guard)],
    )

    return app


def _hostname(header: str) -> str:
    """The name in a Host header, without the port (``[::1]:8765`` -> ``[::1]``)."""
    if header.startswith("["):
        return header.split("]", 1)[0] + "]"
    return header.rsplit(":", 1)[0]


def _secure(response: Response) -> Response:
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Cache-Control"] = "no-store"
    return response
