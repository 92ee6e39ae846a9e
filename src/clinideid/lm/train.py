"""Training character language models: streams, truncated BPTT, held-out perplexity, checkpoints, resume.

The training documents (each after a boundary symbol, reversed for a backward model, in a seeded order
that changes every epoch) are concatenated and laid out as ``batch_size`` parallel streams; a batch is
the next ``seq_len`` characters of every stream, and the LSTM state is carried (detached) from one batch
to the next, reset at each epoch. The loss is next-character cross-entropy; gradients are clipped.

Every ``eval_every`` batches and at the end of each epoch the held-out texts are scored (perplexity and
bits per character); after ``anneal_patience`` evaluations without a new best the learning rate is
multiplied by ``anneal_factor`` and training stops once it falls below ``min_lr``. The best model so far
is always in ``out_dir`` (``model.json``, ``charlm.pt.gz``, ``metrics.json``).

``out_dir/checkpoint.pt`` (written atomically after every evaluation, every ``checkpoint_minutes`` and
when stopping) holds everything needed to go on: weights, optimizer, learning-rate schedule, position in
the epoch, the carried LSTM state and the torch RNG. ``resume=True`` continues from it, and the run then
follows exactly the trajectory of an uninterrupted run (same weights, learning rates and scheduled
evaluations; same machine, torch version and thread count). A run that stops early (``max_minutes``,
``max_batches``) also scores the held-out text at that point ("stop" evaluations); those only compete for
the best model and never change the learning-rate schedule, so they do not break this guarantee.

Optimizer default (measured on MEDDOCAN train+dev, 2.1 M characters, hidden 256, batch 32 x 250, one
thread on a shared 2-core CPU): held-out perplexity after 5 minutes was 3.49 with Adam lr 0.01, 3.76 with
Flair's SGD lr 20, 3.86 with Adam lr 0.005 and 4.70 with Adam lr 0.002; after 12 minutes (5 epochs)
Adam lr 0.01 reached 3.09 and SGD lr 20 3.11. Adam lr 0.01 is the default; ``optimizer="sgd"`` gives
Flair's settings.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import logging
import math
import multiprocessing
import os
import queue as queue_module
import random
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import torch
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from torch.nn import functional as F

from clinideid.errors import ClinideidError, ConfigError, InputError, ModelError
from clinideid.lm.charlm import (
    DIRECTIONS,
    CharLM,
    CharLMConfig,
    CharLMModule,
    CharVocab,
    State,
    check_direction,
    layout_streams,
)
from clinideid.models import METADATA_FILE, ModelMetadata, TrainingData
from clinideid.train.crf import peak_memory_mb

log = logging.getLogger(__name__)

CHECKPOINT_FILE = "checkpoint.pt"
CHECKPOINT_FORMAT = 1
METRICS_FILE = "metrics.json"
DEFAULT_LR = {"sgd": 20.0, "adam": 0.01}  # measured: see the module docstring

Progress = Callable[[str, int, int], None]
EvaluationHook = Callable[[dict[str, Any]], None]

#: settings a resumed run must share with its checkpoint (the others may change between sessions)
FIXED_ON_RESUME = (
    "embedding_dim",
    "hidden_size",
    "layers",
    "dropout",
    "min_count",
    "seq_len",
    "batch_size",
    "optimizer",
    "lr",
    "clip",
    "anneal_factor",
    "anneal_patience",
    "min_lr",
    "eval_every",
    "max_heldout_chars",
    "seed",
)


class CharLMTrainConfig(BaseModel):
    """Network shape, batching and optimisation of a character LM run.

    Defaults are a small model that trains on ~2 MB of text on one CPU thread in minutes per epoch.
    """

    model_config = ConfigDict(extra="forbid")

    embedding_dim: int = Field(32, ge=1, le=1024)
    hidden_size: int = Field(256, ge=1, le=8192)
    layers: int = Field(1, ge=1, le=2)
    dropout: float = Field(0.1, ge=0.0, lt=1.0)
    min_count: int = Field(3, ge=1, description="characters seen fewer times in training are <unk>")
    seq_len: int = Field(250, ge=2, le=100_000, description="characters per truncated-BPTT chunk")
    batch_size: int = Field(32, ge=1, le=4096, description="parallel streams")
    optimizer: Literal["sgd", "adam"] = "adam"
    lr: float | None = Field(None, gt=0.0, description="default: 20 for sgd, 0.01 for adam")
    clip: float = Field(0.25, gt=0.0, description="gradient norm clipping")
    anneal_factor: float = Field(0.25, gt=0.0, lt=1.0)
    anneal_patience: int = Field(3, ge=1, description="evaluations without a new best before annealing")
    min_lr: float | None = Field(None, gt=0.0, description="stop below this learning rate (default lr/1000)")
    epochs: int = Field(10, ge=1)
    max_minutes: float | None = Field(None, gt=0.0, description="time budget of one call (training stops)")
    max_batches: int | None = Field(None, ge=1, description="batches in one call (for smoke tests)")
    eval_every: int = Field(100, ge=1, description="batches between held-out evaluations")
    checkpoint_minutes: float = Field(5.0, gt=0.0)
    max_heldout_chars: int = Field(200_000, ge=2, description="held-out characters scored per evaluation")
    seed: int = 1
    threads: int = Field(1, ge=1, le=256, description="torch threads")

    @model_validator(mode="after")
    def _fill_lr(self) -> CharLMTrainConfig:
        if self.lr is None:
            self.lr = DEFAULT_LR[self.optimizer]
        if self.min_lr is None:
            self.min_lr = self.lr / 1000
        return self

    def network(self) -> CharLMConfig:
        return CharLMConfig(
            embedding_dim=self.embedding_dim,
            hidden_size=self.hidden_size,
            layers=self.layers,
            dropout=self.dropout,
        )


def parse_config(config: CharLMTrainConfig | dict[str, Any] | None) -> CharLMTrainConfig:
    if isinstance(config, CharLMTrainConfig):
        return config
    try:
        return CharLMTrainConfig.model_validate(config or {})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'config'}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigError(f"invalid character LM training config: {problems}") from None


@dataclass
class CharLMTrainResult:
    model_dir: Path
    metadata: ModelMetadata
    direction: str
    history: list[dict[str, Any]] = field(default_factory=list)
    best_perplexity: float = math.inf
    best_bpc: float = math.inf
    steps: int = 0
    epochs_completed: int = 0
    chars_trained: int = 0
    seconds: float = 0.0
    train_chars_per_second: float = 0.0
    peak_memory_mb: float = 0.0
    stop_reason: str = ""
    resumed_from_step: int | None = None


# -- data ---------------------------------------------------------------------------------------------


def fingerprint(texts: Sequence[str]) -> str:
    """A hash of the texts and their order (a resumed run must train on the same data)."""
    h = hashlib.blake2b(digest_size=16)
    for t in texts:
        data = t.encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def encode_documents(lm: CharLM, texts: Sequence[str]) -> list[torch.Tensor]:
    """Each document's ids (boundary first, reading order) as a compact int32 tensor."""
    return [torch.tensor(lm.encode_document(t), dtype=torch.int32) for t in texts]


