"""The policy, and how it is loaded from YAML: validated once, saying exactly where a mistake is.

Errors name the file, the line, the key path and a suggestion. The parts of a policy (rules, conditions, scorer
entries, redaction) are in ``_model``.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Mapping
from functools import cache, cached_property
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny, ValidationError, field_validator, model_validator

from overseer.exceptions import ConfigError, PolicyError
from overseer.policy._model import (
    NonResample,
    RedactSpec,
    Rule,
    RulesScorerSpec,
    ScorerSpec,
    StopSpec,
)
from overseer.scorers import BaseScorerSpec, PluginScorerSpec, spec_class

__all__ = [
    "BUILTIN_POLICIES",
    "Policy",
    "builtin_policy_path",
    "load_policy",
    "policy_from_dict",
    "policy_from_file",
    "policy_from_text",
]

BUILTIN_POLICIES = ("default", "strict", "permissive")
Lines = dict[tuple[str | int, ...], int]


def _default_scorers() -> dict[str, ScorerSpec]:
    return {"rules": RulesScorerSpec(type="rules")}


class Policy(BaseModel):
    """An oversight policy: which scorers judge each step, and the rules that turn their scores into actions."""

    model_config = ConfigDict(frozen=True, extra="forbid", json_schema_extra={"title": "overseer policy"})

    version: Literal[1] = 1
    """The policy format's version."""
    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    """The policy's name, recorded with every decision."""
    description: str | None = None
    """What the policy is for."""
    extends: str | None = None
    """A shipped policy (``default``, ``strict``, ``permissive``) or a file, relative to this one, to build on.
    This policy's keys replace the base's; its rules come first, and replace base rules of the same name."""
    scorers: dict[str, SerializeAsAny[ScorerSpec]] = Field(default_factory=_default_scorers)
    """The scorers, by name. All run concurrently on every step."""
    scorer_timeout_s: float = Field(default=10.0, gt=0.0)
    """How long a scorer may take on one step before it counts as failed. For a model that other steps share (the
    shipped detector and PRM), counted from when the model last started or finished a job: a step queued behind
    other steps' work waits its turn (up to ``scorer_queue_s``), a model stuck on one job fails every step."""
    scorer_queue_s: float | None = Field(default=120.0, gt=0.0)
    """How long a step may wait in all, queue included, for a shared model that keeps working (``null``: no
    bound)."""
    on_scorer_error: NonResample = "block"
    """What to do when a scorer fails or times out: fail closed (``block``) unless you say otherwise. The
    decision is the more severe of this and what the rules decide from the scores that did arrive."""
    default_action: NonResample = "allow"
    """What to do when no rule matches."""
    rules: list[Rule] = Field(default_factory=list)
    """The rules, tried in order; the first match wins."""
    stop: StopSpec | None = None
    """The trajectory-level stop."""
    redact: RedactSpec | None = None
    """Masking of secrets and personal data before anything is stored or exported (none when absent)."""

    @field_validator("scorers", mode="after")
    @classmethod
    def _plugin_specs(cls, value: dict[str, BaseScorerSpec]) -> dict[str, BaseScorerSpec]:
        """Validate each plug-in entry with the spec class its type registered."""
        out: dict[str, BaseScorerSpec] = {}
        for name, spec in value.items():
            if isinstance(spec, PluginScorerSpec):
                try:
                    spec = spec_class(spec.type).model_validate(spec.model_dump())
                except ConfigError as err:
                    raise ValueError(str(err)) from None
            out[name] = spec
        return out

    @model_validator(mode="after")
    def _unique_rule_names(self) -> Policy:
        seen: set[str] = set()
        for rule in self.rules:
            if rule.name in seen:
                raise ValueError(f"rule name {rule.name!r} is used twice")
            seen.add(rule.name)
        return self

    @cached_property
    def digest(self) -> str:
        """The SHA-256 of the policy's canonical JSON (what it means, not how the file is laid out)."""
        canonical = json.dumps(self.model_dump(mode="json", exclude={"extends"}), sort_keys=True)
        return hashlib.sha256(canonical.encode()).hexdigest()

    @property
    def id(self) -> str:
        """``name@<first 12 hex digits of the digest>``, as recorded with each decision."""
        return f"{self.name}@{self.digest[:12]}"

    @classmethod
    def from_file(cls, path: str | Path) -> Policy:
        """Load and validate a YAML policy file (raises :class:`~overseer.exceptions.PolicyError`)."""
        return policy_from_file(path)

    @classmethod
    def from_text(cls, text: str, *, source: str = "<string>") -> Policy:
        """Load and validate a policy from YAML text."""
        return policy_from_text(text, source=source)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Policy:
        """Validate a policy given as a dict."""
        return policy_from_dict(data)


def _policies_dir() -> Path:
    """The shipped policy packs: inside the installed package, or ``policies/`` of a source checkout."""
    packaged = Path(str(resources.files("overseer"))) / "_policies"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "policies"


