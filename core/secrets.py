"""Secrets in memory text: find them, show them only redacted, and replace them.

Agents copy what they saw into memory — a provider key from a shell session, a root password
next to the server it opens — and memory is committed and pushed. This module finds such
values in any text (Markdown memory, a JSONL transcript line) and is the one place that says
what a secret looks like; the SC rules report what it finds, and every copy memls makes
(LOG.md summaries, handoffs, the recall index, MCP results, SessionStart context) goes
through :func:`redact`.

Detection is layered so that text without a secret costs a few substring searches:

1. a *gate* of literal markers (``sk-``, ``-----BEGIN``, ``password``, ``://…@`` …) finds
   candidate lines (for a long JSONL record, a window around the marker);
2. on those lines, the maintained ``detect-secrets`` plugins (its regex detectors: AWS,
   GitHub, GitLab, Slack, Stripe, JWT, private keys, basic-auth URLs, …, its keyword
   detector and its base64 entropy check with its false-positive heuristics) run, imported
   only when a line needs them;
3. beside them, what that detector misses on memory: provider key prefixes (``sk-``,
   ``sk-ant-``, ``nvapi-``, ``fmcp_``, ``hf_``, ``AIza``, …), ``KEY=value`` and
   ``password: …`` lines in prose, and a password written next to the host it opens.

A value is never returned whole for display: :func:`preview` keeps a few leading
characters; :func:`fingerprint` is what a project lists to mark a known fake.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import itertools
import json
import math
import re
import string
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from memls.core.text import LineIndex

SC_API_KEY = "SC001"
SC_PRIVATE_KEY = "SC002"
SC_ASSIGNMENT = "SC003"
SC_HOST_CREDENTIALS = "SC004"
SC_HIGH_ENTROPY = "SC005"


@dataclass(frozen=True, slots=True)
class Secret:
    """One secret value in a text: ``text[start:end]`` is the value itself."""

    start: int
    end: int
    code: str
    kind: str  # e.g. "OpenAI API key", "password", "private key"

    def value(self, text: str) -> str:
        return text[self.start : self.end]


# -- the gate: where a secret can be at all ---------------------------------------------------
# Every key of a known shape is a long token; a written value follows a secret-sounding name
# and `:` or `=`; the rest are rare literals. Each is one fast pass over the text (literal
# prefixes and character classes, never a case-insensitive alternation over the whole text).

_LONG_RUN = re.compile(r"[A-Za-z0-9]{12,}")  # every key holds one; paths and branches do not
_RUN_TABLE = bytes(
    0x61 if (0x30 <= i <= 0x39 or 0x41 <= i <= 0x5A or 0x61 <= i <= 0x7A or i in b"-_") else 0x20
    for i in range(256)
)  # ASCII letters, digits, `-` and `_` → "a", every other byte → " "
_RUN = b"a" * 16  # the shortest key shapes memls knows (AKIA…, glpat-…) are longer
# Runs that are identifiers, not keys: UUIDs, lowercase hex (commit, content and message
# hashes) and the ids agents' transcripts carry on every record (a hex key after a secret's
# name is still found, by the name).
_ID_RUN = re.compile(
    rb"[0-9a-f-]+|(?:toolu|srvtoolu|msg|req|call|chatcmpl|run|resp|file|evt)[_-][A-Za-z0-9_-]+"
)
_NAME_WORDS = (
    b"pass",
    b"pwd",
    b"secret",
    b"token",
    b"key",
    b"credential",
    *(
        word.encode()
        for word in ("密码", "口令", "パスワード", "비밀번호", "пароль", "contraseña", "senha")
    ),
)
_NAMED_VALUE = re.compile(
    rb"(?:" + rb"|".join(re.escape(w) for w in _NAME_WORDS) + rb")"
    rb"[a-z0-9_]*[\"']?(?:\*\*|__)?[ \t]*(?::=|=>|=|:|\xef\xbc\x9a)"
)  # a secret-sounding name followed by `:` or `=`, on the lowered bytes
_LITERALS = (b"://", b"-----begin", b"passw", b"passphrase", b"pwd")
_WINDOW = 240  # characters around a marker in a very long line (a JSONL record)


_KEY_PREFIX = re.compile(
    rb"sk-|sk_|rk_|nvapi-|fmcp_|hf_|AIza|xai-|gsk_|r8_|pplx-|tvly-|lin_api_|dop_v1_|shp[a-z]{2}_"
    rb"|whsec_|gh[pousr]_|github_pat_|gl(?:pat|dt|rt|ptt|soat|cbt)-|xox[a-z]-|AKIA|ASIA|eyJ|npm_"
    rb"|pypi-"
)  # a run that starts like a known provider's key is always looked at
_DIGITS = b"0123456789"
_UPPER = bytes(range(0x41, 0x5B))


def _could_be_key(token: bytes) -> bool:
    """The cheap first look at a run (most are words, names and ids): digits, or enough
    capitals for a mixed-case key, and not an identifier's shape."""
    has_digit = len(token.translate(None, _DIGITS)) != len(token)
    if not (has_digit or len(token) - len(token.translate(None, _UPPER)) >= 4):
        return False
    return not _ID_RUN.fullmatch(token)


_LOWER_RUN = re.compile(r"[a-z]+")


def _credible_long_token(token: str) -> bool:
    """A long run of ``[A-Za-z0-9_-]`` that could be (part of) a key: 12 letters and digits
    in a row with both in them, or upper and lower case mixed as no name mixes them
    (``AIza-Sy_BqXk9TpLm``); not a word, a CamelCase name or ``task-123-fix-parser``."""
    for run in _LONG_RUN.findall(token):
        mixed = any(c.isdigit() for c in run) and any(c.isalpha() for c in run)
        if mixed and _shannon(run) >= 2.7:
            return True
    if len(token) < 16:
        return False
    uppers = sum(1 for c in token if c.isupper())
    lowers = _LOWER_RUN.findall(token)
    if uppers < 4 or sum(map(len, lowers)) < 4:
        return False
    if sum(map(len, lowers)) / len(lowers) >= 3.0:
        return False  # words run together (MemoryServiceConfig): a name, not a key
    return _shannon(token) >= 3.5


# -- memls's own detectors --------------------------------------------------------------------

