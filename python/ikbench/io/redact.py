"""Secrets out of everything the analysis library prints, stores or writes: the same rule as the
harness's `redactSecrets` (core/src/redact.cpp), so that C++ and Python redact alike.

    redact_secrets("postgresql://bob:s3cret@host/db")    -> "postgresql://bob:***@host/db"
    redact_secrets("host=h password='a b' dbname=x")      -> "host=h password=*** dbname=x"
    redact_value(run_json)                                # every string of a JSON value, recursively

Replaced by "***":
  * the password of a URL's user info: `scheme://user:SECRET@host` (the user info ends at its
    last '@', so a password may hold '@');
  * a `password` parameter or libpq keyword, blanks allowed around '=': `?password=SECRET&x=1`,
    `password=SECRET`, `password = 'a b\\' c'` (libpq's keyword syntax: a value is a run of
    non-blanks or a single-quoted string with backslash escapes). The key is the word `password`
    or `sslpassword` (libpq's passphrase of the client key), in any case.

Credentials belong in libpq's environment (PGPASSWORD) or its password file (~/.pgpass), never on a
command line (docs/history.md "Storage").
"""

import re

MASK = "***"

_SCHEME_CHAR = re.compile(r"[A-Za-z0-9+.-]")
_BLANKS = " \t\n\r"


def _word_start(s, start):
    return start == 0 or not (s[start - 1].isascii() and (s[start - 1].isalnum() or s[start - 1] == "_"))


def _password_key_before(s, end):
    """True when the word `password` or `sslpassword` ends at `end`."""
    start = end - len("password")
    if start < 0 or s[start:end].lower() != "password":
        return False
    return _word_start(s, start) or (start >= 3 and s[start - 3:start].lower() == "ssl" and _word_start(s, start - 3))


def redact_secrets(text):
    """`text` with every secret replaced by "***" (module text); text without one is returned as it is."""
    s = str(text)
    if "://" not in s and "=" not in s:
        return s
    out, i, n = [], 0, len(s)
    while i < n:
        if s.startswith("://", i) and i > 0 and _SCHEME_CHAR.fullmatch(s[i - 1]):
            end = i + 3
            while end < n and s[end] not in "/?#" and s[end] not in _BLANKS:
                end += 1
            auth = s[i + 3:end]
            at = auth.rfind("@")
            colon = auth.find(":", 0, at) if at >= 0 else -1
            out.append("://")
            out.append(auth[:colon + 1] + MASK + auth[at:] if colon >= 0 else auth)
            i = end
            continue
        if s[i] == "=":
            k = i
            while k > 0 and s[k - 1] in _BLANKS:
                k -= 1
            if _password_key_before(s, k):
                out.append("=")
                j = i + 1
                while j < n and s[j] in _BLANKS:
                    j += 1
                if j < n and s[j] == "'":
                    j += 1
                    while j < n and s[j] != "'":
                        j += 2 if s[j] == "\\" and j + 1 < n else 1
                    if j < n:
                        j += 1
                else:
                    while j < n and s[j] not in _BLANKS and s[j] not in "&#":
                        j += 1
                out.append(MASK)
                i = j
                continue
        out.append(s[i])
        i += 1
    return "".join(out)


def redact_value(value):
    """A JSON value (dicts, lists, strings, numbers) with every string redacted, keys included;
    the value itself when nothing changed."""
    if isinstance(value, str):
        return redact_secrets(value)
    if isinstance(value, list):
        new = [redact_value(v) for v in value]
        return value if all(a is b for a, b in zip(new, value)) else new
    if isinstance(value, dict):
        new = {redact_secrets(k) if isinstance(k, str) else k: redact_value(v) for k, v in value.items()}
        same = len(new) == len(value) and all(k in value and new[k] is value[k] for k in new)
        return value if same else new
    return value


def password_of(conninfo):
    """The password a libpq connection string or URL holds (its user info or `password`
    parameter), or None: what an error message of the connection must not repeat."""
    s = str(conninfo)
    red = redact_secrets(s)
    if red == s:
        return None
    # the characters of `s` that the redaction replaced (the longest secret is enough for a scrub)
    import difflib

    gone = [s[a:b] for op, a, b, _, _ in difflib.SequenceMatcher(None, s, red, autojunk=False).get_opcodes()
            if op in ("replace", "delete") and b > a]
    return max(gone, key=len) if gone else None


def scrub(message, conninfo):
    """A message about a connection with its secrets removed: redacted by the rule, and any
    piece of the connection's password it repeats (a parser quoting what it could not read)
    replaced by "***"."""
    text = redact_secrets(message)
    secret = password_of(conninfo)
    if secret:
        pieces = {secret.strip("'")} | {p for p in re.split(r"[\s'\\]+", secret) if len(p) >= 3}
        for p in sorted(pieces, key=len, reverse=True):
            if p:
                text = text.replace(p, MASK)
    return text


__all__ = ["MASK", "redact_secrets", "redact_value", "password_of", "scrub"]
