"""Text about AI, not to it: counterfactuals for a sixth round (tried, not shipped: see the detector's card).

A blind set (G of ``tests/data/everyday_outputs.jsonl``) found the shipped detector removing a web article that
speaks *about* assistants ("AI assistants are changing how we book travel. In our survey, 41% of readers let an
assistant compare prices ...", 0.999). Tool outputs talk about AI all the time: news and surveys, product pages and
help articles ("ask your assistant to ...", "the bot never pays without your confirmation"), company policies on
chatbots, reviews of a hotel's chatbot, articles on prompt injection itself. Here such texts are composed in prose
and in records (an article list, search results, reviews, a help page), and half of them also carry a passage
addressed to the AI that reads them (composed as in :mod:`overseer.lab.detector.compose` and
:mod:`overseer.lab.detector.goals`): the addressee, not the topic, carries the label. Nothing here comes from any
evaluation suite.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator

import yaml

from overseer.lab.detector.compose import FIRST, Doc, injection
from overseer.lab.detector.goals import _passage as goal_passage
from overseer.lab.detector.records import find_span

__all__ = ["about_ai"]

_AI = ["AI assistants", "chatbots", "AI agents", "voice assistants", "large language models", "assistants",
       "AI copilots", "automated agents", "the new assistant", "our chatbot", "the AI model", "booking bots"]  # fmt: skip
_TASKS = ["compare prices", "book tables", "summarise their e-mails", "pay bills", "plan trips", "write cover letters",
          "answer customer questions", "sort their inbox", "schedule meetings", "draft replies", "order groceries",
          "translate menus", "track parcels", "fill in forms", "check flight status"]  # fmt: skip
_ORGS = ["a university lab", "Northwind Research", "the consumer office", "a Stanford team", "Contoso Labs",
         "the city council", "an industry group", "Fabrikam", "the data protection authority"]  # fmt: skip
_SENTENCES = [
    "{pct}% of readers now let {ai} {task}, but only {pct2}% let them pay.",
    "In our survey, {pct}% of {group} said they use {ai} to {task}.",
    "Researchers at {org} found that {ai} {finding}.",
    "{AI} are changing how we {task}.",
    "The new release of {ai} can {task} and {task2}.",
    "Tip: ask your assistant to {task} before you confirm anything.",
    "You can tell the bot to {task} by typing /{cmd} in the chat.",
    "Our assistant can {task} for you. To turn it on, open Settings and choose Assistant.",
    "The assistant will never {risky} without your confirmation.",
    "Employees must not paste customer data into {ai}.",
    "AI-generated summaries may contain mistakes; always check the original message.",
    "The hotel's chatbot booked the wrong date for me, so call the front desk instead.",
    "Their AI assistant answered my question within seconds and was polite.",
    "Agents that read e-mails can be tricked by hidden instructions, a problem known as prompt injection.",
    "Security teams warn that {ai} should not be given access to bank accounts.",
    "{first} asked the chatbot to {task} and it worked surprisingly well.",
    "If the assistant gets something wrong, press the thumbs-down button and tell us what happened.",
    "Models like these are trained on public text and can repeat its errors.",
    "Do you trust {ai} to {task}? Vote in our poll below.",
    "Always check the final price before you confirm a booking an assistant prepared.",
    "The support bot can reset your password, but it will ask you to confirm by SMS first.",
    "Critics say {ai} make it too easy to {task} without reading the details.",
    "Ask the assistant: 'What's on my calendar tomorrow?' and it reads your day to you.",
    "Our policy: the AI drafts, a person approves.",
]  # fmt: skip
_FINDINGS = ["follow instructions hidden in web pages", "make fewer mistakes when they explain their steps",
             "save users about an hour a week", "still struggle with dates and time zones",
             "sometimes invent sources", "work best when users check their output"]  # fmt: skip
_RISKY = ["send money", "delete files", "share your data", "book anything", "change your password"]
_HEADLINES = ["How AI is changing travel", "Should you let a bot pay your bills?", "The quiet rise of AI agents",
              "5 things your assistant can do", "Prompt injection, explained", "Chatbots at work: a survey",
              "Our new assistant is here", "AI and your privacy"]  # fmt: skip


def _sentence(r: random.Random) -> str:
    ai = r.choice(_AI)
    pct = r.randint(5, 80)
    return r.choice(_SENTENCES).format(
        ai=ai, AI=ai[0].upper() + ai[1:], task=r.choice(_TASKS), task2=r.choice(_TASKS), pct=pct,
        pct2=r.randint(1, pct), group=r.choice(["readers", "travellers", "small businesses", "students", "parents"]),
        org=r.choice(_ORGS), finding=r.choice(_FINDINGS), cmd=r.choice(["book", "summary", "track", "help"]),
        risky=r.choice(_RISKY), first=r.choice(FIRST),
    )  # fmt: skip


def _render(r: random.Random, sentences: list[str], passage: str | None) -> str:
    """Prose (an article, a newsletter, a help page) or records (articles, results, reviews), with the passage."""
    if passage is not None:
        sentences.insert(r.randint(0, len(sentences)), passage)
    pick = r.random()
    if pick < 0.5:
        head = r.choice(["", f"# {r.choice(_HEADLINES)}\n\n", f"{r.choice(_HEADLINES)}\n", "Newsletter\n\n"])
        sep = r.choice([" ", " ", "\n", "\n\n"])
        return head + sep.join(sentences)
    kind = r.choice(["articles", "results", "reviews"])
    if kind == "articles":
        obj: object = {"articles": [{"headline": r.choice(_HEADLINES), "summary": s} for s in sentences]}
    elif kind == "results":
        obj = {"results": [{"title": r.choice(_HEADLINES), "snippet": s} for s in sentences]}
    else:
        obj = [{"author": r.choice(FIRST), "rating": r.randint(1, 5), "text": s} for s in sentences]
    form = r.random()
    if form < 0.5:
        return str(yaml.safe_dump(obj, sort_keys=False, allow_unicode=True))
    if form < 0.8:
        return json.dumps(obj, indent=r.choice([2, None]), ensure_ascii=False)
    return repr(obj)


def about_ai(n: int, seed: int = 0, injected_share: float = 0.5) -> Iterator[Doc]:
    """``n`` texts about AI, about ``injected_share`` of them with a passage addressed to the AI reading them."""
    r = random.Random(f"about-ai-{seed}")
    made = 0
    while made < n:
        sentences = [_sentence(r) for _ in range(r.randint(2, 6))]
        passage = None
        if r.random() < injected_share:
            passage = goal_passage(r, True) if r.random() < 0.5 else injection(r, r.choice(["web", "email", "review"]))
        text = _render(r, sentences, passage)
        spans: list[list[int]] = []
        if passage is not None:
            span = find_span(text, passage)
            if span is None:
                continue
            spans = [span]
        made += 1
        yield {"text": text, "spans": spans, "carrier": "about-ai", "source": "composed-about-ai"}
