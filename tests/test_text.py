import itertools

from hypothesis import given
from hypothesis import strategies as st

from clinideid.text import sentence_windows, sliding_windows, split_sentences, tokenize, tokens_in_span
from clinideid.text.windows import merge_window_labels


def test_tokenizer_splits_punctuation_and_digit_letter_boundaries():
    text = "Dr.Smith vio 70años, NHC:12345-B el 03/03/1946."
    toks = [t.text for t in tokenize(text)]
    assert toks[:3] == ["Dr", ".", "Smith"]
    assert "70" in toks and "años" in toks
    assert toks[7:12] == ["NHC", ":", "12345", "-", "B"]
    assert toks[-6:] == ["03", "/", "03", "/", "1946", "."]


def test_tokenizer_keeps_unicode_words():
    assert [t.text for t in tokenize("Иванов И.И. Ñúñez")] == ["Иванов", "И", ".", "И", ".", "Ñúñez"]


@given(st.text(max_size=200))
def test_tokens_keep_offsets(text):
    toks = tokenize(text)
    for t in toks:
        assert text[t.start : t.end] == t.text
    assert all(a.end <= b.start for a, b in itertools.pairwise(toks))
    # every non-space character belongs to a token
    covered = {i for t in toks for i in range(t.start, t.end)}
    assert covered == {i for i, c in enumerate(text) if not c.isspace()}


def test_tokens_in_span():
    toks = tokenize("a bb ccc dddd")
    assert tokens_in_span(toks, 2, 8) == (1, 3)
    assert tokens_in_span(toks, 3, 4) == (1, 2)


def test_sentences_respect_abbreviations_and_lines():
    text = "Visto por el Dr. Pérez. Paciente estable.\nNHC: 123\n\nSe remite a J. López."
    sents = [text[a:b] for a, b in split_sentences(text)]
    assert sents == ["Visto por el Dr. Pérez.", "Paciente estable.", "NHC: 123", "Se remite a J. López."]


@given(st.integers(0, 300), st.integers(1, 40), st.data())
def test_sliding_windows_cover_every_token_once(n, size, data):
    overlap = data.draw(st.integers(0, size - 1))
    windows = sliding_windows(n, size, overlap)
    owned = [i for w in windows for i in range(w.own_start, w.own_end)]
    assert owned == list(range(n))
    for w in windows:
        assert 0 <= w.start <= w.own_start <= w.own_end <= w.end <= n
        assert len(w) <= size


def test_merge_window_labels_uses_owner():
    windows = sliding_windows(6, 4, 2)
    labels = [["A"] * len(w) for w in windows]
    labels[-1] = ["B"] * len(windows[-1])
    merged = merge_window_labels(6, windows, labels)
    assert merged[0] == "A" and merged[-1] == "B" and len(merged) == 6


def test_sentence_windows_group_sentences():
    text = "Uno dos. Tres cuatro. Cinco seis. Siete."
    toks = tokenize(text)
    wins = sentence_windows(toks, split_sentences(text), n=2)
    assert [(w.start, w.end) for w in wins] == [(0, 6), (6, 11)]
    assert sentence_windows(toks, split_sentences(text), n=2, max_tokens=4)[0].end - 0 <= 4
