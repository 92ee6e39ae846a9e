"""Training the neural tagger: vocabularies from the training documents, epochs with dev selection.

Each epoch the windows are shuffled (seeded) and batched by similar length; the loss is the CRF negative
log-likelihood (plus an inverse-sqrt-frequency weighted token loss with ``class_weighting``). Gradients are
clipped; SGD (with momentum) or Adam. After every epoch the model tags the dev documents and the dev entity
strict micro F1 decides: the best state is kept, the learning rate is multiplied by ``lr_decay`` after
``anneal_patience`` epochs without a gain, and training stops after ``patience`` such epochs (epochs
before the model finds any entity do not count: that is a slow start, not a plateau). Seeds make a
run reproducible on one machine (same torch version and thread count).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
import os
import random
import shutil
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from clinideid.detect.crf import EncodeStats, encode_spans
from clinideid.detect.neural.affix import build_affix_vocabs
from clinideid.detect.neural.config import NeuralConfig
from clinideid.detect.neural.embeddings import load_vectors
from clinideid.detect.neural.frozen_vectors import frequent_vectors
from clinideid.detect.neural.model import Batch
from clinideid.detect.neural.tagger import (
    MODEL_TYPE,
    WEIGHTS_FILE,
    Example,
    NeuralModel,
    Vocabs,
    collate,
    length_batches,
)
from clinideid.detect.neural.vocab import Vocab, normalize_word
from clinideid.document import Document
from clinideid.errors import ConfigError, InputError
from clinideid.models import (
    FORMAT_VERSION,
    ModelMetadata,
    TrainingData,
    now_iso,
    package_versions,
    save_model,
)
from clinideid.text import tokenize
from clinideid.train.config import TrainConfig
from clinideid.train.crf import _compact, cpu_seconds, peak_memory_mb, score_predictions, summarize
from clinideid.train.transfer import (
    check_compatible,
    continued_config,
    extend_vocabs,
    source_charlm_paths,
    source_labels,
    transfer_weights,
)

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]


def set_seed(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)


def default_threads() -> int:
    """Half the cores (at least one, at most 8): training stays polite on a shared machine."""
    return max(1, min(8, (os.cpu_count() or 2) // 2))


def build_vocabs(tokens: Sequence[Sequence[str]], config: NeuralConfig, tags: list[str]) -> Vocabs:
    """Word, character and (when the affix block is on) affix vocabularies of the training tokens."""
    words: Counter[str] = Counter()
    chars: Counter[str] = Counter()
    for toks in tokens:
        for t in toks:
            words[normalize_word(t)] += 1
            chars.update(t)
    if config.affix:
        pre, suf = build_affix_vocabs(tokens, config.affix_n, config.affix_min_count)
    else:
        pre, suf = Vocab(), Vocab()
    return Vocabs(Vocab.from_counts(words, config.word_min_count), Vocab.from_counts(chars), pre, suf, tags)


def tag_set(labels: Sequence[str], scheme: str) -> list[str]:
    prefixes = ("B", "I") if scheme == "BIO" else ("B", "I", "E", "S")
    return ["O"] + [f"{p}-{lab}" for lab in labels for p in prefixes]


#: documents whose token features (language models) are computed together
FEATURE_BATCH = 32


def training_examples(
    model: NeuralModel, docs: Sequence[Document], scheme: str
) -> tuple[list[Example], EncodeStats]:
    examples: list[Example] = []
    stats = EncodeStats()
    for k in range(0, len(docs), FEATURE_BATCH):
        part = docs[k : k + FEATURE_BATCH]
        tokens = [tokenize(doc.text) for doc in part]
        features = model.documents_features(part, tokens)
        for doc, toks, feats in zip(part, tokens, features, strict=True):
            labels, st = encode_spans(toks, doc.spans, scheme)
            stats.add(st)
            examples.extend(model.encode_document(doc, toks, labels, feats)[1])
    return examples, stats


CHARLM_DIR = "charlm"


def copy_charlms(model: NeuralModel, target: Path) -> None:
    """Copy the character LMs a model reads into ``target/forward`` and ``target/backward``."""
    from clinideid.detect.neural.token_features import CharLMFeatures

    for f in model.featurizers:
        if isinstance(f, CharLMFeatures):
            for direction, source in zip(("forward", "backward"), f.paths, strict=True):
                dest = target / direction
                if dest.resolve() != source.resolve():
                    shutil.rmtree(dest, ignore_errors=True)
                    shutil.copytree(source, dest)


def unlabelled_examples(model: NeuralModel, docs: Sequence[Document]) -> list[Example]:
    """The windows of unlabelled documents (any spans they carry are ignored)."""
    out: list[Example] = []
    for doc in docs:
        tokens = tokenize(doc.text)
        if tokens:
            out.extend(model.encode_document(doc, tokens)[1])
    return out


def class_weights(examples: Sequence[Example], n_tags: int) -> torch.Tensor:
    counts = torch.ones(n_tags)
    for e in examples:
        counts += torch.bincount(torch.tensor(e.tags or [], dtype=torch.long), minlength=n_tags)
    w = (counts.max() / counts).sqrt()
    return w / w.mean()


@dataclass
class NeuralTrainResult:
    model_dir: Path
    metadata: ModelMetadata
    history: list[dict[str, float]] = field(default_factory=list)
    dev_report: Any = None
    encode_stats: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    peak_memory_mb: float = 0.0
    cpu_seconds: float = 0.0
    best_epoch: int = 0
    model: NeuralModel | None = None  # the trained model, as saved


class UnlabelledBatches:
    """An endless, seeded stream of length-bucketed batches of unlabelled windows (reshuffled each pass)."""

    def __init__(self, examples: Sequence[Example], batch_size: int, seed: int) -> None:
        if not examples:
            raise ConfigError(
                "cvt needs unlabelled text (--unlabelled PATH): none was given or it has no tokens"
            )
        self.examples = examples
        self.batches = length_batches([len(e) for e in examples], batch_size)
        self.rng = random.Random(seed + 7919)
        self.queue: list[list[int]] = []

    def next(self) -> Batch:
        if not self.queue:
            self.queue = list(self.batches)
            self.rng.shuffle(self.queue)
        return collate([self.examples[i] for i in self.queue.pop()])


def cvt_step(
    model: NeuralModel, batch: Batch, opt: torch.optim.Optimizer, params: list[torch.Tensor]
) -> float:
    """One Cross-View Training update on an unlabelled batch; returns its loss."""
    module = model.module
    cfg = model.config
    module.eval()
    with torch.no_grad():
        teacher = module.tag_marginals(module.emissions(batch), batch.mask)
    module.train()
    opt.zero_grad()
    with module.dropout_rate(cfg.cvt_unlabelled_dropout):
        loss = cfg.cvt_weight * module.cvt_loss(batch, teacher)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(params, cfg.clip)
    opt.step()
    return float(loss.detach())


def make_optimizer(cfg: NeuralConfig, params: list[torch.Tensor]) -> torch.optim.Optimizer:
    """SGD with momentum, Adam or Nadam (Adam with Nesterov momentum), with the config's weight decay."""
    if cfg.optimizer == "adam":
        return torch.optim.Adam(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    if cfg.optimizer == "nadam":
        return torch.optim.NAdam(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    return torch.optim.SGD(params, lr=cfg.lr, momentum=cfg.momentum, weight_decay=cfg.weight_decay)


def fit(
    model: NeuralModel,
    train_examples: Sequence[Example],
    dev_docs: Sequence[Document],
    *,
    seed: int = 1,
    progress: Progress | None = None,
    unlabelled_examples: Sequence[Example] = (),
) -> tuple[list[dict[str, float]], int]:
    """Train ``model.module`` in place; keeps the state with the best dev strict F1. Returns the history.

    With Cross-View Training (``cvt``), every labelled batch is followed by ``unlabelled_ratio`` batches of
    ``unlabelled_examples`` on which the auxiliary heads learn to match the primary head's tag marginals
    (computed without dropout and without gradient: the primary is the teacher).
    """
    cfg = model.config
    module = model.module
    params = [p for p in module.parameters() if p.requires_grad]
    opt = make_optimizer(cfg, params)
    weights = class_weights(train_examples, len(model.vocabs.tags)) if cfg.class_weighting else None
    rng = random.Random(seed)
    history: list[dict[str, float]] = []
    best_f1, best_epoch, best_state = -1.0, 0, copy.deepcopy(module.state_dict())
    since_best = 0
    batches_all = length_batches([len(e) for e in train_examples], cfg.batch_size)
    unlabelled = UnlabelledBatches(unlabelled_examples, cfg.batch_size, seed) if cfg.cvt else None
    dev_prepared = model.prepare(dev_docs)
    for epoch in range(1, cfg.epochs + 1):
        start = time.perf_counter()
        module.train()
        batches = list(batches_all)
        rng.shuffle(batches)
        total = cvt_total = 0.0
        cvt_steps = 0
        for k, idx in enumerate(batches):
            opt.zero_grad()
            loss = module.loss(collate([train_examples[i] for i in idx]), weights)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, cfg.clip)
            opt.step()
            total += float(loss.detach())
            for _ in range(cfg.unlabelled_ratio if unlabelled is not None else 0):
                cvt_total += cvt_step(model, unlabelled.next(), opt, params)  # type: ignore[union-attr]
                cvt_steps += 1
            if progress is not None:
                progress(f"epoch {epoch}", k + 1, len(batches))
        train_seconds = time.perf_counter() - start
        module.eval()
        f1 = score_predictions(dev_docs, model.predict_spans(dev_prepared), ("strict",))["strict"].micro.f1
        lr = opt.param_groups[0]["lr"]
        history.append(
            {
                "epoch": epoch,
                "loss": round(total / max(len(batches), 1), 4),
                "dev_strict_f1": round(f1, 4),
                "lr": lr,
                "train_seconds": round(train_seconds, 1),
                **({"cvt_loss": round(cvt_total / cvt_steps, 4)} if cvt_steps else {}),
            }
        )
        log.info(
            "epoch %d: loss %.4f, dev strict F1 %.4f (%.0fs)",
            epoch,
            total / max(len(batches), 1),
            f1,
            train_seconds,
        )
        if f1 > best_f1:
            best_f1, best_epoch, best_state = f1, epoch, copy.deepcopy(module.state_dict())
            since_best = 0
        elif best_f1 > 0:  # a model that finds nothing yet has not plateaued: no annealing, no stop
            since_best += 1
            if since_best >= cfg.patience:
                log.info("early stop after epoch %d (best epoch %d)", epoch, best_epoch)
                break
            if since_best % cfg.anneal_patience == 0:
                for group in opt.param_groups:
                    group["lr"] = group["lr"] * cfg.lr_decay
    module.load_state_dict(best_state)
    module.eval()
    return history, best_epoch


def train_neural(
    train_docs: Sequence[Document],
    dev_docs: Sequence[Document],
    config: TrainConfig,
    *,
    out_dir: str | Path,
    name: str,
    seed: int = 1,
    language: str | None = None,
    label_set: str = "canonical",
    training_data: TrainingData | None = None,
    progress: Progress | None = None,
    unlabelled_docs: Sequence[Document] = (),
    init_from: str | Path | None = None,
) -> NeuralTrainResult:
    """Train on ``train_docs``, select the epoch on ``dev_docs``, save the model in ``out_dir``.

    ``unlabelled_docs`` (their spans are ignored) feed Cross-View Training when ``neural.cvt`` is on.
    ``init_from`` (a neural model) continues training from that model's weights, keeping its network
    (``clinideid.train.transfer``): e.g. a model of another language's corpus.
    """
    if not train_docs or not any(d.spans for d in train_docs):
        raise InputError("no annotated training documents")
    if not dev_docs:
        raise InputError("no development documents to select the model on")
    if config.neural.rules is True:
        if not language:
            raise ConfigError(
                "neural.rules: true needs the corpus language (--language) to pick the rule packs"
            )
        spec = {"type": "rules", "language": language}
        config = config.model_copy(update={"neural": config.neural.model_copy(update={"rules": spec})})
    source = NeuralModel.load(init_from) if init_from is not None else None
    if source is not None:
        check_compatible(source, config.label_scheme, label_set)
        merged = continued_config(source.config, config.neural)
        if merged.charlm:  # the source's own copies, not paths relative to its directory
            merged = merged.model_copy(update={"charlm": source_charlm_paths(source)})
        config = config.model_copy(update={"neural": merged})
    ncfg = config.neural
    if unlabelled_docs and not ncfg.cvt:
        raise ConfigError("unlabelled text is only used by cross-view training: set neural.cvt: true")
    start = time.perf_counter()
    cpu_start = cpu_seconds()
    threads = ncfg.threads or default_threads()
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        set_seed(seed)
        labels = sorted({s.label for d in train_docs for s in d.spans})
        if source is not None:
            labels = sorted(set(labels) | set(source_labels(source)))
        tokens = [[t.text for t in tokenize(d.text)] for d in train_docs]
        vocabs = build_vocabs(tokens, ncfg, tag_set(labels, config.label_scheme))
        if source is not None:
            vocabs = extend_vocabs(source.vocabs, vocabs)
        frozen_table = None
        if ncfg.keep_vectors and ncfg.vectors:
            frozen_words, frozen_table = frequent_vectors(
                ncfg.vectors, ncfg.keep_vectors_top, vocabs.words.stoi, ncfg.word_dim
            )
            vocabs = dataclasses.replace(vocabs, frozen_words=frozen_words)
        model = NeuralModel(
            ncfg.model_copy(update={"quantize": False}),
            vocabs,
            window_size=config.window_size,
            window_overlap=config.window_overlap,
            batch_size=max(ncfg.batch_size, 32),
        )
        if source is not None:
            copied = transfer_weights(source, model)
            log.info("continued from %s: %d weight tensors copied", source.name, copied)
        if ncfg.vectors:
            found = model.module.word.load_pretrained(vocabs.words, load_vectors(ncfg.vectors))  # type: ignore[union-attr]
            log.info("pre-trained vectors cover %d of %d words", found, len(vocabs.words) - 2)
        if frozen_table is not None and vocabs.frozen_words:
            model.module.word.frozen.copy_(frozen_table)  # type: ignore[union-attr]
        examples, stats = training_examples(model, train_docs, config.label_scheme)
        unlabelled = unlabelled_examples(model, unlabelled_docs) if ncfg.cvt else []
        history, best_epoch = fit(
            model, examples, dev_docs, seed=seed, progress=progress, unlabelled_examples=unlabelled
        )
        report = score_predictions(
            dev_docs, model.predict_spans(dev_docs), ("strict", "relaxed", "span", "token", "token_binary")
        )
    finally:
        torch.set_num_threads(previous_threads)
    summary = summarize(report)
    seconds = time.perf_counter() - start
    cpu = cpu_seconds() - cpu_start
    training_config = config.model_dump(mode="json")
    training_config["selected"] = {"epoch": best_epoch}
    if ncfg.charlm:  # the model keeps its own copies of the character LMs (copied below)
        training_config["neural"]["charlm"] = {d: f"{CHARLM_DIR}/{d}" for d in ("forward", "backward")}
    if source is not None:
        training_config["init_from"] = {"name": source.name, "path": str(init_from)}
    training_config["history"] = history
    data = (training_data or TrainingData()).model_copy(
        update={
            "documents": len(train_docs),
            "spans": sum(len(d.spans) for d in train_docs),
            "dev_documents": len(dev_docs),
            "encoding": stats.to_dict(),
        }
    )
    meta = ModelMetadata(
        format_version=FORMAT_VERSION,
        model_type=MODEL_TYPE,
        name=name,
        weights=WEIGHTS_FILE,
        label_scheme=config.label_scheme,
        labels=labels,
        label_set=label_set,
        language=language,
        training_config=training_config,
        training_data=data,
        versions=package_versions("torch"),
        dev_metrics=summary,
        created=now_iso(),
        seed=seed,
    )
    model.metadata = meta
    metrics = {
        "model": name,
        "selected": {"epoch": best_epoch},
        "history": history,
        "summary": summary,
        "training_seconds": round(seconds, 1),
        "training_cpu_seconds": round(cpu, 1),
        "peak_memory_mb": round(peak_memory_mb(), 1),
        "threads": threads,
        "report": _compact(report.to_dict(per_document=False)),
    }
    out = save_model(
        out_dir,
        meta,
        model.to_bytes(),
        extra_files={"metrics.json": json.dumps(metrics, indent=2, ensure_ascii=False) + "\n"},
    )
    if ncfg.charlm:
        copy_charlms(model, out / CHARLM_DIR)
    return NeuralTrainResult(
        out, meta, history, report, stats.to_dict(), seconds, peak_memory_mb(), cpu, best_epoch, model
    )
