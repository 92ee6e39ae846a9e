"""Neural tagger blocks: output shapes, padding invariance, CRF and n-gram context against slow references."""

from __future__ import annotations

import itertools

import pytest
import torch

from clinideid.detect.neural.affix import AffixBiLSTM, build_affix_vocabs
from clinideid.detect.neural.attention import AdditiveAttention
from clinideid.detect.neural.config import NeuralConfig
from clinideid.detect.neural.context import NgramContext
from clinideid.detect.neural.crf import CRF
from clinideid.detect.neural.embeddings import CharBiLSTM
from clinideid.detect.neural.model import Batch, NeuralTaggerModule, SequenceDropout


@pytest.fixture(autouse=True)
def _seed() -> None:
    torch.manual_seed(0)


def _mask(lengths: list[int], t: int) -> torch.Tensor:
    return torch.arange(t).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)


# -- CRF ----------------------------------------------------------------------------------------------------


def _crf(k: int) -> CRF:
    crf = CRF(k)
    with torch.no_grad():
        for p in (crf.start, crf.end, crf.transitions):
            p.normal_()
    return crf


def _path_score(crf: CRF, em: torch.Tensor, seq: tuple[int, ...]) -> torch.Tensor:
    s = crf.start[seq[0]] + em[0, seq[0]]
    for t in range(1, len(seq)):
        s = s + crf.transitions[seq[t - 1], seq[t]] + em[t, seq[t]]
    return s + crf.end[seq[-1]]


def test_crf_log_likelihood_viterbi_and_marginals_match_brute_force() -> None:
    k, t = 3, 4
    crf = _crf(k)
    em = torch.randn(3, t, k)
    lengths = [4, 2, 1]
    mask = _mask(lengths, t)
    gold = torch.randint(0, k, (3, t))
    ll = crf.log_likelihood(em, gold, mask)
    paths = crf.viterbi(em, mask)
    marg = crf.marginals(em, mask)
    with torch.no_grad():
        for b, n in enumerate(lengths):
            seqs = list(itertools.product(range(k), repeat=n))
            scores = torch.stack([_path_score(crf, em[b], s) for s in seqs])
            log_z = torch.logsumexp(scores, 0)
            gold_seq = tuple(gold[b, :n].tolist())
            assert ll[b].item() == pytest.approx((_path_score(crf, em[b], gold_seq) - log_z).item(), abs=1e-4)
            assert tuple(paths[b]) == seqs[int(scores.argmax())]
            expected = torch.zeros(n, k)
            for s, p in zip(seqs, torch.softmax(scores, 0), strict=True):
                for i, tag in enumerate(s):
                    expected[i, tag] += p
            assert torch.allclose(marg[b, :n], expected, atol=1e-5)
            assert marg[b, n:].abs().sum() == 0


def test_crf_padding_does_not_change_scores() -> None:
    crf = _crf(4)
    em = torch.randn(1, 5, 4)
    tags = torch.randint(0, 4, (1, 5))
    padded_em = torch.cat([em, torch.randn(1, 3, 4)], dim=1)
    padded_tags = torch.cat([tags, torch.randint(0, 4, (1, 3))], dim=1)
    a = crf.log_likelihood(em, tags, _mask([5], 5))
    b = crf.log_likelihood(padded_em, padded_tags, _mask([5], 8))
    assert torch.allclose(a, b, atol=1e-5)
    assert crf.viterbi(em, _mask([5], 5)) == crf.viterbi(padded_em, _mask([5], 8))


def test_crf_loss_is_differentiable() -> None:
    crf = _crf(3)
    em = torch.randn(2, 4, 3, requires_grad=True)
    crf(em, torch.zeros(2, 4, dtype=torch.long), _mask([4, 3], 4)).backward()
    assert em.grad is not None and crf.transitions.grad is not None
    assert em.grad[1, 3].abs().sum() == 0  # a padded position gets no gradient


# -- n-gram context -----------------------------------------------------------------------------------------


def _context_reference(block: NgramContext, x: torch.Tensor, length: int) -> torch.Tensor:
    """One RNN call per token and direction: the slow loop the vectorised block replaces."""
    n = block.n
    proj = torch.tanh(block.proj(x[:length]))
    zero = torch.zeros(proj.size(1))
    out = []
    for i in range(length):
        before = [proj[j] if 0 <= j < length else zero for j in range(i - n, i + 1)]
        after = [proj[j] if 0 <= j < length else zero for j in range(i + n, i - 1, -1)]
        _, hf = block.fwd(torch.stack(before).unsqueeze(0))
        _, hb = block.bwd(torch.stack(after).unsqueeze(0))
        out.append(torch.cat([hf[-1, 0], hb[-1, 0]]))
    return torch.stack(out)


def test_ngram_context_matches_a_slow_reference_loop() -> None:
    block = NgramContext(in_dim=6, n=3, proj_dim=5, hidden=4)
    x = torch.randn(2, 7, 6)
    lengths = [7, 4]
    with torch.no_grad():
        out = block(x, _mask(lengths, 7))
        assert out.shape == (2, 7, 8)
        for b, n in enumerate(lengths):
            assert torch.allclose(out[b, :n], _context_reference(block, x[b], n), atol=1e-5)
        assert out[1, 4:].abs().sum() == 0


