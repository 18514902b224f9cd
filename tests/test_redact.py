"""Redaction: secrets and personal data are masked before anything is stored, sent or exported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from overseer import AuditStore, Observation, Overseer, Plan, ToolCall
from overseer.policy import RedactSpec, policy_from_dict
from overseer.redact import Redactor
from overseer.scorers import ScoreRequest
from overseer.store.export import export_rows, render_export
from overseer.testing import FunctionScorer

AWS = "AKIAIOSFODNN7EXAMPLE"
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
CARD = "4111 1111 1111 1111"  # passes the Luhn check
ORDER = "4111111111111112"  # 16 digits that do not
KEY = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\nabc\n-----END RSA PRIVATE KEY-----"
EMAIL = "dana.k@corp.example"


def test_text_and_values_are_masked_by_pattern_and_by_name() -> None:
    r = Redactor(RedactSpec(emails=True, phones=True, patterns={"iban": r"\bDE\d{20}\b"}), key=b"k")
    text = r.text(
        f"key {AWS}, token {GITHUB}, card {CARD}, order {ORDER}, mail {EMAIL}, call +49 170 1234567, "
        f'iban DE89370400440532013000, {{"password": "hunter2"}}, api_token=abc123xyz\n{KEY}\nafter'
    )
    for secret in (
        AWS,
        GITHUB,
        CARD,
        EMAIL,
        "+49 170 1234567",
        "DE89370400440532013000",
        "hunter2",
        "abc123xyz",
        "MIIE",
    ):
        assert secret not in text, secret
    assert ORDER in text and text.endswith("\nafter")  # not a card number; the text after the key block survives
    assert "[REDACTED:card:" in text and "[REDACTED:aws-access-key:" in text and "[REDACTED:iban:" in text
    # equal values get equal tags, so a reviewer can match them without seeing them
    assert r.text(EMAIL) == r.text(f"{EMAIL}") and r.text(EMAIL) != r.text("eve@corp.example")

    args = r.value({"to": EMAIL, "Authorization": "Bearer xyz", "nested": {"api_key": "k-123"}, "list": [CARD], "n": 3})
    assert args["Authorization"].startswith("[REDACTED:argument:") and args["nested"]["api_key"].startswith(
        "[REDACTED:"
    )
    assert EMAIL not in json.dumps(args) and CARD not in json.dumps(args) and args["n"] == 3

    off = Redactor(RedactSpec(secrets=False, cards=False, arg_names=[]), key=b"k")
    assert off.text(f"{AWS} {CARD} {EMAIL}") == f"{AWS} {CARD} {EMAIL}"  # only what is switched on


def _policy(scorers_see: str) -> dict[str, object]:
    return {
        "version": 1,
        "name": "masked",
        "scorers": {"rules": {"type": "rules"}},
        "redact": {"emails": True, "scorers_see": scorers_see},
        "rules": [
            {
                "name": "block-secrets",
                "when": {"kind": "tool_call", "score": {"rules.secrets": {"below": 0.5}}},
                "action": "block",
            },
        ],
    }


@pytest.mark.parametrize("scorers_see", ["original", "redacted"])
def test_nothing_secret_reaches_the_store_or_the_export(tmp_path: Path, scorers_see: str) -> None:
    seen: list[str] = []

    def look(request: ScoreRequest) -> dict[str, float]:
        seen.append(request.task + " " + request.step.text() + " " + " ".join(s.text() for s in request.history))
        return {"q": 1.0}

    db = tmp_path / "audit.db"
    url = f"sqlite:///{db}"
    policy = policy_from_dict(_policy(scorers_see))
    from overseer.scorers import RulesScorer

    with (
        Overseer(policy, scorers=[RulesScorer(), FunctionScorer(look)], store=url) as ov,
        ov.trajectory(f"Email {EMAIL} the deploy key", id="t1") as run,
    ):
        run.judge(Plan(content=f"use the key {AWS}"))
        run.judge(Observation(tool="vault", call_id="v", content=f"card {CARD}\n{KEY}"))
        blocked = run.judge(ToolCall(tool="send_email", args={"to": EMAIL, "body": GITHUB, "password": "pw-1234"}))
        review = run.review(blocked, reviewer="dana", label="bad", comment=f"leaked {GITHUB}")
    # the rules scorer sees the token only where the policy lets scorers see originals: why that is the default
    assert blocked.action == ("block" if scorers_see == "original" else "allow")
    assert "leaked" in (review.comment or "") and GITHUB in (review.comment or "")  # the caller keeps the original
    everything = " ".join(seen)
    if scorers_see == "original":
        assert GITHUB in everything and EMAIL in everything
    else:
        assert GITHUB not in everything and EMAIL not in everything and "[REDACTED:" in everything

    raw = db.read_bytes()
    for secret in (AWS, CARD, "MIIEowIBAAKCAQEA7", EMAIL, GITHUB, "pw-1234"):
        assert secret.encode() not in raw, secret
    store = AuditStore(url)
    try:
        assert store.verify() == (4, [])  # the chain covers what was stored: the masked records
        exported = render_export(export_rows(store), "jsonl").decode()
        trajectory, steps = store.get_trajectory("t1")  # type: ignore[misc]
    finally:
        store.close()
    assert "[REDACTED:email:" in (trajectory.task or "") and "[REDACTED:aws-access-key:" in steps[0].step.text()
    for secret in (AWS, CARD, EMAIL, GITHUB, "pw-1234"):
        assert secret not in exported, secret
    assert '"password": "[REDACTED:argument:' in exported


def test_a_marker_is_never_masked_again() -> None:
    from overseer.policy import RedactSpec
    from overseer.redact import Redactor

    masked = Redactor(RedactSpec(emails=True)).text("postgres://bob:secret123@db.example.com/x password: hunter22")
    assert masked.count("[REDACTED:") == 2 and "[REDACTED:password-in-url:" in masked
    assert "[REDACTED:password-in-url:[" not in masked and "secret123" not in masked and "hunter22" not in masked