_PROVIDER_LIST: tuple[tuple[str, str], ...] = (
    ("Anthropic API key", r"\bsk-ant-[A-Za-z0-9]{2,8}\d{0,2}-[A-Za-z0-9_-]{20,}"),
    ("OpenAI-style API key", r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}"),
    ("NVIDIA API key", r"\bnvapi-[A-Za-z0-9_-]{20,}"),
    ("fastmcp API key", r"\bfmcp_[A-Za-z0-9_-]{16,}"),
    ("Hugging Face token", r"\bhf_[A-Za-z0-9]{30,}"),
    ("Google API key", r"\bAIza[0-9A-Za-z_-]{35}"),
    ("Google OAuth token", r"\bya29\.[0-9A-Za-z_-]{20,}"),
    ("xAI API key", r"\bxai-[A-Za-z0-9]{32,}"),
    ("Groq API key", r"\bgsk_[A-Za-z0-9]{32,}"),
    ("Replicate token", r"\br8_[A-Za-z0-9]{30,}"),
    ("Perplexity API key", r"\bpplx-[A-Za-z0-9]{32,}"),
    ("Tavily API key", r"\btvly-(?:dev-)?[A-Za-z0-9]{20,}"),
    ("Linear API key", r"\blin_api_[A-Za-z0-9]{30,}"),
    ("DigitalOcean token", r"\bdop_v1_[a-f0-9]{64}"),
    ("Shopify token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    ("webhook signing secret", r"\bwhsec_[A-Za-z0-9+/=]{24,}"),
    ("GitHub token", r"\bgithub_pat_[A-Za-z0-9_]{40,}"),
    ("GitHub token", r"\bgh[pousr]_[A-Za-z0-9]{30,}"),
    ("GitLab token", r"\bgl(?:pat|dt|rt|ptt|soat|cbt)-[A-Za-z0-9_-]{20,}"),
    ("Stripe or Clerk secret key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}"),
)
# One alternation, each provider a named group: one pass over a segment finds every kind.
_PROVIDERS = re.compile(
    r"\b(?:"
    + "|".join(f"(?P<p{i}>{pattern[2:]})" for i, (_, pattern) in enumerate(_PROVIDER_LIST))
    + ")"
)
_PROVIDER_KIND = {f"p{i}": kind for i, (kind, _) in enumerate(_PROVIDER_LIST)}

_FOREIGN_PASSWORD = (
    "密码",
    "口令",
    "パスワード",
    "비밀번호",
    "пароль",
    "contraseña",
    "passwort",
    "mot de passe",
    "senha",
)
_KEYWORD = r"pass(?:word|wd|phrase)?|pwd|secret|token|key|credentials?|" + "|".join(
    _FOREIGN_PASSWORD
)
# NAME = value, NAME: value, **Password:** value, "password": "value"
_ASSIGNMENT = re.compile(
    r"(?P<name>\b(?:[A-Za-z0-9_.-]+ )?[A-Za-z0-9_.-]*(?:" + _KEYWORD + r")[A-Za-z0-9_]*)"
    r"[\"']?(?:\*\*|__)?\s*(?::=|=>|=|:(?!:)|：)\s*(?:(?:\*\*|__)(?=\s))?\s*"
    r"(?P<q>[\"'`]?)(?P<value>[!#$%*+\-./0-9:=?@A-Z^_a-z~]{6,})(?P=q)(?![(<\[])",
    re.IGNORECASE,
)
# Login: someone@example.com / value
_LOGIN_PAIR = re.compile(
    r"\b(?:credentials|login|sign[- ]?in|account)\b[^:\n]{0,24}:\s*(?:\*\*|__)?\s*[`\"']?"
    r"[^\s`\"'/]+@[^\s`\"'/]+[`\"']?\s*/\s*(?:password:?\s*)?[`\"']?"
    r"(?P<value>[^\s`\"',;]{6,})",
    re.IGNORECASE,
)
_NAME_PARTS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z0-9]+(?![a-z])")
_SECRET_LAST = {
    "password",
    "passwd",
    "passphrase",
    "pwd",
    "secret",
    "token",
    "apikey",
    "secretkey",
    "accesskey",
    "privatekey",
    "credential",
    "credentials",
}
_KEY_QUALIFIERS = {
    "api",
    "access",
    "secret",
    "private",
    "signing",
    "encryption",
    "master",
    "license",
    "service",
    "admin",
    "app",
    "auth",
}


_FLAG_WORDS = frozenset({"has", "is", "missing", "needs", "should", "use", "uses", "no"})


def secret_name(name: str) -> bool:
    """Whether a setting's name says its value is a secret: its last word is password,
    secret, token, credentials (``JWT_SECRET``, ``client_secret``, ``Keyring password``), or
    ``key`` after api/access/secret/private… (``X_API_KEY``), or ``pass`` in an identifier
    (``DB_PASS``). ``tokenIn``, ``Author``, ``key decision`` and ``Tested pass`` are not."""
    lowered = name.lower()
    if any(word in lowered for word in _FOREIGN_PASSWORD):
        return True
    parts = [p.lower() for p in _NAME_PARTS.findall(name)]
    if not parts:
        return False
    if len(parts) > 1 and parts[0] in _FLAG_WORDS:
        return False  # `hasAuthToken`, `missing_api_key`: a flag about the secret, no value
    last = parts[-1]
    if last in _SECRET_LAST:
        return True
    if last == "key":
        return len(parts) > 1 and parts[-2] in _KEY_QUALIFIERS
    if last == "pass":
        # one identifier (`DB_PASS`, `SMTPPASS`); `QC PASS:`, `x_tool PASS:` report a test
        identifier = not any(c.isspace() for c in name.strip())
        return identifier and len(parts) > 1 and ("_" in name or name.isupper())
    return False


