"""Find, read, validate and merge rule packs (``include``) into one ordered list of passes.

A pack is named (``es`` -> the packaged ``packs/es.yaml``) or given by path. Included packs are merged
first; the including pack then extends them: a pass with an existing name adds rules to it (a rule with an
existing id replaces that rule in place, ``disable`` drops rules), a new pass goes at the end or where its
``before``/``after`` says, and ``order`` (if given) fixes the final order of every pass. Definitions and
named lists of the including pack override those it includes; allow-lists and merge labels are unions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from clinideid.detect.rules.schema import (
    AllowlistSpec,
    MergeSpec,
    PackFile,
    PassSpec,
    PropagateSpec,
    describe_location,
)
from clinideid.errors import ConfigError

PACKS_PACKAGE = "clinideid.detect.rules"
PACKS_DIR = "packs"


@dataclass(frozen=True)
class RuleSource:
    """Where a rule was written: its pack's name, file (for messages) and folder (for relative files)."""

    pack: str
    origin: str
    folder: Path | None


@dataclass
class MergedPass:
    name: str
    description: str | None
    rules: list[tuple[Any, RuleSource]] = field(default_factory=list)


@dataclass
class MergedPack:
    """A pack with its includes resolved: what ``compiler.compile_pack`` turns into matchers."""

    name: str
    language: str | None
    origin: str
    definitions: dict[str, str]
    lists: dict[str, list[str]]
    allowlist: list[tuple[AllowlistSpec, RuleSource]]
    propagation: PropagateSpec
    merge_adjacent: MergeSpec
    passes: list[MergedPass]


def available_packs() -> list[str]:
    """Names of the packaged packs."""
    folder = resources.files(PACKS_PACKAGE).joinpath(PACKS_DIR)
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".yaml"))


#: libyaml's safe loader when PyYAML was built with it (ten times faster on the big packs), else PyYAML's
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class YamlKind:
    """A kind of YAML file the rules read by name (packaged) or path: for reading it and for messages."""

    what: str  # "rule pack", "field table"
    folder: str  # the packaged files' folder in this package
    listing: Callable[[], list[str]]  # the packaged names
    shape: str  # what the top-level mapping holds ("'name' and 'passes'")
    model: type[BaseModel]
    describe: Callable[[Any, tuple[Any, ...]], str] | None = None  # a pydantic location, readably
    origin_prefix: str = ""  # before "<name>.yaml" in the origin of a packaged file


