"""Rebuild the models shipped with clinideid, reproducibly.

    python scripts/build_models.py                       # the CRF models, corpora from ../shared/corpora
    python scripts/build_models.py --only es --corpora /data/corpora --workers 2
    python scripts/build_models.py --only es-neural      # the Spanish neural tagger (about 15 min, 1 thread)
    python scripts/build_models.py --only en             # a synthetic-trained CRF (also de, it, ru; no corpora)
    python scripts/build_models.py --only notes          # the multilingual notes CRF of the default pipelines

- ``notes-multi-crf``: the default detector of every language (``clinideid.train.notes``): one CRF for
  the six languages, trained on every document of ``notes/<lang>.jsonl`` with rule hits, word lists and
  language-independent evidence as features (``NOTES_CONFIG``). Its held-out figures, by writing set, and
  the threshold and union labels of each ``config/<lang>.yaml`` come from ``benchmarks/generalisation.py``.
  Training data licence: CC0 1.0.

- ``es-meddocan-crf``: MEDDOCAN train (BRAT), (c1, c2) chosen on MEDDOCAN dev, canonical labels
  (``labels/meddocan.yaml``). Training data licence: CC BY 4.0.
- ``fr-edspseudo-crf``: EDS-Pseudo ``train.jsonl`` with a deterministic 20% held out as dev (seed 1),
  canonical labels (``labels/eds_pseudo.yaml``). Training data licence: BSD-3-Clause.

- ``<lang>-synth-crf`` (``--only en|de|it|ru``): a CRF with rule features trained on 1,000 synthetic notes
  of ``clinideid synth`` (seed 0; 20% held back to choose rules / model / union per label), exactly the
  model ``benchmarks/learned_vs_rules.py`` measures as "synth" (``clinideid.train.synthetic``). The script
  prints the hybrid detector spec to put in ``config/<lang>.yaml``; ship one only where that benchmark
  shows it beats the rules alone on the language's challenge notes (see docs/experiments/learned_en_de_it_ru.md).

Models are written to ``src/clinideid/models/<name>/`` (weights gzip-compressed, ``model.json``,
``metrics.json``). The corpora themselves are never copied into the repository.

- ``es-meddocan-neural``: the neural tagger (``NEURAL_CONFIG``, the configuration chosen by
  ``benchmarks/neural_experiments.py``) trained on MEDDOCAN train, epoch chosen on dev, one torch thread,
  weights stored as float16. A run reproduces the same model on the same machine type and torch version.
"""

from __future__ import annotations

import argparse
import logging
import shutil
import sys
from pathlib import Path

from clinideid.models import TrainingData
from clinideid.train.config import parse_train_config
from clinideid.train.crf import train_crf
from clinideid.train.data import holdout_split, read_training_corpus

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPORA = REPO.parent / "shared" / "corpora"
DEFAULT_OUT = REPO / "src" / "clinideid" / "models"
SEED = 1
#: languages whose model is trained on synthetic notes only (no corpus needed)
SYNTH_LANGUAGES = ("en", "de", "it", "ru")

#: the shipped configuration (see clinideid.train.config for every key)
CONFIG = {
    "label_scheme": "BIO",
    "unit": "line",
    "features": {
        "window": 2,
        "affixes": 4,
        "gazetteers": ["first_names", "surnames", "cities", "countries", "hospitals", "states"],
        "rules": False,
    },
    "c1": [0.05, 0.2],
    "c2": [0.01],
    "max_iterations": 100,
    "min_freq": 2,
}

#: the shipped neural tagger (see clinideid.detect.neural.config.NeuralConfig for every key)
NEURAL_CONFIG = {
    "model": "neural",
    "label_scheme": "BIOES",
    "window_size": 100,
    "window_overlap": 20,
    # a fixed budget of 10 epochs, the epoch chosen on dev: the setting of the experiment grid
    "neural": {"affix": True, "rules": True, "epochs": 10, "patience": 10, "threads": 1},
}

#: EDS-Pseudo is small (seconds per model): a wider (c1, c2) grid costs little
FR_GRID = {"c1": [0.05, 0.1, 0.2, 0.4, 0.8], "c2": [0.01, 0.1, 0.3]}


