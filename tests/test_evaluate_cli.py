"""``clinideid evaluate`` end to end on small JSONL corpora written with the jsonl codec."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clinideid.document import Document, Span
from clinideid.errors import ConfigError, FormatError, InputError, UnknownFormatError
from clinideid.formats import available_formats, write_corpus

pytestmark = pytest.mark.skipif("jsonl" not in available_formats(), reason="the jsonl codec is not available")

TEXT = "Ana Ruiz vive en Madrid desde 2019."
ANA = Span(0, 8, "PATIENT")
MADRID = Span(17, 23, "CITY")
YEAR = Span(30, 34, "DATE")


@pytest.fixture(scope="module")
def app():
    from clinideid.cli import _register_commands
    from clinideid.cli import app as typer_app

    _register_commands()
    return typer_app


@pytest.fixture
def corpora(tmp_path: Path) -> dict[str, Path]:
    """gold: 2 documents x 3 spans; system: misses Madrid in d1 (strict/relaxed FN 1), wrong year label in d2;
    worse: finds nothing."""
    gold = [Document(d, TEXT, spans=(ANA, MADRID, YEAR)) for d in ("d1", "d2")]
    system = [
        Document("d1", TEXT, spans=(ANA, YEAR)),
        Document("d2", TEXT, spans=(ANA, MADRID, YEAR.with_(label="AGE"))),
    ]
    worse = [Document(d, TEXT) for d in ("d1", "d2")]
    paths = {}
    for name, docs in (("gold", gold), ("system", system), ("worse", worse), ("partial", system[:1])):
        paths[name] = tmp_path / f"{name}.jsonl"
        write_corpus(docs, paths[name], "jsonl")
    return paths


def run(app, args: list[str]):
    return CliRunner().invoke(app, ["evaluate", *args])


def base(corpora: dict[str, Path], system: str = "system") -> list[str]:
    return ["--gold", str(corpora["gold"]), "--system", str(corpora[system]), "--format", "jsonl"]


def test_help_shows_an_example(app) -> None:
    result = CliRunner().invoke(app, ["evaluate", "--help"])
    assert result.exit_code == 0
    assert "Example: clinideid evaluate" in result.output


def test_table_and_json(app, corpora, tmp_path) -> None:
    out = tmp_path / "out" / "scores.json"
    result = run(app, [*base(corpora), "--mode", "strict,token", "--json", str(out)])
    assert result.exit_code == 0, result.output
    # strict: TP 4 (Ana x2, Madrid d2, 2019 d1), FP 1 (AGE 2019 d2), FN 2 (Madrid d1, DATE 2019 d2)
    # P 4/5 = 0.8, R 4/6 = 0.6667
    strict = next(line for line in result.stdout.splitlines() if line.startswith("strict "))
    assert "0.8000" in strict and "0.6667" in strict
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["modes"]["strict"]["micro"]["tp"] == 4
    assert set(data["modes"]) == {"strict", "token"}
    assert data["confusion"]["DATE"] == {"DATE": 1, "AGE": 1}
    # the leaked token (Madrid in d1) is reported by offsets, without its text
    assert data["leaks"]["tokens"] == [{"document": "d1", "start": 17, "end": 23, "label": "CITY"}]
    assert "Madrid" not in result.output


def test_show_text(app, corpora) -> None:
    result = run(app, [*base(corpora), "--show-text"])
    assert result.exit_code == 0, result.output
    assert "Madrid" in result.stdout


def test_levels_and_hipaa(app, corpora, tmp_path) -> None:
    out = tmp_path / "binary.json"
    result = run(app, [*base(corpora), "--level", "binary", "--mode", "strict", "--json", str(out)])
    assert result.exit_code == 0, result.output
    # labels ignored: only Madrid in d1 is missed -> TP 5, FP 0, FN 1
    assert json.loads(out.read_text())["modes"]["strict"]["micro"]["tp"] == 5
    result = run(app, [*base(corpora), "--hipaa-only", "--mode", "strict", "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["options"]["hipaa_only"] is True


def test_compare_and_bootstrap(app, corpora, tmp_path) -> None:
    out = tmp_path / "cmp.json"
    args = [*base(corpora), "--compare", str(corpora["worse"]), "--shuffles", "99", "--seed", "3"]
    result = run(app, [*args, "--bootstrap", "50", "--mode", "strict", "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "Approximate randomization" in result.stdout
    assert "Bootstrap" in result.stdout
    data = json.loads(out.read_text())
    (test,) = data["significance"]
    assert test["shuffles"] == 99 and test["seed"] == 3
    # two documents only: 4 swap patterns, two of which are as extreme as observed -> p around 1/2
    assert 0.2 < test["p_value"] <= 1.0
    assert len(data["bootstrap"]) == 2  # the system, and the difference to the compared system
    assert data["compared_system"]["modes"]["strict"]["micro"]["tp"] == 0


def test_missing_documents(app, corpora) -> None:
    result = run(app, base(corpora, "partial"))
    assert result.exit_code != 0
    assert isinstance(result.exception, InputError)
    assert "--allow-missing" in str(result.exception)
    result = run(app, [*base(corpora, "partial"), "--allow-missing"])
    assert result.exit_code == 0, result.output
    assert "warning" in result.stderr and "'d2'" in result.stderr


@pytest.mark.parametrize(
    ("extra", "error"),
    [
        (["--level", "word"], ConfigError),
        (["--mode", "exact"], ConfigError),
        (["--metric", "accuracy"], ConfigError),
        (["--format", "nope"], UnknownFormatError),
        (["--scheme", "no_such_scheme"], ConfigError),
    ],
)
def test_bad_options(app, corpora, extra, error) -> None:
    result = run(app, [*base(corpora), *extra])
    assert result.exit_code != 0
    assert isinstance(result.exception, error), result.exception


def test_bad_path(app, corpora, tmp_path) -> None:
    result = run(app, ["--gold", str(tmp_path / "absent"), "--system", str(corpora["system"]), "-f", "jsonl"])
    assert isinstance(result.exception, FormatError)
    assert "does not exist" in str(result.exception)


def test_main_turns_errors_into_one_line(corpora, capsys) -> None:
    from clinideid.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["evaluate", *base(corpora), "--level", "word"])
    assert exit_info.value.code == 2
    assert "error: unknown evaluation level 'word'" in capsys.readouterr().err


def test_pipeline_and_model_are_scored_on_the_gold_texts(app, tmp_path) -> None:
    text = "Nombre: Ernesto\nApellidos: Rivera Bueno\nFecha de ingreso: 12/12/2016\nCP: 28016\n"
    gold = [
        Document(
            "n1",
            text,
            "es",
            spans=(
                Span(8, 15, "NOMBRE_SUJETO_ASISTENCIA"),
                Span(27, 39, "NOMBRE_SUJETO_ASISTENCIA"),
                Span(58, 68, "FECHAS"),
            ),
        )
    ]
    path = tmp_path / "gold.jsonl"
    write_corpus(gold, path, "jsonl")
    common = ["--gold", str(path), "--format", "jsonl", "--scheme", "meddocan", "--level", "binary"]
    res = run(app, [*common, "--pipeline", "es", "--mode", "token", "--json", str(tmp_path / "p.json")])
    assert res.exit_code == 0, res.output
    scores = json.loads((tmp_path / "p.json").read_text("utf-8"))
    assert scores["modes"]["token"]["micro"]["recall"] == 1.0
    res = run(app, [*common, "--model", "es-meddocan-crf", "--mode", "token"])
    assert res.exit_code == 0, res.output
    res = run(app, [*common, "--model", "es-meddocan-crf", "--system", str(path)])
    assert res.exit_code != 0 and "exactly one of" in str(res.exception or res.output)
