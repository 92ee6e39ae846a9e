"""Language identification for pipeline routing: accuracy on short, lowercased and uppercased clinical text.

    python benchmarks/language_id.py [--corpora ../shared/corpora] [--candidates clinideid py3langid ...]
        [--max-docs 200] [--seed 13] [--json out.json]

Documents: ``notes/<lang>.jsonl`` and ``challenge/<lang>.jsonl`` (field ``text``, language from the file
name), MEDDOCAN dev (``meddocan/dev/*.txt``, Spanish) and EDS-Pseudo (``eds-pseudo/train.jsonl``, French),
at most ``--max-docs`` documents from each file or folder. From each document: one snippet each of 30, 60,
120 and 300 characters at a seeded random place (cut at word boundaries; lengths a document does not reach
and snippets without a letter are left out) and the whole note; each as written, lowercased and
uppercased. Every candidate chooses among clinideid's six languages only.

Candidates (those whose package is not installed are skipped):

- ``stopwords``: the frequent-word guesser clinideid used before (kept here as the baseline); where it finds
  too little evidence it abstains, which counts as wrong;
- ``py3langid``: langid.py's naive Bayes model over byte n-grams, restricted to the six languages;
- ``py3langid+prior``: the same, with ``PRIOR_WEIGHT`` added to a language's log-probability for each of the
  baseline's frequent and clinical words of that language found in the text;
- ``lingua-high`` / ``lingua-low``: lingua-language-detector built for the six languages, high- and
  low-accuracy mode;
- ``clinideid``: ``clinideid.text.language.identify_language`` as shipped (scored on its language; its
  ``reliable`` flag is reported as the share of low-confidence answers and their accuracy).

Printed: accuracy per language x length x case, a summary per length x case (mean over languages), the
mean time per snippet and per whole note (one thread, after loading), the import + load time in a fresh
interpreter (best of ``--load-repeat``) with the package's size on disk, and, for ``clinideid``, the share of
answers under each confidence threshold with their accuracy, and the start-up of a first document with its
language given and with ``--language auto``. No document text is printed.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

import regex

REPO = Path(__file__).resolve().parents[1]
LANGUAGES = ("en", "es", "it", "ru", "fr", "de")
LENGTHS = (30, 60, 120, 300)
WHOLE = "whole"
CASES = ("as written", "lower", "upper")
THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
PRIOR_WEIGHT = 1.0  # log-probability added per frequent or clinical word of a language (best of 0.25-2)
Guess = Callable[[str], str | None]
CONFIDENCE: dict[str, float | None] = {}  # text -> clinideid's confidence, for the threshold table

# --- the baseline: the stop-word guesser clinideid shipped before (abstains instead of defaulting) --------
_STOPWORDS: dict[str, set[str]] = {
    lang: set(words.split())
    for lang, words in {
        "en": "the and of with was is to in for patient on he she his her no at by from history were which "
        "name date birth admission discharge address phone",
        "es": "el la de que y en los con por las del se una paciente para años sin al como presenta nombre "
        "apellidos fecha ingreso nacimiento domicilio médico edad sexo teléfono",
        "it": "il di che e la per con del della paziente un una non sono gli alla anni nel dei è nome cognome "
        "nato nata ricovero dimissione residente dott",
        "fr": "le la de et les des du un une en patient patiente pour avec au est dans sur ans pas nom prénom "
        "née né adresse hospitalisation hospitalisé hospitalisée",
        "de": "der die und das mit von den des ist nicht ein eine im bei patient patientin wurde zu auf jahre "
        "geb geboren vorname anschrift aufnahme entlassung herr frau",
        "ru": "и в не на с по что пациент лет года при из был была от для к у до без",
    }.items()
}
_WORD = regex.compile(r"\p{L}+")


def stopword_guess(text: str) -> str | None:
    words = [w.lower() for w in _WORD.findall(text[:20_000])]
    if not words:
        return None
    if sum(1 for w in words if regex.match(r"\p{Cyrillic}", w)) > len(words) / 2:
        return "ru"
    scores: Counter[str] = Counter()
    for w in words:
        for lang, stops in _STOPWORDS.items():
            if w in stops:
                scores[lang] += 1
    if not scores:
        return None
    ranked = scores.most_common(2)
    best, count = ranked[0]
    runner_up = ranked[1][1] if len(ranked) > 1 else 0
    return best if count > runner_up and (count >= 2 or runner_up == 0) else None


# --- candidates: (import + build code for a fresh interpreter, loader in this process, package dir) -------
_LINGUA_BUILD = (
    "from lingua import Language, LanguageDetectorBuilder\n"
    "langs = [Language.ENGLISH, Language.SPANISH, Language.ITALIAN, Language.RUSSIAN, Language.FRENCH, "
    "Language.GERMAN]\n"
    "detector = LanguageDetectorBuilder.from_languages(*langs){mode}.build()\n"
    "detector.detect_language_of('the patient was seen')\n"
)
LOAD_CODE = {
    "stopwords": "import regex\n",
    "py3langid": (
        "from py3langid.langid import LanguageIdentifier, MODEL_FILE\n"
        "ident = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)\n"
        f"ident.set_languages({list(LANGUAGES)!r})\nident.classify('the patient was seen')\n"
    ),
    "py3langid+prior": (
        "import regex\nfrom py3langid.langid import LanguageIdentifier, MODEL_FILE\n"
        "ident = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)\n"
        f"ident.set_languages({list(LANGUAGES)!r})\nident.classify('the patient was seen')\n"
    ),
    "lingua-high": _LINGUA_BUILD.format(mode=""),
    "lingua-low": _LINGUA_BUILD.format(mode=".with_low_accuracy_mode()"),
    "clinideid": (
        "from clinideid.text.language import identify_language\nidentify_language('the patient was seen')\n"
    ),
}
PACKAGE = {
    "stopwords": None,
    "py3langid": "py3langid",
    "py3langid+prior": "py3langid",
    "lingua-high": "lingua",
    "lingua-low": "lingua",
}


def load_candidate(name: str) -> Guess:
    if name == "stopwords":
        return stopword_guess
    if name == "py3langid":
        from py3langid.langid import MODEL_FILE, LanguageIdentifier

        ident = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
        ident.set_languages(list(LANGUAGES))
        return lambda text: ident.classify(text)[0]
    if name == "py3langid+prior":
        import numpy as np
        from py3langid.langid import MODEL_FILE, LanguageIdentifier

        ident = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
        ident.set_languages(list(LANGUAGES))
        stops = [_STOPWORDS[lang] for lang in ident.nb_classes]

        def with_prior(text: str) -> str | None:
            words = [w.lower() for w in _WORD.findall(text[:20_000])]
            hits = np.array([sum(w in s for w in words) for s in stops], dtype=float)
            scores = np.log(ident._decide(text) + 1e-9) + PRIOR_WEIGHT * hits
            return ident.nb_classes[int(scores.argmax())]

        return with_prior
    if name.startswith("lingua"):
        from lingua import IsoCode639_1, Language, LanguageDetectorBuilder

        langs = [Language.from_iso_code_639_1(getattr(IsoCode639_1, code.upper())) for code in LANGUAGES]
        builder = LanguageDetectorBuilder.from_languages(*langs)
        detector = (builder.with_low_accuracy_mode() if name == "lingua-low" else builder).build()

        def lingua_guess(text: str) -> str | None:
            found = detector.detect_language_of(text)
            return found.iso_code_639_1.name.lower() if found is not None else None

        return lingua_guess
    if name == "clinideid":
        from clinideid.text.language import identify_language

        def clinideid_guess(text: str) -> str | None:
            guess = identify_language(text)
            CONFIDENCE[text] = guess.confidence
            return guess.language

        return clinideid_guess
    raise SystemExit(f"unknown candidate {name!r}")


# --- evaluation data ------------------------------------------------------------------------------------
def documents(corpora: Path, max_docs: int, rng: random.Random) -> Iterator[tuple[str, str, str]]:
    """``(source, language, text)`` for every document used."""

    def capped(texts: list[str]) -> list[str]:
        return texts if len(texts) <= max_docs else rng.sample(texts, max_docs)

    for folder in ("notes", "challenge"):
        for path in sorted((corpora / folder).glob("*.jsonl")):
            if path.stem not in LANGUAGES:
                continue
            texts = [json.loads(line)["text"] for line in path.open(encoding="utf-8") if line.strip()]
            for text in capped(texts):
                yield folder, path.stem, text
    meddocan = sorted((corpora / "meddocan" / "dev").glob("*.txt"))
    for text in capped([p.read_text(encoding="utf-8") for p in meddocan]):
        yield "meddocan", "es", text
    eds = corpora / "eds-pseudo" / "train.jsonl"
    if eds.exists():
        texts = [json.loads(line)["note_text"] for line in eds.open(encoding="utf-8") if line.strip()]
        for text in capped(sorted(set(texts))):
            yield "eds-pseudo", "fr", text


def snippet(text: str, length: int, rng: random.Random) -> str | None:
    """About ``length`` characters of ``text`` from a random place, cut at word boundaries."""
    if len(text) < length * 1.2:
        return None
    start = rng.randrange(0, len(text) - length)
    if start and not text[start - 1].isspace():
        space = regex.search(r"\s", text, pos=start)
        start = space.end() if space else start
    piece = text[start : start + length]
    if start + length < len(text) and not text[start + length].isspace():
        cut = piece.rfind(" ")
        piece = piece[:cut] if cut > length // 2 else piece
    return piece if regex.search(r"\p{L}", piece) else None


def samples(corpora: Path, max_docs: int, seed: int) -> list[tuple[str, str, str, str]]:
    """``(language, length, case, text)`` for every sample."""
    rng = random.Random(seed)
    out: list[tuple[str, str, str, str]] = []
    for _source, lang, text in documents(corpora, max_docs, rng):
        pieces = [(str(n), snippet(text, n, rng)) for n in LENGTHS] + [(WHOLE, text)]
        for length, piece in pieces:
            if piece is None or not regex.search(r"\p{L}", piece):
                continue
            for case, variant in zip(CASES, (piece, piece.lower(), piece.upper()), strict=True):
                out.append((lang, length, case, variant))
    return out


# --- measuring ------------------------------------------------------------------------------------------
def load_seconds(name: str, repeat: int) -> float:
    code = "import time\nt0 = time.perf_counter()\n" + LOAD_CODE[name] + "print(time.perf_counter() - t0)\n"
    best = float("inf")
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
        best = min(best, float(out.stdout.strip().splitlines()[-1]))
    return best


def package_mb(name: str) -> float | None:
    package = PACKAGE.get(name)
    if package is None:
        return None
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations)))
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) / 1e6


_STARTUP = r"""
import os, time
t0 = time.perf_counter()
from clinideid.document import Document
from clinideid.pipeline import MultilingualDeidentifier
deid = MultilingualDeidentifier({mode!r}, os.urandom(32))
result = deid.deidentify(Document("n", {text!r}))
assert result.language == {lang!r}, result.language
print(time.perf_counter() - t0)
"""
# invented one-line notes: what a first document costs, pipeline and (with auto) language model included
STARTUP_NOTES = {
    "en": "pt seen by dr smith on 12/03/2020, wife at bedside",
    "it": "pz visto dal dott rossi il 12/03/2020",
}


def startup_seconds(lang: str, mode: str, repeat: int) -> float:
    """Import, build and de-identify one note in a fresh interpreter (best of ``repeat``, after a warm-up run
    that fills the caches)."""
    code = _STARTUP.format(mode=mode, text=STARTUP_NOTES[lang], lang=lang)
    runs = []
    for _ in range(repeat + 1):
        out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
        runs.append(float(out.stdout.strip().splitlines()[-1]))
    return min(runs[1:])


def print_startup(repeat: int) -> None:
    print("\n### Start-up: import, build and de-identify a first note (fresh interpreter, warm caches)\n")
    print("| note | language given s | --language auto s |")
    print("|---|---|---|")
    for lang in STARTUP_NOTES:
        given, auto = startup_seconds(lang, lang, repeat), startup_seconds(lang, "auto", repeat)
        print(f"| {lang} | {given:.2f} | {auto:.2f} |")


def available(name: str) -> bool:
    import importlib.util

    package = PACKAGE.get(name, "clinideid")
    return package is None or importlib.util.find_spec(package) is not None


def evaluate(name: str, data: list[tuple[str, str, str, str]], load_repeat: int) -> dict:
    guess = load_candidate(name)
    correct: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    seconds = {"snippet": [0.0, 0], "whole": [0.0, 0]}
    calibration: list[tuple[str, float | None, bool]] = []
    for lang, length, case, text in data:
        started = time.perf_counter()
        found = guess(text)
        spent = time.perf_counter() - started
        kind = "whole" if length == WHOLE else "snippet"
        seconds[kind][0] += spent
        seconds[kind][1] += 1
        cell = correct[f"{lang}|{length}|{case}"]
        cell[0] += found == lang
        cell[1] += 1
        if name == "clinideid":
            group = "short" if length in ("30", "60") else "long"
            calibration.append((group, CONFIDENCE.get(text), found == lang))
    return {
        "calibration": calibration,
        "accuracy": {k: c / n for k, (c, n) in correct.items()},
        "n": {k: n for k, (_, n) in correct.items()},
        "ms_per_snippet": 1000 * seconds["snippet"][0] / max(1, seconds["snippet"][1]),
        "ms_per_whole_note": 1000 * seconds["whole"][0] / max(1, seconds["whole"][1]),
        "load_s": load_seconds(name, load_repeat),
        "package_mb": package_mb(name),
    }


def print_tables(results: dict[str, dict], data: list[tuple[str, str, str, str]]) -> None:
    names = list(results)
    lengths = [str(n) for n in LENGTHS] + [WHOLE]
    short = {"as written": "as", "lower": "lo", "upper": "up"}
    print("\n### Accuracy per language x length (as written / lower / upper)\n")
    print("| lang | chars | n | " + " | ".join(names) + " |")
    print("|---|---|---|" + "---|" * len(names))
    for lang in LANGUAGES:
        for length in lengths:
            key = f"{lang}|{length}|as written"
            n = results[names[0]]["n"].get(key)
            if not n:
                continue
            cells = []
            for name in names:
                acc = results[name]["accuracy"]
                cells.append(" / ".join(f"{100 * acc[f'{lang}|{length}|{c}']:.0f}" for c in CASES))
            print(f"| {lang} | {length} | {n} | " + " | ".join(cells) + " |")
    print("\n### Mean over the six languages, per length x case (accuracy %)\n")
    print("| chars | case | " + " | ".join(names) + " |")
    print("|---|---|" + "---|" * len(names))
    for length in lengths:
        for case in CASES:
            cells = []
            for name in names:
                acc = results[name]["accuracy"]
                vals = [
                    acc[f"{lang}|{length}|{case}"] for lang in LANGUAGES if f"{lang}|{length}|{case}" in acc
                ]
                cells.append(f"{100 * sum(vals) / len(vals):.1f}")
            print(f"| {length} | {short[case]} | " + " | ".join(cells) + " |")
    print("\n### Cost\n")
    print("| candidate | ms / snippet | ms / whole note | import + load s | package MB |")
    print("|---|---|---|---|---|")
    for name in names:
        r = results[name]
        mb = f"{r['package_mb']:.1f}" if r["package_mb"] is not None else "-"
        print(
            f"| {name} | {r['ms_per_snippet']:.3f} | {r['ms_per_whole_note']:.3f} | {r['load_s']:.2f} "
            f"| {mb} |"
        )
    if results.get("clinideid", {}).get("calibration"):
        print_calibration(results["clinideid"]["calibration"])
    print(f"\n{len(data)} samples")


def print_calibration(rows: list[tuple[str, float | None, bool]]) -> None:
    """Per threshold: the share of answers below it (flagged) and the accuracy on each side."""
    print("\n### clinideid: answers below a confidence threshold (snippets <= 60 chars / longer)\n")
    print("| threshold | flagged % | accuracy flagged % | accuracy kept % |")
    print("|---|---|---|---|")
    undetermined = {g: sum(1 for gg, c, _ in rows if gg == g and c is None) for g in ("short", "long")}
    for threshold in THRESHOLDS:
        cells = {"flagged": [], "low": [], "high": []}
        for group in ("short", "long"):
            mine = [(c, ok) for g, c, ok in rows if g == group]
            low = [ok for c, ok in mine if c is None or c < threshold]
            high = [ok for c, ok in mine if c is not None and c >= threshold]
            cells["flagged"].append(f"{100 * len(low) / len(mine):.1f}")
            cells["low"].append(f"{100 * sum(low) / len(low):.0f}" if low else "-")
            cells["high"].append(f"{100 * sum(high) / len(high):.1f}" if high else "-")
        print(f"| {threshold} | " + " | ".join(" / ".join(v) for v in cells.values()) + " |")
    print(
        f"\nundetermined (default language used): {undetermined['short']} short, "
        f"{undetermined['long']} longer"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpora", type=Path, default=REPO.parent / "shared" / "corpora")
    ap.add_argument(
        "--candidates",
        nargs="+",
        default=["stopwords", "py3langid", "py3langid+prior", "lingua-low", "lingua-high", "clinideid"],
    )
    ap.add_argument("--max-docs", type=int, default=200, help="documents per corpus file or folder")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--load-repeat", type=int, default=3)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    if not (args.corpora / "notes").is_dir():
        raise SystemExit(f"no corpora at {args.corpora}; pass --corpora")
    data = samples(args.corpora, args.max_docs, args.seed)
    results: dict[str, dict] = {}
    for name in args.candidates:
        if not available(name):
            print(f"{name}: not installed, skipped", file=sys.stderr)
            continue
        results[name] = evaluate(name, data, args.load_repeat)
    print_tables(results, data)
    if "clinideid" in results:
        print_startup(args.load_repeat)
    if args.json:
        for r in results.values():
            r.pop("calibration", None)
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
