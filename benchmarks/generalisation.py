"""How well the default pipelines generalise: notes held out by writing set, then corpora nobody fitted to.

Usage (from the repository root)::

    .venv/bin/python benchmarks/generalisation.py --markdown                    # everything (about 40 min)
    .venv/bin/python benchmarks/generalisation.py --skip-corpora --work /tmp/gen  # notes only, models kept
    .venv/bin/python benchmarks/generalisation.py --json gen.json --shuffles 10000

**Notes held out by writing set** (``../shared/corpora/notes``, training data): fold ``k`` trains the
multilingual notes CRF (``clinideid.train.notes``: the shipped model's exact configuration) on every
document except the ``k``-th writing set of each language, and predicts that set. Every document is
predicted by a model that never saw its set. Three systems are scored on those predictions:

- ``rules``: the rules-only pipeline of the language (``--pipeline rules``);
- ``learned``: the CRF alone (it reads the rule hits as features), with its recall threshold;
- ``combined``: the CRF plus the rule spans of labels the rules find precisely (a per-label union).

The threshold and the union labels are **chosen without the fold they are applied to** (nested): for fold
``k``, on the held-out predictions of the other folds, the threshold with the highest token recall at token
precision >= ``--min-precision`` (default 0.925: recall first, at the 0.92 precision a useful text needs), and the labels whose rule
spans reach ``--union-precision`` there. The choice made on all folds is printed as the recommendation for
``config/<lang>.yaml``. Reported per language, per style group and per gold label: token binary precision /
recall (a gold token counts as found when any detected span touches it), strict entity P/R/F1 at binary
level, and approximate-randomization p-values (document swaps) of learned and combined against rules.

**Corpora** (``--skip-corpora`` to leave out): the packaged pipelines (``default`` and ``rules``, plus any
``<lang>-<name>.yaml`` in ``--config-dir``) on the challenge notes (en, de, it, ru: evaluation only; the
rules were written while reading them, so rule figures there are fitted), MEDDOCAN dev (es) and EDS-Pseudo
(fr, the whole file). The shipped notes model never saw any of them.

**Cost**: the shipped model's size, its training time and peak memory (``model.json``), each default
pipeline's load time and throughput (characters per CPU second, one thread, detection as ``deid`` runs it).

No document text is printed. Models trained for the folds go to ``--work`` (a temporary folder by default).
"""

from __future__ import annotations

import argparse
import bisect
import json
import resource
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from challenge import STYLE_GROUPS, style_groups, table
from clinideid.config import default_config, load_config, parse_config
from clinideid.detect.crf import CRFModel
from clinideid.document import Document, Span
from clinideid.evaluate import evaluate
from clinideid.evaluate.significance import approximate_randomization
from clinideid.pipeline import Deidentifier
from clinideid.text import Token, tokenize
from clinideid.train.notes import (
    LANGUAGES,
    first_fold_holding_out,
    read_notes,
    set_folds,
    train_notes_model,
    writing_set,
)

CORPORA = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"
THRESHOLDS = (0.5, 0.4, 0.3, 0.25, 0.2, 0.15, 0.1, 0.07, 0.05)
KEY = b"generalisation benchmark key 32b"
SYSTEMS = ("rules", "learned", "combined")
#: rule labels with fewer gold-token hits than this on the training folds are never unioned (too little
#: evidence that they are precise)
MIN_UNION_SUPPORT = 20
#: the shipped notes model the default configs name (its hybrid is the one the study replaces per fold)
NOTES_MODEL = "notes-multi-crf"


# ---- per-document predictions --------------------------------------------------------------------------


class Held:
    """One held-out document: its tokens, which are gold PHI, the model's PHI probability per token, and
    the rule spans of the rules-only pipeline (with their labels)."""

    def __init__(self, doc: Document, fold: int, phi: list[float], rule_spans: list[Span]) -> None:
        self.doc = doc
        self.fold = fold
        self.tokens = tokenize(doc.text)
        self.gold = covered(self.tokens, doc.spans)
        self.phi = phi
        self.rule_spans = rule_spans
        self.rule_tokens = {lab: covered(self.tokens, [s for s in rule_spans if s.label == lab])
                            for lab in {s.label for s in rule_spans}}  # fmt: skip


