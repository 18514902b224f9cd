"""Step-labelled trajectories: the PRM's training format, and readers that derive step labels from public datasets.

**Format** (JSON Lines): a native trajectory (see the README) plus ``"labels": {"<step index>": value}``, where
``value`` is P(step is good) in [0, 1]: 1 or 0 for hard labels, anything between for soft targets (Monte Carlo
estimates, a neutral 0.5). Unlabelled steps are context only. ``metadata`` carries ``dataset``, ``agent_model``
and ``case`` so that splits can hold out whole agent models or cases.

**Readers** (each rule is in the reader's docstring and tested):

- :func:`read_asb` - Agent Security Bench run logs (observation prompt injection and clean runs).
- :func:`read_agentprocessbench` - AgentProcessBench, human +1 / 0 / -1 per assistant step.
- :func:`read_toolemu` - ToolEMU runs with LLM-judge ToolCallRisk per trajectory.
- :func:`read_tau_bench` - tau-bench airline runs with a reward and ground-truth write actions.
- :func:`read_who_and_when` - Who&When failed multi-agent logs with the decisive mistake marked.

**The held-out split** (:func:`part`, ``overseer prm data|eval --part``), fixed so that evaluation is repeatable:
ASB runs of three whole agent models (:data:`HELDOUT_ASB_MODELS`); tau-bench runs of odd task ids; synthetic runs
never; every other dataset 40% of trajectories, by ``int(sha256(id), 16) % 10 >= 6``.
"""

from __future__ import annotations

import ast
import gzip
import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from overseer.steps import FinalAnswer, Message, Observation, Plan, Step, ToolCall, Trajectory

__all__ = [
    "HELDOUT_ASB_MODELS",
    "LabelledTrajectory",
    "part",
    "read_agentprocessbench",
    "read_asb",
    "read_labelled",
    "read_tau_bench",
    "read_toolemu",
    "read_who_and_when",
    "write_labelled",
]


@dataclass(frozen=True)
class LabelledTrajectory:
    """A trajectory and P(good) for some of its steps, by index."""

    trajectory: Trajectory
    labels: dict[int, float] = field(default_factory=dict)

    def to_json(self) -> str:
        """One line of the labelled format."""
        record = json.loads(self.trajectory.model_dump_json(exclude_none=True))
        record["labels"] = {str(i): v for i, v in sorted(self.labels.items())}
        return json.dumps(record, ensure_ascii=False)


HELDOUT_ASB_MODELS = ("gpt-4o-2024-08-06", "llama3.1:70b", "gemma2:27b")
"""The ASB agent models whose runs are kept out of training (the default model's card reports on them)."""


def part(item: LabelledTrajectory) -> str:
    """``"heldout"`` or ``"train"``: the fixed split of the module docstring."""
    metadata = item.trajectory.metadata
    dataset = metadata.get("dataset")
    if dataset == "asb":
        held = metadata.get("agent_model") in HELDOUT_ASB_MODELS
    elif dataset == "tau_bench":
        case = str(metadata.get("case", ""))
        held = case.isdigit() and int(case) % 2 == 1
    elif dataset == "synthetic":
        held = False
    else:
        held = int(hashlib.sha256(item.trajectory.id.encode()).hexdigest(), 16) % 10 >= 6
    return "heldout" if held else "train"


def _open(path: str | Path) -> Any:
    path = Path(path)
    return gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else open(path, encoding="utf-8")


def write_labelled(items: Iterable[LabelledTrajectory], path: str | Path) -> int:
    """Write labelled trajectories; returns how many."""
    n = 0
    with open(path, "w", encoding="utf-8") as fh:
        for item in items:
            fh.write(item.to_json() + "\n")
            n += 1
    return n


def read_labelled(path: str | Path) -> Iterator[LabelledTrajectory]:
    """Read the labelled format."""
    with _open(path) as fh:
        for line in fh:
            if not line.strip():
                continue
            record = json.loads(line)
            labels = {int(k): float(v) for k, v in (record.pop("labels", None) or {}).items()}
            yield LabelledTrajectory(Trajectory.model_validate(record), labels)


# --- Agent Security Bench --------------------------------------------------------------------------------------

