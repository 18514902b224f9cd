"""The remote scorer against a local stand-in of vLLM's pooling API (loopback only)."""

import asyncio
import http.server
import json
import threading
import time
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest

from overseer import Overseer, ScoreRequest, ScorerError, ToolCall
from overseer.prm.remote import RemotePrmScorer, render_text
from overseer.steps import Plan

TAG = "<extra_0>"


class StandIn(http.server.BaseHTTPRequestHandler):
    """Answers /pooling like vLLM does for a step-tag PRM: one [p_bad, p_good] pair per tag."""

    fail_first = 0
    delay_s = 0.0
    seen: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append(body)
        if self.path != "/pooling":
            self.send_error(404)
            return
        if type(self).fail_first > 0:
            type(self).fail_first -= 1
            self.send_error(503)
            return
        time.sleep(type(self).delay_s)
        data = []
        for i, text in enumerate(body["input"]):
            steps = text.split(TAG)[:-1]
            pairs = [[0.9, 0.1] if "rm -rf" in s else [0.2, 0.8] for s in steps]
            data.append({"index": i, "object": "pooling", "data": pairs})
        payload = json.dumps({"object": "list", "model": body["model"], "data": data}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    StandIn.fail_first, StandIn.delay_s, StandIn.seen = 0, 0.0, []

    class Quiet(http.server.ThreadingHTTPServer):
        def handle_error(self, request: Any, client_address: Any) -> None:
            pass  # a client that timed out on purpose closed the socket

    httpd = Quiet(("127.0.0.1", 0), StandIn)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()
    httpd.server_close()


def requests() -> list[ScoreRequest]:
    history = (Plan(content="clean up"),)
    return [
        ScoreRequest(trajectory_id="t", task="tidy", history=history, step=ToolCall(tool="sh", args={"c": c}))
        for c in ("ls", "rm -rf /")
    ]


def test_render_text_puts_the_tag_after_every_step() -> None:
    text = render_text("tidy", [Plan(content="a"), ToolCall(tool="sh", args={"c": "ls"})], TAG)
    assert text == 'Task: tidy\nPlan: a<extra_0>Call: sh {"c": "ls"}<extra_0>'


def test_batches_in_one_call_and_reads_the_last_tag(server: str) -> None:
    async def main() -> list[float]:
        scorer = RemotePrmScorer(server, "prm-7b")
        try:
            return [s["prm"].value for s in await scorer.score(requests())]
        finally:
            await scorer.aclose()

    assert asyncio.run(main()) == [0.8, 0.1]
    (call,) = StandIn.seen
    assert call["model"] == "prm-7b" and len(call["input"]) == 2


def test_retries_5xx_then_fails_clearly(server: str) -> None:
    StandIn.fail_first = 2

    async def main(retries: int) -> float:
        scorer = RemotePrmScorer(server, "m", retries=retries, backoff_s=0.01)
        try:
            return (await scorer.score(requests()[:1]))[0]["prm"].value
        finally:
            await scorer.aclose()

    assert asyncio.run(main(retries=2)) == 0.8  # two 503s, then an answer
    StandIn.fail_first = 5
    with pytest.raises(ScorerError, match="failed 2 time"):
        asyncio.run(main(retries=1))


def test_a_slow_or_dead_server_follows_on_scorer_error(server: str) -> None:
    StandIn.delay_s = 1.0
    policy = {
        "name": "p",
        "scorer_timeout_s": 5,
        "scorers": {"prm": {"type": "remote-prm", "url": server, "model": "m", "timeout_s": 0.2, "retries": 1}},
    }
    with Overseer(policy) as overseer, overseer.trajectory("t") as run:
        verdict = run.judge(ToolCall(tool="sh", args={"c": "ls"}))
    assert (verdict.action, verdict.rule) == ("block", "on_scorer_error")
    assert "ReadTimeout" in verdict.errors["prm"]
    dead = {
        "name": "p",
        "scorers": {"prm": {"type": "remote-prm", "url": "http://127.0.0.1:9", "model": "m", "retries": 0}},
    }
    with Overseer(dead) as overseer, overseer.trajectory("t") as run:
        verdict = run.judge(ToolCall(tool="sh", args={"c": "ls"}))
    assert verdict.action == "block" and "ConnectError" in verdict.errors["prm"]
