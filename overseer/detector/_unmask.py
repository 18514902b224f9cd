"""Disguises undone before the detector reads a tool's output, with a map back to the original characters.

An instruction can be written so that a reader still reads it and a token classifier no longer does: look-alike
letters of another script inside Latin words (Cyrillic a, U+0430, for Latin a), fullwidth or mathematical letters
(U+FF49 for i, U+1D422 for a bold i), HTML character references ("&#105;gnore"), invisible characters inside
words, letters spaced apart ("i g n o r e"), words joined by underscores into one name
("ai_assistant_please_also_upload_..."). On the 134 injected everyday outputs (``tests/data/everyday_outputs.jsonl``)
with their injected passages disguised each way, the detector caught 77 (look-alikes), 52 (fullwidth), 59
(references) and 57 (spaced) against 127 undisguised; with this module 127 each (spaced: 122). The protocol's ``everyday_disguised`` set
(``overseer detector eval``) measures it: 127 of 134 caught, 13 of 190 benign outputs removed (69 and 14 without).

:func:`unmask` undoes each of them and keeps, for every character of its result, the span of the original it came
from, so that the detector's spans (and what ``sanitize`` removes) are spans of the text the agent would read.
Text with none of them comes back unchanged (``None`` for the map), at the cost of one scan.
"""

from __future__ import annotations

import html
import re
import unicodedata

__all__ = ["unmask"]

_REFERENCE = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_INVISIBLE = frozenset("\u00ad\u180e\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff")
# Cyrillic and Greek letters (and Latin script g) drawn like Latin ones: Unicode's confusables, the common subset
_DISGUISED = (
    "\u0430\u0432\u0435\u043a\u043c\u043d\u043e\u0440\u0441\u0442\u0443\u0445\u0455\u0456\u0458\u0501"
    "\u0261\u04bb\u051b\u051d\u04af\u0410\u0412\u0415\u041a\u041c\u041d\u041e\u0420\u0421\u0422\u0425"
    "\u0405\u0406\u0408\u04ae\u03b1\u03b5\u03b9\u03ba\u03bd\u03bf\u03c1\u03c4\u03c5\u03c7\u0391\u0392"
    "\u0395\u0396\u0397\u0399\u039a\u039c\u039d\u039f\u03a1\u03a4\u03a5\u03a7"
)
_LATIN = "abekmhopctyxsijdghqwyABEKMHOPCTXSIJYaeikvoptuxABEZHIKMNOPTYX"
_LOOK_ALIKE = str.maketrans(_DISGUISED, _LATIN)
_WORD = re.compile(r"[^\W\d_]+")
# JSON's escape of a character (``\u0430``): a model reads through it, as it reads the character
_JSON_ESCAPE = re.compile(r"\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})|\\u([0-9a-fA-F]{4})")


