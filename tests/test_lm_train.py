"""Character LM training: perplexity goes down, checkpoints resume exactly, bad setups fail clearly."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from clinideid.errors import ConfigError, InputError, ModelError
from clinideid.lm.charlm import CharLM, CharVocab
from clinideid.lm.train import (
    CHECKPOINT_FILE,
    CharLMTrainConfig,
    parse_config,
    perplexity,
    train_charlm,
    train_charlm_pair,
)
from lm_fixtures import generated_notes, one_torch_thread


@pytest.fixture(autouse=True)
def _one_thread():
    with one_torch_thread():
        yield


TRAIN = generated_notes(30, seed=1)
HELD = generated_notes(4, seed=2)
BASE = {
    "embedding_dim": 8,
    "hidden_size": 24,
    "seq_len": 30,
    "batch_size": 4,
    "epochs": 2,
    "eval_every": 10,
    "dropout": 0.1,
    "min_count": 1,
    "threads": 1,
}


def config(**changes) -> CharLMTrainConfig:
    return parse_config({**BASE, **changes})


def scheduled(history):
    return [{k: v for k, v in h.items() if k != "train_seconds"} for h in history if h["kind"] != "stop"]


def final_weights(out: Path) -> dict[str, torch.Tensor]:
    return torch.load(out / CHECKPOINT_FILE, weights_only=True)["module"]


def assert_same_weights(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert torch.equal(a[k], b[k]), k


@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_training_lowers_heldout_perplexity_and_saves_the_best(tmp_path, direction):
    vocab = CharVocab.build(TRAIN)
    torch.manual_seed(0)
    untrained = perplexity(CharLM(vocab, config().network(), direction), HELD)[0]
    res = train_charlm(TRAIN, HELD, config(epochs=3), tmp_path / "m", direction, language="es")
    ppls = [h["heldout_perplexity"] for h in res.history]
    assert res.best_perplexity == pytest.approx(min(ppls), abs=1e-4)
    assert res.best_perplexity < 0.6 * untrained and res.best_perplexity < ppls[0]
    assert res.best_bpc == pytest.approx(math.log2(res.best_perplexity))
    assert res.stop_reason == "epochs" and res.epochs_completed == 3 and res.steps > 0
    assert res.train_chars_per_second > 0 and res.peak_memory_mb > 0
    lm = CharLM.load(res.model_dir)
    assert lm.direction == direction and lm.metadata is not None and lm.metadata.language == "es"
    assert lm.metadata.dev_metrics["heldout_perplexity"] == pytest.approx(res.best_perplexity, abs=1e-4)
    again = perplexity(lm, HELD, batch_size=BASE["batch_size"], seq_len=BASE["seq_len"])[0]
    assert again == pytest.approx(res.best_perplexity, rel=1e-5)
    assert (res.model_dir / "metrics.json").is_file()


def test_sgd_flair_settings_train_too(tmp_path):
    res = train_charlm(TRAIN, HELD, config(optimizer="sgd", epochs=2), tmp_path / "m", "forward")
    assert res.history[0]["lr"] == 20.0
    assert res.best_perplexity < res.history[0]["heldout_perplexity"] or len(res.history) == 1


def test_stop_and_resume_follows_the_uninterrupted_run(tmp_path):
    full = train_charlm(TRAIN, HELD, config(), tmp_path / "full", "forward")
    part = train_charlm(TRAIN, HELD, config(max_batches=13), tmp_path / "part", "forward")
    assert part.stop_reason == "max_batches" and part.steps == 13
    assert part.history[-1]["kind"] == "stop"
    done = train_charlm(TRAIN, HELD, config(), tmp_path / "part", "forward", resume=True)
    assert done.resumed_from_step == 13 and done.steps == full.steps
    assert_same_weights(final_weights(tmp_path / "part"), final_weights(tmp_path / "full"))
    assert scheduled(done.history) == scheduled(full.history)
    assert done.best_perplexity <= full.best_perplexity  # the stop evaluation may only add a candidate
    assert done.chars_trained == full.chars_trained


class Crash(Exception):
    pass


def test_crash_then_resume_from_the_last_checkpoint(tmp_path):
    """A run killed mid-epoch goes on from its last (time-based) checkpoint, exactly as if never killed."""
    cfg = config(checkpoint_minutes=1e-9)  # a checkpoint after every batch
    full = train_charlm(TRAIN, HELD, cfg, tmp_path / "full", "backward")

    def crash_at_17(stage, done, total):
        if done == 17:
            raise Crash

    with pytest.raises(Crash):
        train_charlm(TRAIN, HELD, cfg, tmp_path / "crashed", "backward", progress=crash_at_17)
    assert torch.load(tmp_path / "crashed" / CHECKPOINT_FILE, weights_only=True)["step"] == 16
    done = train_charlm(TRAIN, HELD, cfg, tmp_path / "crashed", "backward", resume=True)
    assert done.resumed_from_step == 16
    assert_same_weights(final_weights(tmp_path / "crashed"), final_weights(tmp_path / "full"))
    assert scheduled(done.history) == scheduled(full.history)
    assert done.best_perplexity == full.best_perplexity  # no stop evaluation: the same model is selected
    assert CharLM.load(done.model_dir).states("Ana").shape == (4, 24)


def test_more_epochs_continue_a_finished_run(tmp_path):
    two = train_charlm(TRAIN, HELD, config(epochs=2), tmp_path / "two", "forward")
    train_charlm(TRAIN, HELD, config(epochs=1), tmp_path / "one", "forward")
    again = train_charlm(TRAIN, HELD, config(epochs=1), tmp_path / "one", "forward", resume=True)
    assert again.steps == two.steps // 2 and again.stop_reason == "epochs"  # nothing left to do
    more = train_charlm(TRAIN, HELD, config(epochs=2), tmp_path / "one", "forward", resume=True)
    assert more.steps == two.steps
    assert_same_weights(final_weights(tmp_path / "one"), final_weights(tmp_path / "two"))
    assert more.best_perplexity == pytest.approx(two.best_perplexity)


def test_time_budget_stops_with_a_model(tmp_path):
    res = train_charlm(TRAIN, HELD, config(max_minutes=1e-9, epochs=50), tmp_path / "m", "forward")
    assert res.stop_reason == "max_minutes" and res.steps == 1
    assert CharLM.load(res.model_dir).direction == "forward"


def test_out_dir_rules(tmp_path):
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("x")
    with pytest.raises(ConfigError, match="not empty"):
        train_charlm(TRAIN, HELD, config(), busy, "forward")
    with pytest.raises(ConfigError, match=f"no {CHECKPOINT_FILE}"):
        train_charlm(TRAIN, HELD, config(), busy, "forward", resume=True)
    fresh = train_charlm(TRAIN, HELD, config(max_batches=2), tmp_path / "new", "forward", resume=True)
    assert fresh.resumed_from_step is None and fresh.steps == 2


def test_resume_refuses_other_settings_or_text(tmp_path):
    out = tmp_path / "m"
    train_charlm(TRAIN, HELD, config(max_batches=2), out, "forward")
    with pytest.raises(ConfigError, match="hidden_size"):
        train_charlm(TRAIN, HELD, config(hidden_size=32), out, "forward", resume=True)
    with pytest.raises(ConfigError, match="train text differs"):
        train_charlm(TRAIN[:-1], HELD, config(), out, "forward", resume=True)
    with pytest.raises(ConfigError, match="backward"):
        train_charlm(TRAIN, HELD, config(), out, "backward", resume=True)
    (out / CHECKPOINT_FILE).write_bytes(b"garbage")
    with pytest.raises(ModelError, match="corrupt"):
        train_charlm(TRAIN, HELD, config(), out, "forward", resume=True)
    torch.save({"format": 1, "direction": "forward"}, out / CHECKPOINT_FILE)
    with pytest.raises(ModelError, match="incomplete"):
        train_charlm(TRAIN, HELD, config(), out, "forward", resume=True)


def test_bad_inputs(tmp_path):
    with pytest.raises(InputError, match="held-out"):
        train_charlm(TRAIN, [], config(), tmp_path / "a", "forward")
    with pytest.raises(InputError, match="no training text"):
        train_charlm(["", ""], HELD, config(), tmp_path / "b", "forward")
    with pytest.raises(InputError, match="too short"):
        train_charlm(["abc"], HELD, config(batch_size=4), tmp_path / "c", "forward")
    with pytest.raises(ConfigError, match="hidden_size"):
        config(hidden_size=0)
    with pytest.raises(ConfigError, match="direction"):
        train_charlm(TRAIN, HELD, config(), tmp_path / "d", "sideways")
    assert config(optimizer="sgd").lr == 20.0 and config(optimizer="adam").min_lr == pytest.approx(1e-5)


@pytest.mark.slow
def test_both_directions_in_two_processes(tmp_path):
    events = []
    results = train_charlm_pair(
        TRAIN,
        HELD,
        config(epochs=1),
        tmp_path / "pair",
        on_evaluation=events.append,
        name="es-tiny",
        language="es",
    )
    assert set(results) == {"forward", "backward"}
    assert {e["direction"] for e in events} == {"forward", "backward"}
    for d, res in results.items():
        lm = CharLM.load(tmp_path / "pair" / d)
        assert lm.direction == d and lm.metadata is not None and lm.metadata.name == f"es-tiny-{d}"
        assert res.best_perplexity < res.history[0]["heldout_perplexity"] or len(res.history) == 1
    # the same, one process: identical models (same seed, same thread count)
    seq = train_charlm_pair(TRAIN, HELD, config(epochs=1), tmp_path / "seq", parallel=False)
    for d in ("forward", "backward"):
        assert seq[d].best_perplexity == pytest.approx(results[d].best_perplexity, rel=1e-6)


def test_pair_reports_errors_of_a_direction(tmp_path):
    (tmp_path / "pair" / "backward").mkdir(parents=True)
    (tmp_path / "pair" / "backward" / "x").write_text("x")
    with pytest.raises(ConfigError, match="not empty"):
        train_charlm_pair(TRAIN, HELD, config(epochs=1), tmp_path / "pair", parallel=False)
