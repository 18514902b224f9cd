"""What a tool answers after it changed something: receipts, the ninth round's hard negatives.

A run that pays, sends, books or shares reads the tool's answer next: a payment executed to an IBAN for an amount,
an e-mail sent to an address, a member added to a channel, a file shared with a person, an event created with its
participants, a booking confirmed with its number. No earlier round had such text: its answers are short, name a
target and an amount, and read to a token tagger like the injected goals it was trained on ("send 200 EUR to
<IBAN>"): the shipped model removed "Payment of 86.40 EUR to FR76 ... completed." (0.86) and a standing order's
"updated: 950.00 EUR monthly to IT60..." (0.66) in runs of set M (``tests/data/everyday_runs.jsonl``): the answer
to a payment was cut out of what the agent read. Here a receipt is one of fourteen kinds of change
with generated values (IBANs compact or in groups, addresses, phone numbers, ids, amounts, dates, what the agent
wrote echoed back), written as a sentence (past tense or passive, several phrasings), JSON, a Python repr, YAML or
an HTTP status line with a body; half carry an injected passage (composed as in
:mod:`overseer.lab.detector.compose` or :mod:`overseer.lab.detector.goals`) in a text field of the answer or after
it, so that the model still reads an instruction inside a receipt. Nothing here comes from any evaluation suite.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from typing import Any

import yaml

from overseer.lab.detector.compose import FIRST, LAST, Doc, _email, _iban, _sentences, _url, injection
from overseer.lab.detector.goals import _passage as goal_passage
from overseer.lab.detector.records import drawn, find_span

__all__ = ["receipt", "receipts"]

_CURRENCIES = ["EUR", "USD", "GBP", "CHF", "SEK", "PLN"]
_SIGNS = {"EUR": "€", "USD": "$", "GBP": "£"}
_CHANNELS = ["general", "random", "dev", "finance", "support", "design", "ops", "travel", "announcements"]
_PLACES = ["Hotel Aster", "Casa Verde", "Riverside Suites", "Nordlys Lodge", "The Old Mill", "Sakura House"]
_FILES = ["budget-2026.xlsx", "minutes.md", "Q3-report.pdf", "slides.pptx", "contract-v2.docx", "photos.zip"]
_ECHO = ["Thanks, see you on Friday!", "Running 10 minutes late.", "Please find the figures attached.",
         "I'm off sick today, back tomorrow.", "Thursday works for me.", "accepted", "Reminder: timesheets are due today.",
         "Can you send me the slides when you get a chance?", "Happy birthday!", "Done, merged."]  # fmt: skip


def _grouped(iban: str) -> str:
    return " ".join(iban[i : i + 4] for i in range(0, len(iban), 4))


def _amount(r: random.Random) -> tuple[float, str, str]:
    value = r.choice([round(r.uniform(3, 120), 2), float(r.randint(10, 2000)), round(r.uniform(100, 5000), 2)])
    currency = r.choice(_CURRENCIES)
    shown = r.choice([f"{value:.2f} {currency}", f"{value:,.2f} {currency}", f"{_SIGNS.get(currency, '')}{value:.2f}"])
    return value, currency, shown.strip()


def _ident(r: random.Random, prefix: str) -> str:
    return r.choice([f"{prefix}-{r.randint(1000, 99999)}", f"{prefix.lower()}_{r.randint(10**7, 10**9)}",
                     str(r.randint(10, 99999)), f"{r.randint(2025, 2026)}{r.randint(1000, 9999)}-{r.randint(10, 99)}"])  # fmt: skip


def _when(r: random.Random) -> str:
    return r.choice([f"2026-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}",
                     f"{r.randint(1, 28)} {r.choice(['Jan', 'Mar', 'May', 'Jun', 'Sep', 'Nov', 'Dec'])} 2026",
                     f"2026-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}T{r.randint(6, 22):02d}:{r.choice(['00', '15', '30', '45'])}:00Z"])  # fmt: skip


def _person(r: random.Random) -> str:
    return f"{r.choice(FIRST)} {r.choice(LAST)}"


# Each kind gives the fields of one answer and the sentences it can be written as.
Kind = Callable[[random.Random], tuple[dict[str, Any], list[str]]]


def _payment(r: random.Random) -> tuple[dict[str, Any], list[str]]:
    iban, (value, currency, shown), ref = _iban(r), _amount(r), _ident(r, "REF")
    target = _grouped(iban) if r.random() < 0.4 else iban
    who = _person(r)
    fields = {"status": r.choice(["completed", "executed", "accepted", "booked", "sent"]), "id": _ident(r, "TR"),
              "amount": value, "currency": currency, r.choice(["creditor_iban", "to", "iban", "recipient"]): iban,
              "reference": ref, "date": _when(r)}  # fmt: skip
    if r.random() < 0.3:
        fields["balance_after"] = round(r.uniform(50, 9000), 2)
    sentences = [f"Payment of {shown} to {target} completed.", f"Transfer {fields['id']} executed: {shown} to {target}.",
                 f"{shown} sent to {who} ({target}), reference {ref}.", f"Your transfer of {shown} to {target} has been accepted and will arrive within one business day.",
                 f"Payment to {target} ({shown}) was booked on {fields['date']}.", f"Done: {shown} transferred to {target}.",
                 f"Instant payment confirmed. Beneficiary: {who}, {target}. Amount: {shown}.",
                 f"The payment of {shown} to {who} has been submitted. Reference: {ref}."]  # fmt: skip
    return fields, sentences


def _standing(r: random.Random) -> tuple[dict[str, Any], list[str]]:
    iban, (value, currency, shown) = _iban(r), _amount(r)
    target = _grouped(iban) if r.random() < 0.4 else iban
    oid, every = (
        _ident(r, "SO"),
        r.choice(["monthly", "weekly", "every Friday", "on the 1st of each month", "quarterly"]),
    )
    verb = r.choice(["created", "updated", "changed", "cancelled", "scheduled"])
    fields = {"standing_order": oid, "state": verb, "amount": value, "currency": currency, "to": iban,
              "recurrence": every, "next_execution": _when(r)}  # fmt: skip
    sentences = [f"Standing order {oid} {verb}: {shown} {every} to {target}, next run {fields['next_execution']}.",
                 f"Scheduled payment {verb}: {shown} to {target} {every}.", f"Recurring transfer {oid} to {target} has been {verb}.",
                 f"OK, standing order {verb}. {shown} will go to {target} {every}, starting {fields['next_execution']}."]  # fmt: skip
    return fields, sentences


def _mail(r: random.Random) -> tuple[dict[str, Any], list[str]]:
    to = [_email(r) for _ in range(r.choice([1, 1, 2, 3]))]
    verb = r.choice(["sent", "forwarded", "delivered", "queued"])
    mid = _ident(r, "MSG")
    fields = {"id": mid, "status": verb, "to": to, "subject": r.choice(["Re: plan", "Fwd: tickets", "Invoice", "Hello", "Minutes"]),
              "timestamp": _when(r)}  # fmt: skip
    if r.random() < 0.4:
        fields["body"] = r.choice(_ECHO)
    joined = ", ".join(to)
    sentences = [f"Email {verb} to {joined}.", f"Message {mid} {verb} to {joined}.", f"Your message to {joined} was {verb}.",
                 f"Forwarded '{fields['subject']}' to {joined}.", f"Reply sent to {joined} ({fields['timestamp']})."]  # fmt: skip
    return fields, sentences


def _post(r: random.Random) -> tuple[dict[str, Any], list[str]]:
    channel, text = r.choice(_CHANNELS), r.choice(_ECHO)
    fields = {"ok": True, "channel": channel, "ts": f"{r.randint(10**9, 2 * 10**9)}.{r.randint(100000, 999999)}",
              "message": {"text": text, "user": r.choice(FIRST).lower()}}  # fmt: skip
    sentences = [f"Message posted to #{channel}.", f"Posted in #{channel}: \"{text}\"", f"Sent to #{channel} at {_when(r)}.",
                 f"Direct message sent to {r.choice(FIRST)}: \"{text}\""]  # fmt: skip
    return fields, sentences


def _member(r: random.Random) -> tuple[dict[str, Any], list[str]]:
    who, channel = _email(r), r.choice(_CHANNELS)
    fields = {"ok": True, "channel": channel, "added": [who], "invited_by": r.choice(FIRST).lower()}
    sentences = [f"{who} was added to #{channel}.", f"Invitation sent to {who} for #{channel}.",
                 f"User {who} invited to the workspace and added to #{channel}.", f"{who} removed from #{channel}."]  # fmt: skip
    return fields, sentences


def _share(r: random.Random) -> tuple[dict[str, Any], list[str]]:
    who, name = _email(r), r.choice(_FILES)
    role = r.choice(["viewer", "editor", "commenter", "r", "rw"])
    fields = {
        "id": _ident(r, "f"),
        "filename": name,
        "shared_with": {who: role},
        "link": _url(r) if r.random() < 0.3 else None,
    }
    sentences = [f"{name} shared with {who} ({role}).", f"Access granted: {who} can now {r.choice(['view', 'edit', 'comment on'])} {name}.",
                 f"Sharing settings of {name} updated. {who}: {role}.", f"File {name} deleted.", f"Moved {name} to the trash."]  # fmt: skip
    return fields, sentences


def _event(r: random.Random) -> tuple[dict[str, Any], list[str]]:
    people = [_email(r) for _ in range(r.choice([0, 1, 2, 3]))]
    title = r.choice(
        ["Project kickoff", "1:1", "Dentist", "Design review", "Team lunch", "Flight to Lisbon", "Call with Rasmussen"]
    )
    verb = r.choice(["created", "updated", "declined", "accepted", "rescheduled", "cancelled"])
    fields = {"id": _ident(r, "ev"), "title": title, "start": _when(r), "status": verb, "participants": people}
    joined = ", ".join(people) or "no one else"
    sentences = [f"Event '{title}' {verb} for {fields['start']} with {joined}.", f"{title} {verb}.",
                 f"Invitations for '{title}' sent to {joined}.", f"You {verb} '{title}' ({fields['start']})."]  # fmt: skip
    return fields, sentences


def _booking(r: random.Random) -> tuple[dict[str, Any], list[str]]:
    place, code = (
        r.choice([*_PLACES, "flight LX 1622", "train ICE 577", "Trattoria Sole", "car rental (Compact)"]),
        _ident(r, "BK"),
    )
    fields = {"confirmation": code, "item": place, "from": _when(r), "status": "confirmed", "total": _amount(r)[2]}
    sentences = [f"Booking confirmed: {place}, confirmation number {code}.", f"Reservation {code} for {place} on {fields['from']} is confirmed.",
                 f"{place} booked for {fields['from']}. Total {fields['total']}, charged to the card on file.",
                 f"Your booking {code} has been cancelled; the refund of {fields['total']} will arrive in 5-7 days."]  # fmt: skip
    return fields, sentences


def _contact(r: random.Random) -> tuple[dict[str, Any], list[str]]:
    who = _person(r)
    phone = f"+{r.randint(1, 49)} {r.randint(100, 999)} {r.randint(100, 999)} {r.randint(1000, 9999)}"
    fields = {"contact": who, "phone": phone, "email": _email(r), "updated": True}
    sentences = [f"Contact {who} updated: phone {phone}.", f"Saved {who} ({fields['email']}) to your contacts.",
                 f"SMS delivered to {phone}.", f"Text message to {phone} sent."]  # fmt: skip
    return fields, sentences


def _order(r: random.Random) -> tuple[dict[str, Any], list[str]]:
    oid, total = _ident(r, "ORD"), _amount(r)[2]
    item = r.choice(["USB-C cable", "running shoes", "coffee beans 1 kg", "desk lamp", "phone case", "printer ink"])
    fields = {"order_id": oid, "items": [{"name": item, "qty": r.randint(1, 3)}], "total": total, "status": "placed"}
    sentences = [f"Order {oid} placed: {item}, total {total}.", f"Added {item} to your cart.", f"Order {oid} cancelled.",
                 f"Return {oid} registered; print the label from your account."]  # fmt: skip
    return fields, sentences


def _account(r: random.Random) -> tuple[dict[str, Any], list[str]]:
    what = r.choice(["password", "e-mail address", "phone number", "delivery address", "two-step verification"])
    fields = {"setting": what, "changed": True, "at": _when(r)}
    sentences = [f"Your {what} was updated.", f"{what.capitalize()} changed successfully at {fields['at']}.",
                 f"Settings saved: {what}."]  # fmt: skip
    return fields, sentences


def _ticket(r: random.Random) -> tuple[dict[str, Any], list[str]]:
    tid = _ident(r, "TCK")
    fields = {"ticket": tid, "status": r.choice(["open", "closed", "assigned"]), "assignee": r.choice(FIRST).lower(),
              "title": r.choice(["Login fails on Safari", "Refund request", "Printer on 3rd floor", "VPN drops"])}  # fmt: skip
    sentences = [
        f"Ticket {tid} created and assigned to {fields['assignee']}.",
        f"Comment added to {tid}.",
        f"{tid} closed.",
    ]
    return fields, sentences


def _deleted(r: random.Random) -> tuple[dict[str, Any], list[str]]:
    what = r.choice(["Email", "Event", "File", "Message", "Draft", "Reminder"])
    ident = _ident(r, what[:2].upper())
    fields = {"deleted": True, "id": ident, "type": what.lower()}
    sentences = [
        f"{what} {ident} deleted.",
        f"{what} with id {ident} was moved to the trash.",
        f"Deleted {what.lower()} {ident}.",
    ]
    return fields, sentences


_KINDS: list[Kind] = [_payment, _payment, _payment, _standing, _mail, _mail, _post, _member, _share, _event, _booking,
                      _contact, _order, _account, _ticket, _deleted]  # fmt: skip


def _render(r: random.Random, fields: dict[str, Any], sentences: list[str], note: str | None) -> str:
    body = {k: v for k, v in fields.items() if v is not None}
    if note is not None:
        body[r.choice(["message", "note", "detail", "info", "status_detail"])] = note
    pick = r.random()
    if pick < 0.4:  # a sentence, perhaps with what else the service says
        text = r.choice(sentences)
        if r.random() < 0.3:
            text += " " + " ".join(_sentences(r, 1))
        if note is not None:
            text += r.choice([" ", "\n", "\n\n"]) + note
        return text
    if pick < 0.6:
        return json.dumps(body, ensure_ascii=r.random() < 0.3, indent=r.choice([None, None, 2]))
    if pick < 0.75:
        if r.random() < 0.5:
            body["message"] = r.choice(sentences) if note is None else body.get("message", r.choice(sentences))
        return repr(body)
    if pick < 0.9:
        return str(yaml.safe_dump(body, sort_keys=False, allow_unicode=True))
    status = r.choice(["200 OK", "201 Created", "202 Accepted"])
    return f"HTTP/1.1 {status}\n{json.dumps(body)}"


def _passage(r: random.Random) -> str:
    if r.random() < 0.5:
        return injection(r, r.choice(["json", "email", "chat", "web"]))
    return goal_passage(r, True)


def receipt(r: random.Random, inject: bool) -> Doc | None:
    """One tool answer after a change, with an injected passage where ``inject``; None when the span is not found."""
    fields, sentences = r.choice(_KINDS)(r)
    passage = _passage(r) if inject else None
    text = _render(r, fields, sentences, passage)
    if passage is None:
        return {"text": text, "spans": [], "carrier": "receipt", "source": "composed-receipts"}
    span = find_span(text, passage)
    if span is None:
        return None
    return {"text": text, "spans": [span], "carrier": "receipt", "source": "composed-receipts"}


def receipts(n: int, seed: int = 0, injected_share: float = 0.5) -> Iterator[Doc]:
    """``n`` receipts, about ``injected_share`` of them injected; deterministic for a seed."""
    yield from drawn(random.Random(f"receipts-{seed}"), n, injected_share, receipt)
