"""Word vectors: loading text/fastText files, OOV handling, vocabularies, and training embeddings."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import torch

from clinideid.detect.neural.embeddings import WordEmbedding, load_vectors
from clinideid.detect.neural.vocab import Vocab, normalize_word
from clinideid.document import Document
from clinideid.errors import ConfigError, InputError


def test_normalize_word_and_vocab() -> None:
    assert normalize_word("Ingreso-2019") == "ingreso-0000"
    vocab = Vocab.from_counts(Counter({"b": 3, "a": 3, "c": 1}), min_count=2)
    assert vocab.to_list() == ["a", "b"]
    assert vocab.encode(["a", "zzz"]) == [2, 1]
    assert Vocab.from_list(vocab.to_list()).stoi == vocab.stoi


def test_text_vectors_with_and_without_header(tmp_path: Path) -> None:
    glove = tmp_path / "glove.txt"
    glove.write_text("Fecha 0.1 0.2\npaciente 0.3 0.4\n2019 1 1\n", encoding="utf-8")
    w2v = tmp_path / "w2v.txt"
    w2v.write_text("2 2\nfecha 0.5 0.6\nfecha 9 9\n", encoding="utf-8")
    lookup, dim = load_vectors(glove)
    assert dim == 2 and lookup("fecha") == [0.1, 0.2] and lookup("0000") == [1.0, 1.0]
    assert lookup("nada") is None
    lookup2, _ = load_vectors(w2v)
    assert lookup2("fecha") == [0.5, 0.6]  # the first vector of a key wins


def test_pretrained_vectors_fill_the_table_and_oov_stays_unknown(tmp_path: Path) -> None:
    path = tmp_path / "v.txt"
    path.write_text("fecha 0.5 0.25 1\n", encoding="utf-8")
    vocab = Vocab(["fecha", "nhc"])
    emb = WordEmbedding(len(vocab), dim=3)
    unk_before = emb.embed.weight[1].clone()
    assert emb.load_pretrained(vocab, load_vectors(path)) == 1
    assert emb.embed.weight[vocab.get("fecha")].tolist() == [0.5, 0.25, 1.0]
    assert torch.equal(emb(torch.tensor([vocab.get("desconocida")]))[0], unk_before)
    with pytest.raises(ConfigError, match="word_dim: 3"):
        WordEmbedding(len(vocab), dim=5).load_pretrained(vocab, load_vectors(path))


def test_bad_vector_files_are_input_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        load_vectors(tmp_path / "missing.txt")
    ragged = tmp_path / "ragged.txt"
    ragged.write_text("a 1 2\nb 1\n", encoding="utf-8")
    with pytest.raises(InputError, match="line 2"):
        load_vectors(ragged)
    words = tmp_path / "words.txt"
    words.write_text("a b c\n", encoding="utf-8")
    with pytest.raises(InputError, match="line 1"):
        load_vectors(words)
    latin = tmp_path / "latin.txt"
    latin.write_bytes("año 1 2\n".encode("latin-1"))
    with pytest.raises(InputError, match="UTF-8"):
        load_vectors(latin)
    bad_bin = tmp_path / "v.bin"
    bad_bin.write_bytes(b"\x00\x01not fasttext")
    pytest.importorskip("gensim")
    with pytest.raises(InputError, match="fastText"):
        load_vectors(bad_bin)


def _docs() -> list[Document]:
    lines = ["El paciente ingresa el 12/03/2019 con dolor.", "Paciente estable, alta el 15/03/2019."]
    return [Document(f"d{k}", "\n".join(lines * 5)) for k in range(4)]


def test_train_word2vec_writes_loadable_vectors(tmp_path: Path) -> None:
    pytest.importorskip("gensim")
    from clinideid.train.embeddings import train_word2vec

    out = tmp_path / "vectors.txt"
    stats = train_word2vec(_docs(), out, dim=8, window=2, min_count=2, epochs=2, seed=1)
    assert stats.dim == 8 and stats.vocabulary > 5
    lookup, dim = load_vectors(out)
    assert dim == 8 and lookup("paciente") is not None and lookup("00") is not None
    with pytest.raises(InputError, match="no text"):
        train_word2vec([Document("e", "  \n ")], out)
    with pytest.raises(ConfigError, match="positive"):
        train_word2vec(_docs(), out, dim=0)


def test_train_embeddings_command(tmp_path: Path) -> None:
    pytest.importorskip("gensim")
    from typer.testing import CliRunner

    import clinideid.cli.embeddings  # noqa: F401  (registers the command)
    from clinideid.cli import app

    notes = tmp_path / "notes"
    notes.mkdir()
    for doc in _docs():
        (notes / f"{doc.id}.txt").write_text(doc.text, encoding="utf-8")
    out = tmp_path / "v.txt"
    result = CliRunner().invoke(app, ["train-embeddings", str(notes), "--out", str(out), "--dim", "6"])
    assert result.exit_code == 0, result.output
    assert load_vectors(out)[1] == 6
