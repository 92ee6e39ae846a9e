"""Adapting a pipeline to a site's own unlabelled notes (``clinideid adapt``).

Steps, each written atomically into the output folder so that ``resume`` skips the finished ones:

1. ``silver``: the site's notes, streamed in batches through the language's default pipeline (detection
   only); the spans it finds are the notes' silver labels (``work/silver.jsonl``);
2. ``synthetic``: annotated synthetic notes from ``clinideid.synth`` (``work/synthetic.jsonl``);
3. ``lm`` (``model="neural"``, ``semi="charlm"`` only): forward and backward character LMs pre-trained on
   the site's text (the first ``lm_chars`` characters; a share of the time budget), in ``work/lm/``;
4. ``train``: a held-back share of both corpora is set aside; the model is trained on the rest
   (``model/``):

   - ``crf`` (default): a CRF with rule features, a small (c1, c2) grid selected on the held-back part. A
     time budget first times a short calibration run, then gives each grid point the L-BFGS iterations
     that fit in what is left and starts no point that would not fit;
   - ``neural``: the neural tagger (BiLSTM-CRF), the epoch selected on the held-back part, made
     semi-supervised by the site's unlabelled text in one of two ways: ``semi="charlm"`` reads the
     contextual string embeddings of the step-3 LMs (with rule hits as inputs), ``semi="cvt"`` trains with
     Cross-View Training on the site's text (token-local inputs: no rule or LM inputs, as CVT needs);
5. ``choose``: a hybrid (rules + that model) picks rules / model / union per label on the held-back part;
   ``pipeline.yaml`` (for ``clinideid deid --config``) and ``adapt.json`` (counts, choices, scores,
   timings; never note text) are written.

``work/`` holds note text (the silver corpus) and can be deleted once the run is finished.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import secrets
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from clinideid.document import Document, Span
from clinideid.errors import ConfigError, InputError
from clinideid.files import atomic_file, write_atomic
from clinideid.text.language import SUPPORTED

STEPS = ("silver", "synthetic", "lm", "train", "choose")
MODELS = ("crf", "neural")
SEMI = ("charlm", "cvt")
STATE_FILE = "state.json"
#: L-BFGS iterations of the run that measures an iteration's cost under a time budget
CALIBRATION_ITERATIONS = 5
#: (c1, c2) points, most useful first: a time budget trains a prefix of this list
GRID = ((0.1, 0.01), (0.05, 0.01), (0.2, 0.01))

Progress = Callable[[str], None]


@dataclass
class AdaptOptions:
    notes: Path
    language: str
    out: Path
    synthetic: int = 1000
    seed: int = 0
    time_budget_minutes: float | None = None
    resume: bool = False
    batch_size: int = 64
    held_back: float = 0.2
    max_iterations: int = 100
    #: site notes (a seeded sample) the model is trained and chosen on: training time and memory grow with
    #: them (a time budget shortens the CRF's iterations, not the features of every note)
    max_site_notes: int | None = 2000
    model: str = "crf"
    semi: str = "charlm"
    #: neural: site characters read by the LMs (charlm) or by Cross-View Training (cvt): bounds time and memory
    lm_chars: int = 2_000_000
    #: neural: tagger epochs (the best one on the held-back part is kept)
    epochs: int = 5
    #: neural: share of the time budget given to LM pre-training (both directions together)
    lm_budget_share: float = 0.4
    #: neural: overrides of the LM training settings (``clinideid.lm.train.CharLMTrainConfig``)
    lm_config: dict[str, Any] = field(default_factory=dict)
    #: neural: overrides of the tagger settings (``clinideid.detect.neural.config.NeuralConfig``)
    neural_config: dict[str, Any] = field(default_factory=dict)

    def steps(self) -> tuple[str, ...]:
        """The steps this run takes (``lm`` only for the neural tagger with character LMs)."""
        uses_lm = self.model == "neural" and self.semi == "charlm"
        return tuple(s for s in STEPS if s != "lm" or uses_lm)

    def settings(self) -> dict[str, Any]:
        """What a resumed run must share with the run it continues."""
        settings: dict[str, Any] = {
            "notes": str(self.notes.resolve()),
            "language": self.language,
            "synthetic": self.synthetic,
            "seed": self.seed,
            "held_back": self.held_back,
            "max_site_notes": self.max_site_notes,
        }
        if self.model != "crf":
            settings.update(model=self.model, semi=self.semi, lm_chars=self.lm_chars)
        return settings


# -- storage ------------------------------------------------------------------------------------------------


def _write(path: Path, data: bytes) -> None:
    write_atomic(path, data, tmp_dir=path.parent)


def _doc_line(doc: Document) -> str:
    spans = [[s.start, s.end, s.label] for s in doc.spans]
    return json.dumps({"id": doc.id, "text": doc.text, "spans": spans}, ensure_ascii=False) + "\n"


def _read_docs(path: Path, language: str) -> list[Document]:
    docs = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            spans = tuple(Span(a, b, label, source="silver") for a, b, label in rec["spans"])
            docs.append(Document(rec["id"], rec["text"], language, spans=spans))
    return docs


class _State:
    """``work/state.json``: the settings and the result of each finished step."""

    def __init__(self, work: Path, settings: dict[str, Any], resume: bool) -> None:
        self.path = work / STATE_FILE
        if self.path.is_file():
            data = json.loads(self.path.read_text("utf-8"))
            if not resume:
                raise ConfigError(
                    f"{work.parent} already holds an adaptation run: pass --resume to continue it, "
                    "or choose a new output folder"
                )
            if data.get("settings") != settings:
                raise ConfigError(
                    f"--resume: {work.parent} was started with other settings (notes, language, --synthetic, "
                    "--seed, --model, --semi); use the same ones or a new output folder"
                )
            self.steps: dict[str, Any] = data.get("steps", {})
        else:
            self.steps = {}
        self.settings = settings

    def done(self, step: str) -> bool:
        return step in self.steps

    def finish(self, step: str, result: dict[str, Any]) -> None:
        self.steps[step] = result
        body = {"settings": self.settings, "steps": self.steps}
        _write(self.path, (json.dumps(body, indent=2) + "\n").encode("utf-8"))


# -- steps --------------------------------------------------------------------------------------------------


def _batches(items: Iterator[Any], size: int) -> Iterator[list[Any]]:
    batch = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def silver_label(opts: AdaptOptions, target: Path) -> dict[str, Any]:
    """Stream the site's notes through the default pipeline; write each with its detected spans."""
    from clinideid.batch.inputs import iter_inputs
    from clinideid.pipeline import Deidentifier

    deid = Deidentifier.for_language(opts.language, secrets.token_bytes(32))  # detection only: key unused
    counts = {"notes": 0, "unreadable": 0, "ignored": 0, "spans": 0, "characters": 0}
    labels: dict[str, int] = {}
    with atomic_file(target, target.parent) as raw:  # an interrupted or failed step leaves no partial file
        fh = io.TextIOWrapper(raw, encoding="utf-8", newline="")
        for batch in _batches(iter_inputs(opts.notes, language=opts.language), opts.batch_size):
            docs = []
            for item in batch:
                # a fresh id: a site's ids may themselves identify a patient
                if item.document is not None:
                    number = counts["notes"] + len(docs) + 1
                    docs.append(Document(f"site-{number}", item.document.text, opts.language))
                elif item.error is not None:
                    counts["unreadable"] += 1
                else:
                    counts["ignored"] += 1
            for doc, (spans, _dropped) in zip(docs, deid.detect_batch(docs), strict=True):
                silver = doc.with_spans(Span(s.start, s.end, s.label, source="silver") for s in spans)
                fh.write(_doc_line(silver))
                counts["notes"] += 1
                counts["spans"] += len(spans)
                counts["characters"] += len(doc.text)
                for s in spans:
                    labels[s.label] = labels.get(s.label, 0) + 1
        if counts["notes"] == 0:
            raise InputError(
                f"no readable notes in {opts.notes} ({counts['unreadable']} unreadable, {counts['ignored']} "
                "not notes): give a folder of .txt files or a JSONL file with a 'text' field"
            )
        fh.flush()
        fh.detach()
    return {**counts, "labels": dict(sorted(labels.items()))}