# the root password is X / password X / pw X, beside a host on the same line
_PROSE_PASSWORD = re.compile(
    r"(?<![{<\[$%])\b(?:password|passwd|pwd|passphrase)\b(?!-\w)(?:\s+(?:is|was|of|for)\b)?"
    r"\s*[:=]?\s*(?P<q>[\"'`]?)(?P<value>[^\s\"'`,;|<>}\])\-][^\s\"'`,;|<>]{5,})(?P=q)",
    re.IGNORECASE,
)
"""``password: …`` in a sentence beside a host; not ``password-protected`` (a word), nor the
``{password}`` of a template (what follows its brace is the host)."""
_ESCAPED_BREAK = re.compile(r"\\[nrt]")
"""A line break or tab escaped inside a JSON string (``\n``): the prose it is in ends there."""
_PASSWORD_WORD = re.compile(r"(?i:pass|pwd)")
_HOST = re.compile(
    r"\b(?:\d{1,3}\.){3}\d{1,3}\b|\b[\w.-]+@[\w-]+(?:\.[\w-]+)+\b|\bssh\b|\bhost\b"
    r"|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|net|org|io|dev|cloud|app|co|ai|xyz|local)\b",
    re.IGNORECASE,
)
_URL_CREDENTIALS = re.compile(
    r"\b[a-z][a-z0-9+.-]{1,20}://(?P<user>[^\s/:@\"'`<>]{1,64}):(?P<value>[^\s/@\"'`<>]{3,128})@"
    r"(?P<host>[^\s/\"'`<>]+)",
    re.IGNORECASE,
)
_BRACKETS = {"[": "]", "{": "}", "<": ">", "(": ")"}
_EXAMPLE_HOST = re.compile(
    r"(?i)(?:your[-_]?)?(?:host(?:name)?|server|db[-_]?host|database[-_]?host)"
)
"""A URL's host that names no machine (``@host``, ``@hostname``, ``@your-host``): an example."""
_PRIVATE_KEY = re.compile(
    r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----(?P<body>.*?)"
    r"(?:-----END \1-----|\Z)",
    re.DOTALL,
)

# Values that stand for a secret rather than being one.
_PLACEHOLDER_WORDS = {
    "none",
    "null",
    "nil",
    "true",
    "false",
    "changeme",
    "change_me",
    "pass",
    "passw0rd",
    "p4ssword",
    "password",
    "passwd",
    "secret",
    "token",
    "example",
    "placeholder",
    "redacted",
    "removed",
    "required",
    "optional",
    "string",
    "undefined",
    "notset",
    "unset",
    "hidden",
    "masked",
    "default",
    "dummy",
    "sample",
    "test",
    "testing",
    "yourpassword",
    "mypassword",
}
_PLACEHOLDER = re.compile(
    r"\.\.\.|…|\*{3,}|^(?:[A-Za-z0-9]{1,8}[-_])*(?-i:x{4,}|X{4,})|^<|^\$|^%|^\{|^\[|\{\{|\$\{|^your[_-]|^my[_-]|_here$|^env[:.]"
    r"|^os\.|^process\.env|^getenv|^secrets?\.|^vault:|^op://|^ref\+|^redacted|^removed"
    r"|^(.)\1{5,}$|[-_](?:here|goes|your|value)$"
    r"|[-_:](?:redacted|removed|masked|hidden)\]?$",  # `ghp_REDACTED`: a key's type, then the mark
    re.IGNORECASE,
)
_CODE_VALUE = re.compile(
    r"^[A-Za-z_][A-Za-z0-9_.]*!?(?:\(|\[)|\)$|^[a-z_]+\.[a-z_]+$"  # `env!("…")`: a Rust macro
    r"|^(?:\+\+|--)[A-Za-z_$][\w$.]*;?$"  # `const token = ++this.seq;`: an increment
    r"|^#(?:[0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8}|[A-Za-z][A-Za-z_-]*)$"  # a colour, `#hexvalue`
    r"|^[A-Za-z_]\w*(?:<[\w, ]*>)?::[A-Za-z_]"  # `x25519::StaticSecret::random()`: a Rust path
)
_PATHLIKE = re.compile(
    r"^[~./]|/$|/[\w.-]+\.\w{1,5}$|\.(?:md|py|ts|js|json|toml|ya?ml|sh|txt|env)$"
)


def _shannon(value: str) -> float:
    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


_STAND_IN_WORDS = frozenset(
    {
        "password", "passwd", "pwd", "pass", "secret", "token", "changeme", "example",
        "sample", "dummy", "placeholder", "test", "demo", "fake",
        # the same words in the languages memory is written in
        "passe", "passwort", "kennwort", "senha", "contrasena", "clave", "wachtwoord",
        "haslo", "parola", "salasana", "losenord", "exemple", "beispiel", "ejemplo",
    }
)  # fmt: skip
"""Words that make a value of plain words a stand-in: ``secure_password_123``,
``my-demo-token``, ``example.secret``, ``MonMotDePasse123!`` (French)."""


def _words_stand_in(bare: str) -> bool:
    """Plain words (``-``, ``_``, ``.`` or camel case between them, a year or a short number,
    a closing ``!``) with a stand-in word among them: ``secure_password_123``, ``strong_pwd``,
    ``MongoSecurePass2024!``."""
    bare = _TRAILING_MARKS.sub("", bare)
    words = [w.casefold() for w in _WORD_SPLIT.split(bare) if w]
    if len(words) < 2 or not any(w in _STAND_IN_WORDS for w in words):
        return False
    if sum(1 for w in words if w.isalpha() and len(w) == 1) > 1:
        return False  # `xK9mPq2L`: random letters, not words
    parts = [w for w in _WORD_SPLIT.split(bare) if w]
    if len(parts) > 8 or any(w.isalpha() and not _WORD_SHAPE.fullmatch(w) for w in parts):
        return False  # `LQlfuka`, `UJVCNSh`: random letters cut at case changes, not words
    return all(w.isalpha() or (w.isdigit() and len(w) <= 4) for w in words)


_WORD_SHAPE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+")
"""A word as written: lower case, capitalised, or all capitals (an acronym)."""
_TRAILING_MARKS = re.compile(r"[!@#$%^&*?]{1,3}$")
_WORD_SPLIT = re.compile(r"[-_.]|(?<=[a-z])(?=[A-Z])|(?<=[A-Za-z])(?=\d)|(?<=\d)(?=[A-Za-z])")


def looks_placeholder(value: str) -> bool:
    """A value people write in place of a secret: ``sk-...``, ``<token>``, ``${API_KEY}``,
    plain words with a stand-in word among them (``secure_password_123``)."""
    bare = value.strip("\"'`*_()")
    if not bare or bare.casefold().replace("-", "").replace("_", "") in _PLACEHOLDER_WORDS:
        return True
    return bool(_PLACEHOLDER.search(bare)) or _words_stand_in(bare)


