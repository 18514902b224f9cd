import asyncio
import threading
from pathlib import Path

import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from overseer import FinalAnswer, LifecycleError, Observation, Overseer, Plan, ScoreRequest, Telemetry, ToolCall
from overseer.testing import ConstantScorer, FunctionScorer

POLICY = """
name: test
scorer_timeout_s: 0.2
stop: {after_blocked: 2}
rules:
  - {name: low, action: block, when: {kind: tool_call, score: {q: {below: 0.5}}}}
  - {name: weak-plan, action: resample, when: {kind: plan, score: {q: {below: 0.5}}}, resample: {candidates: 3}}
"""


def memory() -> tuple[Telemetry, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    return Telemetry(processors=[SimpleSpanProcessor(exporter)]), exporter


def by_tool(request: ScoreRequest) -> dict[str, float]:
    step = request.step
    return {"q": 0.1 if isinstance(step, ToolCall) and step.tool.startswith("bad") else 0.9}


@pytest.fixture
def policy_file(tmp_path: Path) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text(POLICY)
    return path


def test_judge_returns_verdicts_with_provenance(policy_file: Path) -> None:
    telemetry, _ = memory()
    with (
        Overseer(policy_file, scorers=[FunctionScorer(by_tool, name="q", version="7")], telemetry=telemetry) as ov,
        ov.trajectory("do the thing", id="t1") as run,
    ):
        ok = run.judge(ToolCall(tool="good", args={}, call_id="c1"))
        bad = run.judge(ToolCall(tool="bad_tool", args={}, call_id="c2"))
        plan = run.judge(Plan(content="hmm"))
    assert (ok.action, ok.index, ok.rule) == ("allow", 0, None)
    assert (bad.action, bad.rule, bad.tool, bad.call_id) == ("block", "low", "bad_tool", "c2")
    assert bad.reason == "q 0.10 < 0.50"
    assert bad.policy.startswith("test@") and bad.scorer == "q@7"
    assert plan.action == "allow" and plan.index == 2


def test_resample_verdict_carries_candidates(policy_file: Path) -> None:
    telemetry, _ = memory()
    scorer = FunctionScorer(lambda r: {"q": 0.2})
    with Overseer(policy_file, scorers=[scorer], telemetry=telemetry) as ov, ov.trajectory("t") as run:
        verdict = run.judge(Plan(content="vague"))
    assert (verdict.action, verdict.candidates, verdict.fallback) == ("resample", 3, "block")


def test_evaluate_scores_a_candidate_without_recording_it(policy_file: Path) -> None:
    telemetry, spans = memory()
    with (
        Overseer(policy_file, scorers=[FunctionScorer(by_tool)], telemetry=telemetry) as ov,
        ov.trajectory("t") as run,
    ):
        run.judge(Plan(content="first"))
        (candidate,) = run.evaluate([ToolCall(tool="bad_x", args={})])
        assert (candidate.action, candidate.index) == ("block", 1)
        assert len(run.steps) == 1
        # a candidate turn is judged in order against a fork of the trajectory: the stop counts its own blocks
        turn = run.evaluate([ToolCall(tool="bad_1", args={}), ToolCall(tool="bad_2", args={}), Plan(content="p")])
        assert [(v.index, v.action, v.halt) for v in turn] == [
            (1, "block", False),
            (2, "block", True),
            (3, "allow", True),
        ]
        assert not run.halted
        assert run.judge(ToolCall(tool="good", args={})).index == 1
    assert (
        sum(1 for s in spans.get_finished_spans() if s.attributes and s.attributes.get("overseer.record") == "step")
        == 2
    )


def test_scorer_timeout_and_crash_follow_on_scorer_error(policy_file: Path) -> None:
    def crash(request: ScoreRequest) -> dict[str, float]:
        raise RuntimeError("model exploded")

    telemetry, _ = memory()
    slow = FunctionScorer(lambda r: {"q": 0.9}, name="slow", delay_s=5)
    with Overseer(policy_file, scorers=[slow], telemetry=telemetry) as ov, ov.trajectory("t") as run:
        verdict = run.judge(Plan(content="x"))
    assert (verdict.action, verdict.rule) == ("block", "on_scorer_error")
    assert "no answer within 0.2 s" in verdict.errors["slow"]
    telemetry, _ = memory()
    scorers = [FunctionScorer(crash, name="crashy"), ConstantScorer(0.9, name="ok")]
    with Overseer(policy_file, scorers=scorers, telemetry=telemetry) as ov, ov.trajectory("t") as run:
        verdict = run.judge(Plan(content="x"))
    assert (verdict.action, verdict.rule) == ("block", "on_scorer_error")
    assert "RuntimeError: model exploded" in verdict.errors["crashy"]
    assert verdict.scores == {"ok": 0.9}  # the healthy scorer's scores are kept


def test_stop_halts_the_trajectory(policy_file: Path) -> None:
    telemetry, spans = memory()
    with (
        Overseer(policy_file, scorers=[FunctionScorer(by_tool)], telemetry=telemetry) as ov,
        ov.trajectory("t", id="halt-me") as run,
    ):
        verdicts = [run.judge(ToolCall(tool=t, args={})) for t in ("bad1", "good", "bad2", "good")]
        assert run.halted
    assert [v.halt for v in verdicts] == [False, False, True, True]
    (trajectory,) = [s for s in spans.get_finished_spans() if s.name == "invoke_agent"]
    assert trajectory.attributes is not None and trajectory.attributes["overseer.trajectory.status"] == "halted"


def test_concurrent_trajectories_never_mix(policy_file: Path) -> None:
    # a loaded CI machine can take longer than the fixture's 0.2 s scorer timeout; timeouts are tested elsewhere
    policy_file.write_text(POLICY.replace("scorer_timeout_s: 0.2", "scorer_timeout_s: 30"))
    seen: dict[str, list[str]] = {}

    def record(request: ScoreRequest) -> dict[str, float]:
        seen.setdefault(request.trajectory_id, []).append(request.step.text())
        # the history a scorer sees is exactly this trajectory's earlier steps
        assert [s.text() for s in request.history] == seen[request.trajectory_id][:-1]
        return {"q": 0.9}

    telemetry, _ = memory()
    ov = Overseer(policy_file, scorers=[FunctionScorer(record, delay_s=0.001)], telemetry=telemetry)

    async def agent(i: int) -> list[int]:
        async with ov.trajectory(f"task {i}", id=f"run-{i}") as run:
            return [(await run.ajudge(Plan(content=f"{i}:{k}"))).index for k in range(15)]

    async def main() -> list[list[int]]:
        return await asyncio.gather(*(agent(i) for i in range(40)))

    results = asyncio.run(main())
    ov.close()
    assert results == [list(range(15))] * 40
    assert all(
        steps == [f"{i}:{k}" for k in range(15)] for i, steps in ((int(t.split("-")[1]), v) for t, v in seen.items())
    )


def test_parallel_calls_keep_submission_order_and_threads_share_one_instance(policy_file: Path) -> None:
    telemetry, spans = memory()
    # later steps score faster: decisions must still come out in submission order
    scorer = FunctionScorer(lambda r: asyncio.sleep(0.05 / (1 + r.index), result={"q": 0.9}))  # type: ignore[arg-type]
    ov = Overseer(policy_file, scorers=[scorer], telemetry=telemetry)

    async def parallel() -> list[int]:
        async with ov.trajectory("t", id="par") as run:
            calls = [run.ajudge(ToolCall(tool=f"t{i}", args={}, call_id=f"c{i}")) for i in range(6)]
            return [v.index for v in await asyncio.gather(*calls)]

    assert asyncio.run(parallel()) == list(range(6))
    order = [
        s.attributes["overseer.step.index"]
        for s in spans.get_finished_spans()
        if s.attributes and s.attributes.get("overseer.trajectory.id") == "par" and s.name == "run_guardrail overseer"
    ]
    assert order == list(range(6))

    errors: list[BaseException] = []

    def worker(i: int) -> None:
        try:
            with ov.trajectory(f"thread {i}") as run:
                assert [run.judge(Plan(content=str(k))).index for k in range(5)] == list(range(5))
        except BaseException as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    ov.close()
    assert errors == []


def test_sync_judge_works_inside_a_running_event_loop(policy_file: Path) -> None:
    telemetry, _ = memory()
    ov = Overseer(policy_file, scorers=[ConstantScorer(0.9, score_name="q")], telemetry=telemetry)

    async def host() -> str:
        # e.g. a sync tool wrapper called from an async web handler: no asyncio.run under a running loop
        with ov.trajectory("t") as run:
            return run.judge(FinalAnswer(content="done")).action

    assert asyncio.run(host()) == "allow"
    ov.close()


def test_scorers_hear_of_the_end_of_each_trajectory_and_close_ends_open_ones(policy_file: Path) -> None:
    telemetry, spans = memory()
    scorer = FunctionScorer(lambda r: {"q": 0.9})
    ov = Overseer(policy_file, scorers=[scorer], telemetry=telemetry)
    with ov.trajectory("t", id="a") as run:
        run.judge(Observation(content="x"))
    left_open = ov.trajectory("t", id="b")
    left_open.judge(Plan(content="y"))
    assert ov.trajectory("t", id="b") is left_open  # an open id resumes the same trajectory
    ov.close()
    assert scorer.ended == ["a", "b"]
    statuses = {
        s.attributes["overseer.trajectory.id"]: s.attributes["overseer.trajectory.status"]
        for s in spans.get_finished_spans()
        if s.attributes and s.name == "invoke_agent"
    }
    assert statuses == {"a": "completed", "b": "abandoned"}
    with pytest.raises(LifecycleError, match="has ended"):  # also a RuntimeError, as before
        left_open.judge(Plan(content="late"))


def test_a_resampled_step_that_still_fails_gets_the_fallback(policy_file: Path) -> None:
    telemetry, _ = memory()
    with (
        Overseer(policy_file, scorers=[FunctionScorer(lambda r: {"q": 0.2})], telemetry=telemetry) as ov,
        ov.trajectory("t") as run,
    ):
        verdict = run.judge(Plan(content="still vague"), resampled=3)
    assert (verdict.action, verdict.rule) == ("block", "weak-plan")
    assert "no candidate of 3 passed, fallback block" in verdict.reason


def test_an_optional_scorer_that_cannot_load_is_left_out_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from overseer.exceptions import ConfigError

    policy = {
        "name": "opt",
        "scorers": {"rules": {"type": "rules"}, "prm": {"type": "prm", "model": str(tmp_path / "nowhere")}},
        "rules": [{"name": "low", "when": {"score": {"prm": {"below": 0.5}}}, "action": "block"}],
    }
    with pytest.raises(ConfigError, match="nowhere"):
        Overseer(policy, telemetry=memory()[0])
    policy["scorers"]["prm"]["required"] = False  # type: ignore[index]
    with caplog.at_level("WARNING"), Overseer(policy, telemetry=memory()[0]) as ov, ov.trajectory("t") as run:
        verdict = run.judge(ToolCall(tool="get_weather", args={"city": "Oslo"}))
    assert verdict.action == "allow" and "prm" not in verdict.scores
    assert any(name.startswith("rules.") for name in verdict.scores)  # the rules scorer still runs
    assert "scorer 'prm' left out" in caplog.text


def test_model_threads_set_their_own_torch_threads_and_leave_the_callers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each model runs on a thread of its own whose torch intra-op threads are its share of the cores."""
    torch = pytest.importorskip("torch")
    from overseer._threads import model_executor, model_threads

    monkeypatch.setenv("OVERSEER_TORCH_THREADS", "3")
    assert model_threads() == 3
    before = torch.get_num_threads()
    executor = model_executor("test-model")
    try:
        assert executor.submit(torch.get_num_threads).result() == 3
    finally:
        executor.shutdown()
    assert torch.get_num_threads() == before
    monkeypatch.setenv("OVERSEER_TORCH_THREADS", "not a number")
    assert model_threads() >= 1


def test_models_of_a_one_core_worker_take_turns_on_one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """A process given one core (a Ray actor of one CPU) runs every model on one shared thread, which outlives a close."""
    import threading

    from overseer import _threads

    monkeypatch.setattr(_threads, "_SHARE", [])
    monkeypatch.setattr(_threads, "_ONE_CORE", [])
    monkeypatch.delenv("OVERSEER_TORCH_THREADS", raising=False)
    _threads.share_cores(2)
    apart = [_threads.model_executor("a"), _threads.model_executor("b")]
    try:
        assert apart[0] is not apart[1]
        assert apart[0].submit(threading.get_ident).result() != apart[1].submit(threading.get_ident).result()
    finally:
        for executor in apart:
            executor.shutdown()
    _threads.share_cores(1)
    detector, prm = _threads.model_executor("overseer-detector"), _threads.model_executor("overseer-prm")
    assert detector is prm
    thread = detector.submit(threading.get_ident).result()
    detector.shutdown(wait=False)  # one model closing leaves the thread to the other
    assert prm.submit(threading.get_ident).result() == thread