def epoch_streams(docs: Sequence[torch.Tensor], batch_size: int, seed: int, epoch: int) -> torch.Tensor:
    """The training streams ``(L, batch_size)`` of one epoch: documents in a seeded per-epoch order."""
    order = list(range(len(docs)))
    random.Random(seed * 1_000_003 + epoch).shuffle(order)
    return layout_streams(torch.cat([docs[i] for i in order]), batch_size)


def heldout_streams(docs: Sequence[torch.Tensor], batch_size: int, max_chars: int) -> torch.Tensor:
    """Held-out ids (documents in order, at most ``max_chars``) as streams of at least 2 ids each."""
    kept, total = [], 0
    for d in docs:
        if total >= max_chars:
            break
        kept.append(d[: max_chars - total])
        total += kept[-1].numel()
    ids = torch.cat(kept)
    streams = max(1, min(batch_size, ids.numel() // 2))
    return layout_streams(ids, streams)


def n_chunks(length: int, seq_len: int) -> int:
    """Truncated-BPTT chunks in streams of ``length`` ids (each chunk predicts its next ids)."""
    return max(0, math.ceil((length - 1) / seq_len))


def chunk(data: torch.Tensor, index: int, seq_len: int) -> tuple[torch.Tensor, torch.Tensor]:
    start = index * seq_len
    size = min(seq_len, data.size(0) - 1 - start)
    return data[start : start + size].long(), data[start + 1 : start + 1 + size].long()


def detach(state: State | None) -> State | None:
    return None if state is None else (state[0].detach(), state[1].detach())


@torch.inference_mode()
def stream_loss(module: CharLMModule, data: torch.Tensor, seq_len: int) -> float:
    """Mean next-character cross-entropy (nats) over streams ``data``, state carried between chunks."""
    was_training = module.training
    module.eval()
    total, count, state = 0.0, 0, None
    try:
        for k in range(n_chunks(data.size(0), seq_len)):
            x, y = chunk(data, k, seq_len)
            out, state = module(x, state)
            logits = module.logits(out)
            total += float(
                F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1), reduction="sum")
            )
            count += y.numel()
    finally:
        module.train(was_training)
    return total / max(count, 1)


