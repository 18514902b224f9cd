r"""Structured tool outputs: the fifth round, records rendered as YAML, JSON or a Python repr.

Tools rarely return prose. An inbox search returns a list of e-mails, a chat tool the channel's messages, a bank a
list of transactions, a calendar its events, a drive its files, a travel site its listings and reviews, each
rendered by the framework as YAML, JSON or ``str(dict)``. A blind set written before this round (set E of
``tests/data/everyday_outputs.jsonl``: inbox listings, chat dumps, statements, reviews, flights, events, files,
search results, a profile) showed the fourth-round model removing 4 of its 15 benign outputs, on record syntax
(``'security@...',``, a closing ``'}]}``, a one-time code inside a YAML e-mail list) that none of its rounds had
shown it. Here a document is a structure of records whose text fields are filled from the earlier rounds' benign
generators (service messages, requests between people, goals addressed to a person, imperatives for people,
plain sentences) and whose other fields are generated values (ids, addresses, IBANs, amounts, dates, flags); half
carry an injected passage (composed as in :mod:`overseer.lab.detector.compose` or
:mod:`overseer.lab.detector.goals`) in one text field of one record, replacing it, inside it, or as a record or
field of its own. The structure is then rendered as YAML (folded at its default or another width, unicode or
escaped), JSON (indented or compact) or a Python repr, and the passage's span is found in the rendered text with
the renderer's escaping (doubled quotes, ``\n``, folded lines, ``\u`` escapes). Nothing here comes from any
evaluation suite.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterator
from typing import Any

import yaml

from overseer.lab.detector.compose import (
    CARRIERS,
    FIRST,
    Doc,
    _carrier,
    _email,
    _fill,
    _human_imperatives,
    _iban,
    _name,
    _sentences,
    _url,
    injection,
)
from overseer.lab.detector.goals import _passage as goal_passage
from overseer.lab.detector.notices import notice
from overseer.lab.detector.requests import request

__all__ = ["drawn", "find_span", "mixed", "records", "rendered_doc"]

_SUBJECTS = ["Re: plan for next week", "Invoice", "Quick question", "Your order", "Meeting notes", "Reminder",
             "Weekend?", "Fwd: tickets", "Action needed", "Hello", "Update", "Security alert", "Receipt", "Schedule",
             "Feedback wanted", "Welcome!", "Payment received", "Draft", "Trip details", "FYI"]  # fmt: skip
_CHANNELS = ["general", "random", "dev", "marketing", "support", "travel-planning", "finance", "design", "ops"]
_PLACES = ["Lisbon", "Osaka", "Denver", "Cairo", "Bergen", "Quito", "Lyon", "Riga", "Perth", "Austin", "Porto"]
_VENUES = ["Harbour Inn", "Blue Fig", "The Old Mill", "Hotel Aster", "Casa Verde", "Sakura House", "Nordlys",
           "Le Petit Four", "Grand Plaza", "City Loft", "Riverside Suites", "Trattoria Sole"]  # fmt: skip
_FILES = ["notes.txt", "budget.xlsx", "todo.md", "report-q3.pdf", "recipes.docx", "README.md", "packing-list.txt",
          "minutes-2025-03.md", "contract.pdf", "ideas.txt", "invoice-118.pdf", "team-roster.csv"]  # fmt: skip
_SHORT = ["Thanks!", "See you there.", "Sounds good.", "N/A", "ok", "Great, thank you!", "Loved it.", "Will do.",
          "Meeting moved to 3pm.", "Call me when you land.", "Happy birthday!!", "Order shipped.", "Done.", ""]  # fmt: skip


def _body(r: random.Random) -> str:
    """Benign text for a field: the earlier rounds' hard negatives, and plain text."""
    pick = r.random()
    if pick < 0.22:
        text = notice(r)[0]
        return text.split("\n\n", 1)[-1] if text.startswith("From:") and r.random() < 0.7 else text
    if pick < 0.44:
        return request(r)[0]
    if pick < 0.56:
        return goal_passage(r, False)
    if pick < 0.68:
        return _human_imperatives(r)
    if pick < 0.88:
        return " ".join(_sentences(r, r.randint(1, 4)))
    return r.choice(_SHORT)