def test_ngram_context_windows_are_the_neighbours() -> None:
    block = NgramContext(in_dim=1, n=2, proj_dim=1, hidden=1)
    x = torch.arange(1.0, 6.0).view(1, 5, 1)
    fwd, bwd = block.windows(x, _mask([5], 5))
    assert fwd[0, 0, :, 0].tolist() == [0.0, 0.0, 1.0]
    assert fwd[0, 3, :, 0].tolist() == [2.0, 3.0, 4.0]
    assert bwd[0, 3, :, 0].tolist() == [0.0, 5.0, 4.0]
    assert bwd[0, 0, :, 0].tolist() == [3.0, 2.0, 1.0]


# -- other blocks -------------------------------------------------------------------------------------------


def test_char_bilstm_shapes_and_padding() -> None:
    block = CharBiLSTM(n_chars=10, char_dim=4, hidden=3)
    chars = torch.tensor([[[2, 3, 0], [4, 0, 0]]])
    padded = torch.zeros(1, 4, 5, dtype=torch.long)
    padded[0, :2, :3] = chars[0]
    with torch.no_grad():
        a, b = block(chars), block(padded)
    assert a.shape == (1, 2, 6) and b.shape == (1, 4, 6)
    assert torch.allclose(a[0], b[0, :2], atol=1e-6)
    assert b[0, 2:].abs().sum() == 0


def test_affix_vocab_keeps_frequent_affixes_only() -> None:
    seqs = [["Martinez", "Gomez", "López", "paciente"]] * 3 + [["Ruiz"]]
    pre, suf = build_affix_vocabs(seqs, n=3, min_count=3)
    assert "ez" not in suf and "nez" in suf and "mez" in suf
    assert "ruiz"[-3:] not in suf and "mar" in pre
    assert pre.get("zzz") == 1  # unknown


def test_affix_bilstm_padding_invariance() -> None:
    block = AffixBiLSTM(6, 7, dim=3, hidden=2)
    pre = torch.tensor([[2, 3, 4, 0, 0]])
    suf = torch.tensor([[5, 1, 2, 0, 0]])
    with torch.no_grad():
        a = block(pre[:, :3], suf[:, :3], _mask([3], 3))
        b = block(pre, suf, _mask([3], 5))
    assert a.shape == (1, 3, 4) and b.shape == (1, 5, 4)
    assert torch.allclose(a, b[:, :3], atol=1e-6)


def test_attention_ignores_padding() -> None:
    block = AdditiveAttention(query_dim=4, value_dim=3, attn_dim=5)
    h, x = torch.randn(1, 6, 4), torch.randn(1, 6, 3)
    with torch.no_grad():
        a = block(h[:, :4], x[:, :4], _mask([4], 4))
        b = block(h, x, _mask([4], 6))
    assert a.shape == (1, 4, 4)
    assert torch.allclose(a, b[:, :4], atol=1e-6)


def test_locked_dropout_shares_one_mask_per_sequence() -> None:
    drop = SequenceDropout(0.5, locked=True).train()
    out = drop(torch.ones(2, 6, 8))
    assert torch.equal(out[:, 0], out[:, 5])
    drop.eval()
    assert torch.equal(drop(torch.ones(2, 6, 8)), torch.ones(2, 6, 8))


def _module(**overrides: object) -> NeuralTaggerModule:
    cfg = NeuralConfig(
        char_dim=4,
        char_hidden=3,
        word_dim=5,
        affix_dim=3,
        affix_hidden=2,
        context_n=2,
        context_proj=4,
        context_hidden=3,
        attention_dim=4,
        lstm_hidden=6,
        **overrides,
    )
    return NeuralTaggerModule(cfg, n_words=20, n_chars=15, n_prefixes=8, n_suffixes=8, n_tags=5).eval()


def _batch(lengths: list[int], t: int) -> Batch:
    g = torch.Generator().manual_seed(1)
    mask = _mask(lengths, t)
    words = torch.randint(2, 20, (len(lengths), t), generator=g) * mask
    chars = torch.randint(1, 15, (len(lengths), t, 4), generator=g) * mask.unsqueeze(2)
    pre = torch.randint(1, 8, (len(lengths), t), generator=g) * mask
    suf = torch.randint(1, 8, (len(lengths), t), generator=g) * mask
    return Batch(words, chars, pre, suf, mask)


def _truncate(batch: Batch, b: int, n: int) -> Batch:
    return Batch(
        batch.words[b : b + 1, :n],
        batch.chars[b : b + 1, :n],
        batch.prefixes[b : b + 1, :n],
        batch.suffixes[b : b + 1, :n],
        batch.mask[b : b + 1, :n],
    )


@pytest.mark.parametrize(
    "blocks",
    [
        {},
        {"affix": True, "context": True, "attention": True, "lstm_layers": 2},
        {"char": False, "affix": True},
    ],
)
def test_full_network_padding_never_changes_real_tokens(blocks: dict[str, object]) -> None:
    module = _module(**blocks)
    batch = _batch([7, 3], 7)
    with torch.no_grad():
        em = module.emissions(batch)
        assert em.shape == (2, 7, 5)
        alone = module.emissions(_truncate(batch, 1, 3))
        assert torch.allclose(em[1, :3], alone[0], atol=1e-5)
        paths, probs = module.decode(batch)
    assert [len(p) for p in paths] == [7, 3] and all(0 <= x <= 1 for p in probs for x in p)


def test_config_needs_token_inputs() -> None:
    with pytest.raises(ValueError, match="at least one of char, word, affix"):
        NeuralConfig(char=False, word=False)
    with pytest.raises(ValueError, match="word block is off"):
        NeuralConfig(word=False, vectors="v.txt")
