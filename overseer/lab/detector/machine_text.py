"""What software prints for people, forwarded mail, and example prompts: a fourteenth round's hard negatives.

The tenth session's blind sets found the shipped detector removing benign outputs that hold no request to the
agent, each scored 0.0001 to 0.0004: git's own ``remote: Create a pull request for 'feature/login' on GitHub by
visiting: https://...`` after a push, a forwarded message's header (``---------- Forwarded message --------- From:
...``), a newsletter's "try telling your assistant: 'book me a table ...'" and a note to self "Prep AI assistant
demo - send deck to ...". A probe of 16 common outputs found docker's "What's next: ... -> docker scout quickview"
too. None of the earlier rounds had shown the model what command-line tools and servers print (hints, notices,
next steps, all of them imperatives for the person at the terminal), what mail clients put around a forwarded or
quoted message, or example prompts that a person is told to say to an assistant.

Here they are the carriers: command-line sessions (git and its servers' ``remote:`` lines, package managers,
containers, infrastructure tools, deploy tools), forwarded and quoted mail (Gmail, Outlook, Apple Mail, reply
quoting) around the earlier rounds' benign bodies, how-to texts and newsletters with example prompts, and notes to
self that mention AI; rendered as they print or inside a shell tool's or a mail tool's JSON. Half carry an injected
passage (composed as in :mod:`overseer.lab.detector.compose`, :mod:`overseer.lab.detector.goals` and
:mod:`overseer.lab.detector.roles`, or addressed to whoever reads the text for someone else) in the places an
attacker controls: a server's message, a commit or a README printed by the command, the forwarded body, the
newsletter's text. The carrier is then no tell; the addressee is. Every phrase is written for this module from the
public behaviour of these tools; nothing comes from an evaluation suite, and no blind set's text is reproduced.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator

from overseer.lab.detector.compose import FIRST, Doc, _email, _name, goal, injection
from overseer.lab.detector.goals import _passage as goal_passage
from overseer.lab.detector.notices import notice
from overseer.lab.detector.records import find_span
from overseer.lab.detector.requests import request
from overseer.lab.detector.roles import injected_role

__all__ = ["machine_text"]

_ORGS = ["acme", "northwind", "kestrel-labs", "fabrikam", "octo-team", "riverbank", "tailspin", "contoso"]
_REPOS = ["web-app", "api", "infra", "docs", "mobile", "billing-service", "data-pipeline", "cli", "site"]
_BRANCHES = ["feature/login", "fix/typo", "main", "dev", "release/2.4", "feat/search-filters", "chore/deps",
             "bugfix/date-parsing", "hotfix/payment-timeout", "docs/readme"]  # fmt: skip
_PKGS = ["postgresql@16", "redis", "node", "python@3.12", "ffmpeg", "git-lfs", "nginx", "mysql", "rabbitmq"]
_CLIENTS = ["Kestrel", "Northwind", "the board", "Fabrikam", "the Lisbon team", "Contoso", "our investors"]
_EXAMPLES = ["book me a table for two at {venue} on Friday at 7", "send {first} the slides from today's meeting",
             "pay my electricity bill", "summarise my unread e-mails", "what's on my calendar tomorrow?",
             "remind me to call {first} at 5", "find a hotel in {city} under 150 a night",
             "move my 3pm to Thursday", "order more coffee filters", "text {first} that I'm running late",
             "share the packing list with {first}", "cancel my gym class on Monday",
             "transfer 50 to {first} for the concert tickets", "draft a reply saying yes to the invite"]  # fmt: skip
_VENUES = ["Trattoria Sole", "the Blue Fig", "Casa Verde", "Nordlys", "Le Petit Four", "Sakura House"]
_CITIES = ["Lisbon", "Osaka", "Denver", "Bergen", "Lyon", "Porto", "Riga"]
_DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def _repo(r: random.Random) -> tuple[str, str]:
    return r.choice(_ORGS), r.choice(_REPOS)


def _sha(r: random.Random, n: int = 7) -> str:
    return "".join(r.choice("0123456789abcdef") for _ in range(n))


def _when(r: random.Random) -> str:
    return (
        f"{r.choice(_DAYS)}, {r.randint(1, 28)} {r.choice(_MONTHS)} 2026 at {r.randint(7, 19)}:{r.randint(0, 59):02d}"
    )


def _example(r: random.Random) -> str:
    return r.choice(_EXAMPLES).format(venue=r.choice(_VENUES), first=r.choice(FIRST), city=r.choice(_CITIES))


# --- command-line sessions: lines a tool or its server prints, and where a passage can sit among them --------


def _git_push(r: random.Random) -> list[str]:
    org, repo = _repo(r)
    branch = r.choice(_BRANCHES)
    n = r.randint(3, 40)
    host = r.choice(["github.com", "gitlab.com", "bitbucket.org", "git.internal.example"])
    lines = [
        f"Enumerating objects: {n}, done.",
        f"Counting objects: 100% ({n}/{n}), done.",
        f"Delta compression using up to {r.choice([4, 8, 12, 16])} threads",
        f"Writing objects: 100% ({n - 1}/{n - 1}), {r.randint(1, 900)}.{r.randint(0, 99)} KiB | {r.randint(1, 9)}.00 MiB/s, done.",
        f"Total {n - 1} (delta {r.randint(0, n - 1)}), reused 0 (delta 0), pack-reused 0",
    ]  # fmt: skip
    if host == "github.com":
        remote = r.choice([
            ["remote: ", f"remote: Create a pull request for '{branch}' on GitHub by visiting:",
             f"remote:      https://github.com/{org}/{repo}/pull/new/{branch}", "remote: "],
            [f"remote: Resolving deltas: 100% ({n - 2}/{n - 2}), completed with {r.randint(1, 9)} local objects."],
            ["remote: ", f"remote: GitHub found {r.randint(1, 12)} vulnerabilities on {org}/{repo}'s default branch "
             f"({r.randint(1, 3)} high, {r.randint(1, 9)} moderate). To find out more, visit:",
             f"remote:      https://github.com/{org}/{repo}/security/dependabot", "remote: "],
            ["remote: warning: File assets/video.mp4 is 62.00 MB; this is larger than GitHub's recommended maximum "
             "file size of 50.00 MB", "remote: warning: GH001: Large files detected. You may want to try Git Large "
             "File Storage - https://git-lfs.github.com."],
        ])  # fmt: skip
    elif host == "gitlab.com":
        remote = ["remote: ", f"remote: To create a merge request for {branch}, visit:",
                  f"remote:   https://gitlab.com/{org}/{repo}/-/merge_requests/new?merge_request%5Bsource_branch%5D="
                  f"{branch.replace('/', '%2F')}", "remote: "]  # fmt: skip
    elif host == "bitbucket.org":
        remote = [
            "remote: ",
            f"remote: Create pull request for {branch}:",
            f"remote:   https://bitbucket.org/{org}/{repo}/pull-requests/new?source={branch}&t=1",
            "remote: ",
        ]
    else:
        remote = [
            f"remote: Checking connectivity: {n - 1}, done.",
            "remote: Please remember to update the changelog before you tag a release.",
            f"remote: CI pipeline started: https://{host}/{org}/{repo}/pipelines/{r.randint(1000, 9999)}",
        ]
    tail = [
        f"To {host}:{org}/{repo}.git",
        r.choice([f" * [new branch]      {branch} -> {branch}", f"   {_sha(r)}..{_sha(r)}  {branch} -> {branch}"]),
    ]
    if r.random() < 0.3:
        tail.append(f"branch '{branch}' set up to track 'origin/{branch}'.")
    return lines + remote + tail


def _git_hints(r: random.Random) -> list[str]:
    branch = r.choice(_BRANCHES)
    return r.choice([
        [f"On branch {branch}", "Changes not staged for commit:",
         '  (use "git add <file>..." to update what will be committed)',
         '  (use "git restore <file>..." to discard changes in working directory)',
         f"\tmodified:   {r.choice(['src/app.py', 'README.md', 'package.json', 'config/settings.yaml'])}", "",
         'no changes added to commit (use "git add" and/or "git commit -a")'],
        [f"To github.com:{'/'.join(_repo(r))}.git", f" ! [rejected]        {branch} -> {branch} (fetch first)",
         f"error: failed to push some refs to 'github.com:{'/'.join(_repo(r))}.git'",
         "hint: Updates were rejected because the remote contains work that you do not",
         "hint: have locally. This is usually caused by another repository pushing to",
         "hint: the same ref. If you want to integrate the remote changes, use",
         "hint: 'git pull' before pushing again.",
         "hint: See the 'Note about fast-forwards' in 'git push --help' for details."],
        ["hint: You have divergent branches and need to specify how to reconcile them.",
         "hint: You can do so by running one of the following commands sometime before",
         "hint: your next pull:", "hint:", "hint:   git config pull.rebase false  # merge",
         "hint:   git config pull.rebase true   # rebase", "hint:   git config pull.ff only       # fast-forward only",
         "fatal: Need to specify how to reconcile divergent branches."],
        [f"Switched to a new branch '{branch}'"],
        [f"commit {_sha(r, 40)}", f"Author: {_name(r)} <{_email(r)}>", f"Date:   {_when(r)}", "",
         f"    {r.choice(['Fix date parsing in the report', 'Bump dependencies', 'Add search filters', 'Update README'])}"],
    ])  # fmt: skip


def _packages(r: random.Random) -> list[str]:
    pkg = r.choice(_PKGS)
    v = f"{r.randint(8, 11)}.{r.randint(0, 9)}.{r.randint(0, 9)}"
    w = f"{r.randint(8, 11)}.{r.randint(0, 9)}.{r.randint(0, 9)}"
    return r.choice([
        [f"added {r.randint(10, 900)} packages, and audited {r.randint(900, 1500)} packages in {r.randint(2, 40)}s", "",
         f"{r.randint(20, 200)} packages are looking for funding", "  run `npm fund` for details", "",
         f"{r.randint(1, 9)} vulnerabilities ({r.randint(1, 5)} moderate, {r.randint(0, 3)} high)", "",
         "To address all issues, run:", "  npm audit fix", "", "Run `npm audit` for details."],
        [f"npm notice New minor version of npm available! {v} -> {w}",
         f"npm notice Changelog: https://github.com/npm/cli/releases/tag/v{w}",
         f"npm notice To update run: npm install -g npm@{w}"],
        [f"Successfully installed {r.choice(['requests-2.32.3', 'numpy-2.1.0', 'httpx-0.27.2', 'rich-13.9.1'])}", "",
         f"[notice] A new release of pip is available: {v} -> {w}",
         "[notice] To update, run: pip install --upgrade pip"],
        [f"==> Pouring {pkg}--{v}.arm64_sonoma.bottle.tar.gz", "==> Caveats",
         f"To start {pkg} now and restart at login:", f"  brew services start {pkg}",
         "Or, if you don't want/need a background service you can just run:", f"  {pkg.split('@')[0]} --foreground",
         "==> Summary", f"🍺  /opt/homebrew/Cellar/{pkg}/{v}: {r.randint(100, 4000)} files, {r.randint(5, 300)}MB"],
        ["Reading package lists... Done", "Building dependency tree... Done",
         f"{r.randint(2, 60)} packages can be upgraded. Run 'apt list --upgradable' to see them."],
        [f"Success! Created my-app at /home/{r.choice(FIRST).lower()}/projects/my-app",
         "Inside that directory, you can run several commands:", "", "  npm run dev", "    Starts the development server.",
         "", "We suggest that you begin by typing:", "", "  cd my-app", "  npm run dev"],
        ["warning: variable does not need to be mutable", " --> src/main.rs:14:9", "   |",
         "14 |     let mut total = 0;", "   |         ----^^^^^", "   |         |",
         "   |         help: remove this `mut`", "   |", "   = note: `#[warn(unused_mut)]` on by default"],
        ["pyproject.toml changed significantly since poetry.lock was last generated. Run `poetry lock` to fix the lock file."],
    ])  # fmt: skip


def _infra(r: random.Random) -> list[str]:
    org, repo = _repo(r)
    code = f"{r.randint(1000, 9999):04X}-{r.randint(1000, 9999):04X}"
    return r.choice([
        [f" => exporting to image {' ' * 20}0.{r.randint(1, 9)}s", f" => => naming to docker.io/{org}/{repo}:latest", "",
         "What's next:", "    View a summary of image vulnerabilities and recommendations → docker scout quickview"],
        [f"Error from server (BadRequest): container \"{repo}\" in pod \"{repo}-{_sha(r, 5)}\" is waiting to start: "
         "ContainerCreating",
         f"Use 'kubectl describe pod/{repo}-{_sha(r, 5)} -n {r.choice(['default', 'prod', 'staging'])}' to see all "
         "of the containers in this pod."],
        [f"Plan: {r.randint(1, 9)} to add, {r.randint(0, 3)} to change, {r.randint(0, 2)} to destroy.", "",
         "Note: You didn't use the -out option to save this plan, so Terraform can't guarantee to take exactly these "
         'actions if you run "terraform apply" now.'],
        [f"! First copy your one-time code: {code}", "Press Enter to open github.com in your browser...",
         "✓ Authentication complete.", f"✓ Logged in as {r.choice(FIRST).lower()}{r.randint(1, 99)}"],
        ["Successfully received certificate.", f"Certificate is saved at: /etc/letsencrypt/live/{repo}.example/fullchain.pem",
         "This certificate expires on 2027-02-23.",
         "Certbot has set up a scheduled task to automatically renew this certificate in the background.", "",
         "If you like Certbot, please consider supporting our work by:",
         " * Donating to ISRG / Let's Encrypt:   https://letsencrypt.org/donate"],
        [f"✅  Preview: https://{repo}-{_sha(r, 9)}-{org}.vercel.app [{r.randint(2, 59)}s]",
         "📝  To deploy to production (" + f"{repo}.example" + "), run `vercel --prod`"],
        ["Unable to locate credentials. You can configure credentials by running \"aws configure\"."],
        ["remote: -----> Build succeeded!", f"remote: -----> Launching... done, v{r.randint(2, 300)}",
         f"remote:        https://{repo}-{_sha(r, 6)}.herokuapp.com/ deployed to Heroku",
         "remote: Verifying deploy... done.", "Run 'heroku logs --tail' to see the app's output."],
        ["WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!", "Please contact your system administrator.",
         f"Add correct host key in /home/{r.choice(FIRST).lower()}/.ssh/known_hosts to get rid of this message."],
    ])  # fmt: skip


_SESSIONS: list[Callable[[random.Random], list[str]]] = [_git_push, _git_push, _git_hints, _packages, _infra, _infra]


def _session(r: random.Random, passage: str | None) -> str:
    """A command's output (one or two commands), the passage as a line of it where given."""
    lines: list[str] = []
    for _ in range(r.choice([1, 1, 2])):
        if lines and r.random() < 0.5:
            lines.append(f"$ {r.choice(['git push', 'npm install', 'docker build .', 'make deploy', 'git status'])}")
        lines.extend(r.choice(_SESSIONS)(r))
    if passage is not None:
        flat = " ".join(passage.split())
        where = r.randint(0, len(lines))
        prefix = "remote: " if any(line.startswith("remote:") for line in lines) and r.random() < 0.7 else ""
        if r.random() < 0.3:  # a commit's subject or a README's line that the command printed
            prefix = r.choice(["    ", "# ", "NOTE: ", "> ", ""])
        lines.insert(where, prefix + flat)
    text = "\n".join(lines)
    roll = r.random()
    if roll < 0.45:
        return text
    if roll < 0.9:
        return json.dumps(
            {"exit_code": r.choice([0, 0, 0, 1]), "stdout": text, "stderr": ""}, indent=r.choice([None, 2])
        )
    return json.dumps({"command": "git push -u origin HEAD", "output": text, "duration_ms": r.randint(200, 9000)})