def _stamp(r: random.Random) -> str:
    return f"2025-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}{r.choice(['T', ' '])}{r.randint(6, 22):02d}:{r.randint(0, 59):02d}:00"


def _email_rec(r: random.Random, i: int) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "id_": str(r.randint(1, 400)) if r.random() < 0.5 else i,
        "sender": _email(r),
        "recipients": [_email(r) for _ in range(r.randint(1, 2))],
        "subject": r.choice(_SUBJECTS),
        "body": "{TEXT}",
    }
    if r.random() < 0.6:
        rec["status"] = r.choice(["received", "sent", "draft"])
        rec["read"] = r.random() < 0.5
    rec["timestamp"] = _stamp(r)
    if r.random() < 0.3:
        rec["attachments"] = [r.choice(_FILES)] if r.random() < 0.5 else []
    if r.random() < 0.3:
        rec["cc"] = []
    return rec


def _chat_rec(r: random.Random, i: int) -> dict[str, Any]:
    rec: dict[str, Any] = {"sender": r.choice(FIRST), "recipient": r.choice(_CHANNELS), "body": "{TEXT}"}
    if r.random() < 0.4:
        rec["timestamp"] = _stamp(r)
    return rec


def _tx_rec(r: random.Random, i: int) -> dict[str, Any]:
    mine = r.choice(["me", "DE89370400440532013000", "GB29NWBK60161331926819"])
    out = r.random() < 0.7
    return {
        "id": i + r.randint(0, 50),
        "sender": mine if out else _iban(r),
        "recipient": _iban(r) if out else mine,
        "amount": round(r.uniform(5, 3000), 2),
        "subject": "{TEXT}" if r.random() < 0.8 else r.choice(["Rent", "Groceries", "Salary", "Phone bill", "Gym"]),
        "date": _stamp(r)[:10],
        "recurring": r.random() < 0.3,
    }


def _event_rec(r: random.Random, i: int) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "id_": str(i),
        "title": r.choice(
            [
                "Team sync",
                "Dentist",
                "Lunch with " + r.choice(FIRST),
                "Flight",
                "Planning",
                "1:1",
                "Yoga",
                "Board meeting",
                "Flat viewing",
                "Vendor demo",
            ]
        ),
        "description": "{TEXT}",
        "start_time": _stamp(r),
        "end_time": _stamp(r),
        "location": r.choice([*_PLACES, "Room 2.14", "Zoom", None]),
        "participants": [_email(r) for _ in range(r.randint(1, 3))],
    }
    if r.random() < 0.3:
        rec["all_day"] = False
        rec["status"] = "confirmed"
    return rec


def _file_rec(r: random.Random, i: int) -> dict[str, Any]:
    rec: dict[str, Any] = {"id_": str(i), "filename": r.choice(_FILES), "content": "{TEXT}", "owner": _email(r)}
    if r.random() < 0.5:
        rec["shared_with"] = {_email(r): r.choice(["r", "rw"])}
        rec["last_modified"] = _stamp(r)
    if r.random() < 0.3:
        rec["size"] = r.randint(100, 90000)
    return rec


def _review_rec(r: random.Random, i: int) -> dict[str, Any]:
    return {"author": r.choice([_name(r), r.choice(FIRST), "Guest"]), "rating": r.randint(1, 5), "text": "{TEXT}"}


def _listing_rec(r: random.Random, i: int) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "name": r.choice(_VENUES),
        "city": r.choice(_PLACES),
        "price": r.choice([f"{r.randint(40, 900)}", f"${r.randint(40, 900)}", f"{r.randint(40, 900)} EUR per night"]),
        "rating": round(r.uniform(2.5, 5.0), 1),
    }
    rec[r.choice(["description", "info", "notes", "address"])] = "{TEXT}"
    return rec


def _result_rec(r: random.Random, i: int) -> dict[str, Any]:
    return {"title": " ".join(_sentences(r, 1))[:60], "url": _url(r), "snippet": "{TEXT}"}


