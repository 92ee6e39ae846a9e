"""The training config (pydantic, YAML) and the ``clinideid train`` command."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from clinideid.errors import ConfigError
from clinideid.train.config import TrainConfig, load_train_config, parse_train_config
from clinideid.train.data import holdout_split, subset, to_label_set, unique_ids
from crf_fixtures import make_corpus


def test_defaults_and_feature_config():
    cfg = load_train_config(None)
    assert cfg == TrainConfig()
    fc = cfg.feature_config("es")
    assert fc.language == "es" and "first_names" in fc.gazetteers and fc.rules is None
    assert parse_train_config({"features": {"rules": True}}).feature_config("es").rules == {
        "type": "rules",
        "language": "es",
    }
    assert parse_train_config({}).feature_config(None).gazetteers == ()  # no language: no word lists


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"c1": "lots"}, r"c1"),
        ({"c1": [-1]}, r"c1: Value error, regularisation"),
        ({"label_scheme": "IOB"}, r"label_scheme"),
        ({"unit": "sentence"}, r"unit"),
        ({"window_size": 50, "window_overlap": 50}, r"window_overlap"),
        ({"features": {"gazetteers": ["pets"]}}, r"features.gazetteers.*unknown gazetteer"),
        ({"features": {"window": 12}}, r"features.window"),
        ({"features": {"rules": {"language": "es"}}}, r"needs a 'type'"),
        ({"learning_rate": 0.1}, r"learning_rate: Extra inputs"),
        ({"model": "bilstm"}, r"model"),
    ],
)
def test_bad_configs_name_the_key(data, message):
    with pytest.raises(ConfigError, match=message):
        parse_train_config(data)


def test_yaml_errors(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_train_config(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("c1: [0.1\nc2: 3\n")
    with pytest.raises(ConfigError, match=r"not valid YAML at line \d+"):
        load_train_config(bad)
    bad.write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match="must be a YAML mapping"):
        load_train_config(bad)
    good = tmp_path / "good.yaml"
    good.write_text("label_scheme: BIO\nc1: [0.2]\nfeatures:\n  window: 1\n")
    cfg = load_train_config(good)
    assert cfg.label_scheme == "BIO" and cfg.c1 == [0.2] and cfg.features.window == 1


def test_splits_are_deterministic_and_nested():
    docs = make_corpus(30, seed=4)
    a_train, a_dev = holdout_split(docs, 0.2, seed=1)
    _, b_dev = holdout_split(list(reversed(docs)), 0.2, seed=1)
    assert {d.id for d in a_dev} == {d.id for d in b_dev} and len(a_dev) == 6
    assert not {d.id for d in a_train} & {d.id for d in a_dev}
    small, large = subset(docs, 0.1, 3), subset(docs, 0.5, 3)
    assert {d.id for d in small} <= {d.id for d in large} and len(small) == 3


def test_repeated_ids_are_made_unique_without_losing_documents():
    docs = make_corpus(3, seed=1)
    twice = [docs[0], docs[1], docs[0], docs[0]]
    unique = unique_ids(twice)
    assert [d.id for d in unique] == ["doc000", "doc001", "doc000#2", "doc000#3"]
    for seed in range(5):  # repeats of one document never straddle the train/dev split
        train, dev = holdout_split(unique, 0.5, seed)
        assert len({d.text for d in train} & {d.text for d in dev}) == 0


def test_label_sets():
    docs = make_corpus(2, seed=1)
    native = [d.with_spans(s.with_(label="FECHAS") for s in d.spans) for d in docs]
    assert {s.label for d in to_label_set(native, "meddocan", "canonical") for s in d.spans} == {"DATE"}
    assert {s.label for d in to_label_set(native, "meddocan", "native") for s in d.spans} == {"FECHAS"}
    with pytest.raises(ConfigError, match="label set"):
        to_label_set(native, "meddocan", "both")


def _write_jsonl(path, docs):
    with open(path, "w", encoding="utf-8") as fh:
        for d in docs:
            spans = [{"start": s.start, "end": s.end, "label": s.label} for s in d.spans]
            fh.write(json.dumps({"id": d.id, "text": d.text, "language": "es", "spans": spans}) + "\n")


def test_cli_train_then_evaluate_model(tmp_path):
    from clinideid.cli import _register_commands, app
    from clinideid.train import evaluate_model

    _register_commands()
    from clinideid.cli import train as _train_cmd  # noqa: F401  (registers the command until the lead wires it)

    _write_jsonl(tmp_path / "train.jsonl", make_corpus(40, seed=1))
    _write_jsonl(tmp_path / "dev.jsonl", make_corpus(10, seed=2, prefix="dev"))
    (tmp_path / "cfg.yaml").write_text(
        "features:\n  gazetteers: []\nc1: [0.1]\nc2: [0.01]\nmax_iterations: 40\n"
    )
    out = tmp_path / "model"
    args = ["train", "--model", "crf", "--format", "jsonl", "--train", str(tmp_path / "train.jsonl")]
    args += ["--dev", str(tmp_path / "dev.jsonl"), "--config", str(tmp_path / "cfg.yaml"), "--seed", "3"]
    args += ["--out", str(out), "--licence", "CC0"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "dev strict" in result.output and "selected c1=0.1" in result.output
    meta = json.loads((out / "model.json").read_text())
    assert meta["name"] == "model" and meta["seed"] == 3 and meta["training_data"]["licence"] == "CC0"
    assert (out / "metrics.json").is_file()

    report = evaluate_model(out, tmp_path / "dev.jsonl", "jsonl")
    assert report["strict"].micro.f1 == pytest.approx(meta["dev_metrics"]["strict"]["f1"], abs=1e-4)

    bad = CliRunner().invoke(app, [*args[:-4], "--out", str(tmp_path / "m2"), "--native"])
    assert bad.exit_code != 0 and "--native needs --scheme" in str(bad.exception)
