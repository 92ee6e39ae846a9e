"""BIO/BIOES encoding of spans as token labels, decoding back, and sequence units."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clinideid.detect.crf import decode_labels, encode_spans, labels_to_spans, sequence_units
from clinideid.document import Span
from clinideid.errors import ConfigError
from clinideid.labels import canonical
from clinideid.text import tokenize

LABELS = canonical().labels
WORDS = st.sampled_from(["Juan", "12", "/", "García", "calle", "5", "@", "Madrid", "de", "-"])


@st.composite
def tagged_text(draw):
    """A text of random tokens and non-overlapping token-aligned spans with random canonical labels."""
    words = draw(st.lists(WORDS, min_size=1, max_size=30))
    seps = draw(st.lists(st.sampled_from([" ", "", "\n", "  "]), min_size=len(words), max_size=len(words)))
    text = "".join(w + s for w, s in zip(words, seps, strict=True))
    tokens = tokenize(text)
    spans = []
    i = 0
    while i < len(tokens):
        if draw(st.booleans()):
            j = min(len(tokens), i + draw(st.integers(1, 4)))
            spans.append(Span(tokens[i].start, tokens[j - 1].end, draw(st.sampled_from(LABELS))))
            i = j
        else:
            i += 1
    return text, tokens, spans


@pytest.mark.parametrize("scheme", ["BIO", "BIOES"])
@settings(max_examples=150, deadline=None)
@given(data=tagged_text())
def test_encode_decode_round_trip(scheme, data):
    _, tokens, spans = data
    labels, stats = encode_spans(tokens, spans, scheme)
    assert stats.partial_tokens == 0 and stats.conflicts == 0
    decoded = labels_to_spans(tokens, labels, [1.0] * len(tokens))
    assert [s.key() for s in decoded] == sorted(s.key() for s in spans)


def test_every_canonical_label_round_trips_in_both_schemes():
    text = " ".join(f"w{k} x" for k in range(len(LABELS)))
    tokens = tokenize(text)
    spans = [Span(tokens[2 * k].start, tokens[2 * k + 1].end, lab) for k, lab in enumerate(LABELS)]
    for scheme in ("BIO", "BIOES"):
        labels, _ = encode_spans(tokens, spans, scheme)
        got = labels_to_spans(tokens, labels, [1.0] * len(tokens))
        assert [s.key() for s in got] == [s.key() for s in spans]


def test_bioes_labels():
    tokens = tokenize("Juan Pérez García y Ana")
    spans = [Span(0, 17, "PATIENT"), Span(20, 23, "PATIENT")]
    labels, _ = encode_spans(tokens, spans, "BIOES")
    assert labels == ["B-PATIENT", "I-PATIENT", "E-PATIENT", "O", "S-PATIENT"]
    labels, _ = encode_spans(tokens, spans, "BIO")
    assert labels == ["B-PATIENT", "I-PATIENT", "I-PATIENT", "O", "B-PATIENT"]


def test_adjacent_spans_with_the_same_label_stay_apart():
    tokens = tokenize("Juan Ana")
    labels, _ = encode_spans(tokens, [Span(0, 4, "PATIENT"), Span(5, 8, "PATIENT")], "BIO")
    assert decode_labels(labels) == [(0, 1, "PATIENT"), (1, 2, "PATIENT")]


def test_decode_is_robust_to_invalid_sequences():
    assert decode_labels(["I-DATE", "I-DATE", "O"]) == [(0, 2, "DATE")]  # I- without B- starts a span
    assert decode_labels(["B-DATE", "I-AGE"]) == [(0, 1, "DATE"), (1, 2, "AGE")]  # label change
    assert decode_labels(["E-CITY", "O", "S-ZIP", "I-ZIP"]) == [(0, 1, "CITY"), (2, 3, "ZIP"), (3, 4, "ZIP")]
    assert decode_labels(["B-CITY", "E-CITY", "E-CITY"]) == [(0, 2, "CITY"), (2, 3, "CITY")]
    assert decode_labels(["O", "weird", "B-X"]) == [(2, 3, "X")]
    assert decode_labels([]) == []


def test_partial_tokens_conflicts_and_empty_spans_are_counted():
    text = "Juanito 12345 x"
    tokens = tokenize(text)
    spans = [
        Span(0, 4, "PATIENT"),  # covers part of "Juanito": the whole token is labelled
        Span(8, 13, "IDNUM"),
        Span(10, 13, "ZIP"),  # overlaps the longer IDNUM span: dropped
    ]
    labels, stats = encode_spans(tokens, spans, "BIO")
    assert labels == ["B-PATIENT", "B-IDNUM", "O"]
    assert (stats.spans, stats.partial_tokens, stats.conflicts) == (3, 1, 1)
    _, stats = encode_spans(tokenize("a  b"), [Span(1, 3, "X")], "BIO")
    assert stats.no_token == 1


def test_unknown_scheme():
    with pytest.raises(ConfigError, match="tagging scheme"):
        encode_spans([], [], "IOB3")


def test_line_units_and_windows():
    text = "uno dos\ntres\n\ncuatro cinco seis"
    tokens = tokenize(text)
    lines = sequence_units(text, tokens, "line")
    assert [(w.start, w.end) for w in lines] == [(0, 2), (2, 3), (3, 6)]
    windows = sequence_units(text, tokens, "window", size=4, overlap=2)
    owned = [i for w in windows for i in range(w.own_start, w.own_end)]
    assert owned == list(range(len(tokens)))
    with pytest.raises(ConfigError, match="sequence unit"):
        sequence_units(text, tokens, "sentence")