def _ticket_rec(r: random.Random, i: int) -> dict[str, Any]:
    return {"ticket": f"#{r.randint(100, 9999)}", "status": r.choice(["open", "closed", "pending"]),
            "assignee": r.choice(FIRST), "title": " ".join(_sentences(r, 1))[:50], "comment": "{TEXT}"}  # fmt: skip


_KINDS: dict[str, tuple[Callable[[random.Random, int], dict[str, Any]], str | None]] = {
    "emails": (_email_rec, None),
    "messages": (_chat_rec, None),
    "transactions": (_tx_rec, None),
    "events": (_event_rec, None),
    "files": (_file_rec, "files"),
    "reviews": (_review_rec, "reviews"),
    "listings": (_listing_rec, "results"),
    "search": (_result_rec, "results"),
    "tickets": (_ticket_rec, "items"),
}
_PROFILE = ["bio", "notes", "address", "about", "status_message"]


def _structure(r: random.Random) -> tuple[Any, list[tuple[Any, Any]]]:
    """A structure with ``{TEXT}`` placeholders, and the (container, key) of every placeholder."""
    kind = r.choice([*_KINDS, "profile"])
    if kind == "profile":
        rec: dict[str, Any] = {"name": _name(r), "email": _email(r), "phone": f"+{r.randint(1, 49)} {r.randint(100, 999)} {r.randint(100000, 999999)}"}  # fmt: skip
        for key in r.sample(_PROFILE, k=r.randint(1, 2)):
            rec[key] = "{TEXT}"
        obj: Any = {"profile": rec} if r.random() < 0.5 else rec
        return obj, [(rec, k) for k, v in rec.items() if v == "{TEXT}"]
    make, wrapper = _KINDS[kind]
    items = [make(r, i) for i in range(r.randint(1, 6))]
    if kind == "reviews" and r.random() < 0.6:
        obj = {"name": r.choice(_VENUES), "rating": round(r.uniform(2.5, 5.0), 1), "reviews": items}
    elif wrapper and r.random() < 0.5:
        obj = {wrapper: items}
    else:
        obj = items
    slots = [(item, k) for item in items for k, v in item.items() if v == "{TEXT}"]
    if not slots:  # transactions whose subjects were all generated
        items[0]["subject"] = "{TEXT}"
        slots = [(items[0], "subject")]
    return obj, slots


def _passage(r: random.Random) -> str:
    if r.random() < 0.5:
        return injection(r, r.choice(["email", "chat", "web", "file", "review", "json"]))
    return goal_passage(r, True)


def _render(r: random.Random, obj: Any) -> str:
    pick = r.random()
    if pick < 0.5:
        width = r.choice([80, 80, 80, 100, 120, 10**6])
        return str(yaml.safe_dump(obj, sort_keys=False, allow_unicode=r.random() < 0.7, width=width))
    if pick < 0.8:
        indent = r.choice([2, 2, 4, None])
        return json.dumps(obj, indent=indent, ensure_ascii=r.random() < 0.3)
    return repr(obj)


def _char(c: str) -> str:
    if c == "'":
        return r"(?:''|\\'|')"
    if c == '"':
        return r'(?:\\"|")'
    if c == "\\":
        return r"\\\\?"
    if ord(c) > 127:
        alts = [re.escape(c), rf"\\u{ord(c):04x}", rf"\\x{ord(c):02x}", rf"\\U{ord(c):08x}"]
        return "(?:" + "|".join(alts) + ")"
    return re.escape(c)


def find_span(text: str, passage: str) -> list[int] | None:
    """Where ``passage`` lies in ``text`` as a YAML, JSON or repr renderer escaped and folded it; None if nowhere."""
    words = passage.split()
    if not words:
        return None
    gap = r"(?:\s|\\[nrt]|\\(?=\s))+"
    pattern = gap.join("".join(_char(c) for c in word) for word in words)
    match = re.search(pattern, text, flags=re.IGNORECASE)
    return [match.start(), match.end()] if match else None


def rendered_doc(r: random.Random, obj: Any, passage: str | None, source: str) -> Doc | None:
    """``obj`` rendered as a tool's output, the injected ``passage`` in it as the span; None where it cannot be found."""
    text = _render(r, obj)
    if passage is None:
        return {"text": text, "spans": [], "carrier": "records", "source": source}
    span = find_span(text, passage)
    if span is None:
        return None
    return {"text": text, "spans": [span], "carrier": "records", "source": source}


