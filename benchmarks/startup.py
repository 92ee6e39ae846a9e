"""Start-up of each language's default pipeline: import, build, first note, with a cold and a warm cache.

Each measurement runs in a fresh interpreter (``python -c``), so nothing is shared with this process. The
rule-pattern cache (``CLINIDEID_CACHE_DIR``) points at a temporary folder: the first run per language
fills it (cold), the next ones read it (warm, best of ``--repeat``).

    python benchmarks/startup.py [--languages en es ...] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

LANGUAGES = ("en", "de", "it", "ru", "fr", "es")

_CHILD = r"""
import json, os, time
t0 = time.perf_counter()
from clinideid.document import Document
from clinideid.pipeline import Deidentifier
t1 = time.perf_counter()
deid = Deidentifier.for_language({lang!r}, os.urandom(32))
t2 = time.perf_counter()
deid.deidentify(Document("n", "Seen by Dr. Example on 12/03/2020 at 10 Main Street.", {lang!r}))
t3 = time.perf_counter()
print(json.dumps({{"import": t1 - t0, "build": t2 - t1, "first_note": t3 - t2, "total": t3 - t0}}))
"""


def measure(language: str, cache: str) -> dict[str, float]:
    env = dict(os.environ, CLINIDEID_CACHE_DIR=cache, PYTHONHASHSEED="random")
    out = subprocess.run(
        [sys.executable, "-c", _CHILD.format(lang=language)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--languages", nargs="+", default=list(LANGUAGES), choices=LANGUAGES)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    print("| lang | cold total s | warm import s | warm build s | warm first note s | warm total s |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="clinideid-startup-") as cache:
        for lang in args.languages:
            cold = measure(lang, cache)
            warm = min((measure(lang, cache) for _ in range(max(1, args.repeat))), key=lambda r: r["total"])
            print(
                f"| {lang} | {cold['total']:.2f} | {warm['import']:.2f} | {warm['build']:.2f} | "
                f"{warm['first_note']:.3f} | {warm['total']:.2f} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
