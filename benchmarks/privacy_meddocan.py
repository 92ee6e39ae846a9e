"""Privacy-preserving training data on MEDDOCAN: what a tagger keeps, what an attacker gets.

Usage (from the repository root; one torch thread, ~25 minutes on one shared core)::

    nice -n 10 .venv/bin/python benchmarks/privacy_meddocan.py --out privacy_results.json
    .venv/bin/python benchmarks/privacy_meddocan.py --markdown privacy_results.json   # tables only

Trains on a subset of MEDDOCAN train (``--train-docs``, default 150 of 500 documents) and scores on the
whole dev set (250 documents). Word vectors: skip-gram (``clinideid.train.embeddings``, dim 100) on the
text of all 500 training documents (unlabelled text). The probe is the same small BiLSTM-CRF
(``clinideid.privacy.tagger``, hidden 64, 3 epochs, frozen inputs) for every row; the score is binary
HIPAA token F1 on dev (a token is PHI when it overlaps a gold span whose label Safe Harbor requires
removing). Rows:

(a) raw word vectors; (b) the train corpus pseudonymised with gold surrogates (``Pseudonymizer``);
(c) PHI vectors replaced by random vectors, Gaussian noise on all vectors (σ = the vectors' std), and
keyed N-nearest-neighbour substitution in the text for N ∈ {5, 50, 100, 500, 1000};
(d) private representations of size 50/100/300 trained with Feutry's alternation or DANN: the
tagger trained with the representation (on noisy dev representations), and a fresh probe trained on the
released (noisy) train representations.

Attacks: for text-level rows the discriminator (original vs pseudonymised sequences, held-out accuracy);
for vector-level rows the retrained adversary (accuracy) and the known-plaintext lookup (top-1 / top-10
over PHI tokens), on dev. Results are written after every row (``--out``), so a cut run keeps its rows.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from clinideid.formats import read_corpus
from clinideid.privacy.audit import adversary_attack, discriminator_attack, lookup_attack
from clinideid.privacy.data import WordVectors, sequences_from_documents
from clinideid.privacy.perturb import (
    NeighbourTable,
    gaussian_noise,
    neighbour_pseudonymize,
    phi_mask,
    random_phi_vectors,
)
from clinideid.privacy.pseudonymize import Pseudonymizer
from clinideid.privacy.release import represent_all
from clinideid.privacy.representation import PrivateConfig, train_private
from clinideid.privacy.tagger import predict, token_scores, train_probe
from clinideid.train.embeddings import train_word2vec

SCHEME = "meddocan"


def key_for(seed: int) -> bytes:
    return hashlib.sha256(f"privacy benchmark key {seed}".encode()).digest()


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.out = Path(args.out)
        self.rows: list[dict] = json.loads(self.out.read_text())["rows"] if self.out.exists() else []
        corpus = Path(args.corpus)
        train_all = read_corpus(corpus / "train", "brat")
        self.dev = read_corpus(corpus / "dev", "brat")
        self.train = train_all[: args.train_docs]
        vec_path = self.out.with_suffix(".vectors.txt")
        if not vec_path.exists():
            train_word2vec(train_all, vec_path, dim=100, epochs=5, min_count=1, seed=1)
        self.vectors = WordVectors.load(vec_path)
        self.std = float(self.vectors.matrix[:-1].std())
        self.train_seqs = sequences_from_documents(self.train, SCHEME)
        self.dev_seqs = sequences_from_documents(self.dev, SCHEME)
        self.dev_x = [self.vectors.embed(s.words) for s in self.dev_seqs]
        self.dev_tags = [s.tags for s in self.dev_seqs]

    def done(self, name: str, seed: int) -> bool:
        return any(r["row"] == name and r["seed"] == seed for r in self.rows)

    def save(self, row: dict) -> None:
        self.rows.append(row)
        data = {"settings": vars(self.args), "rows": self.rows}
        tmp = self.out.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1))
        tmp.replace(self.out)
        print(json.dumps({k: v for k, v in row.items() if k != "history"}), flush=True)

    def probe(self, xs: list[np.ndarray], tags: list, seed: int, dev_x: list | None = None) -> dict:
        model = train_probe(xs, tags, epochs=self.args.epochs, seed=seed)
        return token_scores(self.dev_tags, predict(model, dev_x or self.dev_x)).to_dict()

    def text_row(self, name: str, docs: list, seed: int, attack: bool = True, **extra: object) -> None:
        t = time.time()
        seqs = sequences_from_documents(docs, SCHEME)
        row = {"row": name, "seed": seed, **extra,
               "dev": self.probe([self.vectors.embed(s.words) for s in seqs], [s.tags for s in seqs], seed)}  # fmt: skip
        if attack:
            d = discriminator_attack(self.train, docs, self.vectors, label_scheme=SCHEME, seed=seed)
            row["discriminator_accuracy"], row["discriminator_ci"] = d.value, [d.ci_low, d.ci_high]
        row["seconds"] = round(time.time() - t, 1)
        self.save(row)

    def vector_attacks(self, represent) -> dict:
        adv = adversary_attack(self.dev_seqs, represent, self.vectors, seed=1)
        top1, top10 = lookup_attack(self.dev_seqs, represent, seed=1)
        return {"adversary_accuracy": adv.value, "adversary_ci": [adv.ci_low, adv.ci_high],
                "lookup_top1": top1.value, "lookup_top10": top10.value, "lookup_chance_top1": top1.chance}  # fmt: skip

    # --- rows ---------------------------------------------------------------------------------------------

    def raw(self, seed: int, docs: int | None = None) -> None:
        name = "raw" if docs is None else f"raw@{docs}"
        if self.done(name, seed):
            return
        t = time.time()
        seqs = self.train_seqs if docs is None else [s for s in self.train_seqs if s.doc < docs]
        row = {"row": name, "seed": seed, "train_docs": docs or len(self.train),
               "dev": self.probe([self.vectors.embed(s.words) for s in seqs], [s.tags for s in seqs], seed)}  # fmt: skip
        if docs is None and seed == 1:
            row.update(self.vector_attacks(self.vectors.embed))
        row["seconds"] = round(time.time() - t, 1)
        self.save(row)

    def gold(self, seed: int) -> None:
        if not self.done("gold-surrogates", seed):
            pseudo = Pseudonymizer(key_for(seed), label_scheme=SCHEME, language="es")
            self.text_row("gold-surrogates", list(pseudo.corpus(self.train, on_error="skip")), seed)

    def neighbours(self, n: int, seed: int, docs: int | None = None) -> None:
        name = f"neighbours N={n}" + ("" if docs is None else f"@{docs}")
        if self.done(name, seed):
            return
        train = self.train if docs is None else self.train[:docs]
        pseudo = list(
            neighbour_pseudonymize(train, NeighbourTable(self.vectors, n), key_for(seed), on_error="skip")
        )
        if docs is None:
            self.text_row(name, pseudo, seed, n=n)
        else:
            self.text_row(name, pseudo, seed, attack=False, n=n, train_docs=docs)

    def random_phi(self, seed: int) -> None:
        if self.done("random PHI vectors", seed):
            return
        t = time.time()
        rng = np.random.default_rng(seed)
        xs = [
            random_phi_vectors(self.vectors.embed(s.words), phi_mask(s.tags), rng, self.std)
            for s in self.train_seqs
        ]
        row = {
            "row": "random PHI vectors",
            "seed": seed,
            "dev": self.probe(xs, [s.tags for s in self.train_seqs], seed),
        }
        row["seconds"] = round(time.time() - t, 1)
        self.save(row)

    def noise(self, sigma_rel: float, seed: int) -> None:
        name = f"gaussian noise σ={sigma_rel:g}·std"
        if self.done(name, seed):
            return
        t = time.time()
        rng = np.random.default_rng(seed)
        sigma = sigma_rel * self.std
        xs = [gaussian_noise(self.vectors.embed(s.words), sigma, rng) for s in self.train_seqs]
        dev_x = [gaussian_noise(x, sigma, rng) for x in self.dev_x]
        row = {
            "row": name,
            "seed": seed,
            "dev": self.probe(xs, [s.tags for s in self.train_seqs], seed, dev_x),
        }
        row.update(self.vector_attacks(lambda w: gaussian_noise(self.vectors.embed(w), sigma, rng)))
        row["seconds"] = round(time.time() - t, 1)
        self.save(row)

    def private(self, size: int, method: str, seed: int, min_sigma: float = 0.0) -> None:
        name = f"private {size} {method}" + (f" σ≥{min_sigma:g}" if min_sigma else "")
        if self.done(name, seed):
            return
        t = time.time()
        cfg = PrivateConfig(size=size, method=method, seed=seed, lam=self.args.lam, init_sigma=self.args.init_sigma,
                            min_sigma=min_sigma,
                            epochs_deid=1, epochs_adv=1, epochs_joint=2, label_scheme=SCHEME)  # fmt: skip
        model = train_private(self.train_seqs, self.vectors, cfg)
        train_s = round(time.time() - t, 1)
        dev_r = represent_all(model, self.dev_seqs, seed=100 + seed)
        head = token_scores(self.dev_tags, predict(model.head, dev_r)).to_dict()
        released = represent_all(model, self.train_seqs, seed=200 + seed)
        probe = self.probe(released, [s.tags for s in self.train_seqs], seed, dev_r)
        gen = torch.Generator().manual_seed(300 + seed)
        row = {"row": name, "seed": seed, "size": size, "method": method, "sigma": model.encoder.sigma,
               "dev": head, "dev_probe_on_release": probe, "train_seconds": train_s,
               "training_adversary_accuracy": model.history[-1].get("adversary_accuracy"),
               "history": model.history}  # fmt: skip
        row.update(self.vector_attacks(lambda w: model.represent(w, noise=True, generator=gen)))
        row["seconds"] = round(time.time() - t, 1)
        self.save(row)


def run(args: argparse.Namespace) -> None:
    torch.set_num_threads(1)
    b = Bench(args)
    b.raw(1)
    b.neighbours(100, 1)
    b.private(100, "feutry", 1)
    b.private(100, "dann", 1)
    b.gold(1)
    b.random_phi(1)
    b.noise(1.0, 1)
    for n in (5, 50, 500, 1000):
        b.neighbours(n, 1)
    for size in (50, 300):
        b.private(size, "feutry", 1)
        b.private(size, "dann", 1)
    for seed in (2, 3):
        b.raw(seed)
        b.neighbours(100, seed)
    for docs in (25, 50, 100):
        b.raw(1, docs)
        b.neighbours(100, 1, docs)
    for seed in (2,):
        b.private(100, "feutry", seed)
        b.private(100, "dann", seed)
    b.private(100, "feutry", 1, min_sigma=1.5)  # a noise floor: what hiding from the lookup costs


def _fmt(values: list[float]) -> str:
    if not values:
        return "–"
    if len(values) == 1:
        return f"{100 * values[0]:.1f}"
    return f"{100 * statistics.mean(values):.1f} ± {100 * statistics.stdev(values):.1f} (n={len(values)})"


def markdown(path: Path) -> str:
    rows = json.loads(path.read_text())["rows"]
    names: list[str] = []
    for r in rows:
        if r["row"] not in names:
            names.append(r["row"])
    lines = ["| training data | dev binary HIPAA token F1 | probe on release | adversary acc. | lookup top-1 / top-10 | discriminator acc. |",
             "|---|---:|---:|---:|---:|---:|"]  # fmt: skip
    for name in [n for n in names if "@" not in n]:
        rs = [r for r in rows if r["row"] == name]

        def col(key: str, rs: list = rs) -> list[float]:
            return [r[key] for r in rs if r.get(key) is not None]

        f1 = _fmt([r["dev"]["f1"] for r in rs])
        probe = _fmt([r["dev_probe_on_release"]["f1"] for r in rs if "dev_probe_on_release" in r])
        adv = _fmt(col("adversary_accuracy"))
        look = f"{_fmt(col('lookup_top1'))} / {_fmt(col('lookup_top10'))}" if col("lookup_top1") else "–"
        disc = _fmt(col("discriminator_accuracy"))
        lines.append(f"| {name} | {f1} | {probe} | {adv} | {look} | {disc} |")
    curve = sorted({r["train_docs"] for r in rows if "@" in r["row"]})
    if curve:
        full = {r["row"]: r["dev"]["f1"] for r in rows if r["seed"] == 1}
        lines += ["", "| training documents | raw | neighbours N=100 |", "|---:|---:|---:|"]
        for n in [*curve, None]:
            raw = full.get("raw" if n is None else f"raw@{n}")
            nb = full.get("neighbours N=100" if n is None else f"neighbours N=100@{n}")
            cells = [f"{100 * v:.1f}" if v is not None else "–" for v in (raw, nb)]
            lines.append(f"| {n or rows[0].get('train_docs', 'all')} | {cells[0]} | {cells[1]} |")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", default="/work/shared/corpora/meddocan")
    p.add_argument("--out", default="privacy_results.json")
    p.add_argument("--train-docs", type=int, default=150)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--lam", type=float, default=10.0)
    p.add_argument("--init-sigma", type=float, default=0.5)
    p.add_argument("--markdown", type=Path, help="Print the tables of a results file and exit.")
    args = p.parse_args()
    if args.markdown:
        print(markdown(args.markdown))
        return
    run(args)
    print(markdown(Path(args.out)))


if __name__ == "__main__":
    main()
