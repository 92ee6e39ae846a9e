"""Secret keys and keyed randomness for surrogates, keyed hashes and date shifts.

Every keyed decision in clinideid is ``HMAC-SHA256(key, parts)``: the same key, scope and normalised value
give the same output on every machine, a different key gives unrelated outputs, and no mapping table is
stored. There is deliberately no built-in default key: a keyed operator without a key raises
``ConfigError`` telling the user to pass ``--key-file`` or ``--ephemeral-key``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import logging
import os
import secrets
import string
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from clinideid.errors import ConfigError

log = logging.getLogger(__name__)

MIN_KEY_BYTES = 16
DEFAULT_KEY_BYTES = 32
CORPUS_SCOPE = "corpus"

T = TypeVar("T")

_HEX = frozenset(string.hexdigits)
_B64 = frozenset(string.ascii_letters + string.digits + "+/=-_")
#: key lengths people generate (``openssl rand -hex N``, ``clinideid keygen --bytes N``); others are warned
_USUAL_KEY_BYTES = frozenset({16, 20, 24, 32, 48, 64})
_MAKE_KEY = "create one with `clinideid keygen PATH` or `openssl rand -hex 32 > key.txt`"


def generate_key(n_bytes: int = DEFAULT_KEY_BYTES) -> bytes:
    """A fresh random key from the OS's cryptographic source."""
    if n_bytes < MIN_KEY_BYTES:
        raise ConfigError(f"a key needs at least {MIN_KEY_BYTES} bytes, asked for {n_bytes}")
    return secrets.token_bytes(n_bytes)


def ephemeral_key() -> bytes:
    """A random key for this run only: surrogates will not be reproducible in another run."""
    log.warning(
        "using an ephemeral key: surrogates and date shifts will differ from any other run; "
        "use --key-file for reproducible, consistent pseudonyms"
    )
    return generate_key()


def save_key(path: str | Path, key: bytes) -> Path:
    """Write ``key`` as hex text to a new file readable only by its owner."""
    check_key(key)
    path = Path(path)
    if path.exists():
        raise ConfigError(f"key file {path} already exists; refusing to overwrite a key")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(key.hex() + "\n")
    return path


def key_weakness(key: bytes) -> str | None:
    """Why ``key`` is too predictable to be a secret (``None`` if it is not): one repeated byte (an
    all-zero key), a short repeated pattern (``0101...``, ``abcdabcd...``) or two distinct byte values."""
    if not key:
        return "it is empty"
    if len(set(key)) == 1:
        return f"every byte is 0x{key[0]:02x}"
    for period in (2, 3, 4):
        if len(key) > period and all(key[i] == key[i % period] for i in range(len(key))):
            return f"it repeats a {period}-byte pattern"
    if len(set(key)) <= 2:
        return "it holds only two distinct byte values"
    return None


#: the last key that passed ``check_key`` (keyed operators check the key on every replacement; a
#: document has thousands of them and the key does not change between them)
_LAST_GOOD_KEY: list[bytes] = []


def check_key(key: object) -> bytes:
    """``key`` if it is a usable key, else ``ConfigError``: too short, or too predictable to be secret
    (all-zero, one repeated byte, a short repeated pattern)."""
    if type(key) is bytes and _LAST_GOOD_KEY and _LAST_GOOD_KEY[0] == key:
        return key
    if not isinstance(key, bytes | bytearray):
        raise ConfigError(f"a key must be bytes, got {type(key).__name__}")
    key = bytes(key)
    if len(key) < MIN_KEY_BYTES:
        raise ConfigError(f"the key has {len(key)} bytes; at least {MIN_KEY_BYTES} are needed ({_MAKE_KEY})")
    weakness = key_weakness(key)
    if weakness is not None:
        raise ConfigError(
            f"the key is not secret: {weakness}, so anyone could guess it and reverse the pseudonyms; "
            f"use a random key ({_MAKE_KEY})"
        )
    _LAST_GOOD_KEY[:] = [key]
    return key


def decode_key_text(text: str, *, origin: str = "key") -> bytes:
    """A key written as text: hex (``hex:`` prefix optional) or base64 (``base64:``/``b64:`` prefix optional).

    A body made only of hex digits is hex (an odd number of digits is a truncated key, refused); prefix it
    with ``base64:`` to read it as base64. The key must pass ``check_key``; an unusual length is warned
    about (a hex key that lost an even number of digits still decodes).
    """
    body = "".join(text.split())
    if not body:
        raise ConfigError(f"{origin} is empty; it must hold at least {MIN_KEY_BYTES} bytes")
    prefix, _, rest = body.partition(":")
    if rest and prefix.lower() in ("hex", "base64", "b64"):
        kind, body = ("hex" if prefix.lower() == "hex" else "base64"), rest
    elif set(body) <= _HEX:
        kind = "hex"  # hex wins over base64: write "base64:..." for a base64 key made of hex digits only
    elif set(body) <= _B64:
        kind = "base64"
    else:
        raise ConfigError(
            f"{origin} is text but neither hex nor base64; write the key as hex (e.g. `openssl rand -hex 32`) "
            "or as raw bytes"
        )
    if kind == "hex" and len(body) % 2:
        raise ConfigError(
            f"{origin} has an odd number of hex digits ({len(body)}): truncated hex key? restore the whole "
            "key (`openssl rand -hex 32` writes 64 digits), or write 'base64:' before it if it is base64"
        )
    try:
        if kind == "hex":
            key = bytes.fromhex(body)
        else:
            padded = body + "=" * (-len(body) % 4)
            altchars = b"-_" if ("-" in body or "_" in body) else None
            key = base64.b64decode(padded, altchars=altchars, validate=True)
    except (ValueError, binascii.Error):
        raise ConfigError(f"{origin} is not valid {kind}") from None
    if len(key) < MIN_KEY_BYTES:
        raise ConfigError(
            f"{origin} decodes to {len(key)} bytes; at least {MIN_KEY_BYTES} are needed "
            "(e.g. `openssl rand -hex 32 > key.txt`)"
        )
    try:
        check_key(key)
    except ConfigError as exc:
        raise ConfigError(f"{origin}: {exc}") from None
    if len(key) not in _USUAL_KEY_BYTES:
        log.warning(
            "%s decodes to %d bytes, an unusual key length (keys are usually 16, 32 or 64 bytes): was it "
            "truncated? surrogates from a truncated key differ from those of the whole key",
            origin,
            len(key),
        )
    return key


