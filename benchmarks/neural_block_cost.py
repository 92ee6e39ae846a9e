"""Each block's share of the neural tagger's cost, measured on synthetic batches (no corpus needed).

    python benchmarks/neural_block_cost.py [--threads 1] [--batch 16] [--tokens 100] [--repeats 30]

For each configuration (baseline, + each block, all) the script times a training step (forward, CRF loss,
backward, Adam step) and an inference pass (emissions + Viterbi + marginals) on a fixed random batch of
``--batch`` windows of ``--tokens`` tokens (a MEDDOCAN-sized vocabulary: 25k words, 300 characters, 41
tags), and reports the median milliseconds, tokens per second, the ratio to the baseline, and the block's
share of the ``all`` configuration's time (its marginal cost: ``all`` minus ``all`` without the block).
Besides the CEDI blocks it times the n-gram context block at smaller sizes (the knob that makes it cheap)
and the rule-feature input (a 70-wide multi-hot vector: the rules themselves run once per document, see
``benchmarks/rules_meddocan.py`` for their speed). Measuring on synthetic batches isolates the network's
cost from data loading and from other processes' noise in a long training run.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from clinideid.detect.neural.config import NeuralConfig
from clinideid.detect.neural.model import Batch, NeuralTaggerModule

N_WORDS, N_CHARS, N_AFFIX, N_TAGS, RULE_DIM = 25_000, 300, 400, 41, 70

CONFIGS: dict[str, dict] = {
    "baseline": {},
    "+context": {"context": True},
    "+context (n=5)": {"context": True, "context_n": 5},
    "+context (proj 32, hidden 25)": {"context": True, "context_proj": 32, "context_hidden": 25},
    "+affix": {"affix": True},
    "+attention": {"attention": True},
    "+rules input": {"_rules": True},
    "all": {"context": True, "affix": True, "attention": True},
    "all - context": {"affix": True, "attention": True},
    "all - affix": {"context": True, "attention": True},
    "all - attention": {"context": True, "affix": True},
}


def make_batch(b: int, t: int, features: bool, seed: int = 0) -> Batch:
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(t // 2, t + 1, (b,), generator=g)
    lengths[0] = t
    mask = torch.arange(t).unsqueeze(0) < lengths.unsqueeze(1)
    chars = torch.randint(1, N_CHARS, (b, t, 8), generator=g) * mask.unsqueeze(2)
    return Batch(
        words=torch.randint(2, N_WORDS, (b, t), generator=g) * mask,
        chars=chars,
        prefixes=torch.randint(1, N_AFFIX, (b, t), generator=g) * mask,
        suffixes=torch.randint(1, N_AFFIX, (b, t), generator=g) * mask,
        mask=mask,
        tags=torch.randint(0, N_TAGS, (b, t), generator=g) * mask,
        features=(torch.rand(b, t, RULE_DIM, generator=g) < 0.05).float() if features else None,
    )


def median_ms(fn, repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def measure(blocks: dict, args: argparse.Namespace) -> tuple[float, float, int]:
    blocks = dict(blocks)
    rules = blocks.pop("_rules", False)
    torch.manual_seed(0)
    module = NeuralTaggerModule(
        NeuralConfig(**blocks),
        n_words=N_WORDS,
        n_chars=N_CHARS,
        n_prefixes=N_AFFIX,
        n_suffixes=N_AFFIX,
        n_tags=N_TAGS,
        feature_dims=[("rules", RULE_DIM)] if rules else (),
    )
    batch = make_batch(args.batch, args.tokens, rules)
    opt = torch.optim.Adam(module.parameters(), lr=0.001)

    def train_step() -> None:
        module.train()
        opt.zero_grad()
        module.loss(batch).backward()
        opt.step()

    def infer() -> None:
        module.eval()
        with torch.inference_mode():
            module.decode(batch)

    n_params = sum(p.numel() for p in module.parameters())
    return median_ms(train_step, args.repeats), median_ms(infer, args.repeats), n_params


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--tokens", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=30)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    results = {name: measure(blocks, args) for name, blocks in CONFIGS.items()}
    tokens = int(make_batch(args.batch, args.tokens, False).mask.sum())
    base_train, base_infer, _ = results["baseline"]
    all_train, all_infer, _ = results["all"]
    print(
        f"{args.batch} windows x <= {args.tokens} tokens ({tokens} real tokens), {args.threads} thread(s), "
        f"median of {args.repeats}\n"
    )
    print(
        "| configuration | parameters | train step ms | train tok/s | × baseline | inference ms | inference tok/s "
        "| × baseline | share of `all` train time |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name, (train_ms, infer_ms, n_params) in results.items():
        share = "–"
        if name.startswith("+") and f"all - {name[1:]}" in results:
            marginal = all_train - results[f"all - {name[1:]}"][0]
            share = f"{marginal / all_train:.0%}"
        print(
            f"| {name} | {n_params:,} | {train_ms:.1f} | {tokens / train_ms * 1000:,.0f} | {train_ms / base_train:.2f} "
            f"| {infer_ms:.1f} | {tokens / infer_ms * 1000:,.0f} | {infer_ms / base_infer:.2f} | {share} |"
        )
    print(f"\n`all` = {all_train:.1f} ms per training step, {all_infer:.1f} ms per inference batch")


if __name__ == "__main__":
    main()