def make_synthetic(opts: AdaptOptions, target: Path) -> dict[str, Any]:
    from clinideid.synth import generate

    docs = generate(opts.language, opts.synthetic, seed=opts.seed) if opts.synthetic else []
    _write(target, "".join(_doc_line(d) for d in docs).encode("utf-8"))
    return {"notes": len(docs), "spans": sum(len(d.spans) for d in docs)}


def split(docs: Sequence[Document], share: float, seed: int) -> tuple[list[Document], list[Document]]:
    """``(rest, held back)``: a seeded ``share`` of ``docs`` held back (at least one when two or more)."""
    order = list(range(len(docs)))
    random.Random(seed).shuffle(order)
    n = round(len(docs) * share)
    if len(docs) >= 2:
        n = min(max(n, 1), len(docs) - 1)
    held = set(order[:n])
    return [d for i, d in enumerate(docs) if i not in held], [d for i, d in enumerate(docs) if i in held]


def _train(
    opts: AdaptOptions,
    train_docs: list[Document],
    dev_docs: list[Document],
    work: Path,
    model_dir: Path,
    progress: Progress,
) -> dict[str, Any]:
    from clinideid.train.config import parse_train_config
    from clinideid.train.crf import train_crf

    budget = opts.time_budget_minutes * 60 if opts.time_budget_minutes is not None else None
    base = {"language": opts.language, "features": {"rules": True}, "max_iterations": opts.max_iterations}
    start = time.perf_counter()
    runs: list[tuple[float, Path, list[dict[str, float]]]] = []
    iterations_used: list[int] = []
    scratch = work / "grid"
    shutil.rmtree(scratch, ignore_errors=True)
    if budget is None:  # the whole grid in one call: features computed once
        cfg = parse_train_config(
            {**base, "c1": sorted({c for c, _ in GRID}), "c2": sorted({c for _, c in GRID})}
        )
        res = train_crf(
            train_docs,
            dev_docs,
            cfg,
            out_dir=scratch / "0",
            name=f"{opts.language}-adapted-crf",
            seed=opts.seed,
            language=opts.language,
        )
        runs.append((max(g["dev_strict_f1"] for g in res.grid), res.model_dir, res.grid))
    else:
        # a budget: a short calibration run (CALIBRATION_ITERATIONS L-BFGS iterations, features included)
        # tells the cost of an iteration; each grid point then gets the iterations that fit in what is left,
        # and no point starts unless it fits. The calibration model itself is a candidate, so even a budget
        # too small for more leaves a trained model.
        def train_point(k: int, c1: float, c2: float, iterations: int) -> float:
            cfg = parse_train_config({**base, "c1": [c1], "c2": [c2], "max_iterations": iterations})
            t0 = time.perf_counter()
            res = train_crf(
                train_docs,
                dev_docs,
                cfg,
                out_dir=scratch / str(k),
                name=f"{opts.language}-adapted-crf",
                seed=opts.seed,
                language=opts.language,
            )
            runs.append((res.grid[0]["dev_strict_f1"], res.model_dir, res.grid))
            iterations_used.append(iterations)
            progress(
                f"train: grid point {k + 1} (c1={c1}, c2={c2}, {iterations} iterations) dev strict F1 "
                f"{res.grid[0]['dev_strict_f1']:.3f}"
            )
            return time.perf_counter() - t0

        calibration = min(CALIBRATION_ITERATIONS, opts.max_iterations)
        per_iteration = train_point(0, *GRID[0], calibration) / calibration
        for k, (c1, c2) in enumerate(GRID, start=1):
            left = budget - (time.perf_counter() - start)
            iterations = min(opts.max_iterations, int(left / per_iteration))
            if iterations <= calibration:
                break
            per_iteration = train_point(k, c1, c2, iterations) / iterations
    best_f1, best_dir, _ = max(runs, key=lambda r: r[0])
    shutil.rmtree(model_dir, ignore_errors=True)
    os.replace(best_dir, model_dir)
    shutil.rmtree(scratch, ignore_errors=True)
    seconds = time.perf_counter() - start
    grid = [g for _, _, gs in runs for g in gs]
    return {
        "model": "crf",
        "train_notes": len(train_docs),
        "held_back_notes": len(dev_docs),
        "grid": grid,
        "grid_points_planned": len(GRID),
        "grid_points_trained": len(grid),
        "max_iterations": opts.max_iterations,
        "iterations_per_grid_point": iterations_used or [opts.max_iterations] * len(grid),
        "time_budget_minutes": opts.time_budget_minutes,
        "within_budget": None if budget is None else seconds <= budget,
        "held_back_strict_f1": best_f1,
        "seconds": round(seconds, 1),
    }