def build_es(corpora: Path, out: Path, workers: int, rule_features: bool = False) -> None:
    train = read_training_corpus(corpora / "meddocan" / "train", "brat", "meddocan", "canonical")
    dev = read_training_corpus(corpora / "meddocan" / "dev", "brat", "meddocan", "canonical")
    _train(
        "es-meddocan-crf-rules" if rule_features else "es-meddocan-crf",
        train,
        dev,
        out,
        workers,
        overrides={"features": {**CONFIG["features"], "rules": True}} if rule_features else None,
        language="es",
        data=TrainingData(
            description="MEDDOCAN (IberLEF 2019) train split, 500 synthetic Spanish clinical case reports; "
            "(c1, c2) selected on the MEDDOCAN dev split; labels mapped to canonical with labels/meddocan.yaml",
            licence="CC BY 4.0",
            scheme="meddocan",
        ),
    )


def build_fr(corpora: Path, out: Path, workers: int) -> None:
    docs = read_training_corpus(corpora / "eds-pseudo" / "train.jsonl", "jsonl", "eds_pseudo", "canonical")
    train, dev = holdout_split(docs, 0.2, SEED)
    _train(
        "fr-edspseudo-crf",
        train,
        dev,
        out,
        workers,
        overrides=FR_GRID,
        language="fr",
        data=TrainingData(
            description="EDS-Pseudo (AP-HP) synthetic French clinical snippets, train.jsonl with a "
            f"deterministic 20% held out as dev (seed {SEED}); labels mapped to canonical with "
            "labels/eds_pseudo.yaml",
            licence="BSD-3-Clause",
            scheme="eds_pseudo",
        ),
    )


def build_es_neural(corpora: Path, out: Path) -> None:
    from clinideid.train.neural import train_neural

    name = "es-meddocan-neural"
    train = read_training_corpus(corpora / "meddocan" / "train", "brat", "meddocan", "canonical")
    dev = read_training_corpus(corpora / "meddocan" / "dev", "brat", "meddocan", "canonical")
    result = train_neural(
        train,
        dev,
        parse_train_config(NEURAL_CONFIG),
        out_dir=out / f".{name}.training",
        name=name,
        seed=SEED,
        language="es",
        label_set="canonical",
    )
    logging.info("%s: trained in %.0fs, peak %.0f MB", name, result.seconds, result.peak_memory_mb)
    package_neural(result.model_dir, out / name)
    shutil.rmtree(result.model_dir)


def package_neural(model_dir: Path, target: Path) -> None:
    """Store a trained neural model compactly (float16 weights) in ``target``.

    ``model_dir`` is the output of ``build_es_neural``'s training, or an identical run of
    ``benchmarks/neural_experiments.py --variants +affix+rules --window 100 --epochs 10 --seeds 1
    --keep-models`` (same config, seed and thread count: the same model), packaged with ``--from-run``.
    """
    from clinideid.detect.neural.tagger import NeuralModel
    from clinideid.models import save_model

    model = NeuralModel.load(model_dir)
    meta = model.metadata
    assert meta is not None
    expected = parse_train_config(NEURAL_CONFIG).neural.model_copy(
        update={"rules": {"type": "rules", "language": "es"}}
    )
    windows = (meta.training_config.get("window_size"), meta.training_config.get("window_overlap"))
    if model.config != expected or meta.seed != SEED or windows != (100, 20):
        raise SystemExit(f"{model_dir} was not trained with NEURAL_CONFIG and seed {SEED}; not packaging it")
    meta = meta.model_copy(
        update={
            "name": target.name,
            "training_data": meta.training_data.model_copy(
                update={
                    "description": "MEDDOCAN (IberLEF 2019) train split, 500 synthetic Spanish clinical case "
                    "reports; epoch selected on the MEDDOCAN dev split; labels mapped to canonical with "
                    "labels/meddocan.yaml",
                    "licence": "CC BY 4.0",
                    "scheme": "meddocan",
                }
            ),
        }
    )
    extra = {"metrics.json": (model_dir / "metrics.json").read_text(encoding="utf-8")}
    save_model(target, meta, model.to_bytes(half=True), extra_files=extra)
    size = sum(p.stat().st_size for p in target.iterdir())
    logging.info("%s: dev %s; %d bytes on disk", target.name, meta.dev_metrics, size)


