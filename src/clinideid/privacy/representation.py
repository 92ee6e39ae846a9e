"""Private token representations trained against adversaries (torch).

A ``RepresentationModel`` maps each token's word embedding to a vector of ``size`` values plus trainable
Gaussian noise; a ``DeidHead`` (BiLSTM-CRF) tags PHI from the representation. Two adversaries try to
undo the privacy, each a binary classifier over a pair of sequences:

* ``EmbeddingAdversary`` (Siamese): a representation sequence and a word-embedding sequence — were they
  computed from the same tokens? Negative pairs use the same sequence with its PHI tokens swapped for
  random vocabulary words, so the adversary must recognise the PHI itself.
* ``RepresentationAdversary`` (Siamese, cosine): two representation sequences — the same tokens (two
  noise draws) or the PHI-swapped variant?

Training (``train_private``) follows one of two schemes:

* ``feutry`` (three phases): (1) representation and tagger on the tagging loss; (2) adversaries on the
  frozen representation; (3) alternation: adversaries a few steps, then representation and tagger on
  ``L_deid + λ·|L_adv − L_random|`` where ``L_random = log 2`` is a guessing classifier's loss, which
  pushes the adversaries to chance rather than to confident wrong answers;
* ``dann``: one joint objective, the adversaries behind a gradient-reversal layer (``L_deid + λ·L_adv``
  for the encoder with the adversary gradient negated).

A trained model is a folder (``save_model``/``load_model``): ``model.json`` (settings, versions, metrics),
``weights.safetensors`` and the word-vector table it reads. The folder holds the corpus vocabulary: it
stays with the data owner; only released representations leave.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from clinideid.errors import ConfigError, ModelError
from clinideid.privacy.data import TokenSequence, WordVectors
from clinideid.privacy.tagger import DeidHead, pad, pad_tags

FORMAT_VERSION = 1
METHODS = ("feutry", "dann", "none")
KINDS = ("ff", "lstm")
L_RANDOM = math.log(2.0)


class RepresentationModel(nn.Module):
    """Token embeddings → representation (feed-forward or BiLSTM) + trainable Gaussian noise."""

    def __init__(
        self, input_dim: int, size: int, kind: str = "ff", init_sigma: float = 0.1, min_sigma: float = 0.0
    ) -> None:
        super().__init__()
        if kind not in KINDS:
            raise ConfigError(f"representation kind must be one of {', '.join(KINDS)}, got {kind!r}")
        if size < 2 or size % 2:
            raise ConfigError("representation size must be an even number of at least 2")
        self.kind = kind
        self.size = size
        self.input_dim = input_dim
        if kind == "ff":
            self.encoder: nn.Module = nn.Sequential(nn.Linear(input_dim, size), nn.Tanh())
        else:
            self.encoder = nn.LSTM(input_dim, size // 2, batch_first=True, bidirectional=True)
        self.log_sigma = nn.Parameter(torch.tensor(math.log(max(init_sigma, min_sigma))))
        # a floor on the noise: the tagging loss alone would shrink it towards zero
        self.min_log_sigma = math.log(min_sigma) if min_sigma > 0 else -math.inf

    def _log_sigma(self) -> torch.Tensor:
        return self.log_sigma.clamp(min=self.min_log_sigma)

    @property
    def sigma(self) -> float:
        return float(self._log_sigma().detach().exp())

    def forward(
        self, x: torch.Tensor, noise: bool = True, generator: torch.Generator | None = None
    ) -> torch.Tensor:
        h = self.encoder(x) if self.kind == "ff" else torch.tanh(self.encoder(x)[0])
        if noise:
            eps = torch.randn(h.shape, generator=generator)
            h = h + self._log_sigma().exp() * eps
        return h


def _masked_mean(h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    m = mask.unsqueeze(2).to(h.dtype)
    return (h * m).sum(1) / m.sum(1).clamp(min=1.0)


class SequenceEncoder(nn.Module):
    """BiLSTM over a vector sequence, mean-pooled to one vector."""

    def __init__(self, input_dim: int, hidden: int = 32) -> None:
        super().__init__()
        self.lstm = nn.LSTM(input_dim, hidden, batch_first=True, bidirectional=True)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return _masked_mean(self.lstm(x)[0], mask)


class EmbeddingAdversary(nn.Module):
    """Siamese: does a representation sequence belong to an embedding sequence? Returns logits."""

    def __init__(self, rep_dim: int, emb_dim: int, hidden: int = 32) -> None:
        super().__init__()
        self.rep = SequenceEncoder(rep_dim, hidden)
        self.emb = SequenceEncoder(emb_dim, hidden)
        self.score = nn.Sequential(nn.Linear(4 * hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, r: torch.Tensor, e: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        a, b = self.rep(r, mask), self.emb(e, mask)
        return self.score(torch.cat([(a - b).abs(), a * b], dim=1)).squeeze(1)


class RepresentationAdversary(nn.Module):
    """Siamese with cosine similarity: are two representation sequences of the same tokens?"""

    def __init__(self, rep_dim: int, hidden: int = 32) -> None:
        super().__init__()
        self.enc = SequenceEncoder(rep_dim, hidden)
        self.scale = nn.Parameter(torch.tensor(5.0))
        self.bias = nn.Parameter(torch.tensor(0.0))

    def forward(self, r1: torch.Tensor, r2: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        cos = nn.functional.cosine_similarity(self.enc(r1, mask), self.enc(r2, mask), dim=1)
        return self.scale * cos + self.bias


class _Reverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, lam: float) -> torch.Tensor:
        ctx.lam = lam
        return x.view_as(x)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        return -ctx.lam * grad, None


def grad_reverse(x: torch.Tensor, lam: float = 1.0) -> torch.Tensor:
    """Identity forward; the gradient multiplied by ``-lam`` backward (DANN's gradient reversal)."""
    return _Reverse.apply(x, lam)


@dataclass
class PrivateConfig:
    """Settings of a private representation run (saved in ``model.json``)."""

    size: int = 100
    kind: str = "ff"
    method: str = "feutry"
    init_sigma: float = 0.1
    min_sigma: float = 0.0  # floor on the trained noise (0: none)
    hidden: int = 64
    adversary_hidden: int = 32
    lam: float = 1.0
    epochs_deid: int = 2  # Feutry phase 1
    epochs_adv: int = 1  # Feutry phase 2
    epochs_joint: int = 2  # Feutry phase 3, or DANN's training
    adversary_steps: int = 1  # adversary updates per encoder update in phase 3
    batch_size: int = 32
    lr: float = 0.005
    seed: int = 1
    label_scheme: str | None = None
    max_len: int = 50

    def check(self) -> None:
        if self.method not in METHODS:
            raise ConfigError(f"method must be one of {', '.join(METHODS)}, got {self.method!r}")
        if self.lam < 0:
            raise ConfigError("lambda must be zero or more")
        if self.min_sigma < 0 or self.init_sigma <= 0:
            raise ConfigError("init_sigma must be positive and min_sigma zero or more")


@dataclass
class PrivateModel:
    """A trained representation model, its tagger, its adversaries and the vectors it reads."""

    config: PrivateConfig
    vectors: WordVectors
    encoder: RepresentationModel
    head: DeidHead
    adv_emb: EmbeddingAdversary
    adv_rep: RepresentationAdversary
    history: list[dict[str, float]] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)

    @torch.no_grad()
    def represent(
        self, words: Sequence[str], noise: bool = True, generator: torch.Generator | None = None
    ) -> np.ndarray:
        """The (T, size) representation of one normalised word sequence."""
        self.encoder.eval()
        x = torch.as_tensor(self.vectors.embed(words)).unsqueeze(0)
        return self.encoder(x, noise=noise, generator=generator)[0].numpy()


