"""Judging a step: the scorers score it, the policy decides in turn, a :class:`~overseer.Verdict` comes out.

Everything here runs on the portal's loop. Recording the decision is the :class:`~overseer._recorder.Recorder`'s
job; the judge hands it the real step and verdict.
"""

from __future__ import annotations

import logging
import time

from overseer._recorder import Recorder
from overseer._trajectory import TrajectoryState
from overseer.policy import Decision, Policy, PolicyEngine, sanitize
from overseer.scorers import CompositeScorer, ScoreOutcome
from overseer.steps import Observation, Step, ToolCall, ToolChange
from overseer.verdict import Verdict

__all__ = ["Judge"]

log = logging.getLogger("overseer")


class Judge:
    """Scores and decides steps under one policy (shared by every trajectory of an :class:`~overseer.Overseer`)."""

    def __init__(self, policy: Policy, scorer: CompositeScorer) -> None:
        self.policy = policy
        self.engine = PolicyEngine(policy)
        self.scorer = scorer

    def verdict(self, trajectory_id: str, index: int, step: Step, decision: Decision, outcome: ScoreOutcome) -> Verdict:
        """The verdict of a decision, with its provenance (and, for ``sanitize``, the text the model reads)."""
        tool = step.tool if isinstance(step, (ToolCall, Observation, ToolChange)) else None
        call_id = step.call_id if isinstance(step, (ToolCall, Observation)) else None
        resample = decision.resample if decision.action == "resample" else None
        cleaned = None
        if decision.action == "sanitize" and isinstance(step, Observation):
            cleaned = sanitize(step.content, decision.spans or ())
        return Verdict(
            trajectory_id=trajectory_id,
            index=index,
            step_id=step.id,
            kind=step.kind,
            tool=tool,
            call_id=call_id,
            scores={name: s.value for name, s in outcome.scores.items()},
            action=decision.action,
            rule=decision.rule,
            reason=decision.reason,
            policy=self.policy.id,
            scorer=self.scorer.id,
            halt=decision.halt,
            candidates=resample.candidates if resample else None,
            fallback=resample.fallback if resample else None,
            errors=dict(outcome.errors),
            spans=(decision.spans or ()) if cleaned is not None else None,
            sanitized=cleaned,
        )

    def _decide(
        self, state: TrajectoryState, index: int, step: Step, outcome: ScoreOutcome, resampled: int | None
    ) -> Decision:
        """The policy's decision, kept in its memory of the trajectory; a policy that fails here fails closed."""
        try:
            decision = self.engine.decide(step, outcome.scores, state.context, outcome.errors, resampled=resampled)
        except Exception as err:  # a policy that cannot be evaluated on this step fails closed, never the agent
            log.exception("policy %s could not be evaluated on step %d of %s", self.policy.id, index, state.id)
            decision = Decision(
                self.policy.on_scorer_error, None, f"the policy could not be evaluated: {type(err).__name__}"
            )
        try:
            self.engine.commit(step, outcome.scores, decision, state.context)
        except Exception:
            log.exception("step %d of %s could not be kept in the policy's memory", index, state.id)
        return decision

    async def judge(
        self,
        state: TrajectoryState,
        recorder: Recorder,
        index: int,
        history: tuple[Step, ...],
        step: Step,
        resampled: int | None = None,
    ) -> Verdict:
        """Score step ``index``, decide it after the steps before it, record the decision, return the verdict."""
        started = time.time_ns()
        try:
            outcome = (await self.scorer.score_detailed([recorder.request(history, step)]))[0]
            await state.wait_turn(index)
            decision = self._decide(state, index, step, outcome, resampled)
            verdict = self.verdict(state.id, index, step, decision, outcome)
            state.verdicts.append(verdict)
            if verdict.sanitized is not None and isinstance(step, Observation):
                state.read_as(index, step.model_copy(update={"content": verdict.sanitized}))
            state.counts[verdict.action] += 1
            recorder.step(index, step, verdict, outcome.scores, started, state.enforced)
            return verdict
        finally:
            state.finish_turn(index)

    async def evaluate(
        self, state: TrajectoryState, recorder: Recorder, history: tuple[Step, ...], steps: tuple[Step, ...]
    ) -> list[Verdict]:
        """Verdicts for candidate steps as if they came next; nothing is recorded or kept."""
        requests = [recorder.request(history + steps[:i], step) for i, step in enumerate(steps)]
        outcomes = await self.scorer.score_detailed(requests)  # one batch: each request carries its own history
        ctx = state.context.fork()
        verdicts = []
        for i, (step, outcome) in enumerate(zip(steps, outcomes, strict=True)):
            decision = self.engine.decide(step, outcome.scores, ctx, outcome.errors)
            self.engine.commit(step, outcome.scores, decision, ctx)
            verdicts.append(self.verdict(state.id, len(history) + i, step, decision, outcome))
        return verdicts

    async def end(self, state: TrajectoryState, recorder: Recorder, status: str) -> None:
        """End a trajectory once its submitted steps are decided: free the scorers' state, record the outcome."""
        submitted = len(state.steps)
        await state.wait_turn(submitted)  # steps submitted without waiting are decided first
        if state.context.halted and status == "completed":
            status = "halted"
        await self.scorer.end_trajectory(state.id)
        recorder.end(status, {"steps": len(state.steps), **state.counts})
