"""Turn a merged pack into matchers: expand definitions, compile regexes, check labels and validators,
build word lists. Every error names the pack file, the pass and the rule (never document text).
Compiled packs are cached, so a pack is compiled once per process (per file version).
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import regex

from clinideid.detect.rules.codecache import pattern_store
from clinideid.detect.rules.fastre import compile_fast
from clinideid.detect.rules.fieldtable import build_table, packaged_table
from clinideid.detect.rules.formfields import FormFieldMatcher
from clinideid.detect.rules.lexicon import build_gazetteer, file_entries, first_tokens, list_entries
from clinideid.detect.rules.loader import MergedPack, RuleSource, load_merged_pack
from clinideid.detect.rules.masking import mask_definitions
from clinideid.detect.rules.matchers import (
    CompiledContext,
    ContextNameMatcher,
    FieldMatcher,
    GazetteerMatcher,
    Matcher,
    RegexMatcher,
)
from clinideid.detect.rules.schema import (
    DEFAULT_SEPARATOR,
    ContextNameRule,
    ContextSpec,
    FieldRule,
    FieldsRule,
    GazetteerRule,
    PropagateSpec,
    RegexRule,
)
from clinideid.errors import ConfigError
from clinideid.labels import canonical

log = logging.getLogger(__name__)

#: regex fragments every pack can use as ``{{NAME}}`` (a pack's ``definitions`` may override them)
BUILTIN_DEFINITIONS: dict[str, str] = {
    # a capitalised or upper-case word, possibly hyphenated ("García", "GARCÍA", "Martín-Gómez", "O'Neil");
    # bounded (40 characters a part, four parts) so that a pattern tried at each part of a long run such
    # as "A-A-A-..." or "O'O'O'..." reads a bounded stretch each time (linear time; see README)
    "CAP_WORD": r"\p{Lu}[\p{Ll}\p{Lu}\p{M}'’]{0,40}(?:-\p{L}[\p{Ll}\p{Lu}\p{M}'’]{0,40}){0,3}{{NAME_END}}",
    # where a name word ends: before anything that is not a letter or digit, or before digits glued to a
    # word that ends in a lower-case letter ("Smith2", "Quackenbush000": no name holds digits, and the
    # tokenizer splits there too); never before digits glued to an upper-case letter, the shape of codes
    # ("SpO2", "HbA1c", "CD4", "T4", "B12")
    "NAME_END": r"(?:(?![\p{L}\p{N}])|(?<=[\p{Ll}\p{M}])(?=\p{N}))",
    "INITIAL": r"\p{Lu}\.(?!\p{L})",
    "NAME_WORD": r"(?:{{INITIAL}}|{{CAP_WORD}})",
    "WB_START": r"(?<![\p{L}\p{N}])",
    "WB_END": r"(?![\p{L}\p{N}])",
    # MASKED (any earlier finding) and MASKED_<LABEL> (one masked as that label), see masking.py
    **mask_definitions(),
}

_DEF_REF = regex.compile(r"\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}")
_FLAG_VALUES = {
    "IGNORECASE": regex.IGNORECASE,
    "MULTILINE": regex.MULTILINE,
    "DOTALL": regex.DOTALL,
    "VERBOSE": regex.VERBOSE,
    "ASCII": regex.ASCII,
}


@dataclass(frozen=True)
class CompiledPass:
    name: str
    description: str | None
    matchers: tuple[Matcher, ...]


@dataclass(frozen=True)
class CompiledPack:
    """A pack ready to run: passes of matchers plus the pack-wide allow-list and merge settings."""

    name: str
    language: str | None
    origin: str
    passes: tuple[CompiledPass, ...]
    allowlist: Any  # a Gazetteer or None
    merge_labels: frozenset[str]
    merge_gap: Any
    connectors: frozenset[str]

    @property
    def pass_names(self) -> list[str]:
        return [p.name for p in self.passes]

    def rule_ids(self) -> list[str]:
        return [m.rule_id for p in self.passes for m in p.matchers]


def expand(pattern: str, definitions: dict[str, str], where: str) -> str:
    """``pattern`` with every ``{{NAME}}`` replaced by its definition (recursively)."""
    defs = {**BUILTIN_DEFINITIONS, **definitions}
    for _ in range(20):
        if "{{" not in pattern:
            return pattern

        def sub(m: regex.Match) -> str:
            name = m.group(1)
            if name not in defs:
                raise ConfigError(
                    f"{where}: unknown definition {{{{{name}}}}}; defined: {', '.join(sorted(defs))}"
                )
            return f"(?:{defs[name]})"

        new = _DEF_REF.sub(sub, pattern)
        if new == pattern:
            return pattern
        pattern = new
    raise ConfigError(f"{where}: definitions nest too deeply (a definition refers to itself?)")


def compile_regex(pattern: str, flags: int, where: str, *, scan: bool = False) -> Any:
    """Compile a pack regex; ``scan``: it will scan whole texts, so pick the faster engine for it."""
    try:
        return compile_fast(pattern, flags, calibrate=scan)
    except regex.error as exc:
        raise ConfigError(f"{where}: invalid regular expression: {exc}") from None


def resolve_validator(name: str, where: str) -> Callable[[str], bool]:
    """The checksum validator ``name`` from ``clinideid.validators`` (``VALIDATORS[name]``)."""
    from clinideid import validators

    fn = validators.VALIDATORS.get(name) or getattr(validators, f"validate_{name}", None)
    if fn is None or not callable(fn):
        raise ConfigError(
            f"{where}: unknown validator {name!r}; available: {', '.join(sorted(validators.VALIDATORS))}"
        )
    return fn


def _check_label(label: str | None, where: str) -> None:
    if label is None:
        return
    tax = canonical()
    if label not in tax:
        raise ConfigError(f"{where}: unknown label {label!r}; use a canonical label: {', '.join(tax.labels)}")


def _word_alternation(words: list[str], is_regex: bool) -> str:
    parts = []
    for w in sorted(words, key=lambda w: (-len(w), w)):
        if is_regex:
            parts.append(f"(?:{w})")
            continue
        body = regex.sub(r"\\?\s+", r"\\s+", regex.escape(w))
        left = r"(?<![\p{L}\p{N}])" if w[:1].isalnum() else ""
        right = r"(?![\p{L}\p{N}])" if w[-1:].isalnum() else ""
        parts.append(f"{left}{body}{right}")
    return "|".join(parts)


def _context(spec: ContextSpec | None, definitions: dict[str, str], where: str) -> CompiledContext | None:
    if spec is None:
        return None
    sides = []
    for words in (spec.before, spec.after):
        if not words:
            sides.append(None)
            continue
        if spec.regex:
            words = [expand(w, definitions, f"{where}, context") for w in words]
        sides.append(
            compile_regex(_word_alternation(words, spec.regex), regex.IGNORECASE, f"{where}, context")
        )
    return CompiledContext(sides[0], sides[1], spec.window, spec.unit)


def _any_case(word: str) -> str:
    """One word in any case, first letter as a class: ``[Nn](?i:ombre)``."""
    first, rest = word[0], word[1:]
    lo, up = first.lower(), first.upper()
    head = (
        f"[{regex.escape(lo)}{regex.escape(up)}]"
        if lo != up and len(lo) == len(up) == 1
        else regex.escape(first)
    )
    if not rest:
        return head
    tail = regex.escape(rest)
    return head + (f"(?i:{tail})" if rest.lower() != rest.upper() else tail)


def literal(text: str, *, case_sensitive: bool, space: str) -> str:
    """``text`` as a regex: each run of whitespace becomes ``space``; unless ``case_sensitive``, case is
    ignored. Each word's first letter is written as a class (``[Nn](?i:ombre)``) rather than putting the
    whole literal under ``(?i:...)``, so the regex engines can still skip quickly to where a match may start.
    """
    words = text.split()
    if case_sensitive:
        return space.join(regex.escape(w) for w in words)
    return space.join(_any_case(w) for w in words)


def _capitalised(text: str, *, space: str) -> str:
    """``text`` as a regex whose first letter must be upper case, the rest in any case: ``N(?i:ame)``."""
    words = text.split()
    first = words[0]
    up = first[0].upper()
    head = regex.escape(up if len(up) == 1 else first[0])
    rest = first[1:]
    if rest:
        head += f"(?i:{regex.escape(rest)})" if rest.lower() != rest.upper() else regex.escape(rest)
    return space.join([head, *(_any_case(w) for w in words[1:])])


def field_keys_left(keys: list[str], any_case: str, line_start: bool, case_sensitive: bool) -> str:
    """The regex of a field rule's keys with what must stand before them.

    Without ``line_start``: a key in any case that does not continue a word. With it: a key in any case
    at the start of a line (after spaces), after a ``|`` or a tab or two spaces (table and fixed-width
    exports), or -- after anything else on the line (other text, another field, an emoji) -- a key written
    with a capital (``Patient:``, ``NAME:``), so a field in a one-line export is found where prose such
    as "informe del paciente:" is not.
    """
    bounded = r"(?<![\p{L}\p{N}])"
    if not line_start:
        return rf"{bounded}(?:{any_case})"
    capital = any_case if case_sensitive else "|".join(_capitalised(k, space=r"[ \t]*") for k in keys)
    return rf"(?:(?:^|[|\t]|[ ]{{2}})[ \t\ufeff]*(?:{any_case})|{bounded}(?:{capital}))"


class _Compiler:
    def __init__(self, merged: MergedPack) -> None:
        self.merged = merged
        self.language = merged.language
        self.connectors = frozenset(merged.lists.get("name_connectors", []))

    def where(self, src: RuleSource, pass_name: str, rule_id: str | None = None) -> str:
        text = f"rule pack {src.origin}, pass {pass_name!r}"
        return f"{text}, rule {rule_id!r}" if rule_id else text

    def entries(self, lists: list[str], words: list[str], files: list[str], src: RuleSource, where: str):
        out: list[str] = []
        for name in lists:
            out.extend(list_entries(name, self.language, self.merged.lists, where))
        out.extend(words)
        for f in files:
            out.extend(file_entries(f, src.folder, where))
        return out

    def compile(self) -> CompiledPack:
        self.allow = self.allowlist()
        passes = []
        seen_ids: set[str] = set()
        for mp in self.merged.passes:
            matchers = []
            for rule, src in mp.rules:
                if not rule.enabled:
                    continue
                where = self.where(src, mp.name, rule.id)
                full_id = f"{src.pack}/{mp.name}/{rule.id}"
                if full_id in seen_ids:
                    raise ConfigError(f"{where}: rule id {full_id!r} is used twice")
                seen_ids.add(full_id)
                matchers.append(self.rule(rule, src, full_id, where))
            passes.append(CompiledPass(mp.name, mp.description, tuple(matchers)))
        allow = self.allow
        for label in self.merged.merge_adjacent.labels:
            _check_label(label, f"rule pack {self.merged.origin}, merge_adjacent")
        gap = compile_regex(
            self.merged.merge_adjacent.gap, 0, f"rule pack {self.merged.origin}, merge_adjacent"
        )
        return CompiledPack(
            name=self.merged.name,
            language=self.language,
            origin=self.merged.origin,
            passes=tuple(passes),
            allowlist=allow,
            merge_labels=frozenset(self.merged.merge_adjacent.labels),
            merge_gap=gap,
            connectors=self.connectors,
        )

    def allowlist(self) -> Any:
        entries: list[str] = []
        for spec, src in self.merged.allowlist:
            where = f"rule pack {src.origin}, allowlist"
            entries.extend(self.entries(spec.lists, spec.words, spec.files, src, where))
        return build_gazetteer(entries) if entries else None

    def common(self, rule: Any, full_id: str, where: str) -> dict[str, Any]:
        _check_label(rule.label, where)
        propagate: PropagateSpec | None = None
        if rule.propagate is True:
            propagate = self.merged.propagation
        elif isinstance(rule.propagate, PropagateSpec):
            propagate = rule.propagate
        return {
            "rule_id": full_id,
            "label": rule.label,
            "score": rule.score,
            "safe": rule.safe,
            "propagate": propagate,
            "use_allowlist": rule.allowlist
            if rule.allowlist is not None
            else isinstance(rule, GazetteerRule),
            "min_length": rule.min_length,
            "max_length": rule.max_length,
            "context": _context(rule.context, self.merged.definitions, where),
            "not_context": _context(rule.not_context, self.merged.definitions, where),
            "context_required": rule.context_required,
            "boost": rule.boost,
            "priority": rule.priority,
            "trigger": compile_regex(
                expand(rule.trigger, self.merged.definitions, where), 0, f"{where}, trigger"
            )
            if rule.trigger
            else None,
        }

    def rule(self, rule: Any, src: RuleSource, full_id: str, where: str) -> Matcher:
        common = self.common(rule, full_id, where)
        defs = self.merged.definitions
        if isinstance(rule, RegexRule):
            flags = 0
            for f in rule.flags:
                flags |= _FLAG_VALUES[f]
            pattern = compile_regex(expand(rule.pattern, defs, where), flags, where, scan=True)
            if rule.groups:
                for name, label in rule.groups.items():
                    _check_label(label, where)
                    if name not in pattern.groupindex:
                        raise ConfigError(
                            f"{where}: 'groups' names {name!r}, which the pattern does not define"
                        )
            group = rule.group
            if isinstance(group, str) and group not in pattern.groupindex:
                raise ConfigError(f"{where}: 'group' {group!r} is not a named group of the pattern")
            if isinstance(group, int) and group > pattern.groups:
                raise ConfigError(f"{where}: 'group' {group} but the pattern has {pattern.groups} group(s)")
            validator = resolve_validator(rule.validator, where) if rule.validator else None
            return RegexMatcher(pattern, group=group, groups=rule.groups, validator=validator, **common)
        if isinstance(rule, FieldRule):
            ordered = sorted(rule.keys, key=len, reverse=True)
            keys = "|".join(literal(k, case_sensitive=rule.case_sensitive, space=r"[ \t]*") for k in ordered)
            # "line" and "word" values stop one character past the longest span the rule may report
            # (longer ones are dropped anyway): each match then reads a bounded stretch of text, so
            # several fields on one very long line cost linear time
            bound = rule.max_length + 1
            one = {"line": r"[^\n]", "word": r"\S"}.get(rule.value)
            value = f"{one}{{{int(rule.value == 'word')},{bound}}}" if one else None
            value_bound = bound if one else None
            if value is None:
                value = expand(rule.value, defs, where)
            sep = expand(rule.separator, defs, where)
            left_keys = field_keys_left(ordered, keys, rule.line_start, rule.case_sensitive)
            if rule.separator == DEFAULT_SEPARATOR:
                # start the match at the ':' and check the key in a lookbehind: the engine then only
                # stops at colons instead of trying the keys at every position (several times faster)
                source = rf"(?<={left_keys}[ \t]*)[:=][ \t]*(?P<value>{value})"
            else:
                source = rf"{left_keys}(?:{sep})(?P<value>{value})"
            pattern = compile_regex(source, regex.MULTILINE, where, scan=True)
            stops = [compile_regex(expand(s, defs, where), 0, f"{where}, stop") for s in rule.stop]
            validator = resolve_validator(rule.validator, where) if rule.validator else None
            return FieldMatcher(
                pattern,
                stops=stops,
                validator=validator,
                value_bound=value_bound,
                value_more=compile_regex(one, 0, where) if one else None,
                **common,
            )
        if isinstance(rule, FieldsRule):
            return self.fields(rule, src, common, where)
        if isinstance(rule, ContextNameRule):
            return self.context_name(rule, src, common, where)
        if isinstance(rule, GazetteerRule):
            if rule.list_labels:
                labelled: dict[str, str] = {}
                for name, label in rule.list_labels.items():
                    _check_label(label, where)
                    for entry in self.entries([name], [], [], src, where):
                        labelled.setdefault(entry, label)
                entries: Any = labelled
            else:
                entries = self.entries(rule.lists, rule.words, rule.files, src, where)
            if not entries:
                raise ConfigError(f"{where}: the gazetteer has no entries")
            gaz = build_gazetteer(
                entries, case_sensitive=rule.case_sensitive, fuzzy=rule.fuzzy, min_length=rule.min_length
            )
            first, max_chars, norm = first_tokens(entries, case_sensitive=rule.case_sensitive)
            return GazetteerMatcher(
                gaz,
                require_capital=rule.require_capital,
                labels_from_entries=bool(rule.list_labels),
                # fuzzy matching may start at any token, so the first-token prefilter does not apply
                first_tokens=None if rule.fuzzy else first,
                max_chars=max_chars,
                normalize=norm,
                extend_right=compile_regex(
                    expand(rule.extend_right, defs, where), 0, f"{where}, extend_right"
                )
                if rule.extend_right
                else None,
                # searched in the text before the span, so it must end there
                extend_left=compile_regex(
                    f"(?:{expand(rule.extend_left, defs, where)})$", 0, f"{where}, extend_left"
                )
                if rule.extend_left
                else None,
                extend_max=rule.extend_max,
                require_extension=rule.require_extension,
                # a hit is checked against the allow-list before it grows ("May I" is not a name)
                allowlist=self.allow if common["use_allowlist"] else None,
                **common,
            )
        raise ConfigError(f"{where}: unsupported rule kind")  # pragma: no cover - schema prevents it

    def fields(self, rule: FieldsRule, src: RuleSource, common: dict[str, Any], where: str) -> Matcher:
        refs = rule.tables or ([self.language] if self.language else [])
        if not refs:
            raise ConfigError(f"{where}: name the field 'tables' (the pack has no language to pick one)")
        try:
            if all(not r.endswith((".yaml", ".yml")) and "/" not in r and "\\" not in r for r in refs):
                table = packaged_table(*refs)
            else:
                table = build_table(refs, src.folder)
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}") from None
        return FormFieldMatcher(
            table, language=self.language, connectors=self.connectors, allowlist=self.allow, **common
        )

    def context_name(self, rule: ContextNameRule, src: RuleSource, common: dict[str, Any], where: str):
        defs = self.merged.definitions
        cues = []
        for c in sorted(rule.cues, key=len, reverse=True):
            body = literal(c, case_sensitive=rule.cue_case_sensitive, space=r"[ \t]+")
            cues.append(body + (r"(?![\p{L}\p{N}])" if c.strip()[-1:].isalnum() else ""))
        group = "(?:" if rule.cue_case_sensitive else "(?i:"
        cues.extend(f"{group}{expand(p, defs, where)})" for p in rule.cue_patterns)
        cue_alt = "|".join(cues)
        word = expand(rule.word, defs, where)
        connectors = frozenset(rule.connectors) if rule.connectors else self.connectors
        conn = "|".join(regex.escape(c) for c in sorted(connectors, key=lambda c: (-len(c), c)))
        link = rf"(?:[ \t]+(?:{conn})(?![\p{{L}}\p{{N}}]))*" if conn else ""
        name = rf"(?:{word})(?:{link}[ \t]+(?:{word})){{0,{rule.max_words - 1}}}"
        gap = expand(rule.gap, defs, where)
        if rule.direction == "after":
            pattern = rf"(?<![\p{{L}}\p{{N}}])(?:{cue_alt})(?:{gap})(?P<name>{name})"
        else:
            pattern = rf"(?<![\p{{L}}\p{{N}}])(?P<name>{name})(?:{gap})(?:{cue_alt})"
        compiled = compile_regex(pattern, 0, where, scan=True)
        word_re = compile_regex(word, 0, where)
        require = None
        if rule.require_list:
            require = build_gazetteer(self.entries(rule.require_list, [], [], src, where))
        common_words = None
        if rule.accept_rare_words:
            if not self.language:
                raise ConfigError(f"{where}: accept_rare_words needs a pack language")
            from clinideid.resources import word_zipf

            common_words = word_zipf(self.language)
        name_evidence = role_word = None
        if self.language and rule.label in PERSON_LABELS:
            from functools import partial

            from clinideid.mentions import is_name_evidence, is_role_word

            name_evidence = partial(is_name_evidence, language=self.language)
            role_word = partial(is_role_word, language=self.language)
        stop_words = frozenset(rule.stop_words)
        return ContextNameMatcher(
            compiled,
            direction=rule.direction,
            word=word_re,
            connectors=connectors,
            stop_words=stop_words,
            min_words=rule.min_words,
            require=require,
            common_words=common_words,
            name_evidence=name_evidence,
            role_word=role_word,
            **common,
        )


#: labels whose context_name values need a word that reads as a name when written without case
PERSON_LABELS = frozenset({"PATIENT", "DOCTOR", "PERSON"})


def compile_merged(merged: MergedPack) -> CompiledPack:
    return _Compiler(merged).compile()


def _version(ref: str) -> float | None:
    p = Path(ref)
    if ref.endswith((".yaml", ".yml")) and p.is_file():
        return p.stat().st_mtime
    return None


@lru_cache(maxsize=32)
def _compile_cached(ref: str, version: float | None) -> CompiledPack:
    t0 = time.perf_counter()
    with pattern_store(_store_name(ref)):
        pack = compile_merged(load_merged_pack(ref))
    log.debug(
        "compiled rule pack %s: %d passes, %d rules in %.2f s",
        pack.origin,
        len(pack.passes),
        len(pack.rule_ids()),
        time.perf_counter() - t0,
    )
    return pack


def _store_name(ref: str) -> str:
    """The pattern-cache file name of a pack: its name, and for a file a hash of its path."""
    if ref.endswith((".yaml", ".yml")):
        digest = hashlib.sha256(str(Path(ref).resolve()).encode("utf-8", "surrogatepass")).hexdigest()[:12]
        return f"{Path(ref).stem}-{digest}"
    return ref


def compile_pack(ref: str | Path) -> CompiledPack:
    """The compiled pack ``ref`` (a packaged name such as ``es`` or a YAML path), cached."""
    ref = str(ref)
    return _compile_cached(ref, _version(ref))