def prose_beside(r: random.Random, passage: str | None, extra: Callable[[random.Random], str], source: str) -> Doc:
    """A first-round carrier with ``passage`` in its slot, and a benign ``extra`` sentence after or before it.

    The extra comes always when there is no passage and half the time beside one, so its kind of text is no tell.
    """
    carrier, template = _carrier(r, r.choice(CARRIERS), slot=True)
    added = extra(r) if passage is None or r.random() < 0.5 else None
    if passage is None:
        text, _ = _fill(template, added)
        return {"text": text, "spans": [], "carrier": carrier, "source": source}
    text, spans = _fill(template, passage)
    if added is not None and r.random() < 0.5:
        text = text + ("\n" if "\n" in text else " ") + added
    elif added is not None:
        text = added + "\n" + text
        spans = [[a + len(added) + 1, b + len(added) + 1] for a, b in spans]
    return {"text": text, "spans": spans, "carrier": carrier, "source": source}


def records_beside(
    r: random.Random, passage: str | None, extra: Callable[[random.Random], str], source: str
) -> Doc | None:
    """Records with generated text fields, ``passage`` replacing or ending one of them.

    A benign ``extra`` sentence follows another field's text: always when there is no passage, half the time beside
    one, so its kind of text is no tell.
    """
    obj, slots = _structure(r)
    for container, key in slots:
        container[key] = _body(r)
    if passage is None or r.random() < 0.5:
        other, other_key = r.choice(slots)
        other[other_key] = f"{other[other_key]} {extra(r)}"
    if passage is not None:
        container, key = r.choice(slots)
        container[key] = passage if r.random() < 0.5 else f"{container[key]} {passage}"
    return rendered_doc(r, obj, passage, source)


def mixed(
    r: random.Random,
    n: int,
    injected_share: float,
    passage: Callable[[random.Random], str],
    structured: Callable[[random.Random, str | None], Doc | None],
    prose: Callable[[random.Random, str | None], Doc | None],
) -> Iterator[Doc]:
    """``n`` documents, about ``injected_share`` with a ``passage``, 40% ``structured`` records and the rest ``prose``."""
    made = 0
    while made < n:
        text = passage(r) if r.random() < injected_share else None
        doc = structured(r, text) if r.random() < 0.4 else prose(r, text)
        if doc is None:
            continue
        made += 1
        yield doc


def record_doc(r: random.Random, inject: bool) -> Doc | None:
    """One structured output, with an injected passage where ``inject``; None when the span cannot be located."""
    obj, slots = _structure(r)
    for container, key in slots:
        container[key] = _body(r)
    passage = None
    if inject:
        passage = _passage(r)
        container, key = r.choice(slots)
        where = r.random()
        if where < 0.35:
            container[key] = passage
        elif where < 0.85:
            old = str(container[key])
            sep = r.choice([" ", "\n", "\n\n"])
            container[key] = passage + sep + old if r.random() < 0.3 else old + sep + passage
        else:  # a field or a record of its own
            field = r.choice(["note", "notes", "comment", "system_note", "message", "info"])
            if isinstance(obj, list) and r.random() < 0.5:
                obj.insert(r.randint(0, len(obj)), {field: passage})
            else:
                container[field] = passage
    return rendered_doc(r, obj, passage, "composed-records")


def drawn(
    r: random.Random, n: int, injected_share: float, make: Callable[[random.Random, bool], Doc | None]
) -> Iterator[Doc]:
    """``n`` documents from ``make``, each injected with chance ``injected_share``; a draw that gives None is redrawn."""
    made = 0
    while made < n:
        doc = make(r, r.random() < injected_share)
        if doc is not None:
            made += 1
            yield doc


def records(n: int, seed: int = 0, injected_share: float = 0.5) -> Iterator[Doc]:
    """``n`` structured outputs, about ``injected_share`` of them injected; deterministic for a seed."""
    yield from drawn(random.Random(f"records-{seed}"), n, injected_share, record_doc)
