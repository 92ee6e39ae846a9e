"""Property tests: write -> read gives the same documents, for every codec that can hold them.

Documents are random: unicode text with line breaks of every kind (``\\r\\n``, U+2028, U+0085, ...),
random spans with canonical and MEDDOCAN labels. Each codec gets the documents it can store: XML codecs
no XML-forbidden characters, inline i2b2 2006 no overlaps, CoNLL only token-aligned spans.
"""

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clinideid.document import Document, Span
from clinideid.formats import ReadReport, read_corpus, write_corpus
from clinideid.labels import canonical, load_mapping
from clinideid.text import tokenize

LABELS = sorted({*canonical().labels, *load_mapping("meddocan").source_labels})
LINE_BREAKS = ["\n", "\r\n", "\r", "\u2028", "\x85", "\x0c"]

_chars = st.characters(
    categories=("L", "M", "N", "P", "S", "Zs"),
    exclude_characters="\ufffe\uffff",
)
_piece = st.one_of(st.text(_chars, min_size=1, max_size=8), st.sampled_from([" ", "  ", "\t", *LINE_BREAKS]))
texts = st.lists(_piece, max_size=30).map("".join)
xml_texts = texts.filter(lambda t: "\x0c" not in t)  # XML 1.0 cannot hold U+000C

#: raise for a deeper search, e.g. CLINIDEID_HYPOTHESIS_EXAMPLES=1500 (the chain test runs half as many)
EXAMPLES = int(os.environ.get("CLINIDEID_HYPOTHESIS_EXAMPLES", "60"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@st.composite
def spans_for(draw, text: str, overlapping: bool = False) -> list[Span]:
    """Random contiguous spans; non-overlapping unless ``overlapping``."""
    n = len(text)
    if n == 0:
        return []
    if overlapping:
        pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(1, n)), max_size=6))
        bounds = [(min(a, b), max(a, b)) for a, b in pairs if a != b]
    else:
        cuts = sorted(draw(st.sets(st.integers(0, n), max_size=10)))
        bounds = [(a, b) for a, b in zip(cuts[::2], cuts[1::2], strict=False) if a < b]
    return [Span(a, b, draw(st.sampled_from(LABELS))) for a, b in bounds]


@st.composite
def token_spans_for(draw, text: str) -> list[Span]:
    """Random non-overlapping spans whose ends fall on token boundaries."""
    tokens = tokenize(text)
    if not tokens:
        return []
    cuts = sorted(draw(st.sets(st.integers(0, len(tokens)), max_size=8)))
    return [
        Span(tokens[i].start, tokens[j - 1].end, draw(st.sampled_from(LABELS)))
        for i, j in zip(cuts[::2], cuts[1::2], strict=False)
        if i < j
    ]


@st.composite
def corpora(draw, text_strategy=texts, spans=spans_for, ids=None, **span_options) -> list[Document]:
    n = draw(st.integers(1, 3))
    names = ids if ids is not None else st.from_regex(r"[a-z][a-z0-9_-]{0,8}", fullmatch=True)
    doc_ids = draw(st.lists(names, min_size=n, max_size=n, unique=True))
    docs = []
    for doc_id in doc_ids:
        text = draw(text_strategy)
        docs.append(Document(doc_id, text, spans=draw(spans(text, **span_options))))
    return docs


def keys(docs: list[Document]) -> list[tuple]:
    return sorted((d.id, d.text, tuple(s.key() for s in d.spans)) for d in docs)


def roundtrip(docs: list[Document], fmt: str, target: str, **write_options) -> list[Document]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / target
        write_corpus(docs, path, fmt, report=ReadReport(), **write_options)
        return read_corpus(path, fmt, report=ReadReport())


physionet_ids = st.builds("P{}-R{}".format, st.integers(0, 999), st.integers(0, 99))


@SETTINGS
@given(corpora(spans=spans_for, overlapping=True))
def test_jsonl_is_lossless(docs):
    assert roundtrip(docs, "jsonl", "c.jsonl") == docs


@SETTINGS
@given(corpora(spans=spans_for, overlapping=True))
def test_brat(docs):
    assert keys(roundtrip(docs, "brat", "brat")) == keys(docs)


@SETTINGS
@given(corpora(text_strategy=xml_texts, spans=spans_for, overlapping=True))
def test_i2b2(docs):
    assert keys(roundtrip(docs, "i2b2", "xml")) == keys(docs)


@SETTINGS
@given(corpora(text_strategy=xml_texts))
def test_i2b2_2006(docs):
    assert keys(roundtrip(docs, "i2b2_2006", "set.xml")) == keys(docs)


@SETTINGS
@given(corpora(spans=spans_for, overlapping=True))
def test_presidio(docs):
    assert keys(roundtrip(docs, "presidio", "p.json")) == keys(docs)


@SETTINGS
@given(corpora(spans=spans_for, overlapping=True, ids=physionet_ids))
def test_physionet(docs):
    assert keys(roundtrip(docs, "physionet", "id.text")) == keys(docs)


@SETTINGS
@given(corpora(spans=token_spans_for), st.sampled_from(["BIO", "BIOES"]))
def test_conll_with_offsets(docs, scheme):
    assert keys(roundtrip(docs, "conll", "c.conll", offsets=True, scheme=scheme)) == keys(docs)


@SETTINGS
@given(corpora(spans=token_spans_for))
def test_conll_with_companion_texts(docs):
    assert keys(roundtrip(docs, "conll", "folder", texts=True)) == keys(docs)


@SETTINGS
@given(corpora())
def test_text_keeps_ids_and_texts(docs):
    assert sorted((d.id, d.text) for d in roundtrip(docs, "text", "txt")) == sorted(
        (d.id, d.text) for d in docs
    )


CHAIN = [
    ("jsonl", "c.jsonl", {}),
    ("brat", "brat", {}),
    ("i2b2", "xml", {}),
    ("i2b2_2006", "set.xml", {}),
    ("presidio", "p.json", {}),
    ("physionet", "id.text", {}),
    ("conll", "c.conll", {"offsets": True}),
]


@settings(max_examples=max(1, EXAMPLES // 2), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    corpora(text_strategy=xml_texts, spans=token_spans_for, ids=physionet_ids),
    st.permutations(range(len(CHAIN))),
)
def test_conversion_chain_through_every_codec(docs, order):
    """Each codec reads what the previous one wrote; spans survive the whole chain."""
    current = docs
    for index in order:
        fmt, target, options = CHAIN[index]
        current = roundtrip(current, fmt, target, **options)
        assert keys(current) == keys(docs), fmt
