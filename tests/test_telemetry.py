import http.server
import threading

import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from overseer import Observation, Overseer, Telemetry, ToolCall
from overseer.testing import FunctionScorer


def test_spans_follow_the_genai_semantic_conventions() -> None:
    exporter = InMemorySpanExporter()
    scorer = FunctionScorer(lambda r: {"prm": 0.25, "rules.secrets": 1.0}, name="m", version="h1")
    ov = Overseer("default", scorers=[scorer], telemetry=Telemetry(processors=[SimpleSpanProcessor(exporter)]))
    with ov.trajectory("Pay the bill", id="run-7", metadata={"agent": "bank-bot", "model": "gpt-x"}) as run:
        run.judge(ToolCall(tool="read_file", args={"path": "bill.txt"}, call_id="c1"))
        run.judge(Observation(call_id="c1", tool="read_file", content="IBAN"))
    ov.close()
    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert set(spans) == {"invoke_agent bank-bot", "execute_tool read_file", "overseer.observation"}
    agent, call = spans["invoke_agent bank-bot"], spans["execute_tool read_file"]
    assert agent.attributes is not None and call.attributes is not None
    assert agent.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert agent.attributes["gen_ai.agent.name"] == "bank-bot"
    assert agent.attributes["gen_ai.request.model"] == "gpt-x"
    assert call.parent is not None and call.parent.span_id == agent.context.span_id
    assert call.attributes["gen_ai.operation.name"] == "execute_tool"
    assert call.attributes["gen_ai.tool.name"] == "read_file"
    assert call.attributes["gen_ai.tool.call.id"] == "c1"
    assert call.attributes["gen_ai.tool.call.arguments"] == '{"path": "bill.txt"}'
    assert call.attributes["gen_ai.conversation.id"] == "run-7"
    assert call.attributes["overseer.verdict.action"] == "allow"
    assert str(call.attributes["overseer.policy"]).startswith("default@")
    events = {
        e.attributes["gen_ai.evaluation.name"]: e.attributes
        for e in call.events
        if e.name == "gen_ai.evaluation.result" and e.attributes
    }
    assert events["prm"]["gen_ai.evaluation.score.value"] == 0.25
    assert events["prm"]["overseer.scorer"] == "m@h1"


def test_spans_also_go_to_an_otlp_endpoint_named_by_the_standard_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    received: list[tuple[str, bytes]] = []

    class Collector(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append((self.path, body))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{server.server_port}")
    try:
        ov = Overseer("default", telemetry=Telemetry())
        with ov.trajectory("t", id="otlp-run") as run:
            run.judge(ToolCall(tool="lookup", args={"q": "x"}, call_id="c1"))
        ov.close()
    finally:
        server.shutdown()
        server.server_close()
    assert received, "no OTLP export arrived"
    assert all(path == "/v1/traces" for path, _ in received)
    payload = b"".join(body for _, body in received)
    assert b"execute_tool lookup" in payload and b"otlp-run" in payload
