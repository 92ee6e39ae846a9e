"""The rule-pack file format, as pydantic models.

A pack is YAML data: definitions (named regex fragments), word lists, an allow-list and an ordered list
of passes, each holding rules of one of five kinds (``regex``, ``field``, ``fields``, ``context_name``,
``gazetteer``). These models only check the *shape* of a pack file; ``loader`` merges included packs and
``compiler`` turns the result into matchers (compiling regexes, resolving labels, validators and word
lists) so that every error can name the pack file, pass and rule. ``packs/README.md`` documents the
format for pack authors.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

RULE_ID = r"^[A-Za-z0-9_.\-]+$"
DEFAULT_SEPARATOR = r"[ \t]*[:=][ \t]*"
FLAG_NAMES = ("IGNORECASE", "MULTILINE", "DOTALL", "VERBOSE", "ASCII")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ContextSpec(_Strict):
    """Words that must (``context``) or must not (``not_context``) appear near a match.

    ``before`` words are looked for in the ``window`` before the match, ``after`` words in the window
    after it; the window counts characters or tokens (``unit``). Words match case-insensitively as whole
    words; with ``regex: true`` they are regular expressions instead.
    """

    before: list[str] = Field(default_factory=list)
    after: list[str] = Field(default_factory=list)
    window: int = Field(40, ge=1, le=2000)
    unit: Literal["chars", "tokens"] = "chars"
    regex: bool = False

    @model_validator(mode="after")
    def _some_words(self) -> ContextSpec:
        if not self.before and not self.after:
            raise ValueError("a context needs 'before' and/or 'after' words")
        return self


class PropagateSpec(_Strict):
    """How a found name is searched again in the rest of the document.

    ``full``: the whole name (case-insensitive, flexible spacing); ``parts``: each name word of at least
    ``min_part_length`` letters that is not a connector or allow-listed (must be capitalised in the text);
    ``initials``: a part may be preceded by initials ("J. Smith", "J.R. Smith").
    """

    full: bool = True
    parts: bool = True
    initials: bool = True
    min_part_length: int = Field(3, ge=1, le=20)
    score_factor: float = Field(0.9, gt=0.0, le=1.0)


class _RuleBase(_Strict):
    id: Annotated[str, Field(pattern=RULE_ID, min_length=1, max_length=80)]
    description: str | None = None
    label: str | None = None
    score: float = Field(0.85, ge=0.0, le=1.0)
    #: a known non-PHI pattern: masked for later passes but never reported (Philter's "safe" filters)
    safe: bool = False
    #: search the names this rule finds everywhere else in the document
    propagate: bool | PropagateSpec = False
    #: drop matches whose text is allow-listed (default: only for gazetteer rules)
    allowlist: bool | None = None
    min_length: int = Field(1, ge=1)
    max_length: int = Field(500, ge=1)
    context: ContextSpec | None = None
    not_context: ContextSpec | None = None
    #: when ``context`` is given and not required, its presence adds ``boost`` to the score instead
    context_required: bool = True
    boost: float = Field(0.1, ge=0.0, le=1.0)
    #: among overlapping candidates of one pass, higher priority wins first, then the longer span
    priority: int = 0
    #: a cheap regex that must occur in the (masked) text for the rule to run at all: a speed-up for
    #: rules whose pattern is slow to scan for and rarely matches (IP addresses, card numbers)
    trigger: str | None = None
    enabled: bool = True

    @model_validator(mode="after")
    def _label_or_safe(self) -> _RuleBase:
        if (
            not self.safe
            and not self.label
            and not getattr(self, "groups", None)
            and not getattr(self, "list_labels", None)
            and getattr(self, "kind", None) != "fields"
        ):
            raise ValueError("a rule needs a 'label' (or 'safe: true' for a known non-PHI pattern)")
        return self


class RegexRule(_RuleBase):
    """A regular expression (``regex`` module syntax; ``{{NAME}}`` expands a pack definition)."""

    kind: Literal["regex"]
    pattern: str = Field(min_length=1)
    flags: list[str] = Field(default_factory=list)
    #: the group whose text is the span (number or name); default: the whole match
    group: int | str | None = None
    #: several spans per match: named group -> label
    groups: dict[str, str] | None = None
    #: checksum validator name (``clinideid.validators.VALIDATORS``: luhn, es_dni, iban, ...); it gets the
    #: group's text with spaces, hyphens, dots and slashes removed
    validator: str | None = None

    @field_validator("flags")
    @classmethod
    def _known_flags(cls, v: list[str]) -> list[str]:
        bad = [f for f in v if f.upper() not in FLAG_NAMES]
        if bad:
            raise ValueError(f"unknown regex flag(s) {bad}; use {', '.join(FLAG_NAMES)}")
        return [f.upper() for f in v]


class FieldRule(_RuleBase):
    """A form field: ``key`` + separator + value ("Nombre: Ana", "MRN: 12345").

    ``value`` is ``line`` (rest of the line, at most ``max_length`` + 1 characters read), ``word`` (next
    non-space run) or a regex (keep it bounded); ``stop`` regexes cut the value early (e.g. at the next key
    on the same line, ``{{NEXT_FIELD}}``), and the search goes on from the cut. Trailing spaces and
    ``.,;:`` are trimmed. Keys match case-insensitively, any run of spaces in a key may vary; with
    ``line_start`` the key must look like a form key: in any case at the start of a line or after a ``|``,
    a tab or two spaces, and written with a capital after anything else on the line ("x Patient: ..."
    is a field, "Informe del paciente: ..." is not).
    """

    kind: Literal["field"]
    keys: list[str] = Field(min_length=1)
    line_start: bool = False
    separator: str = DEFAULT_SEPARATOR
    value: str = "line"
    stop: list[str] = Field(default_factory=list)
    case_sensitive: bool = False
    validator: str | None = None


class FieldsRule(_RuleBase):
    """The form fields of field tables (``fields/<lang>.yaml`` or files of the user's): every label of the
    tables, anywhere on a line, with a value of the kind the label names ("DOB: ...", "Employer: ...",
    "Geb. 22.09.1951"). Labels are masked as known non-PHI; values get the label of their group.
    ``tables``: packaged table names or paths relative to the pack file (default: the pack's language).
    """

    kind: Literal["fields"]
    tables: list[str] = Field(default_factory=list)
    #: names found in fields are searched in the rest of the document (the groups that say so: names)
    propagate: bool | PropagateSpec = True


class ContextNameRule(_RuleBase):
    """A cue (title, role, form key) followed (or preceded) by capitalised name words.

    ``cues`` are literal strings, ``cue_patterns`` regexes. ``word`` is the regex of one name word,
    ``connectors`` may sit between words ("de la", "van"), ``stop_words`` end the name (matched as
    written or in upper case), at most ``max_words`` name words are taken. With ``require_list`` at least one word must be in one of those
    word lists (``first_names_male``, ``surnames``, ...); with ``accept_rare_words`` also a word of at least
    4 letters that is not a common word of the pack's language (Zipf < 3: "mr papadopoulos" in a lower-case
    note is a name whether the lists know it or not, "mr moderate" is mitral regurgitation).
    """

    kind: Literal["context_name"]
    cues: list[str] = Field(default_factory=list)
    cue_patterns: list[str] = Field(default_factory=list)
    cue_case_sensitive: bool = False
    direction: Literal["after", "before"] = "after"
    gap: str = r"[ \t]*[:.]?[ \t]*"
    word: str = "{{NAME_WORD}}"
    connectors: list[str] = Field(default_factory=list)
    stop_words: list[str] = Field(default_factory=list)
    min_words: int = Field(1, ge=1, le=10)
    max_words: int = Field(4, ge=1, le=10)
    require_list: list[str] = Field(default_factory=list)
    accept_rare_words: bool = False

    @model_validator(mode="after")
    def _has_cue(self) -> ContextNameRule:
        if not self.cues and not self.cue_patterns:
            raise ValueError("a context_name rule needs 'cues' or 'cue_patterns'")
        if self.min_words > self.max_words:
            raise ValueError("min_words is larger than max_words")
        if self.accept_rare_words and not self.require_list:
            raise ValueError("accept_rare_words only widens require_list; give require_list too")
        return self


class GazetteerRule(_RuleBase):
    """Entries of word lists found in the text (whole words; optionally fuzzy, 1 edit).

    ``list_labels`` (list name -> label) gives each list its own label in one rule: one pass over the
    text instead of one per list (an entry in several lists gets the label of the first).
    """

    kind: Literal["gazetteer"]
    lists: list[str] = Field(default_factory=list)
    list_labels: dict[str, str] = Field(default_factory=dict)
    words: list[str] = Field(default_factory=list)
    files: list[str] = Field(default_factory=list)
    fuzzy: Literal[0, 1] = 0
    case_sensitive: bool = False
    require_capital: bool = True
    min_length: int = Field(3, ge=1)
    #: grow each hit over what follows / precedes it (e.g. a first name over the surname after it):
    #: regexes matched right after / right before the span, up to ``extend_max`` times each
    extend_right: str | None = None
    extend_left: str | None = None
    extend_max: int = Field(3, ge=1, le=10)
    #: keep only hits that could be extended ("Will Smith", not the verb "will" or a lone "Grant")
    require_extension: bool = False

    @model_validator(mode="after")
    def _has_entries(self) -> GazetteerRule:
        if not self.lists and not self.words and not self.files and not self.list_labels:
            raise ValueError("a gazetteer rule needs 'lists', 'list_labels', 'words' or 'files'")
        if self.list_labels and (self.lists or self.label):
            raise ValueError("use either 'list_labels' or 'lists' with 'label', not both")
        if self.list_labels and (self.words or self.files):
            raise ValueError("'words' and 'files' need a 'label'; put them in a pack list for 'list_labels'")
        return self


Rule = Annotated[
    RegexRule | FieldRule | FieldsRule | ContextNameRule | GazetteerRule, Field(discriminator="kind")
]


class PassSpec(_Strict):
    name: Annotated[str, Field(pattern=RULE_ID)]
    description: str | None = None
    rules: list[Rule] = Field(default_factory=list)
    #: where a new pass goes when it extends an included pack (default: at the end)
    before: str | None = None
    after: str | None = None
    #: rule ids of included packs to drop from this pass
    disable: list[str] = Field(default_factory=list)


class AllowlistSpec(_Strict):
    lists: list[str] = Field(default_factory=list)
    words: list[str] = Field(default_factory=list)
    files: list[str] = Field(default_factory=list)


class MergeSpec(_Strict):
    """Adjacent spans of one of ``labels`` separated only by ``gap`` are merged at the end."""

    labels: list[str] = Field(default_factory=list)
    gap: str = r"[ \t]*-?[ \t]*"


class PackFile(_Strict):
    """One YAML pack file as written by its author."""

    name: Annotated[str, Field(pattern=RULE_ID)]
    language: str | None = None
    description: str | None = None
    include: list[str] = Field(default_factory=list)
    definitions: dict[str, str] = Field(default_factory=dict)
    lists: dict[str, list[str]] = Field(default_factory=dict)
    allowlist: AllowlistSpec = Field(default_factory=AllowlistSpec)
    propagation: PropagateSpec = Field(default_factory=PropagateSpec)
    merge_adjacent: MergeSpec = Field(default_factory=MergeSpec)
    passes: list[PassSpec] = Field(default_factory=list)
    order: list[str] | None = None


def rule_kinds() -> list[str]:
    return ["regex", "field", "fields", "context_name", "gazetteer"]


def describe_location(data: Any, loc: tuple[Any, ...]) -> str:
    """``pass 'x', rule 'y', field 'z'`` for a pydantic error location inside a raw pack mapping."""
    parts: list[str] = []
    node: Any = data
    i = 0
    while i < len(loc):
        key = loc[i]
        if key == "passes" and i + 1 < len(loc) and isinstance(node, dict):
            idx = loc[i + 1]
            try:
                node = node["passes"][idx]
                parts.append(f"pass {node.get('name', idx)!r}")
            except (KeyError, IndexError, TypeError, AttributeError):
                parts.append(f"pass #{idx}")
                node = None
            i += 2
            continue
        if key == "rules" and i + 1 < len(loc) and isinstance(node, dict):
            idx = loc[i + 1]
            try:
                node = node["rules"][idx]
                parts.append(f"rule {node.get('id', f'#{idx}')!r}")
            except (KeyError, IndexError, TypeError, AttributeError):
                parts.append(f"rule #{idx}")
                node = None
            i += 2
            continue
        if isinstance(key, str) and key in rule_kinds():
            i += 1  # the discriminator branch name pydantic adds
            continue
        if isinstance(key, int):
            parts.append(f"item {key}")
            node = node[key] if isinstance(node, list) and 0 <= key < len(node) else None
        else:
            parts.append(f"field {key!r}")
            node = node.get(key) if isinstance(node, dict) else None
        i += 1
    return ", ".join(parts) if parts else "top level"
