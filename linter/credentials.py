"""Credentials recognised by their shape in any line of text.

:mod:`mlcost_lint.secrets` collects the values of secret-looking keys from
the parsed project and hides them wherever they appear. That misses what it
never parsed: a line of an unparseable file, a source line or a ``--diff``
context line whose value sits under a name the collector does not call
secret, or a credential in a URL. :func:`mask_credentials` hides, in one
line of text:

- tokens with a known issuer prefix (``CREDENTIAL_PREFIXES``: GitHub,
  GitLab, Slack, OpenAI, Anthropic, Hugging Face, AWS access key ids,
  Google API keys, npm, PyPI, Stripe) and JSON Web Tokens;
- the password of URL userinfo (``postgres://user:***@db``), the key of a
  user-only userinfo that looks like one (Sentry DSNs,
  ``https://***@o1.ingest.sentry.io/1``), Slack and Discord webhook paths;
- ``Authorization: Bearer ...`` (``Basic``, ``Token``) header values;
- ``NAME: value``, ``NAME=value``, ``"NAME": "value"`` and ``--name value``
  where the name looks secret (:func:`mlcost_lint.secrets.looks_secret`),
  or is an env-style credential name (``CREDENTIAL_NAME``: DB_PASS,
  PGPASSWORD, MYSQL_PWD, OPENAI_KEY, AWS_ACCESS_KEY_ID, ...) and the value
  is high-entropy enough to be one (:func:`looks_random`).

References (``${VAR}``, ``$(VAR)``, ``{{ .Values.x }}``), placeholders and
plain words are left alone, like the collector does, so an ordinary message
or source line reads the same.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from functools import lru_cache

from mlcost_lint.secrets import REDACTED, is_secret_value, looks_secret, words

CREDENTIAL_PREFIXES = (
    r"gh[pousr]_[A-Za-z0-9]{20,}", r"github_pat_[A-Za-z0-9_]{20,}", r"glpat-[A-Za-z0-9_\-]{20,}",
    r"xox[abposr]-[A-Za-z0-9\-]{10,}", r"sk-(?:proj-|ant-(?:api\d\d-)?)?[A-Za-z0-9_\-]{20,}",
    r"(?:sk|rk|pk)_live_[A-Za-z0-9]{16,}", r"hf_[A-Za-z0-9]{30,}", r"(?:AKIA|ASIA)[0-9A-Z]{16}",
    r"AIza[0-9A-Za-z_\-]{35}", r"npm_[A-Za-z0-9]{36}", r"pypi-AgE[A-Za-z0-9_\-]{50,}",
    r"eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}",
)
_PREFIXED = re.compile(r"(?<![A-Za-z0-9_\-])(?:" + "|".join(CREDENTIAL_PREFIXES) + ")")
# scheme://user:password@host -> the password; a reference is kept.
# The look-behind only skips start positions inside a run of letters (a match
# there means one from the run's first letter, which is tried first): the same
# matches, without re-scanning every word of a line from each of its letters.
_URL_PASSWORD = re.compile(r"(?<![A-Za-z])([A-Za-z][A-Za-z0-9+.\-]*://[^\s/:@\"']*:)([^\s/@\"']+)(@)")
# scheme://key@host where the user part is a key (Sentry DSN: 32 hex).
_URL_KEY = re.compile(r"(?<![A-Za-z])([A-Za-z][A-Za-z0-9+.\-]*://)([0-9a-f]{32}|[A-Za-z0-9_\-]{32,})(@)")
_WEBHOOK = re.compile(r"((?:hooks\.slack\.com/(?:services|workflows|triggers)|discord(?:app)?\.com/api/webhooks)/)"
                      r"([A-Za-z0-9/_\-]+)")
_AUTH_HEADER = re.compile(r"(?i)((?:authorization|proxy-authorization)[\"']?\s*[:=]\s*[\"']?"
                          r"(?:bearer|basic|token|bot)\s+)([^\s\"',;]+)")
_BEARER = re.compile(r"(\bBearer\s+)([A-Za-z0-9_\-.~+/=]{16,})")
# NAME: value / NAME=value / "NAME": "value" / export NAME=value, on one line.
_PAIR = re.compile(r"""(?<![A-Za-z0-9_])(["']?)([A-Za-z_][A-Za-z0-9_.\-]*)\1([ \t]*[:=][ \t]*)(["']?)"""
                   r"""([^\s"',}\]]+)""")
_FLAG_PAIR = re.compile(r"(?<![A-Za-z0-9_])(--?[A-Za-z][A-Za-z0-9_\-]*)([ \t]+|=)([^\s\"';&|,}\]-][^\s\"';&|,}\]]*)")
_REFERENCE = re.compile(r"\$\{|\$\(|\{\{|%\{|^\$[A-Za-z_]")

# Env-style names that hold credentials but that looks_secret leaves alone
# (its words would call too many ordinary keys secret): their values are
# masked only when they look random.
CREDENTIAL_WORDS = frozenset({"pass", "pwd", "pw", "passwd", "dsn"})
CREDENTIAL_NAMES = frozenset({"aws_access_key_id", "aws_secret_access_key", "aws_session_token"})
MIN_RANDOM_LENGTH = 8
MIN_RANDOM_BITS_PER_CHAR = 2.5


def looks_random(value: str) -> bool:
    """Long enough, mixing character classes, and high in entropy: a
    generated password or key rather than a word or a setting."""
    if len(value) < MIN_RANDOM_LENGTH or _REFERENCE.search(value) or value.startswith(("/", "./", "~/")):
        return False
    classes = sum((any(c.islower() for c in value), any(c.isupper() for c in value),
                   any(c.isdigit() for c in value), any(not c.isalnum() for c in value)))
    if classes < 2:
        return False
    counts = Counter(value)
    bits = -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())
    return bits >= MIN_RANDOM_BITS_PER_CHAR


