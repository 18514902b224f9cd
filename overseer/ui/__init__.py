"""``overseer ui``: the review web page (extra ``ui``: starlette, uvicorn, jinja2)."""

from overseer.ui._app import create_app, is_loopback

__all__ = ["create_app", "is_loopback"]
