"""``clinideid train``: train a model on an annotated corpus and save it as a model directory."""

from __future__ import annotations

from pathlib import Path

import typer

from clinideid.cli import app
from clinideid.cli.progress import progress_display
from clinideid.errors import ConfigError


def _neural_options(
    model: str, init_from: str | None, semi_supervised: str | None, unlabelled: list[Path]
) -> dict:
    """Checks the neural-only options; returns the extra keyword arguments of ``train_neural``."""
    if (init_from or semi_supervised or unlabelled) and model != "neural":
        raise ConfigError("--init-from, --semi-supervised and --unlabelled are for --model neural")
    extras: dict = {}
    if init_from:
        extras["init_from"] = init_from
    if semi_supervised is not None:
        if semi_supervised != "cvt":
            raise ConfigError(f"unknown --semi-supervised {semi_supervised!r}; the method is cvt")
        if not unlabelled:
            raise ConfigError("--semi-supervised cvt needs --unlabelled PATH (unlabelled text)")
        extras["unlabelled_docs"] = []  # read once the options are all checked
    elif unlabelled:
        raise ConfigError("--unlabelled is read by --semi-supervised cvt; add that option")
    return extras


def _keep_vectors_options(cfg, keep: bool | None, top: int | None):  # type: ignore[no-untyped-def]
    """``cfg`` with ``--keep-vectors`` / ``--keep-vectors-top`` applied to its neural section."""
    if keep is None and top is None:
        return cfg
    if cfg.model != "neural":
        raise ConfigError("--keep-vectors and --keep-vectors-top are for --model neural")
    from pydantic import ValidationError

    from clinideid.detect.neural.config import NeuralConfig

    update = {k: v for k, v in (("keep_vectors", keep), ("keep_vectors_top", top)) if v is not None}
    try:
        neural = NeuralConfig.model_validate({**cfg.neural.model_dump(), **update})
    except ValidationError as exc:
        raise ConfigError(f"--keep-vectors: {exc.errors()[0]['msg']}") from None
    return cfg.model_copy(update={"neural": neural})


def _read_mix(spec: str, label_set: str) -> list:
    """The documents of a ``FORMAT:SCHEME:PATH`` corpus (an empty SCHEME means canonical labels)."""
    from clinideid.train.data import read_training_corpus

    parts = spec.split(":", 2)
    if len(parts) != 3 or not parts[0] or not parts[2]:
        raise ConfigError(
            f"--mix {spec!r}: expected FORMAT:SCHEME:PATH, e.g. jsonl:eds_pseudo:corpora/train.jsonl"
        )
    fmt, scheme, path = parts
    return read_training_corpus(Path(path), fmt, scheme or None, label_set)


def _read_unlabelled(paths: list[Path], fmt: str | None) -> list:
    from clinideid.document import Document
    from clinideid.formats.base import ReadReport
    from clinideid.lm.data import iter_unlabelled_documents

    report = ReadReport()
    docs = [
        Document(f"u{k}", d.text) for k, d in enumerate(iter_unlabelled_documents(paths, fmt, report=report))
    ]
    if report.errors:
        typer.echo(f"note: {len(report.errors)} unlabelled file(s) or record(s) skipped (unreadable)")
    return docs