def covered(tokens: Sequence[Token], spans: Iterable[Span]) -> np.ndarray:
    """Which tokens a span touches."""
    ends = [t.end for t in tokens]
    out = np.zeros(len(tokens), dtype=bool)
    for s in spans:
        i = bisect.bisect_right(ends, s.start)
        while i < len(tokens) and tokens[i].start < s.end:
            out[i] = True
            i += 1
    return out


def counts(gold: np.ndarray, pred: np.ndarray) -> tuple[int, int, int]:
    return int((gold & pred).sum()), int((~gold & pred).sum()), int((gold & ~pred).sum())


def p_r(tp: int, fp: int, fn: int) -> tuple[float, float]:
    return (tp / (tp + fp) if tp + fp else 1.0), (tp / (tp + fn) if tp + fn else 1.0)


# ---- choosing the threshold and the union labels ----------------------------------------------------------


def choose(held: Sequence[Held], min_precision: float, union_precision: float) -> dict[str, Any]:
    """The union labels and the threshold chosen on ``held`` (see the module docstring)."""
    rule_counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for h in held:
        for lab, mask in h.rule_tokens.items():
            rule_counts[lab][0] += int((mask & h.gold).sum())
            rule_counts[lab][1] += int((mask & ~h.gold).sum())
    union = sorted(
        lab
        for lab, (good, bad) in rule_counts.items()
        if good >= MIN_UNION_SUPPORT and good / (good + bad) >= union_precision
    )
    scores = []
    for th in THRESHOLDS:
        tp = fp = fn = 0
        for h in held:
            pred = np.asarray(h.phi) >= th
            for lab in union:
                pred = pred | h.rule_tokens.get(lab, False)
            a, b, c = counts(h.gold, pred)
            tp, fp, fn = tp + a, fp + b, fn + c
        scores.append((th, *p_r(tp, fp, fn)))
    ok = [s for s in scores if s[1] >= min_precision]
    th = max(ok, key=lambda s: (s[2], s[1]))[0] if ok else max(scores, key=lambda s: s[1])[0]
    return {"threshold": th, "union": union, "grid": [[t, round(p, 4), round(r, 4)] for t, p, r in scores]}


# ---- pipelines -------------------------------------------------------------------------------------------


def notes_pipeline(language: str, model_dir: Path | str, threshold: float, union: Sequence[str]) -> Any:
    """The default pipeline of ``language`` with this model, threshold and union labels (``union`` empty:
    the learned system)."""
    data = default_config(language).model_dump()
    detectors = []
    for spec in data["detectors"]:
        if spec.get("type") == "hybrid" and any(
            isinstance(m, dict) and m.get("model") == NOTES_MODEL for m in spec.get("models", [])
        ):
            spec = {
                **spec,
                "models": [{"type": "crf", "model": str(model_dir), "threshold": threshold}],
                "strategy": "per_label",
                "default": "model",
                "per_label": {lab: "union" for lab in union},
            }
        detectors.append(spec)
    data["detectors"] = detectors
    return parse_config(data, f"{language} notes pipeline")


def detect_docs(cfg: Any, docs: Sequence[Document]) -> tuple[list[Document], float]:
    """System documents (gold texts with detected spans) and the CPU seconds detection took."""
    deid = Deidentifier(cfg, KEY)
    cpu = time.process_time()
    out = [d.with_spans(deid.detect(Document(d.id, d.text, d.language, d.metadata))[0]) for d in docs]
    return out, time.process_time() - cpu


# ---- scores ----------------------------------------------------------------------------------------------


def doc_counts(gold: Sequence[Document], system: Sequence[Document]) -> np.ndarray:
    """Per-document token-binary counts ``(n_docs, 1, 3)`` (for approximate randomization)."""
    rows = []
    for g, s in zip(gold, system, strict=True):
        toks = tokenize(g.text)
        rows.append([counts(covered(toks, g.spans), covered(toks, s.spans))])
    return np.asarray(rows, dtype=np.int64)