_ASB_CALL = re.compile(
    r"I will call the (?P<tool>[\w.-]+) with the params as (?P<params>.*?)(?=;I will call the |;\[Observation\]|;?$)",
    re.S,
)
_ASB_OBS = re.compile(
    r"The knowledge I get from (?P<tool>[\w.-]+) is: (?P<text>.*?)(?=;The knowledge I get from [\w.-]+ is: |$)", re.S
)
_ASB_STEP = re.compile(r"^(At step \d+, you need to .*?)(?: In and only in current step|$)", re.S)


def _asb_params(text: str) -> dict[str, Any]:
    text = text.strip().rstrip(";").strip()
    if text in ("", "None", "null", "{}"):
        return {}
    for parse in (json.loads, ast.literal_eval):
        try:
            value = parse(text)
        except (ValueError, SyntaxError):
            continue
        if isinstance(value, dict):
            return value
    return {"params": text}


def read_asb(path: str | Path) -> Iterator[LabelledTrajectory]:
    """Agent Security Bench logs (``asb_trajectories.jsonl.gz``).

    Steps: the user's task is the first user message; the ``[Thinking]`` workflow is a plan; each framework turn
    ("At step k, you need to ...") is a user message (cut before its tool list); each ``[Action]`` clause
    "I will call the X with the params as P" is a tool call; each "The knowledge I get from X is: ..." is X's
    observation.

    Labels (tool calls only): a call of the row's attack tool (the dataset's ``label_attack_tool_call``) is bad (0);
    every other call is good (1). In clean runs every call is good. Plans, messages and observations are context.
    """
    with _open(path) as fh:
        for line in fh:
            row = json.loads(line)
            attack_calls = {
                (s["msg_index"], s["tool"]) for s in row.get("steps", []) if s.get("label_attack_tool_call")
            }
            messages = row["messages"]
            task = next((m["content"] for m in messages if m.get("role") == "user"), "")
            steps: list[Step] = []
            labels: dict[int, float] = {}
            seen_task = False
            for index, message in enumerate(messages):
                role, content = message.get("role"), str(message.get("content") or "")
                if role == "system":
                    continue
                if role == "user":
                    if not seen_task:
                        seen_task = True
                        continue
                    found = _ASB_STEP.match(content)
                    steps.append(Message(role="user", content=(found.group(1) if found else content)[:2000]))
                    continue
                if content.startswith("[Thinking]"):
                    steps.append(Plan(content=content.removeprefix("[Thinking]:").strip()))
                    continue
                action, _, observed = content.partition("[Observation]:")
                calls = list(_ASB_CALL.finditer(action))
                if not calls:
                    steps.append(
                        Message(role="assistant", content=content)
                        if index < len(messages) - 1
                        else FinalAnswer(content=content)
                    )
                    continue
                for j, call in enumerate(calls):
                    tool = call.group("tool")
                    labels[len(steps)] = 0.0 if (index, tool) in attack_calls else 1.0
                    steps.append(ToolCall(tool=tool, args=_asb_params(call.group("params")), call_id=f"m{index}-{j}"))
                ids = {c.group("tool"): f"m{index}-{j}" for j, c in enumerate(calls)}
                for obs in _ASB_OBS.finditer(observed):
                    tool = obs.group("tool")
                    steps.append(Observation(tool=tool, call_id=ids.get(tool), content=obs.group("text").strip()))
            metadata = {
                "dataset": "asb",
                "agent_model": row.get("agent_model"),
                "case": f"{row.get('agent_name')}: {task}",
                "setting": row.get("setting"),
                "attack_successful": row.get("attack_successful") == "1",
                "outcome": 0 if row.get("attack_successful") == "1" else 1,
            }
            yield LabelledTrajectory(Trajectory(id=row["id"], task=task, metadata=metadata, steps=tuple(steps)), labels)


# --- AgentProcessBench -----------------------------------------------------------------------------------------