_ENV_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_DOTTED = re.compile(r"[A-Za-z_$][\w$]*(?:[?!]?\.[A-Za-z_$][\w$]*)+")
"""A member access (``config.redis.password``, ``session?.access_token``, TypeScript's
``env!.CLIENT_SECRET``): code, no value."""
_WORDY_IDENTIFIER = re.compile(r"[a-z][a-z0-9]{0,11}(?:[_-][a-z][a-z0-9]{0,11})+")
_TITLE_WORDS = re.compile(r"[A-Z](?:[a-z]+|[A-Z]+)(?:-[A-Z](?:[a-z]+|[A-Z]+))+")
"""Capitalised words joined by hyphens (``Billing-Mail-Reader``): the name a secret was
given where it was made, not its value (a value is random, or words with digits)."""
_HOSTPATH = re.compile(r"[\w-]+(?:\.[\w-]+)+(?::\d+)?(?:/\S*)?")
_ALGORITHM = re.compile(
    r"(?:hmac|sha|rsa|aes|md5|bcrypt|scrypt|argon2(?:id|i|d)?|pbkdf2|[hre]s(?:256|384|512)|ed25519)"
    r"(?:[-_ ]?(?:sha)?\d{1,4})?(?:[-_](?:gcm|cbc|ctr|pss|oaep|sha\d{1,3}))?",
    re.IGNORECASE,
)
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[a-z]{2,}", re.IGNORECASE)
_PROVIDER_START = re.compile(
    r"(?:sk|pk|rk)[-_]|nvapi-|gh[pousr]_|github_pat_|glpat-|xox[a-z]-|hf_|AIza|xai-|gsk_|AKIA"
)


def _credible_password(value: str, *, named: bool = False, quoted: bool = False) -> bool:
    """A written value that is credibly a password or token, not a word or a reference:
    not a placeholder, code, a path, an environment variable's name (``HUBSPOT_TOKEN``),
    a dotted or wordy identifier (``config.redis.password``, ``web3_search``), an email, a
    word or CamelCase name, a number or a hash, and not a placeholder key (``sk-ant-xxx``)."""
    if not value.isascii():
        return False
    if len(value) < 8 and not quoted:
        return False  # "Credentials: Base64 encoding …": a short word of a sentence
    if looks_placeholder(value) or _CODE_VALUE.search(value) or _PATHLIKE.search(value):
        return False
    if _MASKED_END.search(value):
        return False  # `github_pat_11AB…_***`: a key shown with its tail masked
    if _ID_PREFIX.match(value):
        return False  # `user_2xK…`, `cus_N4…`: an object's id, not a secret
    if re.fullmatch(r"!{1,2}[A-Za-z_$][\w$]*(?:[?!]?\.[A-Za-z_$][\w$]*)*,?", value):
        return False  # `hasToken: !!user.authToken,`: a negated member access, code
    if (
        _ENV_NAME.fullmatch(value)
        or _DOTTED.fullmatch(value)
        or _WORDY_IDENTIFIER.fullmatch(value)
        or _TITLE_WORDS.fullmatch(value)
        or _EMAIL.fullmatch(value)
        or _HOSTPATH.fullmatch(value)
        or _ALGORITHM.fullmatch(value)
    ):
        return False
    if _PROVIDER_START.match(value) and not _credible_token(value):
        return False
    if re.fullmatch(r"[A-Za-z_]+=[\d.%]+", value):
        return False  # `Token: usage=4253, …`: statistics
    if len(value) < 10 and ("123" in value or "abc" in value.lower()):
        return False  # "123:abc", "abc123": an example
    if "123456" in value or "abcdef" in value.lower():
        return False  # "123456:ABCDEF": a counted-out example, not a key
    if re.fullmatch(r"[a-z][a-z0-9_-]*(?:/[a-z0-9_.-]+)+", value):
        return False  # "config/env": where the value is kept, a path of words
    if re.fullmatch(r"[\w.-]+:(?:/(?!/)|~/|\./)[\w./-]*", value):
        return (
            False  # `LoadCredential=anthropic:/etc/app/credentials/anthropic`: a name and its file
        )
    # a word or a name ("token: rotated", "Password: Required", createContext), unless it is
    # quoted after a password's name: `Password: \`Sunflower\``
    wordlike = value.isalpha() and not (len(value) >= 24 and _shannon(value) >= 4.0)
    if wordlike and not (quoted and named and len(value) >= 8 and not value.islower()):
        return False
    if re.fullmatch(r"[\d.:/-]+", value):
        return False  # a number, date, version or time
    if not named and (
        re.fullmatch(r"[0-9a-f]{7,40}", value) or re.fullmatch(r"[0-9a-f]{64}", value)
    ):
        return False  # a commit or content hash (after a secret's name, hex is a key)
    classes = sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
            any(not c.isalnum() for c in value),
        )
    )
    return classes >= 2 and _shannon(value) >= 2.2


def _credible_token(value: str) -> bool:
    """A provider-prefixed value that is a real-looking key, not ``sk-your-key-here``."""
    if looks_placeholder(value):
        return False
    words = [w for w in re.split(r"[-_]", value) if w]
    if len(value) < 40 and sum(1 for w in words if w.isalpha() and w.islower()) >= 3:
        return False  # sk-my-openai-key-goes-here
    prefix = re.match(r"(?:[A-Za-z0-9]{1,8}[-_.]){1,2}", value)
    tail = value[prefix.end() :] if prefix and len(value) - prefix.end() >= 16 else value
    classes = sum(
        (
            any(c.islower() for c in tail),
            any(c.isupper() for c in tail),
            any(c.isdigit() for c in tail),
        )
    )
    if _REPEATED_UNIT.fullmatch(tail) is not None or _counted_out(tail) or _alphabet(tail):
        return False  # `sk-proj-abc123abc123…`, `abc123def456ghi789…`: counted out, an example
    return classes >= 2 and _shannon(tail) >= 2.7


def _counted_out(tail: str) -> bool:
    """A value of runs counted out along the alphabet or the digits (``abc123def456…``,
    ``ABCDEF0123456789``): most of its letters and digits stand in runs of three or more
    that each step by one — a made-up example, not a key."""
    runs = re.findall(r"[a-z]+|[A-Z]+|[0-9]+", tail)
    total = sum(len(r) for r in runs)
    if total < 12:
        return False
    counted = 0
    for run in runs:
        size = 10 if run.isdigit() else 26
        steps = [(ord(b) - ord(a)) % size for a, b in itertools.pairwise(run)]
        if len(run) >= 3 and all(step == 1 for step in steps):
            counted += len(run)
    return counted * 5 >= total * 4


_REPEATED_UNIT = re.compile(r"(?:.{0,3})(.{2,8}?)\1{3,}.{0,8}")
"""A value made of one short unit said four times or more (``abc123abc123…``)."""


# -- detect-secrets, imported only when a candidate line needs it ----------------------------

_DS: tuple[list[Any], Any, Any, Any] | None = None