def build_synthetic(language: str, out: Path) -> None:
    """The synthetic-trained CRF of ``language`` (no corpus read) and the hybrid spec that uses it."""
    import json

    from clinideid.train.synthetic import synthetic_model_name, train_synthetic_crf

    name = synthetic_model_name(language)
    target = out / name
    shutil.rmtree(target, ignore_errors=True)
    model = train_synthetic_crf(language, target, notes=1000, seed=0, model_ref=name)
    size = sum(p.stat().st_size for p in target.iterdir())
    logging.info("%s: trained in %.0fs, %d bytes on disk", name, model.seconds, size)
    print(json.dumps(model.detector))


def build_notes(corpora: Path, out: Path) -> None:
    from clinideid.train.notes import read_notes, train_notes_model

    notes = read_notes(corpora / "notes")
    docs = [d for lang_docs in notes.values() for d in lang_docs]
    name = "notes-multi-crf"
    data = TrainingData(
        description="notes corpus (en, de, it, ru, es, fr): realistic fictitious clinical documents, all writing sets",
        licence="CC0-1.0",
        languages={lang: len(d) for lang, d in notes.items()},
    )
    shutil.rmtree(out / name, ignore_errors=True)
    result = train_notes_model(docs, out / name, name, seed=SEED, data=data)
    size = sum(p.stat().st_size for p in result.model_dir.iterdir())
    logging.info(
        "%s: %.0fs, peak %.0f MB, %d bytes on disk", name, result.seconds, result.peak_memory_mb, size
    )


def _train(name, train, dev, out, workers, *, language, data, overrides=None) -> None:
    """Train with the shipped CONFIG; ``overrides`` replaces some of its keys for one model."""
    cfg = parse_train_config({**CONFIG, **(overrides or {}), "workers": workers})
    result = train_crf(
        train,
        dev,
        cfg,
        out_dir=out / name,
        name=name,
        seed=SEED,
        language=language,
        label_set="canonical",
        training_data=data,
    )
    size = sum(p.stat().st_size for p in result.model_dir.iterdir())
    logging.info(
        "%s: dev %s; %.0fs, peak %.0f MB, %d bytes on disk",
        name,
        result.metadata.dev_metrics,
        result.seconds,
        result.peak_memory_mb,
        size,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--corpora", type=Path, default=DEFAULT_CORPORA, help="folder holding meddocan/ and eds-pseudo/"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where model folders are written")
    parser.add_argument(
        "--only", choices=["es", "fr", "es-neural", "notes", *SYNTH_LANGUAGES], help="build one model only"
    )
    parser.add_argument(
        "--from-run",
        type=Path,
        help="with --only es-neural: package this already trained run instead of training",
    )
    parser.add_argument("--workers", type=int, default=2, help="grid points trained in parallel")
    parser.add_argument(
        "--rule-features",
        action="store_true",
        help="also build es-meddocan-crf-rules, a CRF with rule-engine hits as features (it then needs the "
        "same Spanish rule pack at prediction time; not shipped by default)",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    if args.only in SYNTH_LANGUAGES:
        build_synthetic(args.only, args.out)
        return 0
    if not args.corpora.is_dir():
        parser.error(f"corpora folder {args.corpora} does not exist")
    if args.only in (None, "notes"):
        build_notes(args.corpora, args.out)
    if args.only in (None, "es"):
        build_es(args.corpora, args.out, args.workers)
        if args.rule_features:
            build_es(args.corpora, args.out, args.workers, rule_features=True)
    if args.only in (None, "fr"):
        build_fr(args.corpora, args.out, args.workers)
    if args.only == "es-neural":
        if args.from_run:
            package_neural(args.from_run, args.out / "es-meddocan-neural")
        else:
            build_es_neural(args.corpora, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