def load_key(path: str | Path) -> bytes:
    """Read a secret key file: raw bytes, or hex / base64 text (at least 16 bytes once decoded)."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"key file {path} does not exist (create one with `clinideid keygen {path}`)")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read key file {path}: {exc.strerror}") from None
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        text = None
    if text is not None and text.strip() and all(c.isprintable() or c.isspace() for c in text):
        return decode_key_text(text, origin=f"key file {path}")
    if len(raw) < MIN_KEY_BYTES:
        raise ConfigError(f"key file {path} holds {len(raw)} bytes; at least {MIN_KEY_BYTES} are needed")
    try:
        return check_key(raw)
    except ConfigError as exc:
        raise ConfigError(f"key file {path}: {exc}") from None


def require_key(key: bytes | None, operator: str) -> bytes:
    """The key a keyed operator needs, or a ``ConfigError`` saying how to give one."""
    if key is None:
        raise ConfigError(
            f"operator {operator!r} needs a secret key: pass --key-file PATH (create one with "
            "`clinideid keygen PATH`) or --ephemeral-key for a one-off run that is not reproducible"
        )
    return check_key(key)


def _encode(parts: Sequence[object]) -> bytes:
    """Unambiguous encoding of the HMAC message: each part length-prefixed."""
    out = bytearray()
    for part in parts:
        data = part if isinstance(part, bytes) else str(part).encode("utf-8")
        out += len(data).to_bytes(4, "big") + data
    return bytes(out)


def keyed_digest(key: bytes, *parts: object) -> bytes:
    """``HMAC-SHA256(key, parts)`` with the parts encoded unambiguously."""
    return hmac.new(key, _encode(parts), hashlib.sha256).digest()


class KeyedRandom:
    """A deterministic stream of choices derived from ``HMAC(key, parts)`` in counter mode.

    Unlike ``random.Random`` its output is fixed by this code alone, so surrogates do not change across
    Python versions or machines.
    """

    def __init__(self, key: bytes, *parts: object) -> None:
        # the HMAC state after the parts, copied for each block: a block costs the same whatever the
        # parts' length (hashing them again for each block of a long value's surrogate took quadratic time)
        self._mac = hmac.new(key, _encode(parts), hashlib.sha256)
        self._counter = 0
        self._buffer = b""

    def _bytes(self, n: int) -> bytes:
        while len(self._buffer) < n:
            mac = self._mac.copy()
            mac.update(self._counter.to_bytes(8, "big"))
            block = mac.digest()
            self._counter += 1
            self._buffer += block
        out, self._buffer = self._buffer[:n], self._buffer[n:]
        return out

    def randbelow(self, n: int) -> int:
        """A uniform integer in ``[0, n)`` (rejection sampling, no modulo bias)."""
        if n <= 0:
            raise ValueError("randbelow needs a positive bound")
        if n == 1:
            return 0
        n_bytes = ((n - 1).bit_length() + 7) // 8 + 1
        limit = (256**n_bytes // n) * n
        while True:
            value = int.from_bytes(self._bytes(n_bytes), "big")
            if value < limit:
                return value % n

    def randint(self, low: int, high: int) -> int:
        """A uniform integer in ``[low, high]``."""
        return low + self.randbelow(high - low + 1)

    def choice(self, seq: Sequence[T]) -> T:
        if not seq:
            raise ValueError("cannot choose from an empty sequence")
        return seq[self.randbelow(len(seq))]

    def digit(self, low: int = 0) -> str:
        return str(self.randint(low, 9))


def scope_for(
    doc_id: str, metadata: Mapping[str, Any], scope: str = "document", field: str = "patient_id"
) -> str:
    """The surrogate scope id of a document.

    ``document``: its id (surrogates may differ between documents); ``patient``: ``metadata[field]``
    (falls back to the document id when missing); ``corpus``: one constant, so the same value gets the same
    surrogate in every document.
    """
    if scope == "document":
        return f"document:{doc_id}"
    if scope == "patient":
        value = metadata.get(field)
        if value in (None, ""):
            log.warning("document %s has no %r in its metadata; using document scope", doc_id, field)
            return f"document:{doc_id}"
        return f"patient:{value}"
    if scope == "corpus":
        return CORPUS_SCOPE
    raise ConfigError(f"unknown surrogate scope {scope!r}; choose document, patient or corpus")
