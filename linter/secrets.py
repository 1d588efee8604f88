"""Secret values: what in the project looks like a secret, so that no
finding ever prints it (product.md, Bad input). The printing side, which
hides these values in every text shown, is :mod:`mlcost_lint.redact`.

After the rules run, :func:`mlcost_lint.redact.redact_findings` replaces
every secret-looking value found anywhere in the project with ``***`` in
each finding's message, address and related messages. Rules do not need to
be careful one by one, and a value that reaches a message through a link,
an object name or a Terraform variable is still caught.

Where values are collected (:func:`collect_secrets`):

- every YAML/JSON document (Kubernetes, training configs, ``.tf.json``,
  plan JSON, embedded ConfigMap configs): the value of any key whose name
  looks secret, Kubernetes ``env`` entries (``{name, value}``) whose name
  looks secret, and every value of a ``kind: Secret`` (``data``/``stringData``);
- ``NAME=value`` / ``NAME: value`` inside any string (shell scripts in
  ``command``/``args``, ``.env``-style ConfigMap data) and ``--name value``
  / ``--name=value`` command-line pairs;
- Terraform HCL: attributes (and object keys such as tag keys) whose name
  looks secret, the ``default`` of a ``variable`` marked ``sensitive = true``
  and the tfvars value of that variable; evaluated resource arguments.

Which names look secret (:func:`looks_secret`): the name is split into
words (``hubToken`` -> hub token, ``WANDB_API_KEY`` -> wandb api key). It is
secret when a word is one of ``SECRET_WORDS`` (password, passwd, passphrase,
secret, token, apikey, credential(s)), or ``key`` follows one of
``KEY_QUALIFIERS`` (api key, access key, private key, secret key, account
key, ...). It is not secret when its last word names a reference rather
than the secret itself (``NON_SECRET_LAST_WORDS``: secret_name, kms_key_id,
key_name, api_key_env, token_file, secretKeyRef, password_length, ...),
when ``token`` is a tokenizer's special token (pad_token, eos_token,
max_tokens is not even a match), or when the name is in
``NON_SECRET_NAMES``. A bare ``key`` (tolerations, configMapKeyRef) is not
secret.

Which values are redacted: strings of at least ``MIN_SECRET_LENGTH``
characters that are not references (``${...}``, ``$(VAR)``, ``{{ }}``), not
a boolean/null word, a number or a placeholder (``PLACEHOLDERS``: secret,
changeme, ...), and not a short plain word (lowercase letters only, under
``MIN_WORD_SECRET_LENGTH``). Replacing such values would garble unrelated
words in every message of the run (``password: secret`` in one example
file must not turn a Job named ``from-secret`` into ``from-***``); real
credentials are longer or carry digits and symbols. Values from the environment of the linter
process are not collected: they never reach a message unless a scanned
file holds them too.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Iterable

REDACTED = "***"
MIN_SECRET_LENGTH = 6
MIN_WORD_SECRET_LENGTH = 12
PLACEHOLDERS = frozenset({
    "secret", "secrets", "password", "passwd", "changeme", "change-me", "change_me", "changeit", "redacted",
    "example", "placeholder", "replaceme", "your-token", "your_token", "yourtoken", "your-api-key",
    "your_api_key", "xxxxxx", "xxxxxxxx", "<token>", "<password>", "token", "apikey", "api-key", "default",
    "required", "optional", "string", "notset", "unset", "dummy", "testtest",
})

SECRET_WORDS = frozenset({
    "password", "passwd", "passphrase", "secret", "token", "apikey", "credential", "credentials",
    "pat", "webhook",
})
# "key" is secret only after one of these ("api key", "access key", ...).
KEY_QUALIFIERS = frozenset({
    "api", "access", "private", "secret", "account", "signing", "encryption", "master", "client", "auth",
    "storage", "shared", "primary", "secondary", "license", "hmac", "ssh",
})
# The name points at a secret, or describes it, rather than holding it.
NON_SECRET_LAST_WORDS = frozenset({
    "name", "names", "id", "ids", "arn", "env", "var", "variable", "file", "path", "ref", "refs", "type",
    "length", "size", "ttl", "version", "alias", "algorithm", "usage", "rotation", "period", "count",
    "prefix", "suffix", "format", "url", "uri", "endpoint", "header", "field", "mode", "enabled", "policy",
    "namespace", "selector", "mount", "volume", "provider", "source", "expiration", "expiry", "days",
    "location", "store", "vault", "manager", "required", "pair", "public",
})
# Tokenizer vocabulary, not credentials ("pad_token: <|end_of_text|>").
SPECIAL_TOKEN_WORDS = frozenset({
    "pad", "eos", "bos", "unk", "sep", "cls", "mask", "special", "chat", "start", "end", "image", "audio",
    "video", "vision", "additional", "eot", "system", "user", "assistant", "default",
})
NON_SECRET_NAMES = frozenset({
    "public_key", "ssh_public_key", "token_type", "secret_type", "tokenizer", "tokenizer_name",
    "tokenizer_type", "token_lifetime", "webhook_url", "pat_enabled",
})
SECRET_KINDS = frozenset({"Secret", "SealedSecret", "ExternalSecret"})

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SPLIT = re.compile(r"[^A-Za-z0-9]+")
_REFERENCE = re.compile(r"\$\{|\$\(|\{\{|%\{|^\$[A-Za-z_]|^<.*>$|^\*+$")
_PLAIN_WORDS = frozenset({"true", "false", "null", "none", "yes", "no", "on", "off", "nil", "undefined"})
# NAME=value, NAME: value, export NAME="value" inside a longer string, on
# one line: "password:" at the end of a line is followed by the next line's
# key ("enabled:"), which is no value (issue 11, 3.6).
_ASSIGNMENT = re.compile(
    r"""(?:^|[\s;&|({,])(?:export[ \t]+)?["']?([A-Za-z_][A-Za-z0-9_.\-]*)["']?[ \t]*[:=][ \t]*["']?"""
    r"""([^\s"';&|,}]+)""")
_FLAG = re.compile(r"^--?([A-Za-z][A-Za-z0-9_.\-]*)(?:=(.*))?$")


def words(name: str) -> list[str]:
    return [w.lower() for part in _SPLIT.split(name) for w in _CAMEL.sub(" ", part).split() if w]


def looks_secret(name: Any) -> bool:
    """Whether a key, attribute, env var or flag name looks like it holds a secret."""
    if not isinstance(name, str) or not name or len(name) > 200:
        return False
    return _name_looks_secret(name)


# A run asks about the same few thousand key names hundreds of thousands of
# times (every ``name``, ``image``, ``resources`` of every manifest). Names
# are at most 200 characters (checked above), so the cache is small.
@lru_cache(maxsize=16384)
def _name_looks_secret(name: str) -> bool:
    parts = words(name)
    if not parts or "_".join(parts) in NON_SECRET_NAMES or parts[-1] in NON_SECRET_LAST_WORDS:
        return False
    for i, w in enumerate(parts):
        if w == "token" and i > 0 and parts[i - 1] in SPECIAL_TOKEN_WORDS:
            return False
        if w in SECRET_WORDS:
            return True
        if w == "key" and i > 0 and parts[i - 1] in KEY_QUALIFIERS:
            return True
    return False


def is_secret_value(value: Any) -> bool:
    """A value worth redacting: a literal string long enough to be unambiguous."""
    if not isinstance(value, str):
        return False
    text = value.strip()
    if len(text) < MIN_SECRET_LENGTH or _REFERENCE.search(text) or text.lower() in _PLAIN_WORDS \
            or text.lower() in PLACEHOLDERS or set(text.lower()) <= {"x", "*", "-", "_", "."}:
        return False
    if len(text) < MIN_WORD_SECRET_LENGTH and text.isalpha() and text.islower():
        return False
    try:
        float(text)
        return False
    except ValueError:
        return True


class _Collector:
    def __init__(self) -> None:
        # Env-style credential names (DB_PASS, MYSQL_PWD, AWS_ACCESS_KEY_ID)
        # whose value looks random: mlcost_lint.credentials (imported here,
        # it imports this module).
        from mlcost_lint.credentials import credential_value

        self.values: set[str] = set()
        self.sensitive_vars: set[str] = set()
        self.credential = credential_value

    def add(self, value: Any) -> None:
        if is_secret_value(value):
            self.values.add(value.strip())
            if value != value.strip():
                self.values.add(value)

    # -- plain data (YAML / JSON documents, evaluated Terraform values) ----
    def data(self, root: Any) -> None:
        # Hot loop (every node of every document): strings are handled where
        # they are met and other scalars never reach the stack; what is added
        # only depends on the node and the flag, so the order does not matter.
        from mlcost_lint.credentials import looks_random

        add, text, looks, credential = self.add, self.text, looks_secret, self.credential
        key_class = _KEY_CLASS
        stack: list[tuple[Any, bool]] = [(root, False)]
        seen: set[tuple[int, bool]] = set()   # anchors share sub-trees; cycles
        while stack:
            node, all_secret = stack.pop()
            if isinstance(node, str):
                if all_secret:
                    add(node)
                text(node)
                continue
            is_dict = isinstance(node, dict)
            if not is_dict and not isinstance(node, list):
                continue
            # Keyed with the flag: a Secret's data is reached both ways.
            mark = (id(node), all_secret)
            if mark in seen:
                continue
            seen.add(mark)
            if is_dict:
                kind = node.get("kind")
                if isinstance(kind, str) and kind in SECRET_KINDS:
                    for key in ("data", "stringData", "spec"):
                        stack.append((node.get(key), True))
                if "value" in node and (looks(node.get("name")) or credential(node.get("name"), node.get("value"))):
                    add(node.get("value"))           # Kubernetes env entry
                if node.get("sensitive") is True:
                    add(node.get("default"))         # .tf.json sensitive variable
                children: Iterable[Any] = node.values()
                for key, value in node.items():
                    # what the key's name says, looked up once (as in evaluated())
                    cls = key_class.get(key)
                    if cls is None:
                        cls = _classify_key(key)
                    if cls == _KEY_SECRET:
                        if isinstance(value, dict):  # {"default": ...}, {"value": ...}
                            add(value.get("default"))
                            add(value.get("value"))
                        else:
                            add(value)
                    elif cls == _KEY_CREDENTIAL and isinstance(value, str) and looks_random(value.strip()):
                        add(value)
            else:
                self._flags(node)
                children = node
            for child in children:
                if isinstance(child, str):
                    if all_secret:
                        add(child)
                    # text()'s own first test, without the call for most strings
                    if len(child) >= MIN_SECRET_LENGTH and ("=" in child or ":" in child or "-" in child):
                        text(child)
                elif isinstance(child, (dict, list)):
                    stack.append((child, all_secret))

    def evaluated(self, root: Any) -> None:
        """:meth:`data` over ``_known(root)`` without building it: entries
        keyed UNKNOWN are skipped, tuples are lists, UNKNOWN itself is a
        scalar that adds nothing. No ``seen`` set: _known copies shared
        sub-trees, so each is walked once per path, and a cycle ends in
        _TooDeep (then RecursionError in _known) as before.

        Hot (every evaluated argument of every resource: 270,000 keys and
        230,000 strings on bench/'s 2,000-file tree, with 17,000 distinct
        strings): what a key name says is looked up once (_KEY_CLASS)."""
        from mlcost_lint.credentials import looks_random
        from mlcost_lint.model.core import UNKNOWN

        add, text, credential_value = self.add, self.text, self.credential
        key_class = _KEY_CLASS
        stack: list[tuple[Any, bool, int]] = [(root, False, 0)]
        while stack:
            node, all_secret, depth = stack.pop()
            if isinstance(node, str):
                if all_secret:
                    add(node)
                text(node)
                continue
            is_dict = isinstance(node, dict)
            if not is_dict and not isinstance(node, (list, tuple)):
                continue
            if depth > _EVALUATED_DEPTH_LIMIT:
                raise _TooDeep
            depth += 1
            if is_dict:
                kind = node.get("kind")
                if isinstance(kind, str) and kind in SECRET_KINDS:
                    for key in ("data", "stringData", "spec"):
                        stack.append((node.get(key), True, depth))
                if "value" in node and (looks_secret(node.get("name"))
                                        or credential_value(node.get("name"), node.get("value"))):
                    add(node.get("value"))
                if node.get("sensitive") is True:
                    add(node.get("default"))
                children: list[Any] = []
                for key, value in node.items():
                    if key is UNKNOWN:
                        continue
                    children.append(value)
                    cls = key_class.get(key)
                    if cls is None:
                        cls = _classify_key(key)
                    if cls == _KEY_SECRET:
                        if isinstance(value, dict):
                            add(value.get("default"))
                            add(value.get("value"))
                        else:
                            add(value)
                    elif cls == _KEY_CREDENTIAL and isinstance(value, str) and looks_random(value.strip()):
                        add(value)
            else:
                self._flags(node)
                children = node
            for child in children:
                if isinstance(child, str):
                    if all_secret:
                        add(child)
                    text(child)
                elif isinstance(child, (dict, list, tuple)):
                    stack.append((child, all_secret, depth))

    def _flags(self, items: list) -> None:
        """``["--hub_token", "hf_x"]`` and ``["--hub_token=hf_x"]``."""
        for value in _flag_values(items):
            self.add(value)

    def text(self, text: str) -> None:
        """Assignments and flags inside a string (scripts, .env data)."""
        if len(text) < MIN_SECRET_LENGTH or ("=" not in text and ":" not in text and "-" not in text):
            return
        values = _text_values(text) if len(text) <= _MEMO_TEXT_MAX else _text_values.__wrapped__(text)
        for value in values:
            self.add(value)

    # -- Terraform HCL -----------------------------------------------------
    def hcl_body(self, body: Any, tfvars: bool = False) -> None:
        exprs: list[tuple[Any, bool]] = []
        attributes = getattr(body, "attributes", None) or {}
        for name, attribute in attributes.items():
            secret = looks_secret(name) or (tfvars and name in self.sensitive_vars)
            exprs.append((getattr(attribute, "expr", None), secret))
        stack = list(getattr(body, "blocks", None) or [])
        while stack:
            block = stack.pop()
            is_variable = block.type == "variable"
            sensitive = is_variable and _literal(getattr(block.attributes.get("sensitive"), "expr", None)) is True
            for name, attribute in block.attributes.items():
                secret = looks_secret(name) or (sensitive and name == "default") or (
                    is_variable and name == "default" and block.labels and looks_secret(block.labels[0]))
                exprs.append((attribute.expr, secret))
            stack.extend(block.blocks)
        # One walk over every expression, last first as one call each took
        # them: what is added depends on the node and its flag alone.
        exprs.reverse()
        self._hcl_exprs(exprs)

    def _hcl_exprs(self, stack: list[tuple[Any, bool]]) -> None:
        H = _hcl()
        literal_type, template_type, object_type, tuple_type = H.Literal, H.Template, H.ObjectExpr, H.TupleExpr
        call_type, conditional_type, parenthesis_type = H.FunctionCall, H.Conditional, H.Parenthesis
        add, text = self.add, self.text
        while stack:
            node, is_secret = stack.pop()
            if node is None:
                continue
            t = type(node)
            if t is literal_type:
                if is_secret:
                    add(node.value)
                elif isinstance(node.value, str):
                    text(node.value)
            elif t is template_type:
                literal = _literal(node)
                if is_secret and literal is not None:
                    add(literal)
                for part in node.parts:
                    if isinstance(part, str):
                        text(part)
                    else:
                        stack.append((part, False))
            elif t is object_type:
                for item in node.items:
                    key = _literal(item.key)
                    stack.append((item.value, is_secret or looks_secret(key)))
            elif t is tuple_type:
                stack.extend((item, is_secret) for item in node.items)
            elif t is call_type:
                stack.extend((arg, is_secret) for arg in node.args)
            elif t is conditional_type:
                stack.extend([(node.true, is_secret), (node.false, is_secret)])
            elif t is parenthesis_type:
                stack.append((node.expr, is_secret))


def _flag_values(items: list) -> list[str]:
    """The values of secret-looking ``--name value`` / ``--name=value`` flags."""
    found = []
    for i, item in enumerate(items):
        # "-" is needed for _FLAG to match: a C-level test skips most items.
        if not isinstance(item, str) or "-" not in item:
            continue
        m = _FLAG.match(item.strip())
        if m is None or not looks_secret(m.group(1)):
            continue
        if m.group(2) is not None:
            found.append(m.group(2))
        elif i + 1 < len(items):
            found.append(items[i + 1])
    return found


# The same strings (image names, commands, label values) recur in every
# manifest of a repository; only short ones are kept so the cache stays small.
_MEMO_TEXT_MAX = 2048


@lru_cache(maxsize=32768)
def _text_values(text: str) -> tuple[str, ...]:
    """The candidate values of secret-looking assignments and flags in ``text``
    (not yet filtered by :func:`is_secret_value`)."""
    found = [m.group(2) for m in _ASSIGNMENT.finditer(text[:200_000])
             if looks_secret(m.group(1)) and not m.group(2).endswith(":")]  # "token: {key: ...}"
    if "-" in text:
        found += _flag_values(text.split())
    return tuple(found)


_HCL_MODULE: Any = None


def _hcl() -> Any:
    """mlcost_lint.parse.hcl, imported on first use (an import statement in
    the per-expression helpers cost 170k import look-ups a run)."""
    global _HCL_MODULE
    if _HCL_MODULE is None:
        from mlcost_lint.parse import hcl

        _HCL_MODULE = hcl
    return _HCL_MODULE


def _literal(expr: Any) -> Any:
    """The constant value of a literal or a template with only text, else None."""
    H = _hcl()
    if isinstance(expr, H.Literal):
        return expr.value
    if isinstance(expr, H.Template) and all(isinstance(p, str) for p in expr.parts):
        return "".join(expr.parts)
    return None


def file_secrets(pf: Any) -> frozenset[str]:
    """What :func:`collect_secrets` finds in one parsed file's documents and
    HCL (not a .tfvars file: its values are secret when a variable declared
    in another file is ``sensitive``)."""
    c = _Collector()
    for doc in pf.documents:
        c.data(doc.data)
    if pf.hcl is not None:
        c.hcl_body(pf.hcl, tfvars=False)
    return frozenset(c.values)


def data_secrets(roots: Iterable[Any]) -> frozenset[str]:
    """The secret-looking values of plain data (the documents of the
    training configs a ConfigMap embeds, which collect_secrets reads)."""
    c = _Collector()
    for root in roots:
        c.data(root)
    return frozenset(c.values)


def collect_hcl_secrets(files: list) -> frozenset[str]:
    """The secret-looking values of the files' HCL trees (``ParsedFile.hcl``)
    not already found at parse time (``ParsedFile.secrets``): the tfvars
    that set variables declared ``sensitive`` anywhere. The model stage
    keeps this and releases the trees (Project.hcl_secrets)."""
    c = _Collector()
    for pf in files:
        hcl = getattr(pf, "hcl", None)
        outline = getattr(pf, "hcl_outline", None)
        if hcl is None and outline is not None:     # a cached .tf file: its tree is not loaded
            c.sensitive_vars.update(outline.sensitive_variables)
            continue
        for block in getattr(hcl, "blocks", None) or []:
            if block.type == "variable" and block.labels and _literal(
                    getattr(block.attributes.get("sensitive"), "expr", None)) is True:
                c.sensitive_vars.add(str(block.labels[0]))
    for pf in files:
        hcl = getattr(pf, "hcl", None)
        if hcl is not None and getattr(pf, "secrets", None) is None:
            c.hcl_body(hcl, tfvars=pf.path.endswith(".tfvars"))
    return frozenset(c.values)


def collect_secrets(project: Any) -> set[str]:
    """Every secret-looking value in the project (see the module docstring)."""
    c = _Collector()
    files = list(getattr(project, "files", ()) or ())
    hcl_values = getattr(project, "hcl_secrets", None)
    c.values |= hcl_values if hcl_values is not None else collect_hcl_secrets(files)
    c.values |= getattr(project, "outside_secrets", frozenset())
    for pf in files:
        own = getattr(pf, "secrets", None)
        if own is not None:      # found at parse time (file_secrets), cached with the parse result
            c.values |= own
            continue
        for doc in getattr(pf, "documents", ()) or ():
            c.data(doc.data)
    for config in getattr(project, "training", ()) or ():
        if getattr(config, "embedded_in", None):
            c.data(config.document.data)
    terraform = getattr(project, "terraform", None)
    if terraform is not None:
        c.values |= terraform.known_secrets
        taken = terraform.secrets_taken
        for resource in terraform.resources:
            if id(resource) not in taken:
                c.values |= resource_secrets(resource)
    return c.values


def resource_secrets(resource: Any) -> frozenset[str]:
    """The secret-looking values in one resource's evaluated arguments and tags."""
    found: set[str] = set()
    for value in (resource.attrs, resource.tags if isinstance(resource.tags, dict) else None):
        try:
            found |= _evaluated_secrets(value)
        except RecursionError:  # values are size-bounded, not depth-bounded: the literals were read above
            continue
    return frozenset(found)


# What a key of an evaluated value says about the value under it
# (_Collector.evaluated): a secret-looking name (looks_secret), an env-style
# credential name whose value counts when it looks random
# (credentials.credential_value), or neither. Keys are attribute and map
# key names, a few thousand per repository; the table is emptied if it
# ever grows past _KEY_CLASS_MAX.
_KEY_OTHER, _KEY_SECRET, _KEY_CREDENTIAL = 0, 1, 2
_KEY_CLASS: dict[Any, int] = {}
_KEY_CLASS_MAX = 65536


def _classify_key(key: Any) -> int:
    from mlcost_lint.credentials import credential_name_of

    if looks_secret(key):
        cls = _KEY_SECRET
    elif credential_name_of(key):
        cls = _KEY_CREDENTIAL
    else:
        cls = _KEY_OTHER
    if len(_KEY_CLASS) >= _KEY_CLASS_MAX:
        _KEY_CLASS.clear()
    _KEY_CLASS[key] = cls
    return cls


# Evaluated values are walked as they are, without the copy _known makes.
# Up to this depth that walk and ``data(_known(value))`` see the same nodes;
# deeper values (only hostile inputs nest this far) take the original path,
# so that a value too deep for _known is still skipped as it always was.
_EVALUATED_DEPTH_LIMIT = 100


class _TooDeep(Exception):
    pass


def _evaluated_secrets(value: Any) -> set[str]:
    """The secrets :meth:`_Collector.data` finds in ``_known(value)`` (same
    result; raises RecursionError where _known does)."""
    if value is None:
        return set()
    c = _Collector()
    try:
        c.evaluated(value)
    except _TooDeep:
        c = _Collector()
        c.data(_known(value))
    return c.values


def _known(value: Any) -> Any:
    """Evaluated values without UNKNOWN (which refuses a truth test)."""
    from mlcost_lint.model.core import UNKNOWN

    if value is UNKNOWN:
        return None
    if isinstance(value, dict):
        return {k: _known(v) for k, v in value.items() if k is not UNKNOWN}
    if isinstance(value, (list, tuple)):
        return [_known(v) for v in value]
    return value