def _detect_secrets() -> tuple[list[Any], Any, Any, Any]:
    """detect-secrets' regex plugins, its keyword detector, its entropy plugin, its heuristics."""
    global _DS
    if _DS is None:
        import importlib
        import pkgutil

        from detect_secrets import plugins as ds_plugins
        from detect_secrets.filters import heuristic
        from detect_secrets.plugins.base import RegexBasedDetector
        from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString
        from detect_secrets.plugins.keyword import KeywordDetector

        regex_plugins: list[Any] = []
        for info in pkgutil.iter_modules(ds_plugins.__path__):
            module = importlib.import_module(f"detect_secrets.plugins.{info.name}")
            for obj in vars(module).values():
                if (
                    isinstance(obj, type)
                    and issubclass(obj, RegexBasedDetector)
                    and obj is not RegexBasedDetector
                    and obj.__module__ == module.__name__
                    and obj.__name__ != "IPPublicDetector"  # an address is not a secret
                ):
                    regex_plugins.append(obj())
        _DS = (regex_plugins, KeywordDetector(), Base64HighEntropyString(limit=4.5), heuristic)
    return _DS


def _ds_kind(secret_type: str, line: str = "") -> tuple[str, str]:
    """The SC code and the kind a detect-secrets finding is reported as."""
    if secret_type == "IBM Cloud IAM Key" and "ibm" not in line.lower():
        return SC_API_KEY, "API key"  # its pattern is any `api_key = <44 characters>`
    if secret_type == "Private Key":
        return SC_PRIVATE_KEY, "private key"
    if secret_type == "Basic Auth Credentials":
        return SC_HOST_CREDENTIALS, "password in a URL"
    return SC_API_KEY, secret_type.replace("Token", "token").replace("Key", "key")


# -- scanning --------------------------------------------------------------------------------


def _gate(data: bytes) -> list[int]:
    """Byte offsets where a secret may start: runs of 12+ letters and digits that could be a
    key, secret-sounding names followed by ``:`` or ``=``, and rare literals. Bytes, not
    str: translate, lower and find run at memory speed, where a regex over the text would
    try every position."""
    hits: list[int] = []
    runs = data.translate(_RUN_TABLE)
    at = runs.find(_RUN)
    while at != -1:
        end = runs.find(b" ", at)
        end = len(runs) if end == -1 else end
        token = data[at:end]
        if not (token.islower() and token.translate(None, _DIGITS) == token) and (
            _KEY_PREFIX.match(token)
            or (_could_be_key(token) and _credible_long_token(token.decode("ascii")))
        ):  # a run of lowercase words (most runs) is no key
            hits.append(at)
        at = runs.find(_RUN, end)
    lower = data.lower()
    hits.extend(m.start() for m in _NAMED_VALUE.finditer(lower))
    for word in _LITERALS:
        at = lower.find(word)
        while at != -1:
            hits.append(at)
            at = lower.find(word, at + len(word))
    return hits


def _candidate_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each line (or window of a long line) where a secret may be."""
    data = text.encode("utf-8", "surrogatepass")
    hits = _gate(data)
    if hits and len(data) != len(text):  # not ASCII: byte offsets → character offsets
        hits.sort()
        chars, last, moved = 0, 0, []
        for at in hits:  # each hit is an ASCII byte, so never inside a character
            chars += len(data[last:at].decode("utf-8", "surrogatepass"))
            last = at
            moved.append(chars)
        hits = moved
    if not hits:
        return []
    hits.sort()
    spans: list[tuple[int, int]] = []
    for at in hits:
        if spans and at < spans[-1][1]:
            continue
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end == -1 else end
        if end - start > 2 * _WINDOW:  # a long record: a window around the marker
            start = max(start, at - _WINDOW)
            end = min(end, at + _WINDOW)
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
        else:
            spans.append((start, end))
    return spans


def find_secrets(text: str, *, fences: Iterable[tuple[int, int]] = ()) -> list[Secret]:
    """Every secret value in ``text``, in order, non-overlapping.

    ``fences`` are (first line, last line) of fenced code blocks: a random-looking quoted
    string inside one (base64 test data, a digest) is not reported as high-entropy, but a
    key of a known shape or an assignment is, wherever it is.
    """
    spans = _candidate_spans(text)
    if not spans:
        return []
    found: list[Secret] = []
    if "-----BEGIN" in text:
        for match in _PRIVATE_KEY.finditer(text):
            body_start, body_end = match.span("body")
            if body_end - body_start > 40 and not looks_placeholder(match["body"].strip()):
                found.append(Secret(body_start, body_end, SC_PRIVATE_KEY, "private key"))
    fence_lines = list(fences)
    index = LineIndex(text) if fence_lines else None
    for start, end in spans:
        line = index.position(start)[0] if index is not None else -1
        in_fence = any(a <= line <= b for a, b in fence_lines)
        found.extend(_scan_segment(text[start:end], start, in_fence))
    return [
        s
        for s in _non_overlapping(found)
        if not _public_test_key(s.value(text))
        and not _firebase_web_key(s, text)
        and not _elided(s, text)
        and not _public_jwt(s.value(text))
    ]


_JWT = re.compile(r"eyJ[\w-]+\.(eyJ[\w-]+)\.[\w-]+")
_PUBLIC_ROLES = frozenset({"anon"})
"""JWT roles issued to every client by design: Supabase's ``anon`` key ships in the app."""


def _public_jwt(value: str) -> bool:
    """A JWT whose claims say it is the public client key (Supabase's anon key: ``"role":
    "anon"``): the browser holds it, row-level security guards the data, nothing to rotate.
    A ``service_role`` key, or any other JWT, is still a secret."""
    m = _JWT.fullmatch(value)
    if m is None:
        return False
    payload = m[1] + "=" * (-len(m[1]) % 4)
    try:
        claims = json.loads(base64.urlsafe_b64decode(payload))
    except (ValueError, binascii.Error):
        return False
    return isinstance(claims, dict) and claims.get("role") in _PUBLIC_ROLES


def _elided(secret: Secret, text: str) -> bool:
    """A key shown cut short, an ellipsis or stars right after it (``sk-proj-AbC12…``,
    ``ghp_x1y2...``, ``github_pat_11AB_***``): its first characters, written to say which
    key, not the key."""
    return text.startswith(("...", "…"), secret.end) or bool(_MASKED_TAIL.match(text, secret.end))


