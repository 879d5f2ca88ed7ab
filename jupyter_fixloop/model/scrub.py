"""The one boundary of what a model reads: every message, right before it leaves the machine, with the
secrets in it replaced by placeholders (`<secret-1>`), and the model's reply with them put back.

What is a secret is judged by what the text holds, not by where it came from (the namespace summary, a
receipt, what a candidate printed, the cell, an earlier attempt): detect-secrets' plugins (Yelp's
scanner, the field's reference: AWS, GitHub, Stripe, Slack, OpenAI and other vendors' keys, private
keys, JWTs, basic-auth URLs, secret keywords, high-entropy strings in quotes) and the rules it misses
(a URL's password holding `/`, an `Authorization: Bearer` value, a `.env` line or a keyword argument
whose name says secret, vendors' key shapes anywhere, the values the loop knows to be secrets).

A placeholder is put back in the reply, so a cell that holds its own password in a literal keeps it
in the fix (the model never read it). This is detect-secrets' only home; it is imported on the first
scrub (a fifth of a second), which only a litellm model's call makes.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

from ..kernel import wire

PLACEHOLDER = re.compile(r"<secret-(\d+)>")
_TOKEN = r"A-Za-z0-9_\-+/=.~"
# vendors' key shapes, JWTs, PEM private keys (whole blocks), whatever surrounds them; a key a summary clipped
# (`sk-CANARYframe01...`) still shows its first characters
_CLIPPED = r"(?:\.\.\.|…)"
_SHAPES = re.compile(
    rf"\b(?:sk|pk|rk|ghp|gho|ghs|ghu|ghr)[-_][A-Za-z0-9_-]{{6,}}{_CLIPPED}|\bA[KS]IA[0-9A-Z]{{6,}}{_CLIPPED}"
    r"|\b(?:sk|pk|rk)[-_][A-Za-z0-9_-]{16,}|\bA[KS]IA[0-9A-Z]{16,}\b|\bgh[pousr]_[A-Za-z0-9]{20,}"
    r"|\bgithub_pat_[A-Za-z0-9_]{20,}|\bxox[abprs]-[A-Za-z0-9-]{10,}|\bAIza[0-9A-Za-z_-]{30,}"
    r"|\beyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{4,}|\bglpat-[A-Za-z0-9_-]{16,}|\bhf_[A-Za-z0-9]{20,}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.S)
# a URL's password: everything between `user:` and the last `@` before the host, `/` included
_URL_PASSWORD = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:@/'\"]*:([^\s@'\"]+)@")
# the credential of an Authorization header or a `Bearer ...` string
# (`Basic`, `Token` only before a value holding a digit: "basic statistics" is English)
_SCHEME = re.compile(r"\b(?:[Bb]earer|BEARER)\s+([A-Za-z0-9._~+/=-]{6,})"
                     r"|\b(?:Basic|Token|Digest)\s+(?=[A-Za-z._~+/=-]*\d)([A-Za-z0-9._~+/=-]{8,})")
# `name = 'value'`, `"name": "value"`, `name='value'` (a keyword argument, a default), `NAME=value` (a .env
# line, `\n` of a repr ending it): the value, when the name says secret
_NAME = r"(?:(?<=\\n)|(?<![\w\\]))(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)(?P<q0>['\"]?)\]?\s*"
_ASSIGNED = re.compile(
    _NAME + r"(?:==|:|=)\s*(?:(?P<q>['\"])(?P<quoted>(?:\\.|(?!(?P=q)).)*?)(?P=q)"
    r"|(?P<bare>(?:(?!\\n)[^\s'\",;)}\]])+))")
# a secret-named field given a list of strings (`"password": ["...", "..."]`, a frame's column)
_LISTED = re.compile(_NAME + r"[:=]\s*[\[(](?P<items>[^\])]*)[\])]")
_QUOTED = re.compile(r"(['\"])((?:\\.|(?!\1).)+?)\1")
_PLUGINS_LEFT_OUT = {"IPPublicDetector"}  # an IP address in a log frame is data, not a credential
_lock = threading.Lock()


@dataclass(frozen=True)
class Scrubbed:
    """The messages as the model reads them, and the secrets their placeholders stand for (`<secret-N>` is
    `secrets[N - 1]`)."""

    messages: list[dict]
    secrets: tuple[str, ...] = ()

    def restore(self, text: str | None) -> str | None:
        """`text` (a reply) with each placeholder it repeats put back."""
        if not text or not self.secrets:
            return text

        def back(match: re.Match) -> str:
            n = int(match.group(1))
            return self.secrets[n - 1] if 0 < n <= len(self.secrets) else match.group(0)

        return PLACEHOLDER.sub(back, text)


def scrub(messages: list[dict], known: tuple[str, ...] = ()) -> Scrubbed:
    """`messages` with every secret found in them replaced, the same value by the same placeholder in
    every message. `known`: texts the caller knows to be secrets (values it withheld), replaced wherever
    they appear, whatever they look like."""
    spans = [_spans(str(m.get("content") or ""), known) for m in messages]
    order: dict[str, int] = {}
    out = []
    for message, found in zip(messages, spans):
        text = str(message.get("content") or "")
        for start, end in found:
            order.setdefault(text[start:end], len(order) + 1)
        for start, end in reversed(found):
            text = text[:start] + f"<secret-{order[text[start:end]]}>" + text[end:]
        out.append({**message, "content": text} if found else message)
    return Scrubbed(out, tuple(order))


def scrub_text(text: str, known: tuple[str, ...] = ()) -> str:
    """One text, scrubbed (for what is shown as sent: a history, a log)."""
    return scrub([{"content": text}], known).messages[0]["content"]


def _spans(text: str, known: tuple[str, ...]) -> list[tuple[int, int]]:
    """Where the secrets of `text` are, merged, in order."""
    found: list[tuple[int, int]] = []
    for value in sorted({k for k in known if k and len(k) >= 4}, key=len, reverse=True):
        found += [(m.start(), m.end()) for m in re.finditer(re.escape(value), text)]
    found += [m.span() for m in _SHAPES.finditer(text)]
    found += [m.span(1) for m in _URL_PASSWORD.finditer(text)]
    found += [m.span(1) if m.group(1) else m.span(2) for m in _SCHEME.finditer(text)]
    found += _assigned(text)
    found += _scanned(text)
    return _merged([(s, e) for s, e in found if e > s and not PLACEHOLDER.fullmatch(text[s:e])])


def _secret_name(name: str) -> bool:
    """Whether a name says its value is a secret: the rule the user's namespace is shared by (kernel/namespace.py
    `secret_name`), asked in this process through the wire."""
    return wire.local("namespace.secret_name", name)


def _assigned(text: str) -> list[tuple[int, int]]:
    """The values given to secret-named fields: quoted, or bare on a line of their own (`DB_PASS=...` of a
    `.env` file, `password: ...`); a bare name elsewhere is code reading a variable (`password=DB_PASS`)."""
    spans = []
    for m in _ASSIGNED.finditer(text):
        group = "quoted" if m.group("quoted") is not None else "bare"
        value = m.group(group)
        if not value or len(value) < 3 or not _secret_name(m.group("name").rsplit(".", 1)[-1]) or _harmless(value):
            continue
        line_start = text.rfind("\n", 0, m.start()) + 1
        before = text[line_start:m.start()]
        own_line = re.fullmatch(r"\s*(?:export\s+)?['\"]?", before) is not None or before.endswith("\\n")
        if group == "bare" and not own_line and re.fullmatch(r"[A-Za-z_][\w.]*", value):
            continue
        spans.append(m.span(group))
    for m in _LISTED.finditer(text):
        if _secret_name(m.group("name").rsplit(".", 1)[-1]):
            at = m.start("items")
            spans += [(at + q.start(2), at + q.end(2)) for q in _QUOTED.finditer(m.group("items"))
                      if not _harmless(q.group(2))]
    return spans


def _harmless(value: str) -> bool:
    """A value a secret-named field holds that is no secret: empty, a placeholder or a type (`<str>`), a name read from
    elsewhere (`os.environ[...]`, `getpass()`), a number, a bool, None."""
    v = value.strip()
    return (not v or bool(PLACEHOLDER.fullmatch(v) or re.fullmatch(r"<\w+>", v))
            or v in ("None", "True", "False", "null", "***", "...") or v.replace(".", "", 1).isdigit()
            or bool(re.fullmatch(r"[A-Za-z_][\w.]*\(.*", v)))


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


# ---------------------------------------------------------------- detect-secrets


def _scanned(text: str) -> list[tuple[int, int]]:
    """What detect-secrets' plugins and filters find, line by line, each widened to the whole token it
    sits in (a plugin may report a key's prefix alone: `ghp`)."""
    lines = text.split("\n")
    starts, at = [], 0
    for line in lines:
        starts.append(at)
        at += len(line) + 1
    spans = []
    for number, value in _detect(lines):
        line = lines[number - 1]
        for m in re.finditer(re.escape(value), line):
            start, end = _widened(line, m.start(), m.end())
            spans.append((starts[number - 1] + start, starts[number - 1] + end))
    return spans


def _widened(line: str, start: int, end: int) -> tuple[int, int]:
    token = re.compile(f"[{_TOKEN}]")
    while start > 0 and token.match(line[start - 1]):
        start -= 1
    while end < len(line) and token.match(line[end]):
        end += 1
    return start, end


def _detect(lines: list[str]) -> list[tuple[int, str]]:
    """(line number, secret) for each secret detect-secrets finds in `lines`, its default filters applied."""
    from detect_secrets.core import scan
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.settings import transient_settings

    plugins = [{"name": cls.__name__} for cls in get_mapping_from_secret_type_to_class().values()
               if cls.__name__ not in _PLUGINS_LEFT_OUT]
    with _lock, transient_settings({"plugins_used": plugins}):
        found = scan._process_line_based_plugins(list(enumerate(lines, 1)), filename="prompt.txt")
        return [(s.line_number, str(s.secret_value)) for s in found if s.secret_value]
