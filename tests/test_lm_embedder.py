"""Contextual string embeddings: which LM state each token gets, chunk carry, batching, loading."""

from __future__ import annotations

import pytest
import torch

from clinideid.errors import InputError, ModelError
from clinideid.lm import ContextualStringEmbedder, load_embedder
from clinideid.text import Token, tokenize
from lm_fixtures import generated_notes, one_torch_thread, tiny_lm


@pytest.fixture(autouse=True)
def _one_thread():
    with one_torch_thread():
        yield


TEXT = "Paciente Ana de 45 años, natural de Sevilla.\nIngresa el 12/03/2019 por dolor."


def reference(fwd, bwd, text: str, tokens) -> torch.Tensor:
    """The expected embeddings, each LM run separately on exactly the text it should have read."""
    rows = []
    for t in tokens:
        f = fwd.states(text[: t.end])[-1]
        b = bwd.states(text[t.start :][::-1])[-1]
        rows.append(torch.cat([f, b]))
    return torch.stack(rows)


@pytest.fixture(scope="module")
def lms():
    return tiny_lm("forward", seed=1), tiny_lm("backward", seed=2)


@pytest.mark.parametrize("layers", [1, 2])
def test_token_vectors_are_the_states_at_the_token_edges(layers):
    fwd, bwd = tiny_lm("forward", layers=layers, seed=3), tiny_lm("backward", layers=layers, seed=4)
    emb = ContextualStringEmbedder(fwd, bwd)
    tokens = tokenize(TEXT)
    got = emb.token_embeddings(TEXT, tokens)
    assert got.shape == (len(tokens), emb.dim) and emb.dim == fwd.hidden_size + bwd.hidden_size
    torch.testing.assert_close(got, reference(fwd, bwd, TEXT, tokens), rtol=1e-5, atol=1e-6)


def test_states_differ_between_positions(lms):
    """Guard against a vacuous pass: neighbouring tokens get different vectors in both halves."""
    fwd, bwd = lms
    emb = ContextualStringEmbedder(fwd, bwd)
    got = emb.token_embeddings(TEXT, tokenize(TEXT))
    h = fwd.hidden_size
    assert not torch.allclose(got[0, :h], got[1, :h])
    assert not torch.allclose(got[0, h:], got[1, h:])


def test_backward_vector_depends_on_the_right_context_only(lms):
    fwd, bwd = lms
    emb = ContextualStringEmbedder(fwd, bwd)
    a, b = "Juan vive en Madrid.", "Pepe vive en Madrid."
    ea, eb = emb.token_embeddings(a, tokenize(a)), emb.token_embeddings(b, tokenize(b))
    h = fwd.hidden_size
    torch.testing.assert_close(ea[1:, h:], eb[1:, h:])  # same text to the right of every later token
    assert not torch.allclose(ea[0, h:], eb[0, h:])  # the first token itself differs
    assert not torch.allclose(ea[1:, :h], eb[1:, :h])  # the forward half sees the different left context


@pytest.mark.parametrize("chunk_len", [1, 7, 64])
def test_long_documents_read_in_chunks_give_the_same_vectors(lms, chunk_len):
    fwd, bwd = lms
    text = "".join(generated_notes(4, seed=5))
    tokens = tokenize(text)
    whole = ContextualStringEmbedder(fwd, bwd, chunk_len=100_000).token_embeddings(text, tokens)
    chunked = ContextualStringEmbedder(fwd, bwd, chunk_len=chunk_len).token_embeddings(text, tokens)
    assert len(text) > 3 * 64
    torch.testing.assert_close(chunked, whole, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(chunked[-5:], reference(fwd, bwd, text, tokens[-5:]), rtol=1e-5, atol=1e-6)


def test_batch_of_different_lengths_matches_one_by_one(lms):
    fwd, bwd = lms
    texts = ["Dolor.", *generated_notes(3, seed=9), "", "Ana", "x" * 300]
    tokens = [tokenize(t) for t in texts]
    emb = ContextualStringEmbedder(fwd, bwd, chunk_len=50, batch_size=3)
    batched = emb.token_embeddings_batch(texts, tokens)
    for text, toks, got in zip(texts, tokens, batched, strict=True):
        assert got.shape == (len(toks), emb.dim)
        if toks:
            torch.testing.assert_close(got, reference(fwd, bwd, text, toks), rtol=1e-5, atol=1e-6)


def test_any_character_span_works_not_only_tokenizer_tokens(lms):
    fwd, bwd = lms
    tokens = [
        Token(TEXT[0 : TEXT.index(" ")], 0, TEXT.index(" ")),
        Token(TEXT[3:4], 3, 4),
        Token(TEXT, 0, len(TEXT)),
    ]
    got = ContextualStringEmbedder(*lms).token_embeddings(TEXT, tokens)
    torch.testing.assert_close(got, reference(fwd, bwd, TEXT, tokens), rtol=1e-5, atol=1e-6)


def test_unknown_characters_are_read_as_unk(lms):
    text = "Paciente 张伟 ingresa."
    got = ContextualStringEmbedder(*lms).token_embeddings(text, tokenize(text))
    assert got.shape[0] == len(tokenize(text)) and torch.isfinite(got).all()


def test_bad_token_offsets_are_input_errors_without_text(lms):
    emb = ContextualStringEmbedder(*lms)
    with pytest.raises(InputError, match=r"token 0 has offsets \[5, 99\)") as err:
        emb.token_embeddings("Ana Ruiz", [Token("Ruiz", 5, 99)])
    assert "Ruiz" not in str(err.value)
    with pytest.raises(InputError):
        emb.token_embeddings_batch(["a", "b"], [[]])


def test_directions_are_checked(lms):
    fwd, bwd = lms
    with pytest.raises(ModelError, match="must be a forward LM"):
        ContextualStringEmbedder(bwd, fwd)


def test_load_embedder_checks_directions_and_language(tmp_path, lms):
    fwd, bwd = lms
    fwd.save(tmp_path / "f", fwd.build_metadata(name="f", language="es"))
    bwd.save(tmp_path / "b", bwd.build_metadata(name="b", language="es"))
    emb = load_embedder(tmp_path / "f", tmp_path / "b")
    got = emb.token_embeddings(TEXT, tokenize(TEXT))
    torch.testing.assert_close(got, ContextualStringEmbedder(fwd, bwd).token_embeddings(TEXT, tokenize(TEXT)))
    with pytest.raises(ModelError, match="give the forward model first"):
        load_embedder(tmp_path / "b", tmp_path / "f")
    other = tiny_lm("backward", seed=8)
    other.save(tmp_path / "fr", other.build_metadata(name="fr", language="fr"))
    with pytest.raises(ModelError, match="one language"):
        load_embedder(tmp_path / "f", tmp_path / "fr")


def test_embeddings_are_ordinary_tensors_a_tagger_can_train_on(lms):
    """Computed under inference mode, returned as normal tensors: usable as input of trainable layers."""
    emb = ContextualStringEmbedder(*lms)
    got = emb.token_embeddings(TEXT, tokenize(TEXT))
    assert not got.is_inference() and not got.requires_grad
    layer = torch.nn.Linear(emb.dim, 3)
    layer(got).sum().backward()
    assert layer.weight.grad is not None and layer.weight.grad.abs().sum() > 0
