"""Requests, reminders, advice and steps between people, composed from factors: the third round's hard negatives.

After the second round (:mod:`overseer.lab.detector.notices`) the detector still fired on ordinary text in which
one person asks another to do something: a colleague's "make sure to prioritise the urgent items", a reminder in a
team chat, a review that says what to order and what to skip, the numbered steps of a help article, the action
items of meeting notes. None of it addresses an AI; all of it is what an assistant reads all day.

A document is built from independent factors: a **carrier** (team chat, e-mail between colleagues, meeting notes,
review, help article, to-do list, calendar description), **speakers**, **how the request is put** (can you, please,
don't forget to, make sure to, you must, whoever..., @channel, let's), **the task** (a human errand or work task with
generated names, places, files and amounts), **when** (by Friday, today, asap), and for reviews and articles
**advice** and **steps**. Half of the documents also carry an injection from
:func:`overseer.lab.detector.compose.injection` at a random line. Nothing here comes from any evaluation suite.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator

from overseer.lab.detector.compose import (
    CHANNELS,
    CITIES,
    FILES,
    FIRST,
    PRODUCTS,
    Doc,
    _date,
    _email,
    _money,
    _name,
    place,
    span_in_json,
)
from overseer.lab.detector.compose import injection as _injection

__all__ = ["CARRIERS", "request", "requests"]

_ASK = ["can you {t}?", "could you {t}?", "please {t}.", "don't forget to {t}!", "make sure to {t}.",
        "remember to {t}.", "you must {t}.", "you need to {t} {when}.", "I need you to {t}.", "let's {t} {when}.",
        "it'd be great if you could {t}.", "whoever is free, please {t}.", "someone please {t}.",
        "reminder to all: {t} {when}.", "quick favour: {t}?", "please prioritise this: {t}.", "urgent: {t} {when}!",
        "{T} {when}, thanks!", "would you mind if you {t}?", "the plan is to {t} {when}.", "we should {t}.",
        "could somebody {t} {when}?", "when you get a chance, {t}.", "priority for today: {t}."]  # fmt: skip
_TASKS = [
    "send the slides to {name}", "share the doc with the team", "book a table for {n} at the Italian place",
    "call the plumber about the leak", "invite {name} to the kick-off", "forward the invoice to accounting",
    "pay the deposit of {money}", "water the plants on the balcony", "update the tracker with your numbers",
    "review PR #{n} before the release", "back up your laptop", "renew your passport", "pick up the kids at 5",
    "buy milk and eggs", "double-check the figures in {file}", "sign the form and scan it", "reply to the client",
    "move our 1:1 to {day}", "cancel the duplicate order", "order lunch for the workshop", "print the boarding passes",
    "reset the office router", "post the photos in #{channel}", "upload the report to the shared drive",
    "approve the timesheets", "clean out the fridge", "prioritise the items marked urgent in the tracker",
    "share this with the rest of the team", "add {name} to the mailing list", "send me the address of the venue",
    "email {mail} the signed contract", "transfer your share of the rent ({money}) to me", "confirm the booking in {city}",
    "check the inventory of {product}", "switch on the coffee machine", "lock the door when you leave",
    "update your status to away", "send the minutes to everyone", "delete the old drafts from the folder",
    "schedule the dentist for {day}", "fill in the survey", "bring your laptop charger", "archive last year's tickets",
    "change the Wi-Fi password and tell everyone", "get the keys from {name}", "text me when you land",
]  # fmt: skip
_WHEN = ["by Friday", "today", "asap", "before the meeting", "by end of day", "tomorrow morning", "this week",
         "before {day}", "", ""]  # fmt: skip
_DISHES = ["catch of the day", "tiramisu", "risotto", "burger", "ramen", "house wine", "pancakes", "curry", "tapas"]
_ADVICE = ["Order the {dish}.", "Skip the {dish}, it was dry.", "Ask for a room on a high floor.",
           "Avoid the rooms facing the street.", "Book at least a week ahead.", "Bring cash, the card machine is often down.",
           "Don't expect much from the Wi-Fi.", "Try the {dish}, you won't regret it.", "Make sure to visit the old town.",
           "Go early to avoid the queue.", "Ask the staff for the city map.", "Do not park in the front lot.",
           "Tip: take the train, not a taxi.", "If you have kids, ask for the family room.", "Read the fine print first."]  # fmt: skip
_STEPS = ["Go to Settings > {a} > {b}.", "Click {button} and wait for the confirmation.", "Enter your e-mail address and password.",
          "Select {option} and press Save.", "Restart the app.", "Confirm the change by e-mail.", "Clear the cache and reload the page.",
          "Run `{cmd}`.", "Copy {file} to the backup folder.", "Unplug the device and plug it back in.",
          "Open the link in the e-mail we sent you.", "Delete the old version before installing.", "Sign out and sign in again.",
          "Choose Cancel subscription and confirm.", "Type the code from the text message.", "Share the folder with your team."]  # fmt: skip
CARRIERS = ("chat", "email", "notes", "review", "article", "todo", "calendar")


def _vals(r: random.Random) -> dict[str, str]:
    return {
        "name": _name(r), "n": str(r.randint(2, 40)), "money": _money(r), "file": r.choice(FILES), "day": _date(r),
        "channel": r.choice(CHANNELS), "mail": _email(r), "city": r.choice(CITIES), "product": r.choice(PRODUCTS),
        "dish": r.choice(_DISHES), "a": r.choice(["Account", "Privacy", "Network", "Billing", "Notifications"]),
        "b": r.choice(["Security", "Devices", "Plans", "Advanced", "Sharing"]), "button": r.choice(["Next", "Apply", "Continue"]),
        "option": r.choice(["Automatic", "Weekly", "Everyone", "Only me"]),
        "cmd": r.choice(["npm install", "make build", "pip install -e .", "git pull --rebase", "docker compose up"]),
    }  # fmt: skip


def _ask(r: random.Random, v: dict[str, str]) -> str:
    task = r.choice(_TASKS).format(**v)
    when = r.choice(_WHEN).format(**v)
    text = r.choice(_ASK).format(t=task, T=task[0].upper() + task[1:], when=when).replace(" .", ".").replace(" !", "!")
    return text.replace("  ", " ").replace(" ,", ",").replace(" ?", "?")


def _lines(r: random.Random, kind: str, v: dict[str, str]) -> tuple[list[str], str, str]:
    """The carrier's lines, its head and the separator."""
    people = [r.choice(FIRST).lower() for _ in range(3)]
    if kind == "chat":
        lines = []
        for _ in range(r.randint(2, 6)):
            who = r.choice(people)
            said = _ask(r, v) if r.random() < 0.6 else r.choice(["ok", "sure, on it", "thanks!", "haha", "done", "👍",
                                                                 "will do", "see you there", "lunch at 12?"])  # fmt: skip
            prefix = r.choice(["", "", "@channel ", f"@{r.choice(people)} ", "everyone: "])
            lines.append(f"{who}: {prefix}{said[0].upper() + said[1:] if r.random() < 0.5 else said}")
        return lines, f"#{r.choice(CHANNELS)}\n" if r.random() < 0.6 else "", "\n"
    if kind == "email":
        asks = [_ask(r, v) for _ in range(r.randint(1, 3))]
        lines = [r.choice(["Hi {f},", "Hey {f},", "Dear {f},", "Hi all,", "Team,"]).format(f=r.choice(FIRST))]
        lines += [a[0].upper() + a[1:] for a in asks]
        lines.append(r.choice(["Thanks!", "Cheers,", "Best,", "Thanks a lot,"]) + f" {r.choice(FIRST)}")
        head = f"From: {_email(r)}\nTo: {_email(r)}\nSubject: {r.choice(['quick one', 'Re: plan', 'todo', 'reminder', 'FYI'])}\n\n"
        return lines, head, "\n"
    if kind == "notes":
        lines = [f"Meeting notes {v['day']}", "Decisions: " + r.choice(["ship on Friday", "hire two people", "move the offsite"]),
                 "Action items:"]  # fmt: skip
        for _ in range(r.randint(2, 5)):
            task = r.choice(_TASKS).format(**v)
            lines.append(r.choice([f"- {r.choice(FIRST)} to {task}", f"- {r.choice(FIRST)}: {task}", f"- Everyone: {task}",
                                   f"- [ ] {task}"]))  # fmt: skip
        return lines, "", "\n"
    if kind == "review":
        lines = [r.choice(["Great place.", "Decent stay.", "Mixed feelings.", "Loved it!", "Not bad for the price."])]
        lines += [r.choice(_ADVICE).format(**v) for _ in range(r.randint(1, 4))]
        return lines, f"{'★' * r.randint(1, 5)} {_name(r)}: ", " "
    if kind == "article":
        title = r.choice(["How to change your plan", "Set up two-step sign-in", "Fix sync problems", "Install the app"])
        steps = [r.choice(_STEPS).format(**v) for _ in range(r.randint(2, 6))]
        return [f"{i + 1}. {s}" if r.random() < 0.7 else s for i, s in enumerate(steps)], f"{title}\n", "\n"
    if kind == "todo":
        return [f"- {r.choice(_TASKS).format(**v)}" for _ in range(r.randint(2, 7))], "TODO\n", "\n"
    # calendar description
    return [_ask(r, v) for _ in range(r.randint(1, 2))], "", " "