# --- mail: forwarded and quoted messages around a body -----------------------------------------------------


def _body(r: random.Random) -> str:
    return r.choice([notice, request, request])(r)[0]


def _mail(r: random.Random, passage: str | None) -> str:
    sender, address, to = _name(r), _email(r), _email(r)
    subject = r.choice(["Invoice 2291", "Trip details", "Re: Q3 budget", "Your order has shipped", "Board prep",
                        "Lease renewal", "Offsite agenda", "Security alert", "Team dinner"])  # fmt: skip
    body = _body(r)
    quoting = r.random() < 0.3  # a reply quoting the original instead of forwarding it
    if passage is not None:
        lines = body.split("\n")
        lines.insert(r.randint(0, len(lines)), " ".join(passage.split()) if quoting else passage)
        body = "\n".join(lines)
    header = r.choice([
        f"---------- Forwarded message ---------\nFrom: {sender} <{address}>\nDate: {_when(r)}\nSubject: {subject}\nTo: <{to}>",
        f"-----Original Message-----\nFrom: {sender} <{address}>\nSent: {_when(r)}\nTo: {to}\nSubject: {subject}",
        f"Begin forwarded message:\n\nFrom: {sender} <{address}>\nSubject: {subject}\nDate: {_when(r)}\nTo: {to}",
        f"________________________________\nFrom: {sender} <{address}>\nSent: {_when(r)}\nTo: {to}\nSubject: {subject}",
    ])  # fmt: skip
    preface = r.choice(["FYI, see below.", "Can you take a look?", "Forwarding for visibility.", "", "See below - thoughts?",
                        f"Hi {r.choice(FIRST)}, sharing this so you have it.", "fyi"])  # fmt: skip
    if quoting:
        quoted = "\n".join("> " + line if line else ">" for line in body.split("\n"))
        text = f"{preface or 'Sounds good.'}\n\nOn {_when(r)}, {sender} <{address}> wrote:\n{quoted}"
    else:
        text = f"{preface}\n\n{header}\n\n{body}" if preface else f"{header}\n\n{body}"
    if r.random() < 0.4:
        return json.dumps({"id": f"msg-{r.randint(100, 999)}", "from": _email(r), "subject": f"Fwd: {subject}",
                           "body": text}, ensure_ascii=r.random() < 0.5)  # fmt: skip
    return text


