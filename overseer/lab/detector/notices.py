"""Service messages to people, composed from factors: hard negatives that look most like an injection.

The detector's second round of training data. Its first round (:mod:`overseer.lab.detector.compose`) taught it what
an instruction addressed to the agent is; on everyday tool output it also fired on the messages that fill a real
inbox, because they are made of imperatives aimed at whoever reads them: "if this wasn't you, reset your password
at <link> immediately", "if you did not ask for this, simply ignore this message", "please transfer the rent to
<IBAN> and use your flat number as the reference", "unplug the router, wait 30 seconds", "never act on such
requests; forward them to security@...". None of them addresses an AI.

A notice is built from independent factors: a **family** (account security, payment, travel, delivery, appointment,
how-to steps, scam awareness, marketing, out-of-office reply, workplace notice, school or club notice), a **sender**,
**facts** with generated values, **calls to action for the human reader** (links, IBANs, codes, phone numbers,
"ignore", "do not share", "forward"), a **footer**, and a **format** (e-mail, text message, web page, JSON field,
plain text). Half of them also carry an injection from :func:`overseer.lab.detector.compose.injection` at a random
line, so the model learns the passage, not the document. Nothing here comes from any evaluation suite.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator

from overseer.lab.detector.compose import (
    CITIES,
    FIRST,
    HOSTS,
    TLDS,
    Doc,
    _date,
    _email,
    _iban,
    _money,
    _name,
    injection,
    place,
    span_in_json,
)

__all__ = ["FAMILIES", "notice", "notices"]


def _link(r: random.Random) -> str:
    host = r.choice([*HOSTS, "accounts", "my", "help", "billing", "www", "track", "portal"])
    brand = r.choice(["northwind", "contoso", "globex", "fabrikam", "acme", "tailspin", "litware", "adatum"])
    path = r.choice(["reset", "security", "pay", "track", "manage", "login", "verify", "checkin", "orders", "help"])
    return f"https://{host}.{brand}.{r.choice(TLDS)}/{path}"


def _phone(r: random.Random) -> str:
    return f"+{r.choice(['1', '44', '49', '33', '351'])} {r.randint(100, 999)} {r.randint(100, 999)} {r.randint(1000, 9999)}"


def _v(r: random.Random) -> dict[str, str]:
    """Values a notice may use."""
    return {
        "link": _link(r), "iban": _iban(r), "money": _money(r), "date": _date(r), "city": r.choice(CITIES),
        "code": str(r.randint(100000, 999999)), "phone": _phone(r), "email": _email(r), "name": _name(r),
        "first": r.choice(FIRST), "ref": r.choice(["your flat number", "the invoice number", f"INV-{r.randint(1000, 9999)}",
                                                  "your customer ID", "your name and room number"]),
        "order": str(r.randint(10000, 999999)), "n": str(r.randint(2, 14)),
        "service": r.choice(["Northwind", "Contoso Bank", "Globex Cloud", "Fabrikam Mail", "Tailspin Air", "Acme Shop",
                             "Litware Drive", "your bank", "Adatum Energy"]),
        "device": r.choice(["Chrome on Windows", "Safari on iPhone", "Firefox on Linux", "an Android phone", "a new Mac"]),
        "month": r.choice(["January", "February", "March", "April", "May", "June", "July", "September", "October"]),
        "place": r.choice(["the post office on Main Street", "the parcel locker at the station", "our service desk"]),
    }  # fmt: skip


# family -> (senders, subjects, facts, calls to action for a person); {names} filled from _v
FAMILIES: dict[str, tuple[list[str], list[str], list[str], list[str]]] = {
    "security": (
        ["no-reply@accounts", "security@", "{service} Security", "alerts@"],
        [
            "Your password was changed",
            "New sign-in to your account",
            "Reset your password",
            "Your verification code",
            "Unusual activity detected",
            "Confirm your e-mail address",
            "Two-step verification turned on",
        ],
        [
            "The password for your {service} account was changed on {date}.",
            "We noticed a new sign-in from {device} in {city}.",
            "Someone requested a password reset for the account linked to this e-mail.",
            "Your verification code is {code}.",
            "Your one-time passcode is {code}. It expires in 10 minutes.",
            "We detected unusual activity on your account.",
            "Welcome to {service}! Your account is almost ready.",
            "Two-step verification is now on for your account.",
        ],
        [
            "If this was you, no action is needed.",
            "If this wasn't you, reset your password at {link} immediately.",
            "If you did not request this, simply ignore this message.",
            "Do not share this code with anyone, including our staff.",
            "Never give this code to anyone who calls or texts you.",
            "Click the link below to choose a new password: {link}",
            "Secure your account now by changing your password and turning on two-step verification.",
            "Review your recent activity at {link}.",
            "Please confirm your e-mail address by clicking the button below.",
            "If you don't recognise this activity, contact us at {phone} right away.",
            "Enter the code on the sign-in page to continue.",
            "You can ignore this e-mail if you already confirmed.",
        ],
    ),
    "payment": (
        ["billing@", "{service} Billing", "your landlord", "accounts@", "{name}"],
        ["Rent reminder", "Your bill is ready", "Payment failed", "Refund issued", "Payment received", "Invoice due"],
        [
            "The rent for {month} ({money}) is due on {date}.",
            "Your bill of {money} for {month} is ready.",
            "A direct debit of {money} could not be collected because of insufficient funds.",
            "A refund of {money} was issued to your card.",
            "We received your payment of {money}. Thank you!",
            "Invoice {order} for {money} is due on {date}.",
        ],
        [
            "Please transfer it to {iban} and use {ref} as the reference.",
            "Pay online at {link} or by bank transfer to {iban}.",
            "Please make sure your account is funded; we will try again in {n} days.",
            "Keep this e-mail as your receipt.",
            "If you already paid, please disregard this reminder.",
            "Set up automatic payments so you never miss one.",
            "Contact us at {email} if the amount looks wrong.",
            "Send the payment to {iban} by {date} to avoid a late fee.",
            "Reply to this e-mail if anything is unclear.",
            "Please forward the receipt to your accountant.",
        ],
    ),
    "travel": (
        ["{service}", "bookings@", "reservations@", "Hotel {city}"],
        ["Booking confirmed", "Check in now", "Your flight has changed", "Your trip to {city}", "Cancellation policy"],
        [
            "Your booking in {city} is confirmed for {n} nights from {date}.",
            "Online check-in for your flight to {city} is now open.",
            "Your flight to {city} now departs 40 minutes later.",
            "Booking reference: {order}.",
        ],
        [
            "Check in online from 24 hours before departure.",
            "Please present your passport and the card used for the booking.",
            "Cancel free of charge until {date}.",
            "Be at the gate 30 minutes before boarding.",
            "Download our app to get your boarding pass.",
            "Reply to this message to request a late check-out.",
            "Manage your booking at {link}.",
            "Call {phone} if you need to change your dates.",
        ],
    ),
    "delivery": (
        ["{service}", "shipping@", "track@", "Parcel service"],
        ["Your order has shipped", "Out for delivery", "We missed you", "Ready for pick-up"],
        [
            "Your order #{order} has shipped.",
            "Your parcel is out for delivery today.",
            "We tried to deliver your parcel on {date}.",
            "Your parcel is waiting at {place}.",
        ],
        [
            "Track your package at {link}.",
            "Please make sure someone is home to sign for it.",
            "Pick it up within 7 days and bring a photo ID.",
            "Reschedule the delivery at {link}.",
            "Do not reply to this e-mail; it was sent from an unmonitored address.",
        ],
    ),
    "appointment": (
        ["reception@", "Dr. {name}'s office", "{service} Service Centre"],
        ["Appointment reminder", "Your appointment on {date}", "Please reschedule"],
        [
            "This is a reminder of your appointment on {date}.",
            "Your car service is booked for {date}.",
            "Your blood test is scheduled for {date} at 8:30.",
        ],
        [
            "Arrive 10 minutes early and bring your insurance card.",
            "Call {phone} to reschedule at least 24 hours ahead.",
            "Do not eat or drink for 8 hours before the test.",
            "Reply YES to confirm or NO to cancel.",
            "Bring a list of the medication you take.",
        ],
    ),
    "howto": (
        ["help@", "{service} Support", "docs"],
        [
            "How to set up your router",
            "Getting started",
            "Fix: printer offline",
            "Assembly instructions",
            "Recipe of the week",
        ],
        [
            "Follow these steps to get started.",
            "Most problems are fixed in a few minutes.",
            "You will need a screwdriver.",
        ],
        [
            "Unplug the device, wait 30 seconds and plug it back in.",
            "Open the app and sign in with your e-mail address.",
            "Go to Settings > Network and select your wifi.",
            "Enter the password printed on the back of the router.",
            "Press and hold the reset button for ten seconds.",
            "Attach the legs with the four long screws, then turn the table over.",
            "Preheat the oven to 180°C and grease the tin.",
            "Delete the old app before you install the new version.",
            "If that does not work, contact us at {email}.",
            "Then restart your computer and try again.",
        ],
    ),
    "awareness": (
        ["security@", "IT Security", "{service} Fraud Team"],
        ["Beware of phishing", "Security tip of the month", "Scam alert"],
        [
            "Scammers are sending e-mails that pretend to come from the CEO.",
            "We have seen fake delivery texts this week.",
            "Criminals may call you pretending to be from {service}.",
        ],
        [
            "They may ask you to buy gift cards or wire money urgently. Never act on such requests.",
            "Never share your password or verification codes, even if the message looks official.",
            "Do not click links in unexpected messages; type the address yourself.",
            "Forward suspicious messages to {email} and then delete them.",
            "If a message says 'ignore your usual process and pay now', it is a scam.",
            "We will never ask you to transfer money to a 'safe account'.",
        ],
    ),
    "marketing": (
        ["news@", "{service}", "hello@"],
        ["This week's deals", "You're invited: free webinar", "Don't miss out", "Our spring newsletter"],
        ["Five tips for a faster laptop.", "Our spring sale starts on {date}.", "New: {service} now works offline."],
        [
            "Sign up for our webinar at {link}.",
            "Share this newsletter with a friend!",
            "Use code SPRING20 at checkout.",
            "Upgrade now and get two months free.",
            "Follow us for more tips.",
            "Unsubscribe at any time at {link}.",
            "Book before {date} to get the early-bird price.",
        ],
    ),
    "ooo": (
        ["{name}"],
        ["Automatic reply", "Out of office", "Re: your message"],
        [
            "I am out of the office until {date} with limited access to e-mail.",
            "I'm on leave until {date}.",
            "Thanks for your message.",
        ],
        [
            "For urgent matters please contact {name} at {email}.",
            "Otherwise I will reply when I'm back.",
            "Please direct billing questions to {email}.",
            "If it's urgent, call me on {phone}.",
        ],
    ),
    "workplace": (
        ["hr@", "it-support@", "{name}", "facilities@"],
        ["Action required", "Reminder", "Office closed", "Laptop updates"],
        ["The office will be closed on {date}.", "IT will install updates tonight.", "Timesheets are due this Friday."],
        [
            "All employees must submit their timesheets by 5 pm on Friday.",
            "Please restart your laptop before you leave.",
            "IT will never ask for your password.",
            "Work from home and update your status.",
            "Managers must approve the requests by Monday.",
            "Send your questions to {email}.",
        ],
    ),
    "community": (
        ["{name}", "school office", "club secretary"],
        ["Permission slip", "Volunteers needed", "Season kick-off"],
        [
            "The class trip to {city} is on {date}.",
            "Our season starts on {date}.",
            "We need helpers for the summer fair.",
        ],
        [
            "Please sign the permission slip and return it by Friday.",
            "Reply to this e-mail if you can help.",
            "Pay the fee of {money} to {iban} before {date}.",
            "Bring water and sunscreen.",
        ],
    ),
}
_FOOTERS = ["", "", "This is an automated message.", "Please do not reply to this e-mail.", "Unsubscribe: {link}",
            "© {service}. All rights reserved.", "Need help? Visit {link}.", "Sent from my phone"]  # fmt: skip
_FORMATS = ("email", "email", "email", "sms", "web", "json", "plain")


def _fmt(template: str, values: dict[str, str]) -> str:
    return template.format(**values)


def notice(r: random.Random, passage: str | None = None) -> tuple[str, list[list[int]], str]:
    """One service message (family from ``FAMILIES``), ``passage`` put at a random line; text, spans, family."""
    family = r.choice(list(FAMILIES))
    senders, subjects, facts, actions = FAMILIES[family]
    v = _v(r)
    lines = [_fmt(f, v) for f in r.sample(facts, k=min(len(facts), r.randint(1, 2)))]
    lines += [_fmt(a, v) for a in r.sample(actions, k=min(len(actions), r.randint(1, 4)))]
    if r.random() < 0.4:
        lines.insert(0, r.choice([f"Hi {v['first']},", f"Dear {v['first']},", "Hello,", "Dear customer,"]))
    footer = _fmt(r.choice(_FOOTERS), v)
    if footer:
        lines.append(footer)
    slot = r.randint(0, len(lines)) if passage is not None else -1
    form = r.choice(_FORMATS)
    sender = _fmt(r.choice(senders), v)
    if sender.endswith("@"):
        sender += r.choice(["northwind", "contoso", "globex", "acme"]) + ".example"
    head = {
        "email": f"From: {sender}\nSubject: {_fmt(r.choice(subjects), v)}\n\n",
        "sms": f"{sender}: ",
        "web": f"<h1>{_fmt(r.choice(subjects), v)}</h1>\n<p>",
        "json": "",
        "plain": "",
    }[form]
    sep = {"sms": " ", "web": "</p>\n<p>"}.get(form, "\n" if r.random() < 0.6 else " ")
    text, spans = place(head, lines, sep, passage, slot)
    if form == "web":
        text += "</p>"
    if form == "json":
        body = json.dumps({"subject": _fmt(r.choice(subjects), v), "from": sender, "body": text}, ensure_ascii=False)
        if spans and passage is not None:
            spans = span_in_json(body, passage)
        text = body
    return text, spans, family


def notices(n: int, seed: int = 0, injected_share: float = 0.5) -> Iterator[Doc]:
    """``n`` service messages, about ``injected_share`` of them with an injected passage; deterministic for a seed."""
    r = random.Random(f"notices-{seed}")
    for _ in range(n):
        passage = injection(r, r.choice(["email", "chat", "web", "file"])) if r.random() < injected_share else None
        text, spans, family = notice(r, passage)
        yield {"text": text, "spans": spans, "carrier": f"notice-{family}", "source": "composed-notice"}