def builtin_policy_path(name: str) -> Path:
    """The file of a shipped policy (``default``, ``strict`` or ``permissive``)."""
    if name not in BUILTIN_POLICIES:
        raise PolicyError(name, [f"no shipped policy named {name!r}; shipped: {', '.join(BUILTIN_POLICIES)}"])
    return _policies_dir() / f"{name}.yaml"


def load_policy(source: Policy | Mapping[str, Any] | str | Path) -> Policy:
    """A policy from a :class:`Policy`, a dict, a file path, or the name of a shipped policy."""
    if isinstance(source, Policy):
        return source
    if isinstance(source, Mapping):
        return policy_from_dict(source)
    if isinstance(source, str) and source in BUILTIN_POLICIES and not Path(source).exists():
        return policy_from_file(builtin_policy_path(source))
    return policy_from_file(source)


MAX_POLICY_BYTES = 1_000_000
"""A policy file larger than this is refused before it is parsed (a real policy is a few kilobytes)."""
MAX_RULES = 2_000
"""A policy with more rules than this is refused (every step is tested against every rule)."""


class _NoAliasLoader(yaml.SafeLoader):
    """YAML without anchors and aliases: an alias bomb (a few hundred bytes that expand to gigabytes) is refused."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            raise yaml.MarkedYAMLError(
                None, None, "anchors and aliases (*name) are not allowed in a policy", event.start_mark
            )
        return super().compose_node(parent, index)


def policy_from_file(path: str | Path) -> Policy:
    """Load and validate a policy file.

    Raises:
        PolicyError: the file is missing, is not YAML, or does not validate; the message names the line.
    """
    path = Path(path)
    try:
        if path.stat().st_size > MAX_POLICY_BYTES:
            raise PolicyError(
                str(path), [f"the file is {path.stat().st_size} bytes, over the {MAX_POLICY_BYTES} a policy may have"]
            )
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PolicyError(str(path), ["file not found"]) from None
    except (OSError, UnicodeDecodeError) as err:
        raise PolicyError(str(path), [f"cannot read: {err}"]) from None
    return policy_from_text(text, source=str(path), base_dir=path.parent)


def policy_from_text(text: str, *, source: str = "<string>", base_dir: Path | None = None) -> Policy:
    """Load and validate a policy from YAML text. ``base_dir`` resolves a relative ``extends``."""
    return _load(text, source, base_dir or Path.cwd(), ())


def policy_from_dict(data: Mapping[str, Any], *, source: str = "<dict>") -> Policy:
    """Validate a policy given as a dict."""
    return _validate(dict(data), source, {}, Path.cwd(), ())


def _load(text: str, source: str, base_dir: Path, chain: tuple[str, ...]) -> Policy:
    if len(text) > MAX_POLICY_BYTES:
        raise PolicyError(source, [f"the policy is {len(text)} characters, over the {MAX_POLICY_BYTES} allowed"])
    try:
        node = yaml.compose(text, Loader=_NoAliasLoader)
        data = _NoAliasLoader(text).get_single_data()
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise PolicyError(source, [f"{where}not valid YAML: {err.problem}"]) from None
    except yaml.YAMLError as err:
        raise PolicyError(source, [f"not valid YAML: {err}"]) from None
    except RecursionError:
        raise PolicyError(source, ["not valid YAML: nested too deeply"]) from None

    if not isinstance(data, dict):
        raise PolicyError(source, ["the policy must be a mapping with at least 'name'"])
    lines: Lines = {}
    problems: list[str] = []
    _index_lines(node, (), lines, problems)
    if problems:
        raise PolicyError(source, problems)
    return _validate(data, source, lines, base_dir, chain)


def _index_lines(node: yaml.Node | None, path: tuple[str | int, ...], lines: Lines, problems: list[str]) -> None:
    """Record the line of every key, and reject duplicate keys (which YAML loaders silently drop)."""
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key_node, value_node in node.value:
            key = key_node.value
            line = key_node.start_mark.line + 1
            if key in seen:
                problems.append(f"line {line}: {_path_text((*path, key))}: duplicate key")
            seen.add(key)
            lines[(*path, key)] = line
            _index_lines(value_node, (*path, key), lines, problems)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            lines[(*path, i)] = item.start_mark.line + 1
            _index_lines(item, (*path, i), lines, problems)


def _path_text(path: tuple[str | int, ...]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _merge(base: dict[str, Any], child: dict[str, Any]) -> dict[str, Any]:
    merged = {**base, **child}
    merged.pop("extends", None)
    if "scorers" in child and "scorers" in base:
        merged["scorers"] = {**base["scorers"], **child["scorers"]}
    child_rules = child.get("rules") or []
    names = {r.get("name") for r in child_rules if isinstance(r, dict)}
    merged["rules"] = [*child_rules, *[r for r in base.get("rules") or [] if r.get("name") not in names]]
    return merged


def _validate(data: dict[str, Any], source: str, lines: Lines, base_dir: Path, chain: tuple[str, ...]) -> Policy:
    if isinstance(data.get("rules"), list) and len(data["rules"]) > MAX_RULES:
        raise PolicyError(source, [f"{len(data['rules'])} rules, over the {MAX_RULES} a policy may have"])
    extends = data.get("extends")
    if isinstance(extends, str):
        base_path = base_dir / extends
        if not base_path.exists() and extends in BUILTIN_POLICIES:
            base_path = builtin_policy_path(extends)
        key = str(base_path.resolve())
        if key in chain:
            raise PolicyError(source, [f"line {lines.get(('extends',), '?')}: extends: a cycle through {extends!r}"])
        if not base_path.exists():
            raise PolicyError(
                source,
                [
                    f"line {lines.get(('extends',), '?')}: extends: no file {str(base_path)!r} and no shipped policy "
                    f"named {extends!r} (shipped: {', '.join(BUILTIN_POLICIES)})"
                ],
            )
        try:
            text = base_path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise PolicyError(
                source, [f"line {lines.get(('extends',), '?')}: extends: cannot read {str(base_path)!r}: {err}"]
            ) from None
        base = _load(text, str(base_path), base_path.parent, (*chain, key))
        data = _merge(base.model_dump(mode="json", exclude_defaults=True), data)
        data["extends"] = extends
    try:
        return Policy.model_validate(data)
    except ValidationError as err:
        raise PolicyError(source, _explain(err, data, lines)) from None


def _explain(err: ValidationError, data: Any, lines: Lines) -> list[str]:
    problems: list[str] = []
    seen: set[str] = set()
    for error in err.errors(include_url=False):
        path = _data_path(tuple(error["loc"]), data)
        where = _path_text(path)
        if where in seen:
            continue  # a union reports one error per member; the first says enough
        seen.add(where)
        line = next((lines[path[:n]] for n in range(len(path), 0, -1) if path[:n] in lines), None)
        message = error["msg"]
        if error["type"] == "extra_forbidden":
            valid = _valid_keys(path[:-1], data)
            message = f"unknown key {path[-1]!r}"
            close = difflib.get_close_matches(str(path[-1]), valid, n=1, cutoff=0.5)
            if close:
                message += f"; did you mean {close[0]!r}?"
            elif valid:
                message += f"; valid keys here: {', '.join(sorted(valid))}"
        elif error["type"] == "missing":
            message = f"missing required key {path[-1]!r}" if path else "missing required key"
        elif error["type"] == "value_error":
            message = message.removeprefix("Value error, ")
        problems.append(f"{f'line {line}: ' if line else ''}{where}: {message}")
    return problems


_MISSING = object()


def _child(node: Any, part: int | str) -> Any:
    """``node[part]`` for a dict key or a list index, else a marker."""
    if isinstance(node, dict) and part in node:
        return node[part]
    if isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
        return node[part]
    return _MISSING


def _data_path(loc: tuple[int | str, ...], data: Any) -> tuple[str | int, ...]:
    """The part of pydantic's error location that names keys of the data (dropping union-member tags)."""
    path: list[str | int] = []
    node = data
    for i, part in enumerate(loc):
        child = _child(node, part)
        if child is not _MISSING:
            path.append(part)
            node = child
        elif i == len(loc) - 1 and isinstance(node, dict) and isinstance(part, str):
            path.append(part)  # a missing key: name it
        # anything else is a tag pydantic adds for a union member: skip it
    return tuple(path)