def _budget_seconds(opts: AdaptOptions) -> float | None:
    return opts.time_budget_minutes * 60 if opts.time_budget_minutes is not None else None


def site_texts(silver_path: Path, limit: int) -> list[tuple[str, str]]:
    """``(id, text)`` of the site's notes in file order, up to ``limit`` characters in all (a note that
    would cross the limit is cut at it)."""
    out: list[tuple[str, str]] = []
    total = 0
    with silver_path.open(encoding="utf-8") as fh:
        for line in fh:
            if total >= limit:
                break
            rec = json.loads(line)
            text = rec["text"][: limit - total]
            out.append((rec["id"], text))
            total += len(text)
    return out


#: small LMs: site corpora are small, and the tagger reads their states at every prediction
LM_DEFAULTS: dict[str, Any] = {
    "embedding_dim": 32,
    "hidden_size": 128,
    "seq_len": 250,
    "batch_size": 32,
    "epochs": 5,
    "eval_every": 200,
    "threads": 1,
}


def pretrain_lms(opts: AdaptOptions, silver_path: Path, lm_dir: Path, progress: Progress) -> dict[str, Any]:
    """Forward and backward character LMs on the site's text, one after the other (one thread each).

    Each direction is resumable on its own: a finished one leaves ``lm/<direction>.done``; an interrupted
    one continues from its checkpoint. With a time budget, each direction gets half of
    ``lm_budget_share`` of it.
    """
    from clinideid.lm.data import UnlabelledText, heldout_split
    from clinideid.lm.train import train_charlm

    texts = site_texts(silver_path, opts.lm_chars)
    train, heldout = heldout_split([UnlabelledText(i, t) for i, t in texts], 0.05, opts.seed)
    budget = _budget_seconds(opts)
    cfg = {**LM_DEFAULTS, "seed": opts.seed, **opts.lm_config}
    if budget is not None:
        cfg["max_minutes"] = max(budget * opts.lm_budget_share / 2 / 60, 0.01)
    result: dict[str, Any] = {
        "characters": sum(len(t) for t in train),
        "heldout_characters": sum(map(len, heldout)),
    }
    for direction in ("forward", "backward"):
        out, done = lm_dir / direction, lm_dir / f"{direction}.done"
        if done.is_file():
            result[direction] = json.loads(done.read_text("utf-8"))
            progress(f"lm: {direction} done earlier, skipped")
            continue
        resume = (out / "checkpoint.pt").is_file()
        if not resume:
            shutil.rmtree(out, ignore_errors=True)
        res = train_charlm(
            train, heldout, cfg, out, direction, resume=resume, name=f"{opts.language}-site-{direction}",
            language=opts.language,
        )  # fmt: skip
        summary = {
            "best_bpc": round(res.best_bpc, 4),
            "chars_trained": res.chars_trained,
            "stop_reason": res.stop_reason,
            "seconds": round(res.seconds, 1),
        }
        _write(done, json.dumps(summary).encode("utf-8"))
        result[direction] = summary
        progress(f"lm: {direction} bits/char {res.best_bpc:.3f} ({res.stop_reason})")
    return result