def scores(gold: Sequence[Document], system: Sequence[Document]) -> dict[str, Any]:
    c = doc_counts(gold, system).sum(axis=(0, 1))
    p, r = p_r(*map(int, c))
    strict = evaluate(gold, system, level="binary", modes=["strict"]).results["strict"].micro
    return {
        "token_precision": round(p, 4),
        "token_recall": round(r, 4),
        "token_f1": round(2 * p * r / (p + r), 4) if p + r else 0.0,
        "entity_precision": round(strict.precision, 4),
        "entity_recall": round(strict.recall, 4),
        "entity_f1": round(strict.f1, 4),
        "tp": int(c[0]),
        "fp": int(c[1]),
        "fn": int(c[2]),
    }


def p_values(gold: Sequence[Document], a: Sequence[Document], b: Sequence[Document], shuffles: int) -> dict:
    ca, cb = doc_counts(gold, a), doc_counts(gold, b)
    return {
        metric: round(approximate_randomization(ca, cb, metric, shuffles=shuffles).p_value, 4)
        for metric in ("micro_recall", "micro_precision")
    }


def per_label_recall(gold: Sequence[Document], system: Sequence[Document]) -> dict[str, list[int]]:
    """Gold label -> [found tokens, gold tokens]."""
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for g, s in zip(gold, system, strict=True):
        toks = tokenize(g.text)
        found = covered(toks, s.spans)
        for span in g.spans:
            mask = covered(toks, [span])
            out[span.label][0] += int((mask & found).sum())
            out[span.label][1] += int(mask.sum())
    return out


# ---- the notes study -------------------------------------------------------------------------------------


def train_folds(notes: Mapping[str, list[Document]], folds: Sequence[Mapping[str, str]], work: Path) -> list:
    models = []
    for k, held in enumerate(folds):
        target = work / f"fold{k}"
        if not (target / "model.json").is_file():
            train = [d for lang, docs in notes.items() for d in docs if writing_set(d) != held[lang]]
            print(f"fold {k}: training on {len(train)} documents (held out {held})", file=sys.stderr)
            shutil.rmtree(target, ignore_errors=True)
            train_notes_model(train, target, f"notes-fold{k}")
        models.append(target)
    return models


def held_out(
    notes: Mapping[str, list[Document]], folds: Sequence[Mapping[str, str]], models: Sequence[Path]
) -> dict[str, list[Held]]:
    loaded = [CRFModel.load(m) for m in models]
    out: dict[str, list[Held]] = {}
    for lang, docs in notes.items():
        rules = Deidentifier(default_config(lang, "rules"), KEY)
        out[lang] = []
        for doc in docs:
            k = first_fold_holding_out(folds, lang, writing_set(doc))
            tokens, phi = loaded[k].token_phi(doc)
            assert [t.start for t in tokens] == [t.start for t in tokenize(doc.text)]
            out[lang].append(Held(doc, k, phi, rules.detect(doc)[0]))
    return out


