"""``overseer policy``: check, explain and describe policy files."""

from __future__ import annotations

import json

import click
from rich.table import Table
from rich.text import Text

from overseer.cli._common import action_text, console, handle_errors, safe
from overseer.policy import BUILTIN_POLICIES, Policy, builtin_policy_path, describe_when, load_policy
from overseer.scorers import RULE_CHECKS


@click.group("policy")
def policy_group() -> None:
    """Check and explain policies."""


def _produced(policy: Policy) -> set[str] | None:
    """The score names the policy's scorers produce, or None where that cannot be known (python scorers)."""
    names: set[str] = set()
    for key, spec in policy.scorers.items():
        produced = spec.produces(key)
        if produced is None:
            return None
        names |= produced
    return names


def policy_warnings(policy: Policy) -> list[str]:
    """Mistakes that validate but are probably not meant: rules reading scores no scorer gives, dead rules."""
    warnings: list[str] = []
    produced = _produced(policy)
    for i, rule in enumerate(policy.rules):
        matches = [rule.when, rule.when.after, rule.when.args_from]
        read = {name for m in matches if m is not None for name in (m.score or {})}
        if produced is not None:
            for name in sorted(read - produced):
                warnings.append(f"rules[{i}] {rule.name}: reads score {name!r}, which no configured scorer produces")
        if not rule.when.model_dump(exclude_defaults=True) and i < len(policy.rules) - 1:
            warnings.append(f"rules[{i}] {rule.name}: matches every step, so the rules after it never apply")
    return warnings


@policy_group.command("check")
@click.argument("file")
@click.option("--json", "as_json", is_flag=True, help="Print the validated policy as JSON.")
@handle_errors
def check(file: str, as_json: bool) -> None:
    """Validate a policy FILE (or a shipped policy's name) and explain what it does."""
    policy = load_policy(file)
    from overseer.scorers import PythonScorerSpec, resolve_factory

    for name, spec in policy.scorers.items():  # a factory that cannot be imported is an error now, not at run time
        if isinstance(spec, PythonScorerSpec):
            resolve_factory(name, spec.factory)
    warnings = policy_warnings(policy)
    if as_json:
        click.echo(
            json.dumps({"id": policy.id, "policy": policy.model_dump(mode="json"), "warnings": warnings}, indent=2)
        )
        return
    console.print(Text.assemble(("valid ", "bold green"), safe(file), " -> ", (policy.id, "bold")))
    if policy.description:
        console.print(safe(policy.description.strip()))
    scorers = ", ".join(f"{k} ({v.type})" for k, v in policy.scorers.items())
    console.print(f"scorers: {scorers}; timeout {policy.scorer_timeout_s} s; on scorer error: {policy.on_scorer_error}")
    table = Table(title="rules (first match wins)", show_lines=False)
    table.add_column("#", justify="right")
    table.add_column("rule")
    table.add_column("when")
    table.add_column("action")
    for i, rule in enumerate(policy.rules):
        action = action_text(rule.action)
        if rule.resample is not None:
            action.append(f" x{rule.resample.candidates}, else {rule.resample.fallback}")
        table.add_row(str(i), safe(rule.name), safe(describe_when(rule)), action)
    table.add_row("", Text("(no match)", style="dim"), "", action_text(policy.default_action))
    console.print(table)
    if policy.stop is not None:
        stop = policy.stop
        limits = [
            f"{n} {w}"
            for n, w in (
                (stop.after_blocked, "blocked"),
                (stop.after_flagged, "flagged"),
                (stop.after_escalated, "escalated"),
            )
            if n is not None
        ]
        console.print(f"stop the run after: {', or '.join(limits)} step(s)")
    for warning in warnings:
        console.print(Text("warning: ", style="yellow") + safe(warning))


@policy_group.command("schema")
def schema() -> None:
    """Print the policy file's JSON Schema (for editors: ``# yaml-language-server: $schema=...``)."""
    click.echo(json.dumps(Policy.model_json_schema(), indent=2, sort_keys=True))


@policy_group.command("list")
def list_policies() -> None:
    """List the shipped policies and their files."""
    for name in BUILTIN_POLICIES:
        policy = load_policy(name)
        console.print(Text.assemble((name, "bold"), f"  {policy.id}  ", str(builtin_policy_path(name))))
    console.print(f"rule checks available to the rules scorer: {', '.join(RULE_CHECKS)}")
