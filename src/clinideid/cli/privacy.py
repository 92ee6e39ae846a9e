"""Privacy commands: ``pseudonymize-corpus``, ``privacy-train``, ``privacy-release``, ``privacy-audit``."""

from __future__ import annotations

from pathlib import Path

import typer

from clinideid.cli import app, options
from clinideid.cli.convert import parse_options
from clinideid.errors import ConfigError
from clinideid.formats import ReadReport, available_formats, get_codec, read_corpus

FORMATS_HELP = ", ".join(available_formats())


def _key(key_file: Path | None, ephemeral: bool) -> bytes:
    from clinideid.transform.keys import ephemeral_key, load_key

    if (key_file is None) == (not ephemeral):
        raise ConfigError("give exactly one of --key-file PATH or --ephemeral-key")
    return load_key(key_file) if key_file is not None else ephemeral_key()


@app.command(
    "pseudonymize-corpus",
    epilog=(
        "Example: clinideid pseudonymize-corpus corpora/meddocan/train -o train_pseudo --from-format brat "
        "--to-format jsonl --key-file secret.key --label-scheme meddocan --language es"
    ),
)
def pseudonymize_corpus(
    source: Path = typer.Argument(..., help="Annotated corpus (file or folder, depending on the format)."),
    out: Path = typer.Option(..., "--out", "-o", help="Output corpus (must not exist yet)."),
    from_format: str = typer.Option("jsonl", "--from-format", help=f"Input format: {FORMATS_HELP}."),
    to_format: str | None = typer.Option(None, "--to-format", help="Output format (default: the input's)."),
    key_file: Path | None = typer.Option(None, "--key-file", help="Secret key deciding the surrogates."),
    ephemeral_key: bool = options.EPHEMERAL_KEY,
    scope: str = typer.Option("document", "--scope", help="Surrogate scope: document, patient or corpus."),
    label_scheme: str | None = typer.Option(
        None, "--label-scheme", help="Mapping of the corpus labels to canonical ones (e.g. meddocan)."
    ),
    language: str | None = typer.Option(
        None, "--language", "-l", help="Surrogate language (default: each document's, else en)."
    ),
    on_error: str = typer.Option(
        "skip", "--on-error", help="skip: report a failing document and go on; raise."
    ),
    report_path: Path | None = typer.Option(
        None, "--report", help="Write a JSON report (counts, failed ids)."
    ),
    write_option: list[str] = typer.Option([], "--write-option", help="Codec write option KEY=VALUE."),
) -> None:
    """Replace every gold span of an annotated corpus by a keyed surrogate, moving the annotations along.

    The new corpus keeps the labels; each document is verified (the text outside spans is unchanged and
    each span covers its surrogate). Failing documents are listed by id, never by text.
    """
    from clinideid.privacy.io import write_corpus_atomic, write_json_atomic
    from clinideid.privacy.pseudonymize import Pseudonymizer, PseudonymizeReport

    to_format = to_format or from_format
    get_codec(from_format), get_codec(to_format)
    write_opts = parse_options(write_option, "--write-option")
    key = _key(key_file, ephemeral_key)
    pseudo = Pseudonymizer(key, scope=scope, label_scheme=label_scheme, language=language)
    read_report = ReadReport()
    docs = read_corpus(source, from_format, report=read_report, on_error=on_error)
    report = PseudonymizeReport()
    new_docs = list(pseudo.corpus(docs, report, on_error=on_error))
    write_corpus_atomic(new_docs, out, to_format, **write_opts)
    if report_path is not None:
        write_json_atomic(report.to_dict(), report_path)
    typer.echo(
        f"pseudonymised {report.documents} documents, {report.spans} spans "
        f"({report.fallbacks} fell back to a tag) -> {out}"
    )
    for doc_id, reason in report.failures:
        typer.secho(f"skipped: {reason}", err=True, fg=typer.colors.YELLOW)
        del doc_id
    if report.failures:
        raise typer.Exit(3)


def _sequences(source: Path, fmt: str, label_scheme: str | None, max_len: int = 50) -> list:
    from clinideid.privacy.data import sequences_from_documents

    return sequences_from_documents(read_corpus(source, fmt), label_scheme, max_len)