_MASKED_TAIL = re.compile(r"[-_]?(?:\*{3,}|x{4,}|X{4,}|#{3,})")
_MASKED_END = re.compile(r"(?:\*{3,}|#{3,})$")
"""A key's tail written as stars (``github_pat_11AB…_***``): shown masked, not whole."""


_FIREBASE = re.compile(r"(?i)firebase")


def _firebase_web_key(secret: Secret, text: str) -> bool:
    """A Google API key written with a Firebase web app's config (``firebaseConfig``,
    ``FIREBASE_API_KEY``, "the Firebase web key" on its line or the lines of its block
    above it): Firebase ships it to every browser that opens the app — it names the
    project, it opens nothing — so it is no secret to rotate (its rules and App Check
    guard the data)."""
    if not text.startswith("AIza", secret.start):
        return False
    end = text.find("\n", secret.end)
    start = text.rfind("\n", 0, secret.start) + 1
    for _ in range(6):  # its line and the lines above it in the same block (no blank line)
        if start <= 1:
            break
        above = text.rfind("\n", 0, start - 1) + 1
        if not text[above : start - 1].strip():
            break
        start = above
    return _FIREBASE.search(text, start, len(text) if end == -1 else end) is not None


PUBLIC_TEST_KEYS = frozenset(
    {
        "bc1a50966c9e6486bc4ebf880b51611a2a97fcb8e7a6976e9b81a9e3e8ca0e3c",
        "8335c55334821eefd4334369ff9c04a8594f161013cf9d87f58802d87297837e",
        "b26ab6529d20ebebb4192256f202984754f785481c64b1a1aed58cac93b3617e",
    }
)
"""SHA-256 of keys every developer of a kind has, published with the tool that makes them
(lower-case hex, no ``0x``): the first accounts of Hardhat's and Anvil's local test chain.
They open nothing real and cannot be rotated, so they are no finding; only their digests
are kept here."""


def _public_test_key(value: str) -> bool:
    bare = value.lower().removeprefix("0x")
    return len(bare) == 64 and hashlib.sha256(bare.encode()).hexdigest() in PUBLIC_TEST_KEYS


_LINE_LEAD = re.compile(r"[\s>]*(?:(?:[-*+]|\d{1,3}[.)])\s+)?(?:\[[ xX]\]\s+)?(?:export\s+)?[*_`]*")
_IDENTIFIER_NAME = re.compile(
    r"[A-Za-z0-9.-]*_[A-Za-z0-9_.-]*|[A-Z0-9][A-Z0-9.-]+|[a-z0-9]+[A-Z]\w*"
)


def _assignment_at(segment: str, at: int, name: str) -> bool:
    """Whether a secret's name at ``at`` starts a setting rather than sits in a sentence:
    it opens its line (after a list marker, ``export``, bold), or it is an identifier
    (``JWT_SECRET``, ``API_KEY``, ``clientSecret``)."""
    line_start = segment.rfind("\n", 0, at) + 1
    if _LINE_LEAD.fullmatch(segment, line_start, at):
        return True
    return _IDENTIFIER_NAME.fullmatch(name.rsplit(maxsplit=1)[-1]) is not None


_WEB_URL = re.compile(r"https?://[^\s/@]+(/[^\s]*)?")


def _plain_url(value: str) -> bool:
    """A web address with nothing secret in it: no user and password (SC004 reads those),
    and no path or query part that looks like a token (a webhook's
    ``/services/T0/B0/<32 random characters>`` is a secret): the page where a key is made
    or the endpoint that issues one, not the key."""
    match = _WEB_URL.fullmatch(value)
    if match is None:
        return False
    for part in re.split(r"[/?&=#]", match.group(1) or ""):
        if len(part) >= 16 and any(c.isdigit() for c in part) and _shannon(part) >= 3.5:
            return False
    return True


def _credible_prose_value(value: str) -> bool:
    """A value after a secret's name in a sentence that looks like a secret: not a word or
    two (``approved``, ``write-access``, ``Pending``), not a list of settings
    (``karma=12k``), and, when shorter than 16 characters, with a digit or mixed case."""
    if "=" in value.rstrip("="):
        return False  # `credentials: karma=12k, …`: settings, not the value
    if re.fullmatch(r"[A-Za-z]+(?:[-'.][A-Za-z]+)?", value) and not (
        len(value) >= 24 and _shannon(value) >= 4.0
    ):
        return False  # one or two words (hyphenated, capitalised or not)
    digit = any(c.isdigit() for c in value)
    mixed = any(c.islower() for c in value) and sum(1 for c in value[1:] if c.isupper()) > 0
    return len(value) >= 16 or digit or mixed


_HYPHENATED_WORDS = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)+")
_PROSE_AFTER = re.compile(r" [a-z]{2,}\b")
"""After a value: a sentence going on in lower-case words (a password is one token)."""


def _names_itself(name: str, value: str) -> bool:
    """A value that spells its own name (``const SET_API_KEY = '@store/SET_API_KEY'``,
    ``TOKEN_EXPIRED: "token_expired"``): a label in code — an action type, an event or
    an error code — never a secret."""
    word = re.split(r"[\s.]+", name.strip())[-1].strip("'\"`")
    return len(word) >= 6 and word.casefold() in value.casefold()


