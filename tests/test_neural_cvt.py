"""Cross-View Training: each auxiliary view sees only its side of the sequence; training uses unlabelled text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from clinideid.detect.neural.config import NeuralConfig
from clinideid.detect.neural.model import Batch, NeuralTaggerModule
from clinideid.document import Document
from clinideid.errors import ConfigError
from clinideid.train.config import parse_train_config
from clinideid.train.neural import train_neural
from crf_fixtures import make_corpus

T = 9


def _module(**overrides: object) -> NeuralTaggerModule:
    torch.manual_seed(0)
    cfg = NeuralConfig(
        cvt=True, char_dim=4, char_hidden=3, word_dim=5, lstm_hidden=6, cvt_hidden=7, dropout=0.0, **overrides
    )
    return NeuralTaggerModule(cfg, n_words=30, n_chars=15, n_prefixes=2, n_suffixes=2, n_tags=5).eval()


def _batch(words: list[int], length: int | None = None) -> Batch:
    n = len(words)
    length = n if length is None else length
    w = torch.tensor([words])
    mask = torch.arange(n).unsqueeze(0) < length
    chars = ((w.unsqueeze(2) % 13) + 1).expand(1, n, 3).clone() * mask.unsqueeze(2)
    zeros = torch.zeros(1, n, dtype=torch.long)
    return Batch(w * mask, chars, zeros, zeros, mask)


BASE = [3, 7, 11, 2, 9, 14, 5, 8, 21]


def _views(module: NeuralTaggerModule, words: list[int]) -> dict[str, torch.Tensor]:
    with torch.no_grad():
        return module.auxiliary_logits(_batch(words))


@pytest.mark.parametrize("t", range(T))
def test_each_view_is_blind_to_its_forbidden_side(t: int) -> None:
    module = _module()
    base = _views(module, BASE)
    right = _views(module, BASE[: t + 1] + [25] * (T - t - 1))  # everything after t changed
    left = _views(module, [25] * t + BASE[t:])  # everything before t changed
    itself = _views(module, [*BASE[:t], 26, *BASE[t + 1 :]])  # only the token t changed
    close = torch.allclose
    # forward: tokens <= t; future: tokens < t
    assert close(base["forward"][0, t], right["forward"][0, t])
    assert close(base["future"][0, t], right["future"][0, t])
    assert close(base["future"][0, t], itself["future"][0, t])
    # backward: tokens >= t; past: tokens > t
    assert close(base["backward"][0, t], left["backward"][0, t])
    assert close(base["past"][0, t], left["past"][0, t])
    assert close(base["past"][0, t], itself["past"][0, t])
    # and each view does see what it is allowed to see
    assert not close(base["forward"][0, t], itself["forward"][0, t])
    assert not close(base["backward"][0, t], itself["backward"][0, t])
    if t > 0:
        assert not close(base["future"][0, t], left["future"][0, t])
    if t < T - 1:
        assert not close(base["past"][0, t], right["past"][0, t])


def test_edge_views_are_empty_and_padding_is_invisible() -> None:
    module = _module()
    views = _views(module, BASE)
    states = module.view_states(torch.ones(1, 3, 12))
    assert not states["future"][0, 0].any() and not states["past"][0, -1].any()
    with torch.no_grad():
        padded = module.auxiliary_logits(_batch(BASE[:5] + [0] * 4, length=5))
    for name in ("forward", "backward", "future", "past"):
        assert torch.allclose(padded[name][0, :4], _views(module, BASE[:5])[name][0, :4], atol=1e-6)
    assert set(views) == {"forward", "backward", "future", "past"}


def test_cvt_loss_is_zero_when_heads_match_the_teacher() -> None:
    module = _module()
    batch = _batch(BASE)
    with torch.no_grad():
        logits = module.auxiliary_logits(batch)
        teacher = torch.softmax(logits["forward"], dim=-1)
        module.cvt_heads = torch.nn.ModuleDict({"forward_head": module.cvt_heads["forward_head"]})
        assert module.cvt_loss(batch, teacher).item() == pytest.approx(0.0, abs=1e-6)
        assert module.cvt_loss(batch, torch.full_like(teacher, 0.2)).item() > 0


def test_cvt_refuses_inputs_that_see_neighbours() -> None:
    for blocks in ({"affix": True}, {"context": True}, {"rules": {"type": "rules", "language": "es"}}):
        with pytest.raises(ValueError, match="token-local"):
            NeuralConfig(cvt=True, **blocks)
    with pytest.raises(ValueError, match="lstm_layers"):
        NeuralConfig(cvt=True, lstm_layers=0)
    with pytest.raises(ValueError, match="no cross-view"):
        NeuralTaggerModule(
            NeuralConfig(), n_words=5, n_chars=5, n_prefixes=2, n_suffixes=2, n_tags=3
        ).auxiliary_logits(_batch(BASE))


CONFIG = {
    "model": "neural",
    "window_size": 40,
    "window_overlap": 8,
    "neural": {"cvt": True, "optimizer": "adam", "lr": 0.01, "epochs": 4, "batch_size": 4, "threads": 1},
}


def test_training_with_unlabelled_text(tmp_path: Path) -> None:
    train, dev = make_corpus(20, seed=1), make_corpus(6, seed=2, prefix="dev")
    unlabelled = [Document(d.id, d.text) for d in make_corpus(12, seed=3, prefix="u")]
    result = train_neural(
        train, dev, parse_train_config(CONFIG), out_dir=tmp_path / "m", name="cvt", unlabelled_docs=unlabelled
    )
    assert all(h["cvt_loss"] >= 0 for h in result.history)
    assert result.history[-1]["cvt_loss"] < result.history[0]["cvt_loss"]
    assert json.loads((tmp_path / "m" / "model.json").read_text())["dev_metrics"]["strict"]["f1"] > 0.5


def test_cvt_without_unlabelled_text_and_unlabelled_without_cvt_are_errors(tmp_path: Path) -> None:
    train, dev = make_corpus(4, seed=1), make_corpus(2, seed=2)
    with pytest.raises(ConfigError, match="unlabelled"):
        train_neural(train, dev, parse_train_config(CONFIG), out_dir=tmp_path / "a", name="a")
    plain = parse_train_config({"model": "neural", "neural": {"epochs": 1}})
    with pytest.raises(ConfigError, match="cvt"):
        train_neural(train, dev, plain, out_dir=tmp_path / "b", name="b", unlabelled_docs=train)
