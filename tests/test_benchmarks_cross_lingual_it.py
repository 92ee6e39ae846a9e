"""Helpers of benchmarks/cross_lingual_it.py and benchmarks/sentence_grouping.py (no training here)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pytest

from clinideid.synth import generate
from clinideid.text import sentence_windows, split_sentences
from clinideid.train.config import parse_train_config

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))

import cross_lingual_it as xit  # noqa: E402
import sentence_grouping as sg  # noqa: E402


def test_keys_share_target_runs_and_zero_shot_has_no_size() -> None:
    assert xit.key("en-synth", "target", 300, 1) == xit.key("meddocan", "target", 300, 1)
    assert (
        xit.key("en-synth", "source", 300, 2)
        == xit.key("en-synth", "source", 50, 2)
        == "en-synth__source__s2"
    )
    assert xit.key("meddocan", "mixed", 50, 1) != xit.key("en-synth", "mixed", 50, 1)


def test_plan_trains_the_source_before_continued_training() -> None:
    args = argparse.Namespace(strategies=["source_then_target"], target_sizes=[300, 50])
    first, second = xit.plan(args)
    assert first == [("source", 0)]
    assert second == [("source_then_target", 300), ("source_then_target", 50)]
    args = argparse.Namespace(strategies=["target", "mixed"], target_sizes=[50])
    assert xit.plan(args) == ([("target", 50), ("mixed", 50)], [])


def test_predictions_round_trip_without_text(tmp_path: Path) -> None:
    gold = generate("it", 4, seed=5)
    xit.save_predictions(tmp_path, "run", gold, {"model": [d.spans for d in gold]})
    saved = (tmp_path / "pred" / "run.json").read_text(encoding="utf-8")
    data = json.loads(saved)
    for doc in gold:
        for span in doc.spans:
            value = doc.text[span.start : span.end]
            if sum(c.isalpha() for c in value) > 3:  # numbers could match offsets by chance
                assert value not in saved  # offsets and labels only
    back = xit.with_predictions(gold, data["model"])
    assert [[(s.start, s.end, s.label) for s in d.spans] for d in back] == [
        [(s.start, s.end, s.label) for s in d.spans] for d in gold
    ]


def test_score_and_significance_against_a_weaker_system() -> None:
    gold = generate("it", 12, seed=6)
    perfect, perfect_report = xit.score(gold, gold)
    assert perfect["category_strict"]["f1"] == pytest.approx(1.0)
    assert perfect["token_binary"]["recall"] == pytest.approx(1.0)
    assert all(f1 == 1.0 for f1 in perfect["category_f1_per_label"].values())
    # a system that loses every date: lower F1, and a p-value against the perfect system
    no_dates = [d.with_spans([s for s in d.spans if s.label != "DATE"]) for d in gold]
    weaker, weaker_report = xit.score(gold, no_dates)
    assert weaker["category_strict"]["f1"] < 1.0
    assert weaker["category_f1_per_label"].get("DATE", 0.0) == 0.0
    same = xit.significance(perfect_report, perfect_report)
    assert same == {"p_strict_f1": 1.0, "p_token_recall": 1.0}
    differ = xit.significance(weaker_report, perfect_report)
    assert differ["p_strict_f1"] < 0.05
    assert xit.pvalues([0.0001, 0.25]) == "<.001/0.250"


def test_window_settings_are_valid_training_configs() -> None:
    sliding = sg.window_settings("sliding", 1000)
    assert sliding["window_size"] == 200 and sliding["neural"]["windows"] == "sliding"
    grouped = sg.window_settings(sg.setting_name(8), 1000)
    assert grouped["neural"] == {"windows": "sentences", "sentences_per_window": 8}
    config = parse_train_config(
        {
            "model": "neural",
            "window_size": grouped["window_size"],
            "window_overlap": grouped["window_overlap"],
            "neural": grouped["neural"],
        }
    )
    assert config.neural.sentences_per_window == 8
    with pytest.raises(ValueError):
        sg.window_settings("sentencesX", 1000)


def test_window_lengths_grow_with_the_group() -> None:
    from clinideid.text.tokenize import tokenize

    doc = generate("en", 1, seed=3)[0]
    tokens = tokenize(doc.text)
    sentences = split_sentences(doc.text)
    one = sg.window_lengths([sentence_windows(tokens, sentences, 1)])
    four = sg.window_lengths([sentence_windows(tokens, sentences, 4)])
    assert one["windows_per_document"] > four["windows_per_document"] >= 1
    assert four["mean_window_tokens"] > one["mean_window_tokens"]
    assert four["max_window_tokens"] <= len(tokens)
    assert sg.window_lengths([[]])["windows_per_document"] == 0.0