def _train_neural(
    opts: AdaptOptions,
    train_docs: list[Document],
    dev_docs: list[Document],
    silver_path: Path,
    work: Path,
    model_dir: Path,
) -> dict[str, Any]:
    from clinideid.train.config import parse_train_config
    from clinideid.train.neural import train_neural

    section: dict[str, Any] = {"epochs": opts.epochs, "patience": opts.epochs, "threads": 1}
    unlabelled: list[Document] = []
    if opts.semi == "charlm":
        lm_dir = (work / "lm").resolve()
        section.update(rules=True, charlm={d: str(lm_dir / d) for d in ("forward", "backward")})
    else:  # cvt: the site's text (bounded) as unlabelled windows
        section["cvt"] = True
        unlabelled = [Document(i, t, opts.language) for i, t in site_texts(silver_path, opts.lm_chars)]
    section.update(opts.neural_config)
    cfg = parse_train_config(
        {
            "model": "neural",
            "label_scheme": "BIOES",
            "window_size": 100,
            "window_overlap": 20,
            "neural": section,
        }
    )
    scratch = work / "neural"
    shutil.rmtree(scratch, ignore_errors=True)
    start = time.perf_counter()
    res = train_neural(
        train_docs,
        dev_docs,
        cfg,
        out_dir=scratch,
        name=f"{opts.language}-adapted-neural",
        seed=opts.seed,
        language=opts.language,
        unlabelled_docs=unlabelled,
    )
    shutil.rmtree(model_dir, ignore_errors=True)
    os.replace(res.model_dir, model_dir)
    seconds = time.perf_counter() - start
    budget = _budget_seconds(opts)
    return {
        "model": "neural",
        "semi": opts.semi,
        "train_notes": len(train_docs),
        "held_back_notes": len(dev_docs),
        "unlabelled_notes": len(unlabelled),
        "epochs": opts.epochs,
        "best_epoch": res.best_epoch,
        "history": res.history,
        "time_budget_minutes": opts.time_budget_minutes,
        # the tagger's epochs are not cut by the budget (--epochs sets them): this says whether it held
        "within_budget": None if budget is None else seconds <= budget * (1 - opts.lm_budget_share),
        "held_back_strict_f1": round(res.dev_report["strict"].micro.f1, 4),
        "peak_memory_mb": round(res.peak_memory_mb, 1),
        "seconds": round(seconds, 1),
    }


