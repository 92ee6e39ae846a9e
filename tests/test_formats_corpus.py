"""Codecs on the shared corpora (skipped when ``../shared/corpora`` is absent)."""

import shutil
from pathlib import Path

import pytest

from clinideid.formats import ReadReport, read_corpus, write_corpus

CORPORA = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"
MEDDOCAN_TRAIN = CORPORA / "meddocan" / "train"

pytestmark = [
    pytest.mark.corpus,
    pytest.mark.skipif(not CORPORA.is_dir(), reason="shared corpora not available"),
]


def test_meddocan_sample_brat_jsonl_i2b2_brat_keeps_spans(tmp_path):
    sample = sorted(MEDDOCAN_TRAIN.glob("*.ann"))[:20]
    assert len(sample) == 20
    source = tmp_path / "source"
    source.mkdir()
    for ann in sample:  # the sample only, in a temporary copy
        shutil.copy(ann, source / ann.name)
        shutil.copy(ann.with_suffix(".txt"), source / f"{ann.stem}.txt")
    docs = read_corpus(source, "brat", report=ReadReport())
    write_corpus(docs, tmp_path / "c.jsonl", "jsonl")
    via_jsonl = read_corpus(tmp_path / "c.jsonl", "jsonl", report=ReadReport())
    write_corpus(via_jsonl, tmp_path / "xml", "i2b2", root="MEDDOCAN")
    via_xml = read_corpus(tmp_path / "xml", "i2b2", report=ReadReport())
    write_corpus(via_xml, tmp_path / "brat", "brat")
    back = read_corpus(tmp_path / "brat", "brat", report=ReadReport())

    def keys(ds):
        return [(d.id, d.text, [s.key() for s in d.spans]) for d in ds]

    assert sum(len(d.spans) for d in docs) > 200
    assert keys(back) == keys(via_xml) == keys(via_jsonl) == keys(docs)
    assert back == docs  # ids, recorded texts and notes too
    for ann in sample:  # and the .ann files themselves hold the same T lines
        original = sorted(line for line in ann.read_text("utf-8").splitlines() if line.startswith("T"))
        written = sorted((tmp_path / "brat" / ann.name).read_text("utf-8").splitlines())
        assert written == original


def test_eds_pseudo_and_presidio_read_with_their_mappings():
    from clinideid.labels import load_mapping

    eds = read_corpus(CORPORA / "eds-pseudo" / "train.jsonl", "jsonl", report=ReadReport())
    assert len(eds) > 1000 and all(d.id for d in eds)
    mapping = load_mapping("eds_pseudo")
    assert {mapping(s.label) for d in eds for s in d.spans} <= set(mapping.mapping.values())
    synth = read_corpus(CORPORA / "presidio-synth" / "synth_dataset_v2.json", "presidio", report=ReadReport())
    assert len(synth) == 1500 and sum(len(d.spans) for d in synth) > 1000