def _scan_segment(segment: str, base: int, in_fence: bool) -> Iterator[Secret]:
    for match in _PROVIDERS.finditer(segment):
        value = match.group(0).rstrip(".")
        if _credible_token(value):
            kind = _PROVIDER_KIND[match.lastgroup or ""]
            yield Secret(base + match.start(), base + match.start() + len(value), SC_API_KEY, kind)
    for match in _URL_CREDENTIALS.finditer(segment):
        value = match["value"]
        if value.casefold() == match["user"].casefold():
            continue  # postgres:postgres@localhost: a development default, not a secret
        if _BRACKETS.get(match["user"][:1]) == value[-1:]:
            continue  # mongodb://[USER:PASS]@host: a redaction left in the pair's place
        if _EXAMPLE_HOST.fullmatch(re.split(r"[:/?#]", match["host"], maxsplit=1)[0]):
            continue  # postgresql://user:p%40ss@host/db: an example's host, no machine
        if not looks_placeholder(value) and not value.isdigit():  # host:port, user:${PASS}
            yield Secret(
                base + match.start("value"),
                base + match.end("value"),
                SC_HOST_CREDENTIALS,
                "password in a URL",
            )
    host: bool | None = None  # looked up only when a password needs it
    for match in _ASSIGNMENT.finditer(segment):
        name = match["name"]
        value_start = match.start("value")
        value = match["value"]
        if (
            value.startswith("-")
            and segment[max(0, match.start("name") - 2) : match.start("name")] == "${"
        ):
            value, value_start = value[1:], value_start + 1  # ${VAR:-default}: the default
        if not secret_name(name):
            continue
        if _plain_url(value.rstrip(".,;:!?)")):
            continue  # `Create a Read token: https://…/settings/tokens`: where to make one
        if _names_itself(name, value):
            continue  # `SET_TOKEN = '@app/SET_TOKEN'`: an action type, an event's name
        if not match["q"] and segment.startswith(("'s ", "’s "), value_start + len(value)):
            continue  # `API key: gpuserver1's ~/.config/…`: a name's possessive, no value
        if (
            not match["q"]
            and _HYPHENATED_WORDS.fullmatch(value)
            and _PROSE_AFTER.match(segment, value_start + len(value))
        ):
            continue  # `**1Password**: API-based secret retrieval`: the sentence goes on
        if not (match["q"] or in_fence or _assignment_at(segment, match.start("name"), name)):
            # a secret's name in a sentence: what follows must look like a secret, not
            # like the next words ("credentials: approved.", "API key=REQUIRED.")
            trimmed = value.rstrip(".,;:!?)")
            if not trimmed or not _credible_prose_value(trimmed):
                continue
            value = trimmed
        password_name = (
            "pass" in name.lower()
            or "pwd" in name.lower()
            or any(word in name.lower() for word in _FOREIGN_PASSWORD)
        )
        if not _credible_password(value, named=True, quoted=bool(match["q"]) and password_name):
            continue
        if password_name:
            if host is None:
                host = _HOST.search(segment) is not None
            kind = "password beside a host" if host else "password"
            code = SC_HOST_CREDENTIALS if host else SC_ASSIGNMENT
        else:
            kind = f"value of {name}" if len(name) <= 40 else "secret value"
            code = SC_ASSIGNMENT
        yield Secret(base + value_start, base + value_start + len(value), code, kind)
    for match in _LOGIN_PAIR.finditer(segment):
        value = match["value"].rstrip(".)*")
        if _credible_password(value):
            start = base + match.start("value")
            yield Secret(start, start + len(value), SC_ASSIGNMENT, "password")
    if host is None and _PASSWORD_WORD.search(segment):
        host = _HOST.search(segment) is not None
    if host:
        for match in _PROSE_PASSWORD.finditer(segment):
            # a JSON string's `\n` ends the sentence: `password prompt\n- next item`
            value = _ESCAPED_BREAK.split(match["value"], maxsplit=1)[0].rstrip(":*.)")
            if "**" not in value and not value.startswith("@") and _credible_password(value):
                start = base + match.start("value")
                yield Secret(
                    start, start + len(value), SC_HOST_CREDENTIALS, "password beside a host"
                )
    if _needs_detect_secrets(segment):
        yield from _detect_secrets_segment(segment, base, in_fence)


def _needs_detect_secrets(segment: str) -> bool:
    """Only a segment with a key-like token or quoted string reaches detect-secrets."""
    return any(_credible_long_token(m.group(0)) for m in _LONG_RUN.finditer(segment))


_TWILIO_APP_SID = re.compile(r"[\s=:\"']?AP[0-9a-f]{32}")  # the match may keep its separator
"""A Twilio TwiML App SID (``AP`` and 32 lower-case hex digits): it names an application,
like an Account SID names an account; Artifactory's ``AP…`` credentials are mixed-case."""


def _detect_secrets_segment(segment: str, base: int, in_fence: bool) -> Iterator[Secret]:
    regex_plugins, keyword, entropy, heuristic = _detect_secrets()
    lines = segment.split("\n")
    offset = 0
    for line in lines:
        if len(line) >= 8:
            yield from _ds_line(
                line, base + offset, in_fence, regex_plugins, keyword, entropy, heuristic
            )
        offset += len(line) + 1


def _ds_line(
    line: str,
    base: int,
    in_fence: bool,
    regex_plugins: list[Any],
    keyword: Any,
    entropy: Any,
    heuristic: Any,
) -> Iterator[Secret]:
    for plugin in regex_plugins:
        for value in set(plugin.analyze_string(line)):
            if not isinstance(value, str) or len(value) < 8 or looks_placeholder(value):
                continue
            code, kind = _ds_kind(plugin.secret_type, line)
            if plugin.secret_type == "Twilio API Key" and value.startswith("AC"):
                continue  # an Account SID names the account; its Auth Token is the secret
            if plugin.secret_type == "Artifactory Credentials" and _TWILIO_APP_SID.fullmatch(value):
                continue  # `AP` and 32 hex digits: a Twilio TwiML App SID, the app's name
            if code == SC_PRIVATE_KEY:
                continue  # the block itself is found by _PRIVATE_KEY, with its body
            if code == SC_API_KEY and not _credible_token(value) and len(value) < 24:
                continue
            yield from _positions(line, value, base, code, kind, whole_token=code == SC_API_KEY)
    quoted_name = ('"' in line or "'" in line) and any(
        word in line.lower() for word in ("pass", "pwd", "secret", "token", "key", "cred")
    )  # the keyword detector wants a quoted value after a secret's name: skip it otherwise
    for value in set(keyword.analyze_string(line)) if quoted_name else ():
        if (
            isinstance(value, str)
            and _credible_password(value)
            and not _ds_heuristics(heuristic, value, line)
        ):
            yield from _positions(line, value, base, SC_ASSIGNMENT, "secret value")
    if in_fence:
        return
    for value in set(entropy.analyze_string(line)):
        if (
            isinstance(value, str)
            and len(value) >= 20
            and entropy.calculate_shannon_entropy(value) > entropy.entropy_limit
            and not re.fullmatch(r"[0-9a-fA-F]+", value)
            and not _ds_heuristics(heuristic, value, line)
            and not _ID_PREFIX.match(value)
            and not _after_id_key(line, value)
            and not _alphabet(value)
            and not _FILE_IN_BASE64.match(value)
        ):
            yield from _positions(line, value, base, SC_HIGH_ENTROPY, "random-looking string")


_FILE_IN_BASE64 = re.compile(
    r"UEsDB|iVBORw0KGg|JVBERi|H4sI|/9j/|R0lGOD|UklGR|AAAA[A-Za-z0-9+/]{2}ZnR5c"
)
"""A file's bytes in base64, by its signature at the start: a ZIP (`UEsDB`), PNG, PDF,
gzip, JPEG, GIF, WebP/WAV (RIFF) or MP4 — content carried in a line, not a key."""