@app.command(
    "privacy-train",
    epilog=(
        "Example: clinideid privacy-train corpora/meddocan/train --format brat --label-scheme meddocan "
        "--vectors vectors.txt -o private100 --size 100 --method feutry"
    ),
)
def privacy_train(
    source: Path = typer.Argument(..., help="Annotated training corpus."),
    out: Path = typer.Option(..., "--out", "-o", help="Model folder to create (must not exist)."),
    fmt: str = typer.Option("jsonl", "--format", help=f"Corpus format: {FORMATS_HELP}."),
    vectors: Path = typer.Option(..., "--vectors", help="Word vectors (clinideid train-embeddings output)."),
    label_scheme: str | None = typer.Option(None, "--label-scheme", help="Label mapping (e.g. meddocan)."),
    size: int = typer.Option(100, "--size", help="Representation size (50-300 is usual)."),
    kind: str = typer.Option("ff", "--kind", help="Representation model: ff (feed-forward) or lstm."),
    method: str = typer.Option(
        "feutry", "--method", help="feutry (three phases), dann (gradient reversal), none."
    ),
    lam: float = typer.Option(1.0, "--lambda", help="Weight of the adversarial term."),
    min_sigma: float = typer.Option(0.0, "--min-sigma", help="Floor on the trained noise (0: none)."),
    epochs_deid: int = typer.Option(2, "--epochs-deid", help="Phase 1 epochs (tagging loss only)."),
    epochs_adv: int = typer.Option(1, "--epochs-adversary", help="Phase 2 epochs (adversaries only)."),
    epochs_joint: int = typer.Option(2, "--epochs-joint", help="Phase 3 (or DANN) epochs."),
    seed: int = typer.Option(1, "--seed", help="Random seed."),
    threads: int = typer.Option(1, "--threads", help="Torch threads."),
) -> None:
    """Train a private token representation (noise + adversaries) with a de-identification tagger on top."""
    import torch

    from clinideid.privacy.data import WordVectors
    from clinideid.privacy.representation import PrivateConfig, save_model, train_private

    torch.set_num_threads(threads)
    config = PrivateConfig(
        size=size, kind=kind, method=method, lam=lam, min_sigma=min_sigma, epochs_deid=epochs_deid,
        epochs_adv=epochs_adv, epochs_joint=epochs_joint, seed=seed, label_scheme=label_scheme,
    )  # fmt: skip
    config.check()
    if out.exists():
        raise ConfigError(f"output {out} already exists; choose a new folder")
    seqs = _sequences(source, fmt, label_scheme, config.max_len)
    model = train_private(seqs, WordVectors.load(vectors), config)
    save_model(model, out)
    last = model.history[-1] if model.history else {}
    typer.echo(f"trained a {method} representation of size {size} (sigma {model.encoder.sigma:.3f}); "
               f"last epoch: {last}; saved to {out}")  # fmt: skip


@app.command(
    "privacy-release",
    epilog="Example: clinideid privacy-release corpora/meddocan/train --format brat --model private100 -o release/",
)
def privacy_release(
    source: Path = typer.Argument(..., help="Annotated corpus to release."),
    model_dir: Path = typer.Option(..., "--model", help="Model folder from privacy-train."),
    out: Path = typer.Option(..., "--out", "-o", help="Release folder to create (must not exist)."),
    fmt: str = typer.Option("jsonl", "--format", help=f"Corpus format: {FORMATS_HELP}."),
    seed: int | None = typer.Option(
        None, "--seed", help="Noise seed (experiments only: a known seed weakens the noise)."
    ),
    shuffle: bool = typer.Option(True, "--shuffle/--keep-order", help="Shuffle the sequence order."),
) -> None:
    """Turn an annotated corpus into shareable private representations + labels (no text, no ids)."""
    from clinideid.privacy.release import write_release
    from clinideid.privacy.representation import load_model

    model = load_model(model_dir)
    seqs = _sequences(source, fmt, model.config.label_scheme, model.config.max_len)
    summary = write_release(model, seqs, out, seed=seed, shuffle=shuffle)
    typer.echo(
        f"released {summary['sequences']} sequences, {summary['tokens']} token representations -> {out}"
    )