def swap_phi(seq: TokenSequence, vocab: Sequence[str], rng: random.Random) -> tuple[str, ...]:
    """``seq.words`` with every PHI token replaced by a random vocabulary word (a negative pair)."""
    return tuple(rng.choice(vocab) if t > 0 else w for w, t in zip(seq.words, seq.tags, strict=True))


@dataclass
class _Batch:
    x: torch.Tensor  # original embeddings
    x_swap: torch.Tensor  # embeddings with PHI swapped
    tags: torch.Tensor
    mask: torch.Tensor
    has_phi: torch.Tensor


def _batch(seqs: Sequence[TokenSequence], vectors: WordVectors, rng: random.Random) -> _Batch:
    vocab = vectors.words
    x, mask = pad([vectors.embed(s.words) for s in seqs], vectors.dim)
    xs, _ = pad([vectors.embed(swap_phi(s, vocab, rng)) for s in seqs], vectors.dim)
    has_phi = torch.tensor([any(s.tags) for s in seqs])
    return _Batch(x, xs, pad_tags([s.tags for s in seqs]), mask, has_phi)


def adversary_loss(
    model: PrivateModel, b: _Batch, r: torch.Tensor, r_swap: torch.Tensor, r2: torch.Tensor
) -> tuple[torch.Tensor, float]:
    """Mean BCE of both adversaries on the batch's PHI sequences, and their accuracy.

    ``r``/``r2``: two noisy representations of the batch; ``r_swap``: of its PHI-swapped variant.
    """
    sel = b.has_phi
    if not bool(sel.any()):
        return torch.zeros(()), float("nan")
    m = b.mask[sel]
    bce = nn.functional.binary_cross_entropy_with_logits
    pos1 = model.adv_emb(r[sel], b.x[sel], m)
    neg1 = model.adv_emb(r[sel], b.x_swap[sel], m)
    pos2 = model.adv_rep(r[sel], r2[sel], m)
    neg2 = model.adv_rep(r[sel], r_swap[sel], m)
    logits = torch.cat([pos1, neg1, pos2, neg2])
    target = torch.cat(
        [torch.ones_like(pos1), torch.zeros_like(neg1), torch.ones_like(pos2), torch.zeros_like(neg2)]
    )
    acc = float(((logits > 0).float() == target).float().mean())
    return bce(logits, target), acc


