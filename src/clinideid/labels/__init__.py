"""PHI label schemes: the canonical (i2b2 2014) taxonomy and mappings from other schemes onto it.

The canonical label of a span is a subcategory name (``PATIENT``, ``DATE``, ``MEDICALRECORD``, ...). Every
other scheme (MEDDOCAN, PhysioNet deid, i2b2 2006, EDS-Pseudo, Presidio's synthetic set, or a user's own)
maps onto it through a YAML mapping file: ``{scheme: NAME, mapping: {SOURCE_LABEL: CANONICAL_LABEL}}``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Literal

import yaml

from clinideid.errors import ConfigError, LabelError

Level = Literal["subcategory", "category", "binary"]
LEVELS: tuple[str, ...] = ("subcategory", "category", "binary")
BINARY_LABEL = "PHI"


@dataclass(frozen=True, slots=True)
class Subcategory:
    name: str
    category: str
    type: str
    hipaa: bool
    extension: bool = False


class Taxonomy:
    """The canonical taxonomy: categories, subcategories and their HIPAA flags."""

    def __init__(self, subcategories: Iterable[Subcategory]) -> None:
        self._subs: dict[str, Subcategory] = {}
        for sub in subcategories:
            if sub.name in self._subs:
                raise ConfigError(f"canonical taxonomy lists {sub.name!r} twice")
            self._subs[sub.name] = sub

    @property
    def labels(self) -> list[str]:
        return list(self._subs)

    @property
    def categories(self) -> list[str]:
        return list(dict.fromkeys(s.category for s in self._subs.values()))

    def __contains__(self, label: object) -> bool:
        return label in self._subs

    def get(self, label: str) -> Subcategory:
        try:
            return self._subs[label]
        except KeyError:
            raise LabelError(
                f"{label!r} is not a canonical label; known labels: {', '.join(self._subs)}"
            ) from None

    def category_of(self, label: str) -> str:
        return self.get(label).category

    def is_hipaa(self, label: str) -> bool:
        return self.get(label).hipaa

    def subcategories_of(self, category: str) -> list[str]:
        return [s.name for s in self._subs.values() if s.category == category]

    def from_i2b2(self, category: str, type_: str | None) -> str:
        """The canonical label for an i2b2 2014 ``<CATEGORY TYPE="...">`` tag."""
        category = category.upper()
        type_ = (type_ or category).upper()
        for sub in self._subs.values():
            if sub.category == category and sub.type == type_:
                return sub.name
        raise LabelError(f"i2b2 tag {category}/{type_} has no canonical label")

    def to_i2b2(self, label: str) -> tuple[str, str]:
        sub = self.get(label)
        return sub.category, sub.type


@cache
def canonical() -> Taxonomy:
    """The packaged canonical taxonomy (``labels/canonical.yaml``)."""
    data = yaml.safe_load(resources.files(__name__).joinpath("canonical.yaml").read_text("utf-8"))
    subs = []
    for category, items in data["categories"].items():
        for item in items:
            subs.append(
                Subcategory(
                    name=item["name"],
                    category=category,
                    type=item.get("type", item["name"]),
                    hipaa=bool(item["hipaa"]),
                    extension=bool(item.get("extension", False)),
                )
            )
    return Taxonomy(subs)


@dataclass(frozen=True)
class LabelMapping:
    """Maps a scheme's labels onto canonical labels.

    ``fallback``: when set, labels the mapping does not know map to it instead of raising.
    """

    scheme: str
    mapping: Mapping[str, str]
    language: str | None = None
    fallback: str | None = None

    def __post_init__(self) -> None:
        tax = canonical()
        bad = sorted({v for v in self.mapping.values() if v not in tax})
        if bad:
            raise ConfigError(
                f"label mapping {self.scheme!r} maps onto unknown canonical labels: {', '.join(bad)}"
            )
        if self.fallback is not None and self.fallback not in tax:
            raise ConfigError(f"fallback label {self.fallback!r} is not a canonical label")

    def __call__(self, label: str) -> str:
        return self.map(label)

    def map(self, label: str) -> str:
        found = self.mapping.get(label)
        if found is None:
            found = self.mapping.get(label.upper())
        if found is not None:
            return found
        if label in canonical():
            return label
        if self.fallback is not None:
            return self.fallback
        raise LabelError(
            f"label {label!r} is not in the {self.scheme!r} mapping; add it to the mapping file or pass a "
            "fallback label (e.g. --label-fallback OTHER_PHI)"
        )

    @property
    def source_labels(self) -> list[str]:
        return list(self.mapping)

    def with_fallback(self, fallback: str | None) -> LabelMapping:
        return LabelMapping(self.scheme, self.mapping, self.language, fallback)


def identity_mapping() -> LabelMapping:
    """The canonical scheme mapped onto itself."""
    return LabelMapping("canonical", {name: name for name in canonical().labels})


def available_schemes() -> list[str]:
    """Names of the packaged mapping files."""
    names = [
        p.name.removesuffix(".yaml")
        for p in resources.files(__name__).iterdir()
        if p.name.endswith(".yaml") and p.name != "canonical.yaml"
    ]
    return sorted(["canonical", *names])


def load_mapping(name_or_path: str | Path, fallback: str | None = None) -> LabelMapping:
    """A packaged mapping by scheme name (``meddocan``) or a user's YAML mapping file by path."""
    key = str(name_or_path)
    if key == "canonical":
        return identity_mapping().with_fallback(fallback)
    path = Path(key)
    if path.suffix in (".yaml", ".yml") or path.exists():
        if not path.is_file():
            raise ConfigError(f"label mapping file {path} does not exist")
        text = path.read_text("utf-8")
        origin = str(path)
    else:
        res = resources.files(__name__).joinpath(f"{key}.yaml")
        if not res.is_file():
            raise ConfigError(
                f"unknown label scheme {key!r}; packaged schemes: {', '.join(available_schemes())}, "
                "or give the path of a YAML mapping file"
            )
        text = res.read_text("utf-8")
        origin = key
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"label mapping {origin} is not valid YAML: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("mapping"), dict):
        raise ConfigError(f"label mapping {origin} must be a mapping with a 'mapping:' table")
    mapping = {str(k): str(v) for k, v in data["mapping"].items()}
    return LabelMapping(
        scheme=str(data.get("scheme", Path(origin).stem)),
        mapping=mapping,
        language=data.get("language"),
        fallback=fallback if fallback is not None else data.get("fallback"),
    )


def project_label(label: str, level: str) -> str:
    """``label`` seen at ``level``: itself, its canonical category, or the single binary label.

    Labels outside the canonical taxonomy (e.g. native MEDDOCAN types) are their own category.
    """
    if level == "subcategory":
        return label
    if level == "binary":
        return BINARY_LABEL
    if level == "category":
        tax = canonical()
        return tax.category_of(label) if label in tax else label
    raise ConfigError(f"unknown evaluation level {level!r}; choose one of {', '.join(LEVELS)}")


def is_hipaa_label(label: str) -> bool:
    """Whether HIPAA Safe Harbor requires removing a canonical label (non-canonical labels: True)."""
    tax = canonical()
    return tax.is_hipaa(label) if label in tax else True