def _python_or_json(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    for parse in (json.loads, ast.literal_eval):
        try:
            return parse(value)
        except (ValueError, SyntaxError):
            continue
    return value


def read_agentprocessbench(path: str | Path) -> Iterator[LabelledTrajectory]:
    """AgentProcessBench (``hotpotqa.jsonl.gz``): a search agent's runs with a human label per assistant message.

    The messages are an OpenAI chat (``tool_calls`` stored as Python literals, parsed here). Labels: every step that
    an assistant message produced (its plan text, its calls, or its answer) gets that message's label: +1 good (1),
    -1 bad (0), 0 neutral (0.5).
    """
    with _open(path) as fh:
        for number, line in enumerate(fh, start=1):
            row = json.loads(line)
            messages = row["messages"]
            step_labels = {int(k): int(v) for k, v in (row.get("step_labels") or {}).items()}
            last_answer = max(
                (
                    i
                    for i, m in enumerate(messages)
                    if m.get("role") == "assistant" and not _python_or_json(m.get("tool_calls"))
                ),
                default=-1,
            )
            steps: list[Step] = []
            labels: dict[int, float] = {}
            tools: dict[str, str] = {}
            task: str | None = None
            for index, message in enumerate(messages):
                role, content = message.get("role"), str(message.get("content") or "")
                first = len(steps)
                if role == "system":
                    continue
                if role == "user":
                    if task is None:
                        task = content
                    else:
                        steps.append(Message(role="user", content=content))
                elif role == "tool":
                    call_id = message.get("tool_call_id")
                    steps.append(
                        Observation(call_id=call_id, tool=tools.get(str(call_id), message.get("name")), content=content)
                    )
                elif role == "assistant":
                    calls = _python_or_json(message.get("tool_calls")) or []
                    if not calls:
                        steps.append(
                            FinalAnswer(content=content)
                            if index == last_answer
                            else Message(role="assistant", content=content)
                        )
                    else:
                        if content.strip():
                            steps.append(Plan(content=content))
                        for call in calls:
                            fn = call.get("function", {})
                            args = _python_or_json(fn.get("arguments"))
                            tools[str(call.get("id"))] = fn.get("name", "unknown")
                            steps.append(
                                ToolCall(
                                    tool=fn.get("name", "unknown"),
                                    call_id=call.get("id"),
                                    args=args if isinstance(args, dict) else {"input": args},
                                )
                            )
                    if index in step_labels:
                        value = {1: 1.0, -1: 0.0}.get(step_labels[index], 0.5)
                        labels.update({k: value for k in range(first, len(steps))})
            metadata = {
                "dataset": "agentprocessbench",
                "agent_model": row.get("data_source") or "unknown",
                "case": str(row.get("query_index", number)),
                "outcome": 1 if row.get("final_label") == 1 else 0,
            }
            yield LabelledTrajectory(
                Trajectory(
                    id=f"apb-{number}", task=task or str(row.get("question", "")), metadata=metadata, steps=tuple(steps)
                ),
                labels,
            )


# --- ToolEMU ---------------------------------------------------------------------------------------------------


def read_toolemu(path: str | Path) -> Iterator[LabelledTrajectory]:
    """ToolEMU runs with two LLM judges' ToolCallRisk (0 likely severe .. 3 certain no risk) per trajectory.

    Steps: each step's thought is a plan, its call a tool call, its observation an observation; the final answer
    is the answer. Labels (tool calls only): when every judge says 3 (certain no risk), every call is good (1);
    when every judge says 0 or 1 (likely risk), the calls of tools that a judge's risk summary names are bad (0)
    and the others are left unlabelled; anything else is left unlabelled (the judges disagree or are unsure).
    """
    with _open(path) as fh:
        for line in fh:
            row = json.loads(line)
            if not row.get("steps"):
                continue
            judges = _python_or_json(row.get("labels")) or {}
            risks = [j.get("ToolCallRisk") for j in judges.values() if isinstance(j, dict)]
            summaries = " ".join(str(j.get("risk_summary") or "") for j in judges.values() if isinstance(j, dict))
            safe = bool(risks) and all(r == 3 for r in risks)
            risky = bool(risks) and all(isinstance(r, int) and r <= 1 for r in risks)
            steps: list[Step] = []
            labels: dict[int, float] = {}
            for i, raw in enumerate(row["steps"]):
                thought = str(raw.get("agent_log") or "").strip()
                if thought:
                    steps.append(Plan(content=thought[:4000]))
                args = _python_or_json(str(raw.get("tool_input") or "").strip())
                tool = str(raw.get("tool") or "unknown")
                if safe:
                    labels[len(steps)] = 1.0
                elif risky and tool in summaries:
                    labels[len(steps)] = 0.0
                steps.append(
                    ToolCall(tool=tool, args=args if isinstance(args, dict) else {"input": args}, call_id=f"s{i}")
                )
                steps.append(Observation(tool=tool, call_id=f"s{i}", content=str(raw.get("observation") or "")))
            if row.get("final_answer"):
                steps.append(FinalAnswer(content=str(row["final_answer"]).lstrip(": ")))
            metadata: dict[str, Any] = {
                "dataset": "toolemu",
                "agent_model": row.get("agent_model"),
                "case": row.get("case_name"),
            }
            if safe or risky:
                metadata["outcome"] = 1 if safe else 0
            yield LabelledTrajectory(
                Trajectory(id=row["id"], task=row["user_instruction"], metadata=metadata, steps=tuple(steps)), labels
            )


# --- tau-bench -------------------------------------------------------------------------------------------------

_READ_ONLY = ("get_", "search_", "list_", "calculate", "think")


def read_tau_bench(path: str | Path) -> Iterator[LabelledTrajectory]:
    """tau-bench airline runs (``gpt-4o-airline.json.gz``): chats with a reward and ground-truth write actions.

    Steps: the chat as the OpenAI reader reads it (the first user message is the task; the system prompt, the
    airline policy, is dropped). Labels (tool calls only): a call equal to a ground-truth action (same
    name and arguments) is good (1); in a run with reward 1 every call is good; in a run with reward 0, the first
    *write* call (a name not starting with get_ / search_ / list_, nor calculate / think) that matches no
    ground-truth action is bad (0), and the calls after it are left unlabelled.
    """
    from overseer.readers import parse_openai

    with _open(path) as fh:
        runs = json.load(fh)
    for run in runs:
        run_id = f"tau-airline-{run['task_id']}-{run.get('trial', 0)}"
        trajectory = parse_openai({"id": run_id, "messages": run["traj"]}, file=str(path))
        truth = [
            (a["name"], json.dumps(a.get("kwargs", a.get("arguments", {})), sort_keys=True))
            for a in run["info"]["task"].get("actions", [])
        ]
        labels: dict[int, float] = {}
        for i, step in enumerate(trajectory.steps):
            if not isinstance(step, ToolCall):
                continue
            if run["reward"] == 1 or (step.tool, json.dumps(step.args, sort_keys=True)) in truth:
                labels[i] = 1.0
            elif not step.tool.startswith(_READ_ONLY):
                labels[i] = 0.0
                break
        metadata = {
            **trajectory.metadata,
            "dataset": "tau_bench",
            "agent_model": "gpt-4o",
            "case": str(run["task_id"]),
            "outcome": int(run["reward"]),
        }
        metadata.pop("system", None)  # the airline policy: long, the same for every run
        yield LabelledTrajectory(trajectory.model_copy(update={"metadata": metadata}), labels)


# --- Who&When --------------------------------------------------------------------------------------------------


def read_who_and_when(path: str | Path) -> Iterator[LabelledTrajectory]:
    """Who&When failed multi-agent logs with the human-marked decisive mistake.

    Steps: the first (human) entry is the task; every other entry of the history is one agent step, a plan
    ``[role or name] content``. Labels: the steps before the decisive mistake are good (1), the mistake is bad (0),
    the steps after it are left unlabelled (every log is a failed run, so nothing after it is known to be good).
    """
    with _open(path) as fh:
        for number, line in enumerate(fh, start=1):
            row = json.loads(line)
            history = row.get("history") or []
            mistake = int(row.get("mistake_step", -1))
            steps: list[Step] = []
            labels: dict[int, float] = {}
            for index, entry in enumerate(history):
                who = entry.get("name") or entry.get("role") or "agent"
                if index == 0 and who == "human":
                    continue
                if index <= mistake:
                    labels[len(steps)] = 0.0 if index == mistake else 1.0
                steps.append(Plan(content=f"[{who}] {entry.get('content') or ''}"[:6000]))
            metadata = {
                "dataset": "who_and_when",
                "agent_model": row.get("split", "unknown"),
                "case": row.get("question_ID") or str(number),
                "mistake_agent": row.get("mistake_agent"),
            }
            task = str(row.get("question") or "")
            yield LabelledTrajectory(
                Trajectory(id=f"ww-{number}", task=task, metadata=metadata, steps=tuple(steps)), labels
            )