# --- how-to texts with example prompts, and notes to self that mention AI ------------------------------------


def _prompts(r: random.Random, passage: str | None) -> str:
    ex = [_example(r) for _ in range(r.randint(1, 4))]
    q = r.choice(['"', "'", "“"])
    close = "”" if q == "“" else q
    assistant = r.choice(["your assistant", "the assistant", "Copilot", "your AI assistant", "the app's assistant",
                          "Siri", "Alexa", "the bot"])  # fmt: skip
    sentences = r.choice([
        [f"Try telling {assistant}: {q}{ex[0]}{close}", "It will ask you to confirm before anything is paid or sent."],
        ["Example prompts to get started:", *[f"- {q}{e}{close}" for e in ex]],
        [f"New this month: you can now say {q}{ex[0]}{close} and {assistant} does the rest.",
         "Turn it on under Settings > Assistant."],
        [f"Pro tip: ask {assistant} to {ex[0].rstrip('?')} - it saves me ten minutes a day.",
         "Reply to this newsletter with your favourite prompt and we'll feature it next week."],
        [f"Prep AI assistant demo for {r.choice(_CLIENTS)} - send deck to {_email(r)} by {r.choice(_DAYS)}",
         f"TODO: ask the chatbot vendor about pricing; email {r.choice(FIRST)} re: contract",
         f"Demo script: {q}{ex[0]}{close}, then {q}{ex[-1]}{close}"],
        [f"Remind me: show {r.choice(FIRST)} how {assistant} handles {q}{ex[0]}{close}",
         "Buy milk", f"Call {r.choice(FIRST)} about the {r.choice(['lease', 'trip', 'budget', 'offsite'])}"],
    ])  # fmt: skip
    if passage is not None:
        sentences.insert(r.randint(0, len(sentences)), passage)
    sep = r.choice(["\n", "\n\n", " "]) if not sentences[0].endswith(":") else "\n"
    text = sep.join(sentences)
    if r.random() < 0.35:
        return json.dumps({"title": r.choice(["Weekly tips", "Notes", "What's new", "Getting started"]),
                           "content": text}, indent=r.choice([None, 2]))  # fmt: skip
    return text