@app.command(
    "privacy-audit",
    epilog=(
        "Examples: clinideid privacy-audit corpora/meddocan/dev --format brat --model private100 -o audit/ | "
        "clinideid privacy-audit train/ --format brat --pseudonymized pseudo/ --vectors vectors.txt -o audit/"
    ),
)
def privacy_audit(
    source: Path = typer.Argument(..., help="The original annotated corpus (held by the data owner)."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for audit.json and audit.md."),
    fmt: str = typer.Option("jsonl", "--format", help=f"Corpus format: {FORMATS_HELP}."),
    model_dir: Path | None = typer.Option(None, "--model", help="Audit this private representation model."),
    pseudonymized: Path | None = typer.Option(
        None, "--pseudonymized", help="Audit this pseudonymised corpus."
    ),
    pseudo_format: str | None = typer.Option(
        None, "--pseudonymized-format", help="Its format (default: --format)."
    ),
    vectors: Path | None = typer.Option(None, "--vectors", help="Word vectors (needed for --pseudonymized)."),
    label_scheme: str | None = typer.Option(None, "--label-scheme", help="Label mapping (e.g. meddocan)."),
    max_adversary: float = typer.Option(
        0.6, "--max-adversary-accuracy", help="Pass threshold for adversaries."
    ),
    max_lookup: float = typer.Option(
        0.1, "--max-lookup-top1", help="Pass threshold for the lookup top-1 rate."
    ),
    max_lookup10: float = typer.Option(0.3, "--max-lookup-top10", help="Pass threshold for the top-10 rate."),
    seed: int = typer.Option(1, "--seed", help="Random seed of the attacks."),
) -> None:
    """Attack released data and state PASS or FAIL: a retrained adversary and a known-plaintext lookup on
    a representation model, or a discriminator on a pseudonymised corpus. Exit 0 on PASS, 1 on FAIL."""
    import torch

    from clinideid.privacy import audit
    from clinideid.privacy.data import WordVectors
    from clinideid.privacy.io import write_json_atomic, write_text_atomic

    torch.set_num_threads(1)
    if (model_dir is None) == (pseudonymized is None):
        raise ConfigError("give exactly one of --model (representations) or --pseudonymized (a corpus)")
    results: list[audit.AttackResult] = []
    settings: dict[str, object] = {"seed": seed, "max_adversary_accuracy": max_adversary,
                                   "max_lookup_top1": max_lookup, "max_lookup_top10": max_lookup10}  # fmt: skip
    if model_dir is not None:
        from clinideid.privacy.representation import load_model

        model = load_model(model_dir)
        seqs = _sequences(source, fmt, label_scheme or model.config.label_scheme, model.config.max_len)
        gen = torch.Generator().manual_seed(seed)

        def represent(words: object) -> object:
            return model.represent(words, noise=True, generator=gen)  # type: ignore[arg-type]

        results.append(
            audit.adversary_attack(seqs, represent, model.vectors, threshold=max_adversary, seed=seed)
        )
        results.extend(audit.lookup_attack(seqs, represent, threshold=max_lookup, top10_threshold=max_lookup10,
                                           seed=seed))  # fmt: skip
        settings["model"] = {
            "size": model.config.size,
            "method": model.config.method,
            "sigma": model.encoder.sigma,
        }
    else:
        if vectors is None:
            raise ConfigError("--pseudonymized needs --vectors (word vectors for the discriminator)")
        assert pseudonymized is not None
        original = read_corpus(source, fmt)
        pseudo = read_corpus(pseudonymized, pseudo_format or fmt)
        results.append(audit.discriminator_attack(original, pseudo, WordVectors.load(vectors),
                                                  label_scheme=label_scheme, threshold=max_adversary, seed=seed))  # fmt: skip
    report = audit.AuditReport(results, settings)
    out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(report.to_dict(), out / "audit.json")
    write_text_atomic(report.to_markdown(), out / "audit.md")
    typer.echo(report.to_markdown())
    if not report.passed:
        raise typer.Exit(1)
