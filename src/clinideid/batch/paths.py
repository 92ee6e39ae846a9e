"""Where a batch may read and write: input/output overlap checks and the one way to name an output.

Every output file is named by ``OutputNamer``: the document id, sanitised so that no id (``../../x``,
``/abs/path``, control characters, undecodable bytes) can leave the output folder, made unique (duplicates
get ``~2``, ``~3``… and are reported), or replaced by a keyed hash of the id when file names must not carry
what the ids say.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from clinideid.errors import ConfigError
from clinideid.files import is_link_or_odd

#: the folder inside an output folder that holds the run's journal, lock and temporary files
STATE_DIR = ".clinideid"
JOURNAL_NAME = "journal.jsonl"
LOCK_NAME = "lock"
TMP_DIR = "tmp"  # temporary files, renamed into place
STAGING_DIR = "staging"  # outputs that grow while the run goes on (a JSONL output, table parts)
REPORT_NAME = "report.jsonl"
SUMMARY_NAME = "summary.json"
AUDIT_HTML_NAME = "audit.html"
RESERVED_NAMES = frozenset({STATE_DIR, REPORT_NAME, SUMMARY_NAME, AUDIT_HTML_NAME})
#: longest file-name component written, in UTF-8 bytes (most file systems allow 255)
MAX_COMPONENT_BYTES = 200
NAMING = ("id", "hash")


def check_paths(source: Path, output: Path) -> None:
    """``ConfigError`` unless the output folder and the input are disjoint and the output is a folder.

    Refused: the output equal to the input, inside an input folder (the next run would read its own
    outputs), containing the input (an input inside the output folder could be overwritten or truncated),
    or an existing file.
    """
    if output.exists() and not output.is_dir():
        raise ConfigError(f"the output {output} exists and is not a folder; give a folder for -o/--output")
    src = source.resolve()
    out = output.resolve()
    if src == out:
        raise ConfigError("the output folder is the input: originals would be overwritten; choose another -o")
    if source.is_dir() and out.is_relative_to(src):
        raise ConfigError(
            "the output folder is inside the input folder: a later run would read its outputs as inputs; "
            "choose an -o outside the input"
        )
    if src.is_relative_to(out):
        raise ConfigError(
            "the input is inside the output folder, where it could be overwritten; choose another -o"
        )


def display_id(raw: str) -> str:
    """A printable form of an id or file name: undecodable bytes (kept by ``os`` as lone surrogates) and
    control characters become escapes, so the id can be written to JSON and to the terminal."""
    text = raw.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() or c == " " else f"\\x{ord(c):02x}" for c in text)


def safe_relpath(doc_id: str) -> str:
    """A relative POSIX path for ``doc_id`` that stays inside the output folder.

    Separators (``/`` and ``\\``) keep the id's folder layout; undecodable bytes and control characters
    become ``%XX``; empty, ``.`` and ``..`` parts are dropped;
    a part starting with a dot is prefixed with ``_`` (no hidden files, no clash with the run's state);
    over-long parts are shortened with a hash of what was cut so that distinct ids stay distinct.
    """
    parts = []
    for raw in doc_id.replace("\\", "/").split("/"):
        part = display_id(raw).replace("\\x", "%").strip()  # escapes as %XX: no backslash in names
        if part in ("", ".", ".."):
            continue
        if part.startswith("."):
            part = "_" + part
        parts.append(_shorten(part))
    if not parts:
        return "_"
    if len(parts) == 1 and parts[0] in RESERVED_NAMES:
        parts[0] = "_" + parts[0]
    return "/".join(parts)


def _shorten(part: str) -> str:
    raw = part.encode("utf-8")
    if len(raw) <= MAX_COMPONENT_BYTES:
        return part
    digest = hashlib.sha256(raw).hexdigest()[:12]
    head = raw[: MAX_COMPONENT_BYTES - 13].decode("utf-8", "ignore")
    return f"{head}~{digest}"


class OutputNamer:
    """Unique, safe output ids for the documents of one run, in input order (so a resumed run gets the
    same names).

    ``naming="id"`` keeps the (sanitised) ids; ``naming="hash"`` replaces each by an HMAC of the id under
    the run's key, so neither file names nor reports repeat the ids.
    """

    def __init__(self, naming: str = "id", key: bytes | None = None) -> None:
        if naming not in NAMING:
            raise ConfigError(f"--name-outputs must be one of {', '.join(NAMING)}")
        if naming == "hash" and key is None:
            raise ConfigError("--name-outputs hash needs a secret key: pass --key-file (or --ephemeral-key)")
        self.naming = naming
        self._key = key
        self._taken: set[str] = set()
        self.duplicates = 0

    def hashed(self, doc_id: str) -> str:
        assert self._key is not None
        message = b"output-name\x00" + doc_id.encode("utf-8", "surrogateescape")
        return hmac.new(self._key, message, "sha256").hexdigest()[:24]

    def name(self, doc_id: str, suffix: str = "") -> tuple[str, bool]:
        """``(unique output id, was_duplicate)``; the output file is the id plus ``suffix``."""
        base = self.hashed(doc_id) if self.naming == "hash" else safe_relpath(doc_id)
        candidate, n = base, 1
        while (candidate + suffix).casefold() in self._taken:
            n += 1
            candidate = f"{base}~{n}"
        self._taken.add((candidate + suffix).casefold())
        if n > 1:
            self.duplicates += 1
        return candidate, n > 1


def inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` (resolved, links followed) lies in ``folder``."""
    try:
        return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(folder))
    except OSError:
        return False