def perplexity(
    lm: CharLM, texts: Sequence[str], *, batch_size: int = 8, seq_len: int = 250
) -> tuple[float, float]:
    """Perplexity and bits per character of ``lm`` on ``texts`` (documents read as streams)."""
    docs = [d for d in encode_documents(lm, texts) if d.numel() > 1]
    if not docs:
        raise InputError("no text to score")
    loss = stream_loss(lm.module, heldout_streams(docs, batch_size, sum(d.numel() for d in docs)), seq_len)
    return math.exp(loss), loss / math.log(2)


# -- files --------------------------------------------------------------------------------------------


def atomic_torch_save(obj: Any, path: Path) -> None:
    """``torch.save`` to a temporary file in the same folder, then an atomic rename."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            torch.save(obj, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def publish_model(
    lm: CharLM, out_dir: Path, metadata: ModelMetadata, extra_files: dict[str, bytes | str]
) -> None:
    """Write the model into a temporary folder, then move each file into ``out_dir`` (model.json last)."""
    tmp = Path(tempfile.mkdtemp(prefix=".model-", dir=out_dir))
    try:
        written = CharLM(lm.vocab, lm.config, lm.direction, lm.module).save(
            tmp, metadata, extra_files=extra_files
        )
        names = sorted(p.name for p in written.iterdir() if p.name != METADATA_FILE)
        for name in [*names, METADATA_FILE]:
            os.replace(written / name, out_dir / name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _dir_is_empty(path: Path) -> bool:
    return not path.exists() or (path.is_dir() and not any(path.iterdir()))


# -- training -----------------------------------------------------------------------------------------


def _make_optimizer(cfg: CharLMTrainConfig, params: list[torch.nn.Parameter]) -> torch.optim.Optimizer:
    assert cfg.lr is not None
    if cfg.optimizer == "adam":
        return torch.optim.Adam(params, lr=cfg.lr)
    return torch.optim.SGD(params, lr=cfg.lr)


def _check_resumable(
    ckpt: dict[str, Any], cfg: CharLMTrainConfig, direction: str, prints: dict[str, str], path: Path
) -> None:
    if not isinstance(ckpt, dict) or ckpt.get("format") != CHECKPOINT_FORMAT:
        raise ModelError(f"{path}: unsupported checkpoint format; start a new run in an empty directory")
    if ckpt.get("direction") != direction:
        raise ConfigError(
            f"{path} holds a {ckpt['direction']} LM but a {direction} one was asked for; use the same direction"
        )
    saved = _from_checkpoint(path, lambda: dict(ckpt["config"]))
    changed = [k for k in FIXED_ON_RESUME if saved.get(k) != getattr(cfg, k)]
    if changed:
        raise ConfigError(
            f"cannot resume {path}: setting(s) {', '.join(changed)} differ from the checkpoint; resume with "
            "the same settings (only epochs, max_minutes, max_batches, checkpoint_minutes and threads may change)"
        )
    saved_prints = _from_checkpoint(path, lambda: dict(ckpt["fingerprint"]))
    for key in ("train", "heldout"):
        if saved_prints.get(key) != prints[key]:
            raise ConfigError(
                f"cannot resume {path}: the {key} text differs from the checkpoint's; give the same --text "
                "inputs (and --heldout) as the first run"
            )


def _from_checkpoint(path: Path, read: Callable[[], Any]) -> Any:
    """``read()``, with a ``ModelError`` when the checkpoint lacks what it needs or does not fit."""
    try:
        return read()
    except (KeyError, TypeError, ValueError, RuntimeError, ModelError) as exc:
        raise ModelError(
            f"{path}: checkpoint is incomplete or does not fit this run ({type(exc).__name__}); it is corrupt "
            "or from another clinideid version: start a new run in an empty directory"
        ) from None


def _load_checkpoint(path: Path) -> dict[str, Any]:
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many kinds on a corrupt file
        raise ModelError(f"{path}: checkpoint cannot be read ({type(exc).__name__}); it is corrupt") from None


class _Run:
    """The mutable state of one training run (what a checkpoint stores)."""

    def __init__(self, cfg: CharLMTrainConfig, lm: CharLM, opt: torch.optim.Optimizer) -> None:
        self.cfg = cfg
        self.lm = lm
        self.opt = opt
        self.epoch = 1
        self.batch = 0
        self.step = 0
        self.hidden: State | None = None
        self.best_loss = math.inf
        self.best_state: dict[str, torch.Tensor] | None = None
        self.best_at: dict[str, Any] = {}
        self.sched_best = math.inf
        self.bad_evals = 0
        self.history: list[dict[str, Any]] = []
        self.chars_trained = 0
        self.train_seconds = 0.0
        self.finished = False
        self.stop_reason = ""
        self.loss_sum = 0.0  # training loss since the last scheduled evaluation
        self.loss_batches = 0

    @property
    def lr(self) -> float:
        return float(self.opt.param_groups[0]["lr"])

    def to_checkpoint(self, direction: str, prints: dict[str, str]) -> dict[str, Any]:
        return {
            "format": CHECKPOINT_FORMAT,
            "direction": direction,
            "config": self.cfg.model_dump(mode="json"),
            "chars": self.lm.vocab.to_list(),
            "fingerprint": prints,
            "module": self.lm.module.state_dict(),
            "optimizer": self.opt.state_dict(),
            "best_state": self.best_state,
            "best_loss": self.best_loss,
            "best_at": self.best_at,
            "sched_best": self.sched_best,
            "bad_evals": self.bad_evals,
            "epoch": self.epoch,
            "batch": self.batch,
            "step": self.step,
            "hidden": None if self.hidden is None else [self.hidden[0].clone(), self.hidden[1].clone()],
            "torch_rng": torch.get_rng_state(),
            "history": self.history,
            "chars_trained": self.chars_trained,
            "train_seconds": self.train_seconds,
            "finished": self.finished,
            "stop_reason": self.stop_reason,
            "loss_sum": self.loss_sum,
            "loss_batches": self.loss_batches,
        }

    def restore(self, ckpt: dict[str, Any]) -> None:
        self.lm.module.load_state_dict(ckpt["module"])
        self.opt.load_state_dict(ckpt["optimizer"])
        self.best_state = ckpt["best_state"]
        self.best_loss = float(ckpt["best_loss"])
        self.best_at = dict(ckpt["best_at"])
        self.sched_best = float(ckpt["sched_best"])
        self.bad_evals = int(ckpt["bad_evals"])
        self.epoch, self.batch, self.step = int(ckpt["epoch"]), int(ckpt["batch"]), int(ckpt["step"])
        hidden = ckpt["hidden"]
        self.hidden = None if hidden is None else (hidden[0], hidden[1])
        torch.set_rng_state(ckpt["torch_rng"])
        self.history = list(ckpt["history"])
        self.chars_trained = int(ckpt["chars_trained"])
        self.train_seconds = float(ckpt["train_seconds"])
        self.finished = bool(ckpt["finished"])
        self.stop_reason = str(ckpt["stop_reason"])
        self.loss_sum = float(ckpt["loss_sum"])
        self.loss_batches = int(ckpt["loss_batches"])


def train_charlm(
    texts: Sequence[str],
    heldout: Sequence[str],
    config: CharLMTrainConfig | dict[str, Any] | None,
    out_dir: str | Path,
    direction: str = "forward",
    resume: bool = False,
    progress: Progress | None = None,
    *,
    on_evaluation: EvaluationHook | None = None,
    name: str | None = None,
    language: str | None = None,
    training_data: TrainingData | None = None,
) -> CharLMTrainResult:
    """Train a ``direction`` character LM on ``texts``, scored on ``heldout``; the best model goes to ``out_dir``.

    ``progress(stage, done, total)`` is called after every batch, ``on_evaluation(record)`` after every
    held-out evaluation (the record also goes to the history). See the module docstring for checkpoints.
    """
    cfg = parse_config(config)
    direction = check_direction(direction)
    out = Path(out_dir)
    texts = [t for t in texts if t]
    heldout = [t for t in heldout if t]
    if not texts:
        raise InputError("no training text for the character LM")
    if not heldout:
        raise InputError("no held-out text to measure perplexity on; hold out some documents (--heldout)")
    ckpt_path = out / CHECKPOINT_FILE
    ckpt: dict[str, Any] | None = None
    if out.exists() and not out.is_dir():
        raise ConfigError(f"{out} is a file; give a directory for the model")
    if resume and ckpt_path.is_file():
        ckpt = _load_checkpoint(ckpt_path)
    elif resume and not _dir_is_empty(out):
        raise ConfigError(
            f"cannot resume: {out} holds no {CHECKPOINT_FILE}; give the directory of an earlier run"
        )
    elif not resume and not _dir_is_empty(out):
        raise ConfigError(f"{out} is not empty; give a new directory, or pass resume (--resume) to continue")
    out.mkdir(parents=True, exist_ok=True)
    prints = {"train": fingerprint(texts), "heldout": fingerprint(heldout)}

    start = time.perf_counter()
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(cfg.threads)
    try:
        if ckpt is not None:
            _check_resumable(ckpt, cfg, direction, prints, ckpt_path)
            vocab = _from_checkpoint(ckpt_path, lambda: CharVocab(ckpt["chars"]))
            lm = CharLM(vocab, cfg.network(), direction)
        else:
            torch.manual_seed(cfg.seed)
            vocab = CharVocab.build(texts, cfg.min_count)
            lm = CharLM(vocab, cfg.network(), direction)
        opt = _make_optimizer(cfg, list(lm.module.parameters()))
        run = _Run(cfg, lm, opt)
        resumed_from = None
        if ckpt is not None:
            _from_checkpoint(ckpt_path, lambda: run.restore(ckpt))
            resumed_from = run.step
            log.info(
                "%s LM: resuming at epoch %d, batch %d (step %d)", direction, run.epoch, run.batch, run.step
            )
        ckpt = None  # free the saved tensors
        train_docs = encode_documents(lm, texts)
        held = heldout_streams(encode_documents(lm, heldout), cfg.batch_size, cfg.max_heldout_chars)
        total_ids = sum(d.numel() for d in train_docs)
        if total_ids // cfg.batch_size < 2:
            raise InputError(
                f"the training text ({total_ids} characters) is too short for {cfg.batch_size} parallel "
                "streams; lower batch_size (--batch-size) or give more text"
            )
        trainer = _Trainer(
            run, direction, out, prints, held, progress, on_evaluation, name, language, training_data
        )
        trainer.fit(train_docs, start)
    finally:
        torch.set_num_threads(previous_threads)
    seconds = time.perf_counter() - start
    meta = trainer.metadata()
    return CharLMTrainResult(
        model_dir=out,
        metadata=meta,
        direction=direction,
        history=list(run.history),
        best_perplexity=math.exp(run.best_loss),
        best_bpc=run.best_loss / math.log(2),
        steps=run.step,
        epochs_completed=run.epoch - 1,
        chars_trained=run.chars_trained,
        seconds=seconds,
        train_chars_per_second=trainer.session_chars / trainer.session_train_seconds
        if trainer.session_train_seconds
        else 0.0,
        peak_memory_mb=peak_memory_mb(),
        stop_reason=run.stop_reason,
        resumed_from_step=resumed_from,
    )


class _Trainer:
    """The training loop of one call, with its evaluation, checkpoint and stop rules."""

    def __init__(
        self,
        run: _Run,
        direction: str,
        out: Path,
        prints: dict[str, str],
        heldout: torch.Tensor,
        progress: Progress | None,
        on_evaluation: EvaluationHook | None,
        name: str | None,
        language: str | None,
        training_data: TrainingData | None,
    ) -> None:
        self.run = run
        self.cfg = run.cfg
        self.direction = direction
        self.out = out
        self.prints = prints
        self.heldout = heldout
        self.progress = progress
        self.on_evaluation = on_evaluation
        self.name = name or out.resolve().name
        self.language = language
        self.training_data = training_data
        self.session_chars = 0
        self.session_train_seconds = 0.0
        self.session_batches = 0
        self.params = list(run.lm.module.parameters())

    # -- the loop -------------------------------------------------------------------------------------

    def fit(self, train_docs: Sequence[torch.Tensor], started: float) -> None:
        run, cfg = self.run, self.cfg
        assert cfg.min_lr is not None
        if run.epoch > cfg.epochs or run.lr < cfg.min_lr:  # a finished run resumed without more to do
            run.stop_reason = "epochs" if run.epoch > cfg.epochs else "converged"
            self._publish_final()
            return
        run.finished = False
        last_checkpoint = time.perf_counter()
        module = run.lm.module
        module.train()
        while run.epoch <= cfg.epochs:
            data = epoch_streams(train_docs, cfg.batch_size, cfg.seed, run.epoch)
            total = n_chunks(data.size(0), cfg.seq_len)
            while run.batch < total:
                self._train_batch(data, run.batch)
                run.batch += 1
                run.step += 1
                if self.progress is not None:
                    self.progress(f"{self.direction} epoch {run.epoch}", run.batch, total)
                end_of_epoch = run.batch == total
                evaluated = False
                if end_of_epoch or run.step % cfg.eval_every == 0:
                    self._evaluate("epoch" if end_of_epoch else "scheduled")
                    evaluated = True
                if end_of_epoch:
                    run.epoch += 1
                    run.batch = 0
                    run.hidden = None
                stop = self._stop_reason(started)
                if stop and not evaluated:
                    self._evaluate("stop")
                    evaluated = True
                if stop or evaluated or time.perf_counter() - last_checkpoint >= cfg.checkpoint_minutes * 60:
                    run.stop_reason = stop or ""
                    run.finished = run.epoch > cfg.epochs
                    self._checkpoint()
                    last_checkpoint = time.perf_counter()
                if stop:
                    log.info("%s LM: stopped (%s) at step %d", self.direction, stop, run.step)
                    self._publish_final()
                    return
                if end_of_epoch:
                    break
        run.finished = True
        run.stop_reason = "epochs"
        self._checkpoint()
        self._publish_final()

    def _train_batch(self, data: torch.Tensor, index: int) -> None:
        run, cfg = self.run, self.cfg
        module = run.lm.module
        t0 = time.perf_counter()
        x, y = chunk(data, index, cfg.seq_len)
        out, hidden = module(x, run.hidden)
        logits = module.logits(out)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
        run.opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.params, cfg.clip)
        run.opt.step()
        run.hidden = detach(hidden)
        run.loss_sum += float(loss.detach())
        run.loss_batches += 1
        run.chars_trained += y.numel()
        self.session_chars += y.numel()
        self.session_batches += 1
        elapsed = time.perf_counter() - t0
        run.train_seconds += elapsed
        self.session_train_seconds += elapsed

    def _stop_reason(self, started: float) -> str | None:
        cfg = self.cfg
        if self.run.epoch > cfg.epochs:
            return None
        assert cfg.min_lr is not None
        if self.run.lr < cfg.min_lr:
            return "converged"
        if cfg.max_minutes is not None and time.perf_counter() - started >= cfg.max_minutes * 60:
            return "max_minutes"
        if cfg.max_batches is not None and self.session_batches >= cfg.max_batches:
            return "max_batches"
        return None

    # -- evaluation, annealing, best model ------------------------------------------------------------

    def _evaluate(self, kind: str) -> None:
        run, cfg = self.run, self.cfg
        loss = stream_loss(run.lm.module, self.heldout, cfg.seq_len)
        record = {
            "kind": kind,
            "epoch": run.epoch,
            "batch": run.batch,
            "step": run.step,
            "heldout_perplexity": round(math.exp(loss), 4),
            "heldout_bpc": round(loss / math.log(2), 4),
            "train_loss": round(run.loss_sum / max(run.loss_batches, 1), 4),
            "lr": run.lr,
            "chars_trained": run.chars_trained,
            "train_seconds": round(run.train_seconds, 1),
        }
        if kind != "stop":
            run.loss_sum, run.loss_batches = 0.0, 0
            if loss < run.sched_best:
                run.sched_best = loss
                run.bad_evals = 0
            else:
                run.bad_evals += 1
                if run.bad_evals >= cfg.anneal_patience:
                    for group in run.opt.param_groups:
                        group["lr"] = group["lr"] * cfg.anneal_factor
                    run.bad_evals = 0
                    log.info("%s LM: learning rate annealed to %g", self.direction, run.lr)
        run.history.append(record)
        log.info(
            "%s LM step %d: held-out perplexity %.3f (%.3f bits/char)",
            self.direction,
            run.step,
            math.exp(loss),
            loss / math.log(2),
        )
        if loss < run.best_loss:
            run.best_loss = loss
            run.best_state = copy.deepcopy(run.lm.module.state_dict())
            run.best_at = {
                k: record[k] for k in ("epoch", "batch", "step", "heldout_perplexity", "heldout_bpc")
            }
            self._publish()
        if self.on_evaluation is not None:
            self.on_evaluation(dict(record, direction=self.direction))

    def _checkpoint(self) -> None:
        atomic_torch_save(self.run.to_checkpoint(self.direction, self.prints), self.out / CHECKPOINT_FILE)

    def metadata(self) -> ModelMetadata:
        run, cfg = self.run, self.cfg
        data = (self.training_data or TrainingData()).model_copy(
            update={"heldout_characters": int(self.heldout.numel()), "characters_trained": run.chars_trained}
        )
        best = run.best_at
        return run.lm.build_metadata(
            name=self.name,
            language=self.language,
            training_config={
                "train": cfg.model_dump(mode="json"),
                "selected": best,
                "history": run.history,
            },
            training_data=data,
            dev_metrics={
                "heldout_perplexity": best.get("heldout_perplexity"),
                "heldout_bpc": best.get("heldout_bpc"),
            },
            seed=cfg.seed,
        )

    def _publish(self) -> None:
        run = self.run
        assert run.best_state is not None
        module = copy.deepcopy(run.lm.module)  # no fresh init: that would draw from the training RNG
        module.load_state_dict(run.best_state)
        best = CharLM(run.lm.vocab, run.lm.config, run.lm.direction, module)
        metrics = {
            "direction": self.direction,
            "selected": run.best_at,
            "history": run.history,
            "steps": run.step,
            "characters_trained": run.chars_trained,
            "train_seconds": round(run.train_seconds, 1),
            "train_chars_per_second": round(self.session_chars / self.session_train_seconds, 1)
            if self.session_train_seconds
            else None,
            "threads": self.cfg.threads,
            "peak_memory_mb": round(peak_memory_mb(), 1),
        }
        publish_model(
            best,
            self.out,
            self.metadata(),
            {METRICS_FILE: json.dumps(metrics, indent=2, ensure_ascii=False) + "\n"},
        )

    def _publish_final(self) -> None:
        """Rewrite the best model's files with the final metrics and history."""
        if self.run.best_state is not None:
            self._publish()


