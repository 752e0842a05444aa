"""A server's base URL as conformbench shows it: scheme, host, port and path,
never a query value, a fragment or a user name.

The client library gets the user's URL whole (a signed key in its query must
be sent); every message, record and report sees only ``redacted_url``'s
form, rebuilt from the parsed parts (never by replacing the URL's string:
aiohttp and yarl print a normalised URL, ``%2F`` as ``/``, ``%7E`` as ``~``, a
space as ``+``, which no string replace would find). Text a server echoes
(an error body quoting the request line) is scrubbed of every form of the
query's values (``scrub_url_secrets``).

A URL that ``urlsplit`` cannot read as ``scheme://host`` on one line is
refused before anything is sent or written (``url_refusal``): a backslash
(``http:\\\\admin:hunter2@host/v1`` has no host for ``urlsplit``, so the
password would pass as a path), a space or a control character, a scheme
other than http and https, no host, a port that is not a number, or a user
name or password. No refusal echoes more than the URL's redacted form."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, unquote_plus, urlsplit, urlunsplit

__all__ = ["REDACTED", "redacted_url", "scrub_url_secrets", "url_refusal", "url_secrets"]

#: what a secret is replaced with in an echoed text
REDACTED = "<redacted>"
_SCHEMES = ("http", "https")
#: what no URL a user means holds: whitespace, controls, a backslash
_BAD_CHAR = re.compile(r"[\x00-\x20\x7f-\x9f\\\u2028\u2029\u00a0]")
#: a query value shorter than this is not scrubbed from echoed text (it
#: would garble it: ``v=1`` against "HTTP 401"); it is still never stored
_MIN_SECRET = 3
_HOW = "give it as scheme://host[:port]/path"


def _shown_or_nothing(url: str) -> str:
    shown = redacted_url(url)
    return "" if shown == "<unparsed URL>" else f" ({shown})"


def url_refusal(url: str) -> str | None:
    """Why ``url`` is refused as a base URL, or None. The message shows at
    most its redacted form (scheme, host, port, path)."""
    bad = _BAD_CHAR.search(url)
    if bad is not None:
        what = "a backslash" if bad.group() == "\\" else "a space" if bad.group() == " " \
            else f"the control or space character {bad.group()!a}"
        return f"the base URL holds {what}, which no URL holds: {_HOW} (nothing of it is shown here)"
    try:
        parts = urlsplit(url)
        host, _port = parts.hostname, parts.port
    except ValueError:
        return f"the base URL cannot be read (its host or port is not valid): {_HOW}"
    if parts.scheme.lower() not in _SCHEMES:
        scheme = parts.scheme[:10] if parts.scheme.isascii() and parts.scheme.isalnum() else "?"
        return f"the base URL's scheme is {scheme!r}, not http or https: {_HOW}"
    if not host or not parts.netloc:
        return f"the base URL names no host: {_HOW}"
    if "@" in parts.netloc:
        return (f"the base URL holds a user name or password{_shown_or_nothing(url)}; they would be stored "
                "in the replay and the reports: give the URL without them and the key in the environment "
                "variable named by --api-key-env (sent as a Bearer token)")
    return None


def redacted_url(url: str) -> str:
    """``url`` as stored in replays, reports and engines files: its scheme,
    host, port and path only, rebuilt from the parsed parts. A query value, a
    fragment or a user name never survives, whatever its name (requests
    still use the whole ``url``). A URL that does not parse is reduced to
    ``<unparsed URL>``: nothing of it is stored."""
    if _BAD_CHAR.search(url):
        return "<unparsed URL>"
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return "<unparsed URL>"
    if not parts.scheme or not host:
        return "<unparsed URL>"
    host = f"[{host}]" if ":" in host else host
    netloc = f"{host}:{port}" if port is not None else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _char_pattern(char: str) -> str:
    """``char`` as a client or a server may print it: itself, or each of its
    UTF-8 bytes percent-encoded (either case, or encoded twice: ``%252F``);
    a space also as ``+``."""
    encoded = "".join(f"%(?:25)?[{b >> 4:X}{b >> 4:x}][{b & 15:X}{b & 15:x}]" for b in char.encode("utf-8"))
    return f"(?:{re.escape(char)}|{encoded}" + ("|\\+)" if char == " " else ")")


def _pattern(secret: str) -> str:
    """A regex of ``secret`` (decoded) in any mix of the encodings above:
    one alternative per character, no quantifier, so matching stays linear."""
    return "".join(_char_pattern(char) for char in secret)


def url_secrets(url: str) -> tuple[str, ...]:
    """What of ``url`` is secret, decoded: its query, each value in it, its
    fragment and its user information (longest first, so a longer one is
    scrubbed whole); values shorter than 3 characters are left out."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return ()
    found = {unquote_plus(part) for part in (parts.query, parts.fragment, parts.netloc.rpartition("@")[0])}
    found |= {value for _name, value in parse_qsl(parts.query, keep_blank_values=True)}
    return tuple(sorted((s for s in found if len(s) >= _MIN_SECRET), key=lambda s: (-len(s), s)))


def scrub_url_secrets(text: str, *urls: str) -> str:
    """``text`` (an error a client library wrote, a body a server echoed)
    with each of ``urls``' secrets (``url_secrets``), in any encoding or mix
    of encodings, replaced by ``<redacted>``, and, where a URL has a query,
    any query after a path (``/v1/chat/completions?...``: the request line
    echoed) up to the next space or quote."""
    secrets = sorted({s for url in urls for s in url_secrets(url)}, key=lambda s: (-len(s), s))
    if not secrets:
        return text
    found = re.compile("|".join(_pattern(secret) for secret in secrets))
    return _ECHOED_QUERY.sub(lambda m: f"{m.group(1)}?{REDACTED}", found.sub(REDACTED, text))


#: a path and its query, as a server echoes a request line (the path's
#: length bounded: the scan stays linear on any text)
_ECHOED_QUERY = re.compile(r"(/[^?\s\"'<>/]{0,200})\?(?!<redacted>)[^\s\"'<>]+")
