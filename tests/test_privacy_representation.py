"""Private representations: gradient reversal, the Feutry and DANN steps, training, the model folder,
releases."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import numpy as np
import pytest
import torch

from clinideid.errors import ConfigError, InputError, ModelError
from clinideid.privacy.release import read_release, write_release
from clinideid.privacy.representation import (
    L_RANDOM,
    PrivateConfig,
    _batch,
    adversary_loss,
    adversary_step,
    dann_step,
    feutry_step,
    grad_reverse,
    load_model,
    new_model,
    save_model,
    train_private,
)
from privacy_fixtures import toy_sequences

torch.set_num_threads(1)


def _adv_loss(model, b) -> float:
    torch.manual_seed(0)
    with torch.no_grad():
        r, rs, r2 = model.encoder(b.x), model.encoder(b.x_swap), model.encoder(b.x)
        return float(adversary_loss(model, b, r, rs, r2)[0])


def _setup(method: str = "dann"):
    seqs, vectors = toy_sequences(64)
    model = new_model(
        vectors, PrivateConfig(size=8, hidden=8, adversary_hidden=8, method=method, init_sigma=1e-6)
    )
    b = _batch(seqs[:32], vectors, random.Random(0))
    return model, b


def test_gradient_reversal_flips_and_scales_the_gradient() -> None:
    x = torch.ones(3, requires_grad=True)
    (grad_reverse(x, 0.5) * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert torch.allclose(x.grad, torch.tensor([-0.5, -1.0, -1.5]))


def test_dann_step_moves_adversaries_down_and_the_encoder_up_the_adversary_loss() -> None:
    model, b = _setup()
    before = copy.deepcopy(model)
    params = [*model.encoder.parameters(), *model.head.parameters(), *model.adv_emb.parameters(),
              *model.adv_rep.parameters()]  # fmt: skip
    dann_step(model, b, torch.optim.SGD(params, lr=0.05), lam=1.0)
    base = _adv_loss(before, b)
    only_adv = copy.deepcopy(before)
    only_adv.adv_emb, only_adv.adv_rep = model.adv_emb, model.adv_rep
    only_enc = copy.deepcopy(before)
    only_enc.encoder = model.encoder
    assert _adv_loss(only_adv, b) < base  # adversaries learn
    assert _adv_loss(only_enc, b) > base  # the encoder, through the reversed gradient, fights them


def test_feutry_steps_adversary_learns_then_encoder_pulls_it_towards_chance() -> None:
    model, b = _setup("feutry")
    opt_adv = torch.optim.Adam([*model.adv_emb.parameters(), *model.adv_rep.parameters()], lr=0.01)
    first = _adv_loss(model, b)
    for _ in range(60):
        adversary_step(model, b, opt_adv)
    trained = _adv_loss(model, b)
    assert trained < first and trained < L_RANDOM  # the adversary beats guessing on the frozen encoder
    before = copy.deepcopy(model)
    opt_enc = torch.optim.SGD([*model.encoder.parameters(), *model.head.parameters()], lr=0.02)
    feutry_step(model, b, opt_enc, lam=5.0)
    moved = copy.deepcopy(before)
    moved.encoder = model.encoder
    assert abs(_adv_loss(moved, b) - L_RANDOM) < abs(_adv_loss(before, b) - L_RANDOM)
    assert all(
        torch.equal(p, q)
        for p, q in zip(before.adv_emb.parameters(), model.adv_emb.parameters(), strict=True)
    )


@pytest.mark.parametrize("method", ["feutry", "dann", "none"])
def test_training_runs_and_records_each_phase(method: str) -> None:
    seqs, vectors = toy_sequences(80)
    cfg = PrivateConfig(size=8, hidden=8, adversary_hidden=8, method=method, epochs_deid=1, epochs_adv=1,
                        epochs_joint=1)  # fmt: skip
    model = train_private(seqs, vectors, cfg)
    phases = [h["phase"] for h in model.history]
    expected = {"feutry": ["deid", "adversary", "alternate"], "dann": ["dann", "dann"], "none": ["deid"]}
    assert phases == expected[method]
    assert all(np.isfinite(h.get("deid_loss", 0.0)) for h in model.history)


def test_bad_settings_are_refused() -> None:
    _, vectors = toy_sequences(4)
    with pytest.raises(ConfigError):
        new_model(vectors, PrivateConfig(method="gan"))
    with pytest.raises(ConfigError):
        new_model(vectors, PrivateConfig(size=7))


def test_model_folder_round_trip_and_release(tmp_path: Path) -> None:
    seqs, vectors = toy_sequences(40)
    model = train_private(seqs, vectors, PrivateConfig(size=8, hidden=8, adversary_hidden=8, method="none",
                                                       epochs_deid=1))  # fmt: skip
    folder = save_model(model, tmp_path / "model")
    assert json.loads((folder / "model.json").read_text())["config"]["size"] == 8
    loaded = load_model(folder)
    words = seqs[0].words
    assert np.allclose(model.represent(words, noise=False), loaded.represent(words, noise=False))
    with pytest.raises(ConfigError):
        save_model(model, folder)  # never overwritten
    (tmp_path / "bad").mkdir()
    with pytest.raises(ModelError):
        load_model(tmp_path / "bad")

    summary = write_release(loaded, seqs, tmp_path / "release", seed=3)
    assert summary["sequences"] == len(seqs)
    reps, tags = read_release(tmp_path / "release")
    assert sorted(map(tuple, tags)) == sorted(s.tags for s in seqs)
    assert all(r.shape == (len(t), 8) for r, t in zip(reps, tags, strict=True))
    labels_text = (tmp_path / "release" / "labels.json").read_text()
    assert not any(f'"{w}"' in labels_text for w in vectors.words)  # no words leave
    with pytest.raises(InputError):
        read_release(tmp_path / "model")


def test_noise_floor_holds_through_training() -> None:
    seqs, vectors = toy_sequences(60)
    cfg = PrivateConfig(size=8, hidden=8, adversary_hidden=8, method="none", epochs_deid=2, init_sigma=0.1,
                        min_sigma=0.7, lr=0.05)  # fmt: skip
    model = train_private(seqs, vectors, cfg)
    assert model.encoder.sigma == pytest.approx(0.7) or model.encoder.sigma > 0.7
    spread = model.represent(seqs[0].words) - model.represent(seqs[0].words)
    assert float(np.std(spread)) > 0.7  # two draws differ by about sqrt(2) sigma
    with pytest.raises(ConfigError):
        new_model(vectors, PrivateConfig(min_sigma=-1.0))