# -- both directions ----------------------------------------------------------------------------------


def _worker(
    events: Any,
    direction: str,
    texts: Sequence[str],
    heldout: Sequence[str],
    config: dict[str, Any],
    out_dir: str,
    resume: bool,
    options: dict[str, Any],
) -> None:
    try:
        result = train_charlm(
            texts,
            heldout,
            config,
            out_dir,
            direction,
            resume,
            progress=lambda stage, done, total: events.put(("progress", direction, (stage, done, total))),
            on_evaluation=lambda record: events.put(("evaluation", direction, record)),
            **options,
        )
        events.put(("done", direction, result))
    except ClinideidError as exc:
        events.put(("error", direction, (type(exc).__name__, str(exc))))
    except BaseException as exc:  # a bug: report its type without risking document text in a message
        events.put(("crash", direction, type(exc).__name__))


def train_charlm_pair(
    texts: Sequence[str],
    heldout: Sequence[str],
    config: CharLMTrainConfig | dict[str, Any] | None,
    out_dir: str | Path,
    *,
    directions: Sequence[str] = DIRECTIONS,
    parallel: bool = True,
    resume: bool = False,
    progress: Progress | None = None,
    on_evaluation: EvaluationHook | None = None,
    name: str | None = None,
    language: str | None = None,
    training_data: TrainingData | None = None,
) -> dict[str, CharLMTrainResult]:
    """Train each of ``directions`` into ``out_dir/<direction>``; with ``parallel``, one process each.

    Each process uses ``config.threads`` torch threads. Progress and evaluations of both are reported
    through ``progress`` and ``on_evaluation`` in this process.
    """
    cfg = parse_config(config)
    dirs = [check_direction(d) for d in directions]
    if len(set(dirs)) != len(dirs):
        raise ConfigError("each direction can be trained once")
    out = Path(out_dir)
    base = name or out.resolve().name
    options = {"language": language, "training_data": training_data}
    if not parallel or len(dirs) == 1:
        return {
            d: train_charlm(
                texts,
                heldout,
                cfg,
                out / d,
                d,
                resume,
                progress,
                on_evaluation=on_evaluation,
                name=f"{base}-{d}",
                **options,
            )
            for d in dirs
        }
    ctx = multiprocessing.get_context("spawn")
    events = ctx.Queue()
    procs = {
        d: ctx.Process(
            target=_worker,
            args=(
                events,
                d,
                list(texts),
                list(heldout),
                cfg.model_dump(),
                str(out / d),
                resume,
                {**options, "name": f"{base}-{d}"},
            ),
            name=f"charlm-{d}",
        )
        for d in dirs
    }
    for p in procs.values():
        p.start()
    results: dict[str, CharLMTrainResult] = {}
    failures: list[str] = []
    pending = set(dirs)
    try:
        while pending:
            try:
                kind, direction, payload = events.get(timeout=1.0)
            except queue_module.Empty:
                kind, direction, payload = "idle", "", None
            for d in list(pending):  # a killed process (exit code < 0) sends nothing: notice it
                code = procs[d].exitcode
                if code is not None and (code != 0 or kind == "idle") and d != direction:
                    failures.append(f"{d} LM: the training process ended unexpectedly (exit code {code})")
                    pending.discard(d)
            if kind == "progress" and progress is not None:
                progress(*payload)
            elif kind == "evaluation" and on_evaluation is not None:
                on_evaluation(payload)
            elif kind == "done":
                results[direction] = payload
                pending.discard(direction)
            elif kind == "error":
                failures.append(f"{direction} LM: {payload[1]}")
                pending.discard(direction)
            elif kind == "crash":
                failures.append(f"{direction} LM: training failed with an internal {payload} error")
                pending.discard(direction)
    finally:
        for p in procs.values():
            if p.is_alive() and pending:
                p.terminate()
            p.join()
    if failures:
        raise ClinideidError("; ".join(failures))
    return results
