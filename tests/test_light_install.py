"""``pip install clinideid`` without PyTorch: rules and CRF pipelines work, learned ones fail clearly.

Each check runs in a fresh interpreter in which ``torch`` and ``transformers`` cannot be imported (a
meta-path finder refuses them, as on a machine where they are not installed), installed by a
``sitecustomize`` module so that the command's worker processes cannot import them either.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

NO_TORCH = """
import sys

class _NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("torch", "transformers"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, _NotInstalled())
"""

RUN_CLI = """
from clinideid.cli import main
try:
    main(sys.argv[1:])
    code = 0
except SystemExit as exc:
    code = exc.code or 0
assert "torch" not in sys.modules or code != 0, "a rules pipeline imported torch"
sys.exit(code)
"""

NOTE = "Patient: Zebediah Quackenbush    MRN: 4829105\nSeen on 11/02/2023 by Dr. Sarah Thompson.\n"


@pytest.fixture(scope="module")
def no_torch(tmp_path_factory) -> dict[str, str]:
    """An environment whose interpreters (worker processes included) refuse to import torch."""
    folder = tmp_path_factory.mktemp("no-torch")
    (folder / "sitecustomize.py").write_text(NO_TORCH, encoding="utf-8")
    path = [str(folder), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(path)}


def _python(env: dict[str, str], code: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "import sys\n" + code, *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


@pytest.fixture
def key(tmp_path: Path) -> Path:
    path = tmp_path / "secret.key"
    path.write_text("5f" * 8 + "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718" + "\n", encoding="ascii")
    return path


def test_torch_is_an_extra_not_a_core_dependency():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    assert not any(dep.startswith("torch") for dep in project["dependencies"])
    extras = project["optional-dependencies"]
    assert "torch==2.13.0" in extras["neural"]
    assert "torch==2.13.0" in extras["dev"]  # `make test` and `make demo` install it


def test_the_package_and_its_command_import_without_torch(no_torch: dict[str, str]):
    res = _python(
        no_torch,
        "import clinideid, clinideid.cli, clinideid.pipeline, clinideid.batch.parallel\n"
        "from clinideid.cli import _register_commands\n"
        "_register_commands()\n"
        "from clinideid.detect.base import available_detectors\n"
        "print(available_detectors())\n"
        "assert 'torch' not in sys.modules\n",
    )
    assert res.returncode == 0, res.stderr
    assert "rules" in res.stdout and "crf" in res.stdout


@pytest.mark.parametrize("language", ["en", "de", "fr"])
def test_rules_and_crf_pipelines_run_without_torch(
    tmp_path: Path, key: Path, language: str, no_torch: dict[str, str]
):
    src = tmp_path / "notes"
    src.mkdir()
    (src / "a.txt").write_text(NOTE, encoding="utf-8")
    out = tmp_path / "out"
    args = ["deid", str(src), "-o", str(out), "-l", language, "--key-file", str(key), "--no-progress"]
    res = _python(no_torch, RUN_CLI, *args, "--workers", "1")
    assert res.returncode == 0, res.stderr
    if language == "en":
        assert "Quackenbush" not in (out / "a.txt").read_text("utf-8")


def test_a_neural_pipeline_without_torch_names_the_extra_to_install(
    tmp_path: Path, key: Path, no_torch: dict[str, str]
):
    src = tmp_path / "notes"
    src.mkdir()
    (src / "a.txt").write_text(NOTE, encoding="utf-8")
    out = tmp_path / "out"
    args = ["deid", str(src), "-o", str(out), "-l", "es", "--key-file", str(key), "--no-progress"]
    res = _python(no_torch, RUN_CLI, *args)
    assert res.returncode == 2
    assert "pip install 'clinideid[neural]'" in res.stderr
    assert "Traceback" not in res.stderr
    assert not out.exists()  # failed before anything was written


def test_a_training_command_without_torch_names_the_extra_to_install(
    tmp_path: Path, no_torch: dict[str, str]
):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(6):
        (corpus / f"d{i}.txt").write_text(NOTE, encoding="utf-8")
        (corpus / f"d{i}.ann").write_text("T1\tPATIENT 9 29\tZebediah Quackenbush\n", encoding="utf-8")
    out = tmp_path / "model"
    res = _python(
        no_torch,
        RUN_CLI,
        "train",
        "--train",
        str(corpus),
        "--out",
        str(out),
        "--model",
        "neural",
        "--format",
        "brat",
    )
    assert res.returncode == 2, res.stderr
    assert "pip install 'clinideid[neural]'" in res.stderr
    assert "Traceback" not in res.stderr