def _encode3(model: PrivateModel, b: _Batch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return model.encoder(b.x), model.encoder(b.x_swap), model.encoder(b.x)


def new_model(vectors: WordVectors, config: PrivateConfig) -> PrivateModel:
    config.check()
    torch.manual_seed(config.seed)
    enc = RepresentationModel(vectors.dim, config.size, config.kind, config.init_sigma, config.min_sigma)
    return PrivateModel(
        config,
        vectors,
        enc,
        DeidHead(config.size, config.hidden),
        EmbeddingAdversary(config.size, vectors.dim, config.adversary_hidden),
        RepresentationAdversary(config.size, config.adversary_hidden),
    )


def _batches(seqs: Sequence[TokenSequence], size: int, rng: random.Random) -> list[list[TokenSequence]]:
    order = list(range(len(seqs)))
    rng.shuffle(order)
    return [[seqs[i] for i in order[k : k + size]] for k in range(0, len(order), size)]


def deid_step(model: PrivateModel, b: _Batch, opt: torch.optim.Optimizer) -> float:
    """One update of encoder and tagger on the tagging loss alone."""
    loss = model.head.loss(model.encoder(b.x), b.tags, b.mask)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return float(loss.detach())


def adversary_step(model: PrivateModel, b: _Batch, opt: torch.optim.Optimizer) -> tuple[float, float]:
    """One update of both adversaries on a frozen (detached) representation."""
    with torch.no_grad():
        r, rs, r2 = _encode3(model, b)
    loss, acc = adversary_loss(model, b, r, rs, r2)
    if loss.requires_grad:
        opt.zero_grad()
        loss.backward()
        opt.step()
    return float(loss.detach()), acc


def feutry_step(
    model: PrivateModel, b: _Batch, opt: torch.optim.Optimizer, lam: float
) -> tuple[float, float]:
    """Encoder + tagger update on ``L_deid + λ·|L_adv − log 2|`` (adversaries not updated here)."""
    r, rs, r2 = _encode3(model, b)
    l_deid = model.head.loss(r, b.tags, b.mask)
    l_adv, _ = adversary_loss(model, b, r, rs, r2)
    loss = l_deid + lam * (l_adv - L_RANDOM).abs() if l_adv.requires_grad else l_deid
    opt.zero_grad()
    loss.backward()
    opt.step()
    return float(l_deid.detach()), float(l_adv.detach())


def dann_step(model: PrivateModel, b: _Batch, opt: torch.optim.Optimizer, lam: float) -> tuple[float, float]:
    """One joint update: tagger and adversaries minimise their losses; the encoder gets the adversary
    gradient reversed (scaled by ``lam``)."""
    r, rs, r2 = _encode3(model, b)
    l_deid = model.head.loss(r, b.tags, b.mask)
    l_adv, acc = adversary_loss(model, b, grad_reverse(r, lam), grad_reverse(rs, lam), grad_reverse(r2, lam))
    opt.zero_grad()
    (l_deid + l_adv).backward()
    opt.step()
    return float(l_deid.detach()), acc


def train_private(
    train: Sequence[TokenSequence], vectors: WordVectors, config: PrivateConfig
) -> PrivateModel:
    """Train a private representation with the configured method (see the module docstring)."""
    model = new_model(vectors, config)
    rng = random.Random(config.seed)
    enc_params = [*model.encoder.parameters(), *model.head.parameters()]
    adv_params = [*model.adv_emb.parameters(), *model.adv_rep.parameters()]
    opt_enc = torch.optim.Adam(enc_params, lr=config.lr)
    opt_adv = torch.optim.Adam(adv_params, lr=config.lr)
    model.encoder.train()

    def log(phase: str, epoch: int, **values: float) -> None:
        model.history.append({"phase": phase, "epoch": epoch, "sigma": model.encoder.sigma, **values})  # type: ignore[dict-item]

    if config.method == "dann":
        opt_all = torch.optim.Adam([*enc_params, *adv_params], lr=config.lr)
        for epoch in range(config.epochs_deid + config.epochs_joint):
            losses, accs = [], []
            for seqs in _batches(train, config.batch_size, rng):
                l_deid, acc = dann_step(model, _batch(seqs, vectors, rng), opt_all, config.lam)
                losses.append(l_deid)
                accs.append(acc)
            log("dann", epoch, deid_loss=float(np.mean(losses)), adversary_accuracy=float(np.nanmean(accs)))
        return model

    for epoch in range(config.epochs_deid):  # phase 1 (and the whole of method "none")
        losses = [
            deid_step(model, _batch(s, vectors, rng), opt_enc)
            for s in _batches(train, config.batch_size, rng)
        ]
        log("deid", epoch, deid_loss=float(np.mean(losses)))
    if config.method == "none":
        return model
    for epoch in range(config.epochs_adv):  # phase 2
        accs = [
            adversary_step(model, _batch(s, vectors, rng), opt_adv)[1]
            for s in _batches(train, config.batch_size, rng)
        ]
        log("adversary", epoch, adversary_accuracy=float(np.nanmean(accs)))
    for epoch in range(config.epochs_joint):  # phase 3
        losses, accs = [], []
        for seqs in _batches(train, config.batch_size, rng):
            b = _batch(seqs, vectors, rng)
            for _ in range(config.adversary_steps):
                accs.append(adversary_step(model, b, opt_adv)[1])
            losses.append(feutry_step(model, b, opt_enc, config.lam)[0])
        log("alternate", epoch, deid_loss=float(np.mean(losses)), adversary_accuracy=float(np.nanmean(accs)))
    return model


# --- the model folder ---------------------------------------------------------------------------------------


def save_model(model: PrivateModel, out: str | Path) -> Path:
    """Write the model folder (atomically): ``model.json``, ``weights.safetensors``, ``vectors.npy`` and
    ``words.json``."""
    from safetensors.torch import save_file

    from clinideid.privacy.io import write_dir_atomic

    def write(tmp: Path) -> None:
        state = {f"encoder.{k}": v for k, v in model.encoder.state_dict().items()}
        state.update({f"head.{k}": v for k, v in model.head.state_dict().items()})
        save_file({k: v.contiguous() for k, v in state.items()}, str(tmp / "weights.safetensors"))
        np.save(tmp / "vectors.npy", model.vectors.matrix[:-1])
        (tmp / "words.json").write_text(json.dumps(model.vectors.words, ensure_ascii=False), encoding="utf-8")
        meta = {
            "kind": "clinideid-private-representation",
            "format_version": FORMAT_VERSION,
            "config": asdict(model.config),
            "input_dim": model.vectors.dim,
            "sigma": model.encoder.sigma,
            "history": model.history,
            "metrics": model.metrics,
            "versions": {"torch": torch.__version__, "numpy": np.__version__},
            "note": "holds the training vocabulary: keep this folder with the data owner; share releases only",
        }
        (tmp / "model.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")

    out = Path(out)
    write_dir_atomic(out, write)
    return out


def load_model(path: str | Path) -> PrivateModel:
    """A model folder written by ``save_model`` (encoder and tagger; adversaries are fresh)."""
    from safetensors.torch import load_file

    p = Path(path)
    meta_path = p / "model.json"
    if not meta_path.is_file():
        raise ModelError(f"{p} is not a private representation model folder (no model.json)")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    if meta.get("kind") != "clinideid-private-representation":
        raise ModelError(f"{p} holds a {meta.get('kind')!r} model, not a private representation")
    if meta.get("format_version") != FORMAT_VERSION:
        raise ModelError(
            f"{p} has format version {meta.get('format_version')}; this clinideid reads {FORMAT_VERSION}: retrain"
        )
    config = PrivateConfig(**meta["config"])
    words = json.loads((p / "words.json").read_text(encoding="utf-8"))
    vectors = WordVectors(words, np.load(p / "vectors.npy"))
    model = new_model(vectors, config)
    state = load_file(str(p / "weights.safetensors"))
    model.encoder.load_state_dict({k[8:]: v for k, v in state.items() if k.startswith("encoder.")})
    model.head.load_state_dict({k[5:]: v for k, v in state.items() if k.startswith("head.")})
    model.history = list(meta.get("history", []))
    model.metrics = dict(meta.get("metrics", {}))
    return model