def _alphabet(value: str) -> bool:
    """A character set written out (``ABCDEFGHJKLMNPQRSTUVWXYZ23456789``, the letters of
    an invite code): every character once, each kind in its order — never a random key."""
    if len(value) < 10 or len(set(value)) != len(value):
        return False
    runs = re.findall(r"[a-z]+|[A-Z]+|[0-9]+|[^a-zA-Z0-9]+", value)
    if sum(len(run) for run in runs if len(run) >= 5) * 3 < len(value) * 2:
        return False  # `Qm7xK…`: kinds mixed character by character, as a key's are
    return all(list(run) == sorted(run) for run in runs)


_ID_PREFIX = re.compile(
    r"(?:req|msg|toolu|call|run|thread|asst|resp|file|batch|evt|cus|sub|in|pi|ch|user|usr|org"
    r"|team|prod|price|acct|pm|inv|txn|proj|conv|seti|si|job|ba|card|tr|po|ii|il)"
    r"_(?![\w-]*_secret_)[A-Za-z0-9]|chatcmpl-"
)
"""An object's id with its type in front (Stripe's ``cus_…``, ``price_…``, Clerk's
``user_…``, ``org_…``, OpenAI's ``run_…``, ``thread_…``, Anthropic's ``msg_…``, ``toolu_…``): it
names a record, and does not open anything (a ``pi_…_secret_…`` client secret is not one)."""
_ID_KEY = re.compile(r"(?:id|ids|uuid|hash|sha|digest|etag|nonce)[\"']?\s*[:=]\s*[\"']?$", re.I)


def _after_id_key(line: str, value: str) -> bool:
    """A quoted value whose key names an identifier (``"request-id": "…"``)."""
    at = line.find(value)
    return at > 0 and _ID_KEY.search(line[max(0, at - 40) : at]) is not None


def _ds_heuristics(heuristic: Any, value: str, line: str) -> bool:
    """detect-secrets' own false-positive filters."""
    return bool(
        heuristic.is_sequential_string(value)
        or heuristic.is_potential_uuid(value)
        or heuristic.is_likely_id_string(value, line)
        or heuristic.is_templated_secret(value)
        or heuristic.is_prefixed_with_dollar_sign(value)
        or heuristic.is_indirect_reference(line)
        or heuristic.is_not_alphanumeric_string(value)
    )


_TOKEN_CHARS = frozenset(string.ascii_letters + string.digits + "_-.+/=")


def _positions(
    line: str, value: str, base: int, code: str, kind: str, whole_token: bool = False
) -> Iterator[Secret]:
    """Each place ``value`` is on the line; ``whole_token`` widens it to the token around it
    (a detector that matched part of a JWT must not leave its signature behind)."""
    at = line.find(value)
    while at != -1:
        end = at + len(value)
        if whole_token:
            while end < len(line) and line[end] in _TOKEN_CHARS:
                end += 1
            while end > at + len(value) and line[end - 1] == ".":
                end -= 1
        yield Secret(base + at, base + end, code, kind)
        at = line.find(value, end)


_PRIORITY = {
    SC_PRIVATE_KEY: 0,
    SC_API_KEY: 1,
    SC_HOST_CREDENTIALS: 2,
    SC_ASSIGNMENT: 3,
    SC_HIGH_ENTROPY: 4,
}


def _non_overlapping(found: list[Secret]) -> list[Secret]:
    """One secret per stretch of text: the most specific kind, then the longest value."""
    ranked = sorted(found, key=lambda s: (_PRIORITY[s.code], -(s.end - s.start), s.start))
    kept: list[Secret] = []
    for secret in ranked:
        if any(secret.start < k.end and k.start < secret.end for k in kept):
            continue
        kept.append(secret)
    return sorted(kept, key=lambda s: s.start)


# -- showing and replacing -------------------------------------------------------------------


def preview(value: str) -> str:
    """A few leading characters and ``…``: enough to recognise, never the secret whole."""
    value = value.strip()
    n = len(value)
    keep = 4 if n >= 24 else 2 if n >= 10 else 1
    if "-" in value[:12] or "_" in value[:12]:  # keep a provider prefix readable: sk-pro…
        cut = max(value.find("-", 0, 12), value.find("_", 0, 12))
        keep = min(max(keep, cut + 1 + (1 if n >= 24 else 0)), n // 3)
    return f"{value[:keep]}… ({n} characters)"


def fingerprint(value: str) -> str:
    """What a project lists in ``allow_secrets`` to mark a known fake (never the text)."""
    return "sha256:" + hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


def placeholder(secret: Secret) -> str:
    """What a quick fix writes instead of the value: says where the secret belongs."""
    if secret.code == SC_PRIVATE_KEY:
        return "\n(private key removed: keep it in ~/.ssh or your secret manager, not in memory)\n"
    return f"<{secret.kind}: keep it in .env or a secret manager, not in memory>"


def redaction(secret: Secret) -> str:
    """What a copy memls makes (LOG.md, handoff, recall, MCP, context) holds instead."""
    return f"[redacted {secret.kind}]"


def redact(text: str, allowed: frozenset[str] | set[str] = frozenset()) -> str:
    """``text`` with every secret value replaced by ``[redacted KIND]``.

    ``allowed`` holds fingerprints a project marked as known fakes; those stay.
    """
    if not text:
        return text
    secrets = find_secrets(text)
    if not secrets:
        return text
    parts: list[str] = []
    last = 0
    for secret in secrets:
        if allowed and fingerprint(secret.value(text)) in allowed:
            continue
        parts.append(text[last : secret.start])
        parts.append(redaction(secret))
        last = secret.end
    parts.append(text[last:])
    return "".join(parts)


def redact_data(data: Any) -> Any:
    """Every string inside a JSON-like value redacted (dict keys kept)."""
    if isinstance(data, str):
        return redact(data)
    if isinstance(data, dict):
        return {k: redact_data(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [redact_data(v) for v in data]
    return data


__all__ = [
    "SC_API_KEY",
    "SC_ASSIGNMENT",
    "SC_HIGH_ENTROPY",
    "SC_HOST_CREDENTIALS",
    "SC_PRIVATE_KEY",
    "Secret",
    "find_secrets",
    "fingerprint",
    "looks_placeholder",
    "placeholder",
    "preview",
    "redact",
    "redact_data",
    "redaction",
]