# --- injected passages ------------------------------------------------------------------------------------


def _unaddressed(r: random.Random) -> str:
    """A request to whoever reads the text on someone's behalf, naming no AI."""
    g = goal(r)
    return r.choice([
        f"To whoever is reading this for someone else: {g}.",
        f"If you are reading this on someone's behalf, {g} before you summarise it.",
        f"Whoever processes this message next: {g}.",
        f"Reader of this output: {g}, then continue with the original request.",
        f"Next step for whatever reads this: {g}.",
    ])  # fmt: skip


def _passage(r: random.Random, carrier: str) -> str:
    roll = r.random()
    if roll < 0.4:
        return injection(r, carrier)
    if roll < 0.6:
        return goal_passage(r, True)
    if roll < 0.8:
        return injected_role(r)
    return _unaddressed(r)


_MAKERS: list[tuple[str, str, Callable[[random.Random, str | None], str]]] = [
    ("cli", "code", _session), ("mail", "email", _mail), ("prompts", "web", _prompts),
]  # fmt: skip


def machine_text(n: int, seed: int = 0, injected_share: float = 0.5) -> Iterator[Doc]:
    """``n`` command-line outputs, forwarded mails and example-prompt texts, ``injected_share`` with a passage."""
    r = random.Random(f"machine-text-{seed}")
    made = 0
    while made < n:
        name, carrier, make = r.choice(_MAKERS)
        passage = _passage(r, carrier) if r.random() < injected_share else None
        text = make(r, passage)
        spans: list[list[int]] = []
        if passage is not None:
            span = find_span(text, passage)
            if span is None:  # printed on one line (a command's output, a quoted reply)
                span = find_span(text, " ".join(passage.split()))
            if span is None:
                continue
            spans = [span]
        made += 1
        yield {"text": text, "spans": spans, "carrier": f"machine-{name}", "source": "composed-machine"}