@cache
def _schema() -> dict[str, Any]:
    return Policy.model_json_schema()


def _resolve(node: dict[str, Any]) -> list[dict[str, Any]]:
    defs = _schema().get("$defs", {})
    if "$ref" in node:
        return _resolve(defs[node["$ref"].rsplit("/", 1)[-1]])
    for union in ("anyOf", "oneOf", "allOf"):
        if union in node:
            return [n for member in node[union] for n in _resolve(member)]
    return [node]


def _valid_keys(path: tuple[str | int, ...], data: Any) -> list[str]:
    """The keys allowed at ``path`` of the policy, from its JSON Schema."""
    nodes = _resolve(_schema())
    value = data
    for part in path:
        value = _child(value, part)
        following: list[dict[str, Any]] = []
        for node in nodes:
            if isinstance(part, int) and "items" in node:
                following += _resolve(node["items"])
            elif isinstance(part, str) and part in node.get("properties", {}):
                following += _resolve(node["properties"][part])
            elif isinstance(part, str) and isinstance(node.get("additionalProperties"), dict):
                following += _resolve(node["additionalProperties"])
        nodes = following
        if isinstance(value, dict) and isinstance(value.get("type"), str):  # a discriminated member
            typed = [n for n in nodes if n.get("properties", {}).get("type", {}).get("const") == value["type"]]
            nodes = typed or nodes
    return sorted({key for node in nodes for key in node.get("properties", {})})