@app.command(
    epilog=(
        "Example: clinideid train --model crf --format brat --train corpora/meddocan/train "
        "--dev corpora/meddocan/dev --scheme meddocan --config crf.yaml --seed 1 --out models/es-crf"
    ),
)
def train(
    train_path: Path = typer.Option(..., "--train", help="Training corpus (file or folder)."),
    out: Path = typer.Option(..., "--out", help="Directory to write the model into."),
    model: str = typer.Option("crf", "--model", help="Model type: crf, neural or transformer."),
    encoder: Path | None = typer.Option(
        None, "--encoder", help="--model transformer: local folder of a Hugging Face encoder to fine-tune."
    ),
    fmt: str = typer.Option("brat", "--format", help="Corpus format (brat, jsonl, i2b2, conll, ...)."),
    dev_path: Path | None = typer.Option(
        None, "--dev", help="Development corpus; without it a seeded share of --train is held out."
    ),
    scheme: str | None = typer.Option(
        None, "--scheme", help="Label scheme of the corpus (meddocan, eds_pseudo, a mapping YAML...)."
    ),
    config: Path | None = typer.Option(
        None, "--config", help="Training config YAML (keys: see clinideid.train.config)."
    ),
    seed: int = typer.Option(1, "--seed", help="Seed for the dev split and anything random."),
    canonical: bool = typer.Option(
        True, "--canonical/--native", help="Train on canonical labels (mapped with --scheme) or native ones."
    ),
    name: str | None = typer.Option(None, "--name", help="Model name (default: the --out folder name)."),
    language: str | None = typer.Option(None, "--language", help="Language of the corpus (word lists)."),
    description: str = typer.Option("", "--description", help="Training data description for model.json."),
    licence: str = typer.Option("", "--licence", help="Licence of the training data, for model.json."),
    mix: list[str] = typer.Option(
        [],
        "--mix",
        help="FORMAT:SCHEME:PATH of another annotated corpus trained on together with --train (e.g. another "
        "language; repeatable). Dev stays --dev or the --train hold-out.",
    ),
    init_from: str | None = typer.Option(
        None,
        "--init-from",
        help="--model neural: continue training from this neural model (e.g. another language's).",
    ),
    semi_supervised: str | None = typer.Option(
        None, "--semi-supervised", help="--model neural: 'cvt' (Cross-View Training) on --unlabelled text."
    ),
    unlabelled: list[Path] = typer.Option(
        [],
        "--unlabelled",
        help="Unlabelled text for --semi-supervised: .txt folders, JSONL, corpora (repeatable).",
    ),
    unlabelled_format: str | None = typer.Option(
        None, "--unlabelled-format", help="Read --unlabelled with this corpus codec (annotations ignored)."
    ),
    keep_vectors: bool | None = typer.Option(
        None,
        "--keep-vectors/--no-keep-vectors",
        help="--model neural: keep the pre-trained vectors (neural.vectors) of words outside the training "
        "vocabulary in the model, frozen, for inference (default: the config's keep_vectors).",
    ),
    keep_vectors_top: int | None = typer.Option(
        None,
        "--keep-vectors-top",
        help="--keep-vectors: how many of the most frequent such words to keep (default 100000).",
    ),
) -> None:
    """Train a PHI tagger; picks hyper-parameters on dev and writes model.json, weights and metrics.json."""
    from clinideid.models import TrainingData
    from clinideid.train.config import load_train_config
    from clinideid.train.crf import train_crf
    from clinideid.train.data import corpus_language, holdout_split, read_training_corpus

    cfg = load_train_config(config)
    if model not in ("crf", "neural", "transformer"):
        raise ConfigError(f"unknown --model {model!r}; choose crf, neural or transformer")
    if "model" not in cfg.model_fields_set:  # the config leaves the model type to --model
        cfg = cfg.model_copy(update={"model": model})
    if model != cfg.model:
        raise ConfigError(f"--model {model} does not match 'model: {cfg.model}' in the training config")
    if encoder is not None:
        if cfg.model != "transformer":
            raise ConfigError("--encoder is for --model transformer")
        cfg = cfg.model_copy(
            update={"transformer": cfg.transformer.model_copy(update={"encoder": str(encoder)})}
        )
    extras = _neural_options(cfg.model, init_from, semi_supervised, unlabelled)
    if semi_supervised:
        from pydantic import ValidationError

        from clinideid.detect.neural.config import NeuralConfig

        try:
            neural = NeuralConfig.model_validate({**cfg.neural.model_dump(), "cvt": True})
        except ValidationError as exc:
            raise ConfigError(f"--semi-supervised cvt: {exc.errors()[0]['msg']}") from None
        cfg = cfg.model_copy(update={"neural": neural})
    cfg = _keep_vectors_options(cfg, keep_vectors, keep_vectors_top)
    if not canonical and not scheme:
        raise ConfigError("--native needs --scheme to name the native label scheme (e.g. --scheme meddocan)")
    label_set = "canonical" if canonical else "native"
    train_docs = read_training_corpus(train_path, fmt, scheme, label_set)
    if dev_path is not None:
        dev_docs = read_training_corpus(dev_path, fmt, scheme, label_set)
        split = f"dev corpus {dev_path.name}"
    else:
        train_docs, dev_docs = holdout_split(train_docs, cfg.dev_fraction, seed)
        split = f"{cfg.dev_fraction:.0%} of the training documents held out (seed {seed})"
    lang = language or cfg.language or corpus_language(train_docs, scheme)
    mixed = [doc for spec in mix for doc in _read_mix(spec, label_set)]
    if mixed:
        typer.echo(f"mixing in {len(mixed)} documents from {len(mix)} other corpus(es)")
        train_docs = [*train_docs, *mixed]
    if extras.get("unlabelled_docs") is not None:
        extras["unlabelled_docs"] = _read_unlabelled(unlabelled, unlabelled_format)
        typer.echo(f"{len(extras['unlabelled_docs'])} unlabelled documents for cross-view training")
    data = TrainingData(
        description=description or f"{train_path.name} ({fmt}); selection on {split}",
        licence=licence,
        scheme=scheme,
    )
    typer.echo(
        f"training {model} on {len(train_docs)} documents, selecting on {len(dev_docs)} "
        f"({label_set} labels, language {lang or 'unknown'})"
    )
    display, callback = progress_display()
    with display:
        trainer = train_crf
        if cfg.model == "neural":
            from clinideid.train.neural import train_neural as trainer
        elif cfg.model == "transformer":
            from clinideid.train.transformer import train_transformer as trainer
        result = trainer(
            train_docs,
            dev_docs,
            cfg,
            out_dir=out,
            name=name or out.resolve().name,
            seed=seed,
            language=lang,
            label_set="canonical" if canonical else str(scheme),
            training_data=data,
            progress=callback,
            **extras,
        )
    enc = result.encode_stats
    if enc["partial_tokens"]:
        typer.echo(
            f"note: {enc['partial_tokens']} of {enc['spans']} spans cover part of a token (whole token labelled)"
        )
    if enc["conflicts"]:
        typer.echo(f"note: {enc['conflicts']} overlapping spans left out of training (longer span kept)")
    sel = result.metadata.training_config["selected"]
    if cfg.model in ("neural", "transformer"):
        typer.echo(f"selected epoch {sel['epoch']}")
    else:
        typer.echo(f"selected c1={sel['c1']:g} c2={sel['c2']:g}")
    for mode, s in result.metadata.dev_metrics.items():
        typer.echo(f"dev {mode:<13} P {s['precision']:.4f}  R {s['recall']:.4f}  F1 {s['f1']:.4f}")
    typer.echo(
        f"model written to {result.model_dir} ({result.seconds:.0f}s, peak memory {result.peak_memory_mb:.0f} MB)"
    )
