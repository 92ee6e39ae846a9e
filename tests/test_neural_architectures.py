"""The neural tagger's architecture options: shapes, padding, leakage, tiny training runs, save/load.

``tests/data/neural_legacy`` holds two tiny models trained (on ``crf_fixtures.make_corpus`` documents) by
the tagger before these options existed, with their predictions: they must load and predict the same.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch

from clinideid.detect.neural.affix import AffixBiLSTM
from clinideid.detect.neural.casing import CASING_CLASSES, casing_class, token_casing
from clinideid.detect.neural.char_cnn import CharCNN
from clinideid.detect.neural.config import NeuralConfig
from clinideid.detect.neural.context import NgramContext
from clinideid.detect.neural.model import Batch, DirectionalLSTM, NeuralTaggerModule, reverse_padded
from clinideid.detect.neural.tagger import NeuralModel
from clinideid.document import Document
from clinideid.lm.charlm import CharLM, CharLMConfig, CharVocab
from clinideid.train.config import parse_train_config
from clinideid.train.neural import train_neural
from crf_fixtures import make_corpus
from lm_fixtures import one_torch_thread

LEGACY = Path(__file__).parent / "data" / "neural_legacy"


@pytest.fixture(autouse=True)
def _one_thread() -> Any:
    with one_torch_thread():
        yield


# -- models of earlier versions ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["blocks", "cvt"])
def test_models_of_earlier_versions_load_and_predict_the_same(name: str) -> None:
    expected = json.loads((LEGACY / "expected.json").read_text())[name]
    model = NeuralModel.load(LEGACY / name)
    got = model.tag_documents(make_corpus(3, seed=13, prefix="t"))
    assert [lab for _, lab, _ in got] == [e["labels"] for e in expected]
    assert any(lab != "O" for e in expected for lab in e["labels"])  # the reference finds entities
    for (_, _, probs), e in zip(got, expected, strict=True):
        assert probs == pytest.approx(e["probs"], abs=1e-4)  # float sums differ a little across CPUs
    stored = json.loads((LEGACY / name / "model.json").read_text())["training_config"]["neural"]
    # the stored config gets every new option at its default, and dumps back to a superset of itself
    dumped = model.config.model_dump(mode="json")
    assert {k: dumped[k] for k in stored} == stored
    assert dumped["head"] == "crf" and dumped["char_encoder"] == "lstm" and dumped["affix_kind"] == "both"


# -- blocks ---------------------------------------------------------------------------------------------------


def test_casing_classes() -> None:
    cases = {
        "2019": "numeric",
        "12/03": "contains_digit",
        "B12": "contains_digit",
        "dolor": "all_lower",
        "HUVH": "all_upper",
        "María": "initial_upper",
        "McDonald": "mixed",
        "dOLOR": "mixed",
        "-": "other",
        "«": "other",
    }
    assert {t: casing_class(t) for t in cases} == cases
    assert sorted({token_casing(t) for t in cases}) == list(range(1, len(CASING_CLASSES) + 1))


def test_char_cnn_shapes_and_padding_invariance() -> None:
    torch.manual_seed(0)
    cnn = CharCNN(12, char_dim=5, widths=[2, 3, 4], filters=6).eval()
    chars = torch.tensor([[[3, 4, 0], [5, 0, 0], [0, 0, 0]]])
    out = cnn(chars)
    assert out.shape == (1, 3, 18)
    assert not out[0, 2].any()  # a padded token
    wider = torch.nn.functional.pad(chars, (0, 5))  # a longer token elsewhere in the batch pads more
    assert torch.allclose(cnn(wider), out, atol=1e-6)
    assert out[0, 1].abs().sum() > 0  # a one-character token still reaches every filter width


def test_prefix_only_affixes_read_no_suffix() -> None:
    block = AffixBiLSTM(6, 7, dim=4, hidden=3, kind="prefix")
    assert block.suffix is None and block.lstm.input_size == 4
    pre = torch.tensor([[2, 3, 4]])
    mask = torch.ones(1, 3, dtype=torch.bool)
    a = block(pre, torch.tensor([[1, 1, 1]]), mask)
    b = block(pre, torch.tensor([[5, 6, 2]]), mask)
    assert a.shape == (1, 3, 6) and torch.equal(a, b)
    with pytest.raises(ValueError, match="affix kind"):
        AffixBiLSTM(3, 3, kind="infix")


def test_lstm_context_cell_reads_only_its_window() -> None:
    torch.manual_seed(0)
    block = NgramContext(5, n=2, proj_dim=4, hidden=3, rnn="lstm").eval()
    assert isinstance(block.fwd, torch.nn.LSTM)
    x = torch.randn(1, 8, 5)
    mask = torch.ones(1, 8, dtype=torch.bool)
    far = x.clone()
    far[0, 7] += 1.0  # 4 tokens after position 3: outside its 2-token windows
    base, moved = block(x, mask), block(far, mask)
    assert base.shape == (1, 8, 6)
    assert torch.allclose(base[0, 3], moved[0, 3]) and not torch.allclose(base[0, 6], moved[0, 6])


def test_directional_lstm_keeps_each_direction_on_its_side() -> None:
    torch.manual_seed(0)
    layer = DirectionalLSTM(local_dim=3, fwd_dim=2, bwd_dim=2, hidden=4).eval()
    x = torch.randn(1, 6, 7)
    mask = torch.arange(6).unsqueeze(0) < 5
    t = 2
    after = x.clone()
    after[0, t + 1 :] = torch.randn(3, 7)  # every input after t changed
    before = x.clone()
    before[0, :t] = torch.randn(2, 7)
    h, h_after, h_before = layer(x, mask), layer(after, mask), layer(before, mask)
    assert torch.allclose(h[0, t, :4], h_after[0, t, :4])  # forward half: tokens <= t
    assert torch.allclose(h[0, t, 4:], h_before[0, t, 4:])  # backward half: tokens >= t
    lm_bwd_only = x.clone()
    lm_bwd_only[0, :, 5:] = 0.0  # the backward LM's columns never reach the forward direction
    assert torch.allclose(layer(lm_bwd_only, mask)[..., :4], h[..., :4])
    seq = torch.arange(6.0).view(1, 6, 1)
    assert reverse_padded(seq, mask).flatten().tolist() == [4, 3, 2, 1, 0, 5]


def _module(**options: Any) -> NeuralTaggerModule:
    torch.manual_seed(0)
    cfg = NeuralConfig(char_dim=4, char_hidden=3, word_dim=5, lstm_hidden=6, **options)
    return NeuralTaggerModule(
        cfg, n_words=30, n_chars=15, n_prefixes=4, n_suffixes=4, n_tags=5, feature_dims=[]
    ).eval()


def _batch() -> Batch:
    words = torch.tensor([[3, 7, 11, 2, 9], [4, 8, 12, 0, 0]])
    mask = words != 0
    chars = ((words.unsqueeze(2) % 13) + 1).expand(2, 5, 3).clone() * mask.unsqueeze(2)
    small = (words % 3 + 1) * mask
    return Batch(words, chars, small, small, mask, tags=small, casing=(words % 7 + 1) * mask)


@pytest.mark.parametrize(
    ("options", "emit_in"),
    [
        ({"lstm_layers": 0}, 3 * 2 + 5),
        ({"lstm_layers": 0, "stack_proj": 9}, 9),
        ({"stack_proj": 9}, 12),
        ({"casing": True, "casing_dim": 4, "lstm_layers": 0}, 6 + 5 + 4),
        ({"char_encoder": "cnn", "char_cnn_widths": [2, 3], "char_cnn_filters": 7, "lstm_layers": 0}, 14 + 5),
    ],
)
def test_head_input_sizes(options: dict[str, Any], emit_in: int) -> None:
    module = _module(**options)
    assert module.emit.in_features == emit_in
    assert module.emissions(_batch()).shape == (2, 5, 5)


def test_softmax_head_decodes_the_argmax() -> None:
    module = _module(head="softmax")
    assert module.crf is None
    batch = _batch()
    with torch.no_grad():
        em = module.emissions(batch)
        paths, probs = module.decode(batch)
        marg = module.tag_marginals(em, batch.mask)
    assert paths[0] == em[0].argmax(-1).tolist() and len(paths[1]) == 3
    assert probs[1] == pytest.approx(marg[1, :3].max(-1).values.tolist())
    assert marg[1, 3:].abs().sum() == 0  # padding has no distribution


def test_cvt_views_come_from_the_first_of_two_layers() -> None:
    module = _module(cvt=True, lstm_layers=2, dropout=0.0)
    assert isinstance(module.lstm, torch.nn.LSTM) and module.lstm.num_layers == 1
    assert module.lstm_upper is not None
    batch = _batch()
    with torch.no_grad():
        views = module.auxiliary_logits(batch)
        _, first, top = module.encode_layers(batch)
        module.lstm_upper.weight_hh_l0.add_(1.0)  # changing the upper layer leaves the views alone
        again = module.auxiliary_logits(batch)
    assert not torch.allclose(first, top)
    assert all(torch.allclose(views[k], again[k]) for k in views)


def test_separate_dropouts_and_the_unlabelled_rate() -> None:
    module = _module(lstm_layers=2, input_dropout=0.1, recurrent_dropout=0.2, output_dropout=0.3)
    assert (module.dropout.p, module.out_dropout.p, module.lstm.dropout) == (0.1, 0.3, 0.2)
    with module.dropout_rate(0.7):
        assert module.dropout.p == module.out_dropout.p == 0.7
    assert (module.dropout.p, module.out_dropout.p) == (0.1, 0.3)
    assert _module().lstm.dropout == 0.0  # one layer: no between-layer dropout, as before


def test_incompatible_combinations_are_refused() -> None:
    with pytest.raises(ValueError, match="attention"):
        NeuralConfig(lstm_layers=0, attention=True)
    with pytest.raises(ValueError, match="cvt reads its views"):
        NeuralConfig(lstm_layers=0, cvt=True)
    lms = {"forward": "f", "backward": "b"}
    for bad in ({"charlm_proj": 8}, {"stack_proj": 8}):
        with pytest.raises(ValueError, match="keeps the two LMs apart"):
            NeuralConfig(cvt=True, charlm=lms, **bad)
    with pytest.raises(ValueError, match="token-local"):
        NeuralConfig(cvt=True, affix=True, affix_kind="prefix")
    with pytest.raises(ValueError):
        NeuralConfig(optimizer="rmsprop")
    with pytest.raises(ValueError):
        NeuralConfig(char_cnn_widths=[])
    NeuralConfig(cvt=True, charlm=lms, lstm_layers=2, char_encoder="cnn")  # the CVT network with LMs


# -- tiny training runs and save/load ----------------------------------------------------------------------

SMALL = {"char_dim": 6, "char_hidden": 6, "word_dim": 12, "lstm_hidden": 12, "epochs": 3, "batch_size": 4}
SMALL |= {"lr": 0.01, "threads": 1, "dropout": 0.1, "char_cnn_filters": 6, "affix_min_count": 2}


@pytest.fixture(scope="module")
def lms(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("charlm")
    vocab = CharVocab.build([d.text for d in make_corpus(10, seed=1)])
    torch.manual_seed(0)
    return {
        d: str(CharLM(vocab, CharLMConfig(embedding_dim=6, hidden_size=8), d).save(root / d))
        for d in ("forward", "backward")
    }


VARIANTS: dict[str, dict[str, Any]] = {
    "cedi": {"affix": True, "affix_kind": "prefix", "context": True, "context_rnn": "lstm", "context_n": 3},
    "cvt_network": {
        "char_encoder": "cnn",
        "lstm_layers": 2,
        "cvt": True,
        "cvt_unlabelled_dropout": 0.3,
        "weight_decay": 1e-6,
    },
    "cvt_network_charlm": {"char_encoder": "cnn", "lstm_layers": 2, "cvt": True, "charlm": "LMS"},
    "no_bilstm": {"lstm_layers": 0, "stack_proj": 16},
    "softmax": {"head": "softmax"},
    "stack_proj": {"stack_proj": 16, "charlm": "LMS"},
    "friedrich": {
        "casing": True,
        "char_encoder": "cnn",
        "optimizer": "nadam",
        "lstm_layers": 2,
        "input_dropout": 0.1,
        "recurrent_dropout": 0.2,
        "output_dropout": 0.3,
    },
}


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_tiny_training_and_save_load(variant: str, lms: dict[str, str], tmp_path: Path) -> None:
    neural = {**SMALL, **VARIANTS[variant]}
    if neural.get("charlm") == "LMS":
        neural["charlm"] = lms
    config = parse_train_config({"model": "neural", "window_size": 40, "window_overlap": 8, "neural": neural})
    train, dev = make_corpus(12, seed=1), make_corpus(4, seed=2, prefix="dev")
    unlabelled = (
        [Document(d.id, d.text) for d in make_corpus(6, seed=3, prefix="u")] if neural.get("cvt") else []
    )
    result = train_neural(
        train, dev, config, out_dir=tmp_path / "m", name=variant, seed=1, unlabelled_docs=unlabelled
    )
    losses = [h["loss"] for h in result.history]
    assert losses[-1] < losses[0]
    loaded = NeuralModel.load(tmp_path / "m")
    for key, value in VARIANTS[variant].items():
        if key != "charlm":
            assert getattr(loaded.config, key) == value
    assert result.model is not None
    test_docs = make_corpus(3, seed=4, prefix="t")
    assert loaded.tag_documents(test_docs) == result.model.tag_documents(test_docs)