def read_yaml_file(ref: str, base: Path | None, kind: YamlKind) -> tuple[Any, str, Path | None, str]:
    """Read, parse and validate one file of ``kind`` (a packaged name or a path, relative to ``base``):
    (spec, origin for messages, folder, identity key). Every problem is a ``ConfigError`` naming it."""
    text, origin, folder, key = _read_text(ref, base, kind)
    try:
        data = yaml.load(text, Loader=_SAFE_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None)
        hint = f": {problem}" if problem else ""
        raise ConfigError(
            f"{kind.what} {origin} is not valid YAML{where}{hint} (quote values that contain '#' or ': ')"
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{kind.what} {origin} must be a YAML mapping with {kind.shape}")
    try:
        return kind.model.model_validate(data), origin, folder, key
    except ValidationError as exc:
        describe = kind.describe or (lambda _data, loc: ".".join(str(p) for p in loc))
        problems = [f"{describe(data, tuple(err['loc']))}: {err['msg']}" for err in exc.errors()[:5]]
        more = "" if exc.error_count() <= 5 else f" (and {exc.error_count() - 5} more)"
        raise ConfigError(f"{kind.what} {origin} is invalid: " + "; ".join(problems) + more) from None


def _read_text(ref: str, base: Path | None, kind: YamlKind) -> tuple[str, str, Path | None, str]:
    looks_like_path = ref.endswith((".yaml", ".yml")) or "/" in ref or "\\" in ref
    if looks_like_path:
        path = Path(ref)
        if not path.is_absolute() and base is not None:
            path = base / path
        if not path.is_file():
            raise ConfigError(f"{kind.what} file {path} does not exist")
        try:
            return path.read_text("utf-8"), str(path), path.parent, str(path.resolve())
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read {kind.what} {path}: {exc}") from None
    res = resources.files(PACKS_PACKAGE).joinpath(kind.folder, f"{ref}.yaml")
    if not res.is_file():
        raise ConfigError(
            f"unknown {kind.what} {ref!r}; packaged: {', '.join(kind.listing())}, "
            f"or give the path of a YAML {kind.what} file"
        )
    folder = Path(str(res)).parent if Path(str(res)).exists() else None
    return res.read_text("utf-8"), f"{kind.origin_prefix}{ref}.yaml", folder, f"package:{ref}"


PACK = YamlKind("rule pack", PACKS_DIR, available_packs, "'name' and 'passes'", PackFile, describe_location)


def read_pack_file(ref: str, base: Path | None = None) -> tuple[PackFile, str, Path | None, str]:
    """Parse and validate one pack file (no includes resolved): (spec, origin, folder, identity key)."""
    return read_yaml_file(ref, base, PACK)


def load_merged_pack(ref: str | Path) -> MergedPack:
    """The pack ``ref`` (name or path) with all its includes merged in."""
    return _load(str(ref), None, ())


def _load(ref: str, base: Path | None, stack: tuple[str, ...]) -> MergedPack:
    spec, origin, folder, key = read_pack_file(ref, base)
    if key in stack:
        chain = " -> ".join((*stack, key))
        raise ConfigError(f"rule pack {origin} includes itself: {chain}")
    source = RuleSource(spec.name, origin, folder)
    merged: MergedPack | None = None
    for inc in spec.include:
        sub = _load(inc, folder, (*stack, key))
        merged = sub if merged is None else _merge(merged, sub, origin)
    if merged is None:
        merged = MergedPack(
            name=spec.name,
            language=spec.language,
            origin=origin,
            definitions={},
            lists={},
            allowlist=[],
            propagation=spec.propagation,
            merge_adjacent=MergeSpec(),
            passes=[],
        )
    return _extend(merged, spec, source)


def _merge(a: MergedPack, b: MergedPack, origin: str) -> MergedPack:
    """Two included packs side by side: ``b``'s passes extend ``a``'s (same rules as for an extension)."""
    passes = [MergedPass(p.name, p.description, list(p.rules)) for p in a.passes]
    by_name = {p.name: p for p in passes}
    for p in b.passes:
        if p.name in by_name:
            _add_rules(by_name[p.name], p.rules, origin)
        else:
            new = MergedPass(p.name, p.description, list(p.rules))
            passes.append(new)
            by_name[p.name] = new
    return MergedPack(
        name=b.name,
        language=b.language or a.language,
        origin=b.origin,
        definitions={**a.definitions, **b.definitions},
        lists={**a.lists, **b.lists},
        allowlist=[*a.allowlist, *b.allowlist],
        propagation=b.propagation,
        merge_adjacent=MergeSpec(
            labels=list(dict.fromkeys([*a.merge_adjacent.labels, *b.merge_adjacent.labels])),
            gap=b.merge_adjacent.gap,
        ),
        passes=passes,
    )


def _add_rules(target: MergedPass, rules: list[tuple[Any, RuleSource]], origin: str) -> None:
    index = {r.id: i for i, (r, _) in enumerate(target.rules)}
    for rule, src in rules:
        if rule.id in index:
            target.rules[index[rule.id]] = (rule, src)
        else:
            index[rule.id] = len(target.rules)
            target.rules.append((rule, src))


def _extend(base: MergedPack, spec: PackFile, source: RuleSource) -> MergedPack:
    origin = source.origin
    passes = [MergedPass(p.name, p.description, list(p.rules)) for p in base.passes]
    by_name = {p.name: p for p in passes}
    for ps in spec.passes:
        _check_unique_rule_ids(ps, origin)
        rules = [(r, source) for r in ps.rules]
        if ps.name in by_name:
            target = by_name[ps.name]
            if ps.description:
                target.description = ps.description
            if ps.disable:
                known = {r.id for r, _ in target.rules}
                missing = [d for d in ps.disable if d not in known]
                if missing:
                    raise ConfigError(
                        f"rule pack {origin}, pass {ps.name!r}: cannot disable unknown rule(s) "
                        f"{', '.join(missing)}"
                    )
                target.rules = [(r, s) for r, s in target.rules if r.id not in set(ps.disable)]
            _add_rules(target, rules, origin)
            continue
        if ps.disable:
            raise ConfigError(
                f"rule pack {origin}, pass {ps.name!r}: 'disable' only applies to included passes"
            )
        new = MergedPass(ps.name, ps.description, rules)
        _insert(passes, new, ps, origin)
        by_name[ps.name] = new
    if spec.order is not None:
        passes = _reorder(passes, spec.order, origin)
    return MergedPack(
        name=spec.name,
        language=spec.language or base.language,
        origin=origin,
        definitions={**base.definitions, **spec.definitions},
        lists={**base.lists, **spec.lists},
        allowlist=[*base.allowlist, (spec.allowlist, source)],
        propagation=spec.propagation if "propagation" in spec.model_fields_set else base.propagation,
        merge_adjacent=MergeSpec(
            labels=list(dict.fromkeys([*base.merge_adjacent.labels, *spec.merge_adjacent.labels])),
            gap=spec.merge_adjacent.gap
            if "gap" in spec.merge_adjacent.model_fields_set
            else base.merge_adjacent.gap,
        ),
        passes=passes,
    )


def _check_unique_rule_ids(ps: PassSpec, origin: str) -> None:
    seen: set[str] = set()
    for r in ps.rules:
        if r.id in seen:
            raise ConfigError(f"rule pack {origin}, pass {ps.name!r}: rule id {r.id!r} is used twice")
        seen.add(r.id)


def _insert(passes: list[MergedPass], new: MergedPass, ps: PassSpec, origin: str) -> None:
    anchor = ps.before or ps.after
    if anchor is None:
        passes.append(new)
        return
    names = [p.name for p in passes]
    if anchor not in names:
        raise ConfigError(
            f"rule pack {origin}, pass {ps.name!r}: no pass {anchor!r} to go "
            f"{'before' if ps.before else 'after'}; passes so far: {', '.join(names) or 'none'}"
        )
    i = names.index(anchor)
    passes.insert(i if ps.before else i + 1, new)


def _reorder(passes: list[MergedPass], order: list[str], origin: str) -> list[MergedPass]:
    by_name = {p.name: p for p in passes}
    unknown = [n for n in order if n not in by_name]
    if unknown:
        raise ConfigError(f"rule pack {origin}: 'order' names unknown pass(es) {', '.join(unknown)}")
    if len(set(order)) != len(order):
        raise ConfigError(f"rule pack {origin}: 'order' lists a pass twice")
    missing = [p.name for p in passes if p.name not in order]
    if missing:
        raise ConfigError(f"rule pack {origin}: 'order' must list every pass; missing {', '.join(missing)}")
    return [by_name[n] for n in order]