def credential_name(name: str) -> bool:
    """An env-style name that holds a credential (DB_PASS, PGPASSWORD,
    MYSQL_PWD, OPENAI_KEY, AWS_ACCESS_KEY_ID)."""
    parts = words(name)
    if not parts:
        return False
    if "_".join(parts) in CREDENTIAL_NAMES:
        return True
    if any(w.endswith(("password", "passwd")) for w in parts):
        return True
    # DB_PASS, MYSQL_PWD; a bare PWD is the working directory.
    if len(parts) >= 2 and any(w in CREDENTIAL_WORDS for w in parts):
        return True
    # OPENAI_KEY, STRIPE_KEY: a vendor key in an environment variable.
    return name.isupper() and len(parts) >= 2 and parts[-1] == "key"


@lru_cache(maxsize=16384)
def _credential_name(name: str) -> bool:
    return credential_name(name)


def credential_name_of(name: object) -> bool:
    """Whether ``name`` is an env-style credential name (a string of at most
    200 characters): the name half of :func:`credential_value`."""
    return isinstance(name, str) and len(name) <= 200 and _credential_name(name)


def credential_value(name: object, value: object) -> bool:
    """A value under an env-style credential name that looks like one: what
    the collector adds beyond :func:`looks_secret` names."""
    return isinstance(value, str) and credential_name_of(name) and looks_random(value.strip())


def _mask_value(name: str, value: str) -> bool:
    if looks_secret(name):
        return is_secret_value(value)
    return credential_name(name) and looks_random(value)


def mask_credentials(text: str) -> str:
    """``text`` with every credential-shaped value replaced by ``***``."""
    if not isinstance(text, str) or len(text) < 8:
        return text
    text = _PREFIXED.sub(REDACTED, text)
    if "://" in text:
        text = _URL_PASSWORD.sub(lambda m: m.group(0) if _REFERENCE.search(m.group(2))
                                 else m.group(1) + REDACTED + m.group(3), text)
        text = _URL_KEY.sub(lambda m: m.group(1) + REDACTED + m.group(3), text)
    if "/" in text:
        text = _WEBHOOK.sub(lambda m: m.group(1) + REDACTED, text)
    text = _AUTH_HEADER.sub(lambda m: m.group(1) + REDACTED, text)
    text = _BEARER.sub(lambda m: m.group(1) + REDACTED, text)
    if ":" in text or "=" in text:
        text = _PAIR.sub(lambda m: m.group(0) if m.group(5) == REDACTED or not _mask_value(m.group(2), m.group(5))
                         else m.group(0)[: m.start(5) - m.start(0)] + REDACTED, text)
    if "-" in text:
        text = _FLAG_PAIR.sub(lambda m: m.group(0) if m.group(3) == REDACTED
                              or not _mask_value(m.group(1).lstrip("-"), m.group(3))
                              else m.group(1) + m.group(2) + REDACTED, text)
    return text