def _pipeline_yaml(language: str, detector: dict[str, Any], model: str) -> str:
    """The language's packaged pipeline with its detectors replaced by the adapted hybrid."""
    res = resources.files("clinideid").joinpath("config", f"{language}.yaml")
    data = yaml.safe_load(res.read_text("utf-8"))
    data["detectors"] = [detector]
    head = (
        f"# Pipeline adapted by `clinideid adapt` for language {language!r}: the rules and a {model} model "
        "trained on\n"
        "# the site's silver-labelled notes plus synthetic notes, combined per label (see adapt.json).\n"
    )
    return head + yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def _choose(opts: AdaptOptions, held: list[Document], model_dir: Path) -> dict[str, Any]:
    from clinideid.config import parse_config
    from clinideid.detect.hybrid import HybridDetector

    start = time.perf_counter()
    hybrid = HybridDetector(
        rules={"type": "rules", "language": opts.language},
        models=[{"type": opts.model, "model": str(model_dir.resolve())}],
        language=opts.language,
        name="adapted",
    )
    scores = hybrid.score_sources(held)
    choice = hybrid.fit_per_label(held, scores)
    text = _pipeline_yaml(opts.language, hybrid.to_config(), opts.model)
    parse_config(yaml.safe_load(text), "adapted pipeline")  # never write a config deid would refuse
    _write(opts.out / "pipeline.yaml", text.encode("utf-8"))
    return {
        "per_label": {
            label: {"choice": choice[label], "strict_f1": {k: round(v, 4) for k, v in scores[label].items()}}
            for label in sorted(choice)
        },
        "seconds": round(time.perf_counter() - start, 1),
    }


# -- the workflow -------------------------------------------------------------------------------------------