def prepare_output_folder(out_dir: Path, overwrite: bool, outputs: Iterable[str] = ()) -> None:
    """Make the output folder and check it before a run writes to it.

    ``ConfigError`` when it is not empty and holds no clinideid run (unless ``overwrite``), and when a link
    (or a file of another kind) stands where the run keeps its state (``.clinideid`` and what is in it) or
    where it writes ``report.jsonl``, ``summary.json``, ``audit.html`` or one of ``outputs`` (names relative
    to the folder): such a link is never followed; ``overwrite`` removes it (the link, never its target),
    and the run makes what belongs there anew. ``OSError`` when the folder cannot be made.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    unsafe = _unsafe_entries(out_dir, [REPORT_NAME, SUMMARY_NAME, AUDIT_HTML_NAME, *outputs])
    if unsafe and not overwrite:
        raise ConfigError(
            f"the output folder holds a symbolic link or a file of another kind where clinideid keeps its own "
            f"files ({', '.join(label for _, label in unsafe)}); it is never followed: remove it, or pass "
            "--overwrite to remove it (the link only, never what it points to) and start the run anew"
        )
    for path, _ in unsafe:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    has_journal = (out_dir / STATE_DIR / JOURNAL_NAME).is_file()
    others = [p for p in out_dir.iterdir() if p.name != STATE_DIR]
    if others and not has_journal and not overwrite:
        raise ConfigError(
            "the output folder is not empty and holds no clinideid run; choose a new or empty -o, or pass "
            "--overwrite to write into it anyway"
        )


def _unsafe_entries(out_dir: Path, outputs: list[str]) -> list[tuple[Path, str]]:
    """``(path, label)`` of each entry that is not the kind of thing the run writes there; labels name
    clinideid's own files only (an output named after an input is "an output")."""
    state = out_dir / STATE_DIR
    found: list[tuple[Path, str]] = []
    for name in outputs:
        if is_link_or_odd(out_dir / name, want_dir=False):
            found.append((out_dir / name, name if name in RESERVED_NAMES else "an output"))
    if is_link_or_odd(state, want_dir=True):
        return [*found, (state, STATE_DIR)]
    for name, want_dir in ((TMP_DIR, True), (STAGING_DIR, True), (JOURNAL_NAME, False), (LOCK_NAME, False)):
        if is_link_or_odd(state / name, want_dir):
            found.append((state / name, f"{STATE_DIR}/{name}"))
    staging = state / STAGING_DIR
    if staging.is_dir() and not staging.is_symlink():
        for entry in sorted(staging.iterdir()):
            if is_link_or_odd(entry, want_dir=False):
                found.append((entry, f"{STATE_DIR}/{STAGING_DIR}/…"))
    return found