def request(r: random.Random, passage: str | None = None) -> tuple[str, list[list[int]], str]:
    """One document (carrier from ``CARRIERS``), ``passage`` put at a random line; text, spans, carrier."""
    kind = r.choice(CARRIERS)
    v = _vals(r)
    lines, head, sep = _lines(r, kind, v)
    slot = r.randint(0, len(lines)) if passage is not None else -1
    text, spans = place(head, lines, sep, passage, slot)
    if kind == "calendar":
        event = {"title": r.choice(["Team sync", "Dinner", "Planning", "Flat viewing", "Board meeting"]), "start": v["day"],
                 "description": text}  # fmt: skip
        body = json.dumps(event, ensure_ascii=False)
        if spans and passage is not None:
            spans = span_in_json(body, passage)
        text = body
    return text, spans, kind


def requests(n: int, seed: int = 0, injected_share: float = 0.5) -> Iterator[Doc]:
    """``n`` documents, about ``injected_share`` of them with an injected passage; deterministic for a seed."""
    r = random.Random(f"requests-{seed}")
    for _ in range(n):
        passage = _injection(r, r.choice(["chat", "email", "file", "review"])) if r.random() < injected_share else None
        text, spans, kind = request(r, passage)
        yield {"text": text, "spans": spans, "carrier": f"request-{kind}", "source": "composed-request"}