def check_options(opts: AdaptOptions) -> None:
    if opts.language not in SUPPORTED:
        raise ConfigError(f"unknown language {opts.language!r}; supported: {', '.join(SUPPORTED)}")
    if not opts.notes.exists():
        raise InputError(f"notes path {opts.notes} does not exist")
    if opts.synthetic < 0:
        raise ConfigError("--synthetic must be 0 or more")
    if opts.time_budget_minutes is not None and opts.time_budget_minutes <= 0:
        raise ConfigError("--time-budget must be a positive number of minutes")
    if opts.model not in MODELS:
        raise ConfigError(f"--model must be one of {', '.join(MODELS)}, got {opts.model!r}")
    if opts.semi not in SEMI:
        raise ConfigError(f"--semi must be one of {', '.join(SEMI)}, got {opts.semi!r}")
    if opts.max_site_notes is not None and opts.max_site_notes < 1:
        raise ConfigError("--max-site-notes must be 1 or more")
    if opts.epochs < 1 or opts.lm_chars < 1000:
        raise ConfigError("--epochs must be 1 or more and --lm-chars 1000 or more")
    if opts.out.exists() and not opts.out.is_dir():
        raise ConfigError(f"output {opts.out} exists and is not a folder")


def adapt(opts: AdaptOptions, progress: Progress | None = None) -> dict[str, Any]:
    """Run (or resume) the adaptation; returns the report also written to ``OUT/adapt.json``."""
    say = progress or (lambda _msg: None)
    check_options(opts)
    work = opts.out / "work"
    work.mkdir(parents=True, exist_ok=True)
    state = _State(work, opts.settings(), opts.resume)
    silver_path, synth_path, model_dir = work / "silver.jsonl", work / "synthetic.jsonl", opts.out / "model"
    timings: dict[str, float] = {}
    skipped = []

    steps = opts.steps()

    def step(name: str, run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        number = f"[{steps.index(name) + 1}/{len(steps)}]"
        if state.done(name):
            say(f"{number} {name}: done earlier, skipped (--resume)")
            skipped.append(name)
            return state.steps[name]
        say(f"{number} {name}: running")
        t0 = time.perf_counter()
        result = run()
        timings[name] = round(time.perf_counter() - t0, 1)
        state.finish(name, {**result, "seconds": timings[name]})
        say(f"{number} {name}: done in {timings[name]:.1f}s")
        return state.steps[name]

    silver = step("silver", lambda: silver_label(opts, silver_path))
    synthetic = step("synthetic", lambda: make_synthetic(opts, synth_path))

    def held_and_rest() -> tuple[list[Document], list[Document]]:
        site = _read_docs(silver_path, opts.language)
        if opts.max_site_notes is not None and len(site) > opts.max_site_notes:
            keep = sorted(random.Random(opts.seed).sample(range(len(site)), opts.max_site_notes))
            site = [site[i] for i in keep]
        s_rest, s_held = split(site, opts.held_back, opts.seed)
        y_rest, y_held = split(_read_docs(synth_path, opts.language), opts.held_back, opts.seed + 1)
        return s_rest + y_rest, s_held + y_held

    language_models = (
        step("lm", lambda: pretrain_lms(opts, silver_path, work / "lm", say)) if "lm" in steps else None
    )
    rest: list[Document] | None = None
    held: list[Document] | None = None

    def train() -> dict[str, Any]:
        nonlocal rest, held
        rest, held = held_and_rest()
        if not any(d.spans for d in rest):
            raise InputError("no PHI found in the notes nor in synthetic notes: nothing to train on")
        if opts.model == "neural":
            return _train_neural(opts, rest, held, silver_path, work, model_dir)
        return _train(opts, rest, held, work, model_dir, say)

    training = step("train", train)

    def choose() -> dict[str, Any]:
        nonlocal held
        if held is None:
            _, held = held_and_rest()
        return _choose(opts, held, model_dir)

    choice = step("choose", choose)
    report = {
        "language": opts.language,
        "seed": opts.seed,
        "notes": {k: v for k, v in silver.items() if k != "seconds"},
        "synthetic": {k: v for k, v in synthetic.items() if k != "seconds"},
        **({"language_models": language_models} if language_models is not None else {}),
        "training": training,
        "per_label": choice["per_label"],
        "pipeline": "pipeline.yaml",
        "model": "model",
        "step_seconds": {name: state.steps[name]["seconds"] for name in steps},
        "resumed_steps": skipped,
        "config_digest": hashlib.sha256((opts.out / "pipeline.yaml").read_bytes()).hexdigest(),
    }
    _write(opts.out / "adapt.json", (json.dumps(report, indent=2) + "\n").encode("utf-8"))
    return report