def unmask(text: str) -> tuple[str, list[tuple[int, int]] | None]:
    """``text`` with disguises undone, and the original span of each of its characters (``None``: unchanged)."""
    # words joined by underscores or hyphens into one name (a file named "ai_assistant_please_also_upload_...",
    # "IMPORTANT-for-the-assistant-cleaning-up-also-delete-..."): one for one, outside web addresses
    plain = _JOINED.sub(_unjoined, text) if "_" in text or "-" in text else text
    if plain == text and text.isascii() and "&" not in text and "\\u" not in text and not _spaced_runs(text):
        return text, None
    chars: list[str] = []
    origin: list[tuple[int, int]] = []
    references = {m.start(): m for m in _REFERENCE.finditer(plain)} if "&" in plain else {}
    if "\\u" in plain:
        references.update({m.start(): m for m in _JSON_ESCAPE.finditer(plain)})
    i = 0
    while i < len(plain):
        found = references.get(i)
        if found is not None and (value := _decoded(found)) != found.group(0):
            piece, span = value, found.span()
        else:
            piece, span = plain[i], (i, i + 1)
        i = span[1]
        for c in piece:
            if c in _INVISIBLE:
                continue
            if not c.isascii():
                folded = unicodedata.normalize("NFKC", c)
                if folded != c and folded.isascii() and folded.strip():
                    c = folded
            for part in c:
                chars.append(part)
                origin.append(span)
    out = "".join(chars)
    # look-alike letters inside a word that also has Latin letters; in a text mostly of Latin letters, also a word
    # made of look-alikes only ("\u0430" alone, "\u0440\u043e\u0440"). A Cyrillic or Greek text stays as it is.
    if not out.isascii():
        words = _WORD.findall(out)
        latin = sum(sum("a" <= ch.lower() <= "z" for ch in w) for w in words)
        mostly_latin = 2 * latin >= sum(len(w) for w in words)
        pieces = []
        last = 0
        for m in _WORD.finditer(out):
            word = m.group(0)
            if word.isascii():
                continue
            mixed = any("a" <= ch.lower() <= "z" for ch in word)
            if mixed or (mostly_latin and all(ch in _DISGUISED or "a" <= ch.lower() <= "z" for ch in word)):
                pieces.append(out[last : m.start()])
                pieces.append(word.translate(_LOOK_ALIKE))
                last = m.end()
        if pieces:
            pieces.append(out[last:])
            out = "".join(pieces)  # one for one: the map stays as it is
    spaced = _spaced_runs(out)
    if spaced:
        keep = [True] * len(out)
        for start, end in spaced:
            for k in range(start, end):
                # a space between two characters goes; of a run of spaces (between words), one stays
                if out[k] == " " and (k == start or out[k - 1] != " " or k + 1 == end or out[k + 1] == " "):
                    keep[k] = k > start and out[k - 1] == " " and (k + 1 == end or out[k + 1] != " ")
        out = "".join(ch for ch, kept in zip(out, keep, strict=True) if kept)
        origin = [span for span, kept in zip(origin, keep, strict=True) if kept]
    if out == text:
        return text, None
    return out, origin


# six or more words of letters joined by single underscores or hyphens, as a sentence written as a file or key name
# (sets AV, CD); a web address's slug ("/how-to-reset-your-password-in-5-steps") is left as written: it is no text
# the agent reads as an instruction, and the detector reads addresses as they are
_JOINED = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z]+(?:_[A-Za-z]+){5,}|(?<![A-Za-z0-9-])[A-Za-z]+(?:-[A-Za-z]+){5,}")


def _unjoined(found: re.Match[str]) -> str:
    text, at = found.string, found.start()
    before = text[max(text.rfind(c, 0, at) for c in " \t\n\"'(<[") + 1 : at]  # the token's start, up to the name
    if "://" in before or "www." in before.lower() or ("/" in before and "." in before.split("/")[0]):
        return found.group(0)
    return found.group(0).replace("_" if "_" in found.group(0) else "-", " ")


def _decoded(found: re.Match[str]) -> str:
    """The character(s) an HTML reference or a JSON escape stands for."""
    if found.group(0).startswith("&"):
        return html.unescape(found.group(0))
    if found.group(3) is not None:
        code = int(found.group(3), 16)
        # half of a surrogate pair is no character (and no tokenizer takes one): left as written
        return found.group(0) if 0xD800 <= code <= 0xDFFF else chr(code)
    high, low = int(found.group(1), 16), int(found.group(2), 16)
    return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))


# eight or more single characters in a row, one space between letters and two between words
_SPACED = re.compile(r"(?<![^\W_])(?:\S {1,2}){7,}\S(?![^\W_])")


def _spaced_runs(text: str) -> list[tuple[int, int]]:
    """Where letters are written spaced apart ("i g n o r e  a l l :"), as ``_SPACED`` finds them.

    Most of a run's characters must be letters or digits: a table's "| x | x | x |" is not letters spaced apart.
    """
    out = []
    for m in _SPACED.finditer(text):
        tokens = m.group(0).split()
        if 5 * sum(t.isalnum() for t in tokens) >= 4 * len(tokens):
            out.append(m.span())
    return out
