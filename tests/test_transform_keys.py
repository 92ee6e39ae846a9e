"""Secret keys: loading, generating, and the refusal to run keyed operators without one."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import time

import pytest

from clinideid.document import Document, Span
from clinideid.errors import ConfigError
from clinideid.transform.base import OperatorContext, build_operator
from clinideid.transform.keys import (
    MIN_KEY_BYTES,
    KeyedRandom,
    ephemeral_key,
    generate_key,
    keyed_digest,
    load_key,
    require_key,
    save_key,
    scope_for,
)


def test_generate_key_is_random_and_long_enough():
    a, b = generate_key(), generate_key()
    assert len(a) == 32 and a != b
    with pytest.raises(ConfigError):
        generate_key(8)


def test_ephemeral_key_is_a_fresh_key(caplog):
    key = ephemeral_key()
    assert len(key) >= MIN_KEY_BYTES
    assert "ephemeral" in caplog.text


@pytest.mark.parametrize(
    "content",
    [
        lambda k: k,  # raw bytes
        lambda k: k.hex().encode(),
        lambda k: (k.hex() + "\n").encode(),
        lambda k: base64.b64encode(k),
        lambda k: b"base64:" + base64.b64encode(k),
        lambda k: b"hex:" + k.hex().encode(),
    ],
)
def test_load_key_formats(tmp_path, content):
    key = bytes(range(200, 232))
    path = tmp_path / "key"
    path.write_bytes(content(key))
    assert load_key(path) == key


def test_save_then_load_round_trip_and_private_mode(tmp_path):
    key = generate_key()
    path = save_key(tmp_path / "k.txt", key)
    assert load_key(path) == key
    assert os.stat(path).st_mode & 0o077 == 0
    with pytest.raises(ConfigError, match="already exists"):
        save_key(path, key)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "0 bytes"),
        (b"abcd", "at least 16"),
        (bytes(range(10)), "at least 16"),
        (b"not a key at all!!", "neither hex nor base64"),
    ],
)
def test_load_key_rejects_bad_keys(tmp_path, content, message):
    path = tmp_path / "key"
    path.write_bytes(content)
    with pytest.raises(ConfigError, match=message):
        load_key(path)


def test_missing_key_file_says_how_to_make_one(tmp_path):
    with pytest.raises(ConfigError, match="keygen"):
        load_key(tmp_path / "nope")


def test_keyed_operator_without_key_asks_for_key_file():
    doc = Document("d", "John Smith", spans=[Span(0, 10, "PATIENT")])
    ctx = OperatorContext(document=doc, spans=doc.spans)
    with pytest.raises(ConfigError, match="--key-file") as info:
        build_operator("surrogate").replace(doc.spans[0], ctx)
    assert "--ephemeral-key" in str(info.value)
    assert "John" not in str(info.value)
    for name in ("hash", "date_shift"):
        with pytest.raises(ConfigError, match="--key-file"):
            build_operator(name).replace(doc.spans[0], ctx)
    with pytest.raises(ConfigError):
        require_key(b"short", "hash")


def test_keyed_digest_is_unambiguous_and_keyed():
    key = bytes(16)
    assert keyed_digest(key, "ab", "c") != keyed_digest(key, "a", "bc")
    assert keyed_digest(key, "x") != keyed_digest(bytes([1]) * 16, "x")
    assert keyed_digest(key, "x") == keyed_digest(key, "x")


def test_keyed_random_is_deterministic_and_uniformish():
    a = KeyedRandom(bytes(16), "scope", "v")
    b = KeyedRandom(bytes(16), "scope", "v")
    draws = [a.randbelow(10) for _ in range(2000)]
    assert draws == [b.randbelow(10) for _ in range(2000)]
    counts = [draws.count(i) for i in range(10)]
    assert min(counts) > 130 and max(counts) < 270
    assert all(3 <= a.randint(3, 5) <= 5 for _ in range(100))
    with pytest.raises(ValueError):
        a.choice([])


def test_keyed_random_is_hmac_in_counter_mode():
    """Block i of the stream is HMAC-SHA256(key, parts, i): surrogates stay the same across versions."""
    key, parts = bytes(range(32)), [part.encode() for part in ("scope", "12", "é" * 50)]
    stream = KeyedRandom(key, *parts)
    message = b"".join(len(part).to_bytes(4, "big") + part for part in parts)
    expected = b"".join(
        hmac.new(key, message + i.to_bytes(8, "big"), hashlib.sha256).digest() for i in range(3)
    )
    assert stream._bytes(70) + stream._bytes(26) == expected


def test_keyed_random_cost_per_draw_does_not_grow_with_the_value():
    """The surrogate of a long value (a 100,000-digit run taken for an identifier) draws a number per
    character: hashing the value again for each draw took time quadratic in its length."""

    def cpu(value: str) -> float:
        stream = KeyedRandom(bytes(range(32)), "scope", value)
        t0 = time.process_time()
        for _ in range(5000):
            stream.randbelow(10)
        return time.process_time() - t0

    short = min(cpu("x") for _ in range(3))
    long = min(cpu("1" * 1_000_000) for _ in range(2))
    assert long < 5 * short + 0.05, (short, long)


def test_scope_for():
    assert scope_for("d1", {}, "document") == "document:d1"
    assert scope_for("d1", {"patient_id": "p9"}, "patient") == "patient:p9"
    assert scope_for("d1", {}, "patient") == "document:d1"
    assert scope_for("d1", {}, "corpus") == scope_for("d2", {}, "corpus")
    with pytest.raises(ConfigError):
        scope_for("d1", {}, "galaxy")


KEY32 = bytes(range(200, 232))


@pytest.mark.parametrize(
    "content",
    [
        KEY32.hex()[:-1],  # 63 hex digits: a truncated key
        "hex:" + KEY32.hex()[:-1],
        KEY32.hex()[:31] + "\n",
    ],
)
def test_odd_hex_is_a_truncated_key_not_base64(tmp_path, content):
    path = tmp_path / "key"
    path.write_text(content, encoding="ascii")
    with pytest.raises(ConfigError, match=r"odd number of hex digits .*truncated hex key\?"):
        load_key(path)


def test_hex_wins_over_base64_and_base64_prefix_forces_base64(tmp_path):
    body = "0123456789abcdef0123456789abcdef" + "fedcba9876543210fedcba9876543210"  # hex and base64 alike
    path = tmp_path / "key"
    path.write_text(body, encoding="ascii")
    assert load_key(path) == bytes.fromhex(body)
    path.write_text("base64:" + body, encoding="ascii")
    assert load_key(path) == base64.b64decode(body)


def test_unusual_key_length_is_warned(tmp_path, caplog):
    path = tmp_path / "key"
    path.write_text(KEY32.hex()[:-2], encoding="ascii")  # lost an even number of digits: 31 bytes
    assert load_key(path) == KEY32[:-1]
    assert "unusual key length" in caplog.text and "truncated" in caplog.text
    caplog.clear()
    path.write_text(KEY32.hex(), encoding="ascii")
    assert load_key(path) == KEY32 and "unusual" not in caplog.text


@pytest.mark.parametrize(
    ("key", "message"),
    [
        (bytes(32), "every byte is 0x00"),
        (bytes(16), "every byte is 0x00"),
        (b"\xff" * 32, "every byte is 0xff"),
        (b"\x00\x01" * 16, "2-byte pattern"),
        (b"\x10\x20\x30\x40" * 8, "4-byte pattern"),
        (b"\x00" * 31 + b"\x01", "two distinct byte values"),
    ],
)
def test_predictable_keys_are_refused(tmp_path, key, message):
    with pytest.raises(ConfigError, match=message):
        require_key(key, "hash")
    for i, content in enumerate([key, key.hex().encode(), base64.b64encode(key)]):
        path = tmp_path / f"key{i}"
        path.write_bytes(content)
        with pytest.raises(ConfigError, match=f"key file .*{message}"):
            load_key(path)
    with pytest.raises(ConfigError, match="not secret"):
        save_key(tmp_path / "new", key)


def test_keygen_keys_and_test_keys_still_load(tmp_path):
    for n in (16, 32, 64):
        path = save_key(tmp_path / f"k{n}.txt", generate_key(n))
        assert len(load_key(path)) == n
    assert require_key(bytes(range(32)), "hash") == bytes(range(32))