def notes_study(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    notes = read_notes(args.corpora / "notes", args.languages)
    folds = set_folds(notes)
    models = train_folds(notes, folds, work)
    held = held_out(notes, folds, models)
    result: dict[str, Any] = {"folds": folds, "languages": {}}
    for lang in args.languages:
        rows = held[lang]
        gold = [h.doc for h in rows]
        systems: dict[str, list[Document]] = {"rules": [h.doc.with_spans(h.rule_spans) for h in rows]}
        choices = {}
        for system in ("learned", "combined"):
            out_docs: dict[str, Document] = {}
            for k in sorted({h.fold for h in rows}):
                others = [h for h in rows if h.fold != k]
                choice = choose(others, args.min_precision, args.union_precision)
                if system == "learned":
                    choice["union"] = []
                choices.setdefault(system, {})[k] = choice
                cfg = notes_pipeline(lang, models[k], choice["threshold"], choice["union"])
                mine = [h.doc for h in rows if h.fold == k]
                for d in detect_docs(cfg, mine)[0]:
                    out_docs[d.id] = d
            systems[system] = [out_docs[d.id] for d in gold]
        overall = choose(rows, args.min_precision, args.union_precision)
        groups = {d.id: style_groups(str(d.metadata.get("style", ""))) for d in gold}
        lang_result: dict[str, Any] = {
            "documents": len(gold),
            "sets": sorted({writing_set(d) for d in gold}),
            "scores": {s: scores(gold, systems[s]) for s in SYSTEMS},
            "p_vs_rules": {s: p_values(gold, systems["rules"], systems[s], args.shuffles) for s in SYSTEMS[1:]},
            "choices_per_fold": choices,
            "recommended": overall,
            "per_set": {},
            "per_style_group": {},
            "per_label": {s: per_label_recall(gold, systems[s]) for s in SYSTEMS},
        }
        for name in lang_result["sets"]:
            idx = [i for i, d in enumerate(gold) if writing_set(d) == name]
            lang_result["per_set"][name] = {
                s: scores([gold[i] for i in idx], [systems[s][i] for i in idx]) for s in SYSTEMS
            }
        for group in STYLE_GROUPS:
            idx = [i for i, d in enumerate(gold) if group in groups[d.id]]
            if idx:
                lang_result["per_style_group"][group] = {
                    "documents": len(idx),
                    **{s: scores([gold[i] for i in idx], [systems[s][i] for i in idx]) for s in SYSTEMS},
                }
        result["languages"][lang] = lang_result
        print(f"notes {lang}: done", file=sys.stderr, flush=True)
    return result


# ---- other corpora ---------------------------------------------------------------------------------------


def corpus_docs(name: str, corpora: Path) -> tuple[str, list[Document]]:
    from clinideid.formats import read_corpus
    from clinideid.train.data import read_training_corpus

    if name in ("en", "de", "it", "ru"):
        docs = read_corpus(corpora / "challenge" / f"{name}.jsonl", "jsonl")
        return name, [Document(d.id, d.text, name, d.metadata, d.spans) for d in docs]
    if name == "meddocan-dev":
        docs = read_training_corpus(corpora / "meddocan" / "dev", "brat", "meddocan", "canonical")
        return "es", [Document(d.id, d.text, "es", d.metadata, d.spans) for d in docs]
    if name == "eds-pseudo":
        docs = read_training_corpus(corpora / "eds-pseudo" / "train.jsonl", "jsonl", "eds_pseudo", "canonical")
        return "fr", [Document(d.id, d.text, "fr", d.metadata, d.spans) for d in docs]
    raise ValueError(name)


def candidate_configs(language: str, config_dir: Path | None) -> dict[str, Any]:
    out = {"rules": default_config(language, "rules"), "default": default_config(language)}
    if config_dir is not None:
        for path in sorted(config_dir.glob(f"{language}-*.yaml")):
            out[path.stem.split("-", 1)[1]] = load_config(path)
    return out


def corpora_study(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    names = [n for n in ("en", "de", "it", "ru", "meddocan-dev", "eds-pseudo") if n in args.corpus_names]
    for name in names:
        lang, gold = corpus_docs(name, args.corpora)
        systems = {k: detect_docs(cfg, gold)[0] for k, cfg in candidate_configs(lang, args.config_dir).items()}
        out[name] = {
            "language": lang,
            "documents": len(gold),
            "scores": {k: scores(gold, s) for k, s in systems.items()},
            "p_vs_rules": {
                k: p_values(gold, systems["rules"], s, args.shuffles) for k, s in systems.items() if k != "rules"
            },
        }
        print(f"corpus {name}: done", file=sys.stderr, flush=True)
    return out


# ---- cost ------------------------------------------------------------------------------------------------


def cost_study(args: argparse.Namespace) -> dict[str, Any]:
    from clinideid.models import load_metadata, resolve_model_path

    out: dict[str, Any] = {"pipelines": {}}
    notes = read_notes(args.corpora / "notes", args.languages)
    model_names = set()
    for lang in args.languages:
        t0 = time.perf_counter()
        deid = Deidentifier(default_config(lang), KEY)
        deid.detect(Document("warm-up", "Seen 12/03/2020 by Dr. Warm.", lang))
        load = time.perf_counter() - t0
        _, cpu = detect_docs(default_config(lang), notes[lang][:1])  # caches warm
        docs = notes[lang]
        _, cpu = detect_docs(default_config(lang), docs)
        chars = sum(len(d.text) for d in docs)
        out["pipelines"][lang] = {"load_seconds": round(load, 2), "chars_per_cpu_second": round(chars / cpu)}
        for spec in default_config(lang).detectors:
            for m in spec.get("models", []):
                model_names.add(m["model"])
    out["models"] = {}
    for name in sorted(model_names):
        path = resolve_model_path(name)
        meta = load_metadata(path)
        metrics = json.loads((path / "metrics.json").read_text("utf-8")) if (path / "metrics.json").is_file() else {}
        out["models"][name] = {
            "bytes_on_disk": sum(p.stat().st_size for p in path.iterdir()),
            "training_documents": meta.training_data.documents,
            "training_seconds": metrics.get("training_seconds"),
            "training_peak_memory_mb": metrics.get("peak_memory_mb"),
        }
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return out


# ---- report ----------------------------------------------------------------------------------------------


def _pr(s: Mapping[str, Any]) -> str:
    return f"{s['token_precision']:.3f} / {s['token_recall']:.3f}"


def report(result: Mapping[str, Any], markdown: bool) -> str:
    out: list[str] = []

    def section(title: str) -> None:
        out.append(("\n### " if markdown else "\n== ") + title + ("" if markdown else " =="))

    notes = result.get("notes")
    if notes:
        section("Notes held out by writing set: token binary P / R, entity strict F1 (binary), p vs rules")
        rows = []
        for lang, r in notes["languages"].items():
            sc, pv = r["scores"], r["p_vs_rules"]
            rows.append([
                lang, str(r["documents"]), _pr(sc["rules"]), _pr(sc["learned"]), _pr(sc["combined"]),
                " / ".join(f"{sc[s]['entity_f1']:.3f}" for s in SYSTEMS),
                f"{pv['learned']['micro_recall']:.4f} / {pv['combined']['micro_recall']:.4f}",
                f"{pv['learned']['micro_precision']:.4f} / {pv['combined']['micro_precision']:.4f}",
            ])  # fmt: skip
        out.append(table(["lang", "docs", "rules P / R", "learned P / R", "combined P / R",
                          "entity F1 rules / learned / combined", "p recall (learned / combined)",
                          "p precision (learned / combined)"], rows, markdown))  # fmt: skip
        section("Notes: combined token P / R per writing set (rules in brackets)")
        rows = [
            [lang, name, _pr(s["combined"]), f"({_pr(s['rules'])})"]
            for lang, r in notes["languages"].items()
            for name, s in r["per_set"].items()
        ]
        out.append(table(["lang", "set", "combined P / R", "(rules)"], rows, markdown))
        section("Notes: token P / R per style group, combined (rules in brackets)")
        langs = list(notes["languages"])
        rows = []
        for group in STYLE_GROUPS:
            row = [group]
            for lang in langs:
                g = notes["languages"][lang]["per_style_group"].get(group)
                row.append("—" if g is None else f"{_pr(g['combined'])} ({_pr(g['rules'])}) n={g['documents']}")
            rows.append(row)
        out.append(table(["style group", *langs], rows, markdown))
        section("Notes: token recall per gold label, all languages (rules / learned / combined)")
        totals: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
        for r in notes["languages"].values():
            for s in SYSTEMS:
                for lab, (found, all_) in r["per_label"][s].items():
                    totals[lab][s][0] += found
                    totals[lab][s][1] += all_
        rows = []
        for lab in sorted(totals, key=lambda x: -totals[x]["rules"][1]):
            t = totals[lab]
            rows.append([lab, str(t["rules"][1]), *(f"{t[s][0] / t[s][1]:.3f}" if t[s][1] else "—" for s in SYSTEMS)])
        out.append(table(["label", "gold tokens", *SYSTEMS], rows, markdown))
        section("Recommended settings (chosen on all folds) for config/<lang>.yaml")
        rows = [
            [lang, str(r["recommended"]["threshold"]), ", ".join(r["recommended"]["union"]) or "—"]
            for lang, r in notes["languages"].items()
        ]
        out.append(table(["lang", "threshold", "union labels"], rows, markdown))
    corpora = result.get("corpora")
    if corpora:
        section("Other corpora: token binary P / R, entity strict F1 (binary), p vs rules (recall, precision)")
        rows = []
        for name, r in corpora.items():
            for k, s in r["scores"].items():
                pv = r["p_vs_rules"].get(k)
                rows.append([name, k, _pr(s), f"{s['entity_f1']:.3f}",
                             "—" if pv is None else f"{pv['micro_recall']:.4f} / {pv['micro_precision']:.4f}"])  # fmt: skip
        out.append(table(["corpus", "pipeline", "token P / R", "entity F1", "p (R / P)"], rows, markdown))
    cost = result.get("cost")
    if cost:
        section("Cost of the default pipelines (one thread)")
        rows = [[lang, f"{c['load_seconds']:.2f}", f"{c['chars_per_cpu_second']:,}"] for lang, c in cost["pipelines"].items()]
        out.append(table(["lang", "load s", "chars / CPU s"], rows, markdown))
        rows = [
            [name, f"{m['bytes_on_disk']:,}", str(m["training_documents"]), str(m["training_seconds"]),
             str(m["training_peak_memory_mb"])]
            for name, m in cost["models"].items()
        ]  # fmt: skip
        out.append(table(["model", "bytes on disk", "training docs", "training s", "training peak MB"], rows, markdown))
        out.append(f"peak memory of this benchmark: {cost['peak_rss_mb']} MB")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", type=Path, default=CORPORA, help="folder with notes/, challenge/, meddocan/, eds-pseudo/")
    ap.add_argument("--languages", nargs="+", default=list(LANGUAGES), choices=LANGUAGES)
    ap.add_argument("--work", type=Path, help="where the fold models are trained (kept; reused when present)")
    ap.add_argument("--min-precision", type=float, default=0.925)
    ap.add_argument("--union-precision", type=float, default=0.97)
    ap.add_argument("--shuffles", type=int, default=10000)
    ap.add_argument("--skip-notes", action="store_true")
    ap.add_argument("--skip-corpora", action="store_true")
    ap.add_argument("--skip-cost", action="store_true")
    ap.add_argument(
        "--corpus-names", nargs="+", default=["en", "de", "it", "ru", "meddocan-dev", "eds-pseudo"],
        help="which other corpora to score (challenge en/de/it/ru, meddocan-dev, eds-pseudo)",
    )  # fmt: skip
    ap.add_argument("--config-dir", type=Path, help="extra candidate pipelines <lang>-<name>.yaml to score")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="clinideid-generalisation-"))
    work.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {"settings": {k: str(v) for k, v in vars(args).items()}}
    started = time.perf_counter()
    if not args.skip_notes:
        result["notes"] = notes_study(args, work)
    if not args.skip_corpora:
        result["corpora"] = corpora_study(args)
    if not args.skip_cost:
        result["cost"] = cost_study(args)
    result["wall_seconds"] = round(time.perf_counter() - started)
    print(report(result, args.markdown))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2, default=_jsonable), "utf-8")
    return 0


def _jsonable(x: Any) -> Any:
    if isinstance(x, (np.integer, np.floating)):
        return x.item()
    if isinstance(x, (set, frozenset)):
        return sorted(x)
    if isinstance(x, Counter | defaultdict):
        return dict(x)
    raise TypeError(type(x).__name__)


if __name__ == "__main__":
    sys.exit(main())
