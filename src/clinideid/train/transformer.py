"""Fine-tuning a transformer tagger: a local encoder plus a linear or CRF head, epochs with dev selection.

The training documents are cut into the same sub-token windows the tagger reads at inference. AdamW (no
weight decay on biases and norms) with a linear warm-up over ``warmup`` of the steps and a linear decay to
zero; the head may have its own learning rate (``head_lr``; a CRF's transitions learn slowly at encoder
rates). Gradients are clipped. After every epoch the dev documents are tagged and the dev entity strict
micro F1 decides: the best state is kept and training stops after ``patience`` epochs without a gain
(epochs before the model finds any entity do not count). Seeds make a run reproducible on one machine
(same torch version and thread count).
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from clinideid.detect.neural.tagger import length_batches
from clinideid.detect.transformer import (
    HEAD_FILE,
    MODEL_TYPE,
    Example,
    TransformerModel,
    collate,
    require_transformers,
)
from clinideid.document import Document
from clinideid.errors import InputError
from clinideid.models import FORMAT_VERSION, ModelMetadata, TrainingData, now_iso, package_versions
from clinideid.train.config import TrainConfig
from clinideid.train.crf import _compact, cpu_seconds, peak_memory_mb, score_predictions, summarize
from clinideid.train.neural import default_threads, set_seed, tag_set

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]


@dataclass
class TransformerTrainResult:
    model_dir: Path
    metadata: ModelMetadata
    history: list[dict[str, float]] = field(default_factory=list)
    dev_report: Any = None
    encode_stats: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    peak_memory_mb: float = 0.0
    cpu_seconds: float = 0.0
    best_epoch: int = 0


def linear_schedule(warmup_steps: int, total_steps: int) -> Callable[[int], float]:
    """LR factor at a step: linear warm-up from 0 to 1, then linear decay to 0 at ``total_steps``."""

    def factor(step: int) -> float:
        if step < warmup_steps:
            return (step + 1) / (warmup_steps + 1)
        return max(0.0, (total_steps - step) / max(1, total_steps - warmup_steps))

    return factor


def optimizer_groups(model: TransformerModel) -> list[dict[str, Any]]:
    """AdamW parameter groups: encoder with/without weight decay, then the head.

    The classifier learns at ``head_lr`` (default: ``lr``); CRF transitions at ``head_lr`` (default: 100 ×
    ``lr``: they start near zero and barely move at encoder rates).
    """
    cfg = model.config
    module = model.module
    groups: list[dict[str, Any]] = []
    if not cfg.freeze_encoder:
        enc = [p for p in module.encoder.parameters() if p.requires_grad]
        groups.append({"params": [p for p in enc if p.ndim >= 2], "weight_decay": cfg.weight_decay})
        groups.append({"params": [p for p in enc if p.ndim < 2], "weight_decay": 0.0})
    head_lr = cfg.head_lr or cfg.lr
    groups.append(
        {"params": [module.classifier.weight], "weight_decay": cfg.weight_decay, "lr": head_lr},
    )
    groups.append({"params": [module.classifier.bias], "weight_decay": 0.0, "lr": head_lr})
    if module.crf is not None:
        crf_lr = cfg.head_lr or cfg.lr * 100
        groups.append({"params": list(module.crf.parameters()), "weight_decay": 0.0, "lr": crf_lr})
    return [g for g in groups if g["params"]]


def fit(
    model: TransformerModel,
    train_examples: Sequence[Example],
    dev_docs: Sequence[Document],
    *,
    seed: int = 1,
    progress: Progress | None = None,
) -> tuple[list[dict[str, float]], int]:
    """Train ``model.module`` in place; keeps the state with the best dev strict F1. Returns the history."""
    cfg = model.config
    module = model.module
    if cfg.freeze_encoder:
        for p in module.encoder.parameters():
            p.requires_grad_(False)
    opt = torch.optim.AdamW(optimizer_groups(model), lr=cfg.lr)
    batches_all = length_batches([len(e) for e in train_examples], cfg.batch_size)
    total_steps = max(1, cfg.epochs * len(batches_all))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, linear_schedule(int(cfg.warmup * total_steps), total_steps)
    )
    params = [p for g in opt.param_groups for p in g["params"]]
    rng = random.Random(seed)
    history: list[dict[str, float]] = []
    best_f1, best_epoch, best_state = -1.0, 0, _copy_state(module)
    since_best = 0
    for epoch in range(1, cfg.epochs + 1):
        start = time.perf_counter()
        module.train()
        if cfg.freeze_encoder:
            module.encoder.eval()  # no dropout in a frozen encoder
        batches = list(batches_all)
        rng.shuffle(batches)
        total = 0.0
        for k, idx in enumerate(batches):
            opt.zero_grad()
            loss = module.loss(collate([train_examples[i] for i in idx], model.pad_id))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, cfg.clip)
            opt.step()
            sched.step()
            total += float(loss.detach())
            if progress is not None:
                progress(f"epoch {epoch}", k + 1, len(batches))
        train_seconds = time.perf_counter() - start
        module.eval()
        f1 = score_predictions(dev_docs, model.predict_spans(dev_docs), ("strict",))["strict"].micro.f1
        history.append(
            {
                "epoch": epoch,
                "loss": round(total / max(len(batches), 1), 4),
                "dev_strict_f1": round(f1, 4),
                "lr": opt.param_groups[0]["lr"],
                "train_seconds": round(train_seconds, 1),
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
            best_f1, best_epoch, best_state = f1, epoch, _copy_state(module)
            since_best = 0
        elif best_f1 > 0:  # a model that finds nothing yet has not plateaued
            since_best += 1
            if since_best >= cfg.patience:
                log.info("early stop after epoch %d (best epoch %d)", epoch, best_epoch)
                break
    module.load_state_dict(best_state)
    module.eval()
    return history, best_epoch


def _copy_state(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in module.state_dict().items()}


def train_transformer(
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
) -> TransformerTrainResult:
    """Fine-tune ``config.transformer.encoder`` on ``train_docs``, select on ``dev_docs``, save in ``out_dir``."""
    if not train_docs or not any(d.spans for d in train_docs):
        raise InputError("no annotated training documents")
    if not dev_docs:
        raise InputError("no development documents to select the model on")
    require_transformers()
    tcfg = config.transformer
    start = time.perf_counter()
    cpu_start = cpu_seconds()
    threads = tcfg.threads or default_threads()
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        set_seed(seed)
        labels = sorted({s.label for d in train_docs for s in d.spans})
        model = TransformerModel.from_encoder(
            tcfg, tag_set(labels, config.label_scheme), batch_size=max(tcfg.batch_size, 16)
        )
        examples, stats = model.training_examples(train_docs, config.label_scheme)
        if not examples:
            raise InputError("the training documents give no words the encoder's tokenizer can read")
        log.info("%d training windows of at most %d sub-tokens", len(examples), model.max_length)
        history, best_epoch = fit(model, examples, dev_docs, seed=seed, progress=progress)
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
    training_config["history"] = history
    data = (training_data or TrainingData()).model_copy(
        update={
            "documents": len(train_docs),
            "spans": sum(len(d.spans) for d in train_docs),
            "dev_documents": len(dev_docs),
            "encoding": stats.to_dict(),
        }
    )
    enc_cfg = model.module.encoder.config  # type: ignore[attr-defined]
    meta = ModelMetadata(
        format_version=FORMAT_VERSION,
        model_type=MODEL_TYPE,
        name=name,
        weights=HEAD_FILE,
        label_scheme=config.label_scheme,
        labels=labels,
        label_set=label_set,
        language=language,
        training_config=training_config,
        training_data=data,
        versions=package_versions("torch", "transformers", "tokenizers"),
        dev_metrics=summary,
        created=now_iso(),
        seed=seed,
        encoder={
            "base": Path(str(tcfg.encoder)).name,
            "model_type": enc_cfg.model_type,
            "hidden_size": enc_cfg.hidden_size,
            "max_subtokens": model.max_length,
        },
    )
    metrics = {
        "model": name,
        "selected": {"epoch": best_epoch},
        "history": history,
        "summary": summary,
        "training_seconds": round(seconds, 1),
        "training_cpu_seconds": round(cpu, 1),
        "peak_memory_mb": round(peak_memory_mb(), 1),
        "threads": threads,
        "train_windows": len(examples),
        "report": _compact(report.to_dict(per_document=False)),
    }
    out = model.save(
        out_dir, meta, extra_files={"metrics.json": json.dumps(metrics, indent=2, ensure_ascii=False) + "\n"}
    )
    return TransformerTrainResult(
        out, meta, history, report, stats.to_dict(), seconds, peak_memory_mb(), cpu, best_epoch
    )
