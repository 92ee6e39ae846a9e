"""Compiled rules: each kind turns the (masked) text into candidate spans.

A matcher only proposes ``(start, end, label)`` candidates on the masked text; the engine then cuts them
around masked characters, applies length limits, the allow-list and context words, and picks among
overlapping candidates. Everything a matcher needs (regexes, word sets) is compiled once per pack.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import regex

from clinideid.detect.rules.schema import PropagateSpec

_TOKEN = regex.compile(r"\p{L}[\p{L}\p{M}]*|\p{N}+|[^\s]", regex.V1)
_LEAD = regex.compile(r"^\s+")
_SEPARATORS = regex.compile(r"[\s\-./]")
_NON_SPACE = regex.compile(r"\S+")

#: ``(start, end, label)``, or ``(start, end, label, detail)`` where ``detail`` is ``(group id, date role)``
#: (``fields`` rules); a candidate without a label is known non-PHI (masked, never reported)
Candidate = tuple[int, int, "str | None"] | tuple[int, int, "str | None", "tuple[str, str | None]"]


@dataclass(frozen=True)
class CompiledContext:
    """Context words before/after a span within a window of characters or tokens."""

    before: Any  # compiled regex or None
    after: Any
    window: int
    unit: str

    def _before_text(self, text: str, start: int) -> str:
        if self.unit == "chars":
            return text[max(0, start - self.window) : start]
        region = text[max(0, start - self.window * 30) : start]
        toks = list(_TOKEN.finditer(region))
        return region[toks[-self.window].start() :] if len(toks) > self.window else region

    def _after_text(self, text: str, end: int) -> str:
        if self.unit == "chars":
            return text[end : end + self.window]
        region = text[end : end + self.window * 30]
        toks = list(_TOKEN.finditer(region))
        return region[: toks[self.window - 1].end()] if len(toks) >= self.window else region

    def present(self, text: str, start: int, end: int) -> bool:
        if self.before is not None and self.before.search(self._before_text(text, start)):
            return True
        return self.after is not None and bool(self.after.search(self._after_text(text, end)))


class Matcher:
    """What every compiled rule shares; subclasses implement ``candidates``."""

    kind = ""
    #: with ``propagate``: the labels whose spans are propagated (None: all)
    propagate_labels: frozenset[str] | None = None

    def __init__(
        self,
        *,
        rule_id: str,
        label: str | None,
        score: float,
        safe: bool = False,
        propagate: PropagateSpec | None = None,
        use_allowlist: bool = False,
        min_length: int = 1,
        max_length: int = 500,
        context: CompiledContext | None = None,
        not_context: CompiledContext | None = None,
        context_required: bool = True,
        boost: float = 0.1,
        priority: int = 0,
        trigger: Any = None,
    ) -> None:
        self.rule_id = rule_id
        self.label = label
        self.score = score
        self.safe = safe
        self.propagate = propagate
        self.use_allowlist = use_allowlist
        self.min_length = min_length
        self.max_length = max_length
        self.context = context
        self.not_context = not_context
        self.context_required = context_required
        self.boost = boost
        self.priority = priority
        self.trigger = trigger

    def candidates(self, masked: str) -> Iterator[Candidate]:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.rule_id}>"


def compact(s: str) -> str:
    """``s`` without spaces, hyphens, dots and slashes (what validators receive)."""
    return _SEPARATORS.sub("", s)


class RegexMatcher(Matcher):
    kind = "regex"

    def __init__(
        self,
        pattern: Any,
        *,
        group: int | str | None = None,
        groups: dict[str, str] | None = None,
        validator: Callable[[str], bool] | None = None,
        **common: Any,
    ) -> None:
        super().__init__(**common)
        self.pattern = pattern
        self.group = group or 0
        self.groups = groups
        self.validator = validator

    def candidates(self, masked: str) -> Iterator[Candidate]:
        for m in self.pattern.finditer(masked):
            if self.groups:
                for name, label in self.groups.items():
                    s, e = m.span(name)
                    if 0 <= s < e:
                        yield s, e, label
                continue
            s, e = m.span(self.group)
            if s < 0 or e <= s:
                continue
            if self.validator is not None and not self.validator(compact(masked[s:e])):
                continue
            yield s, e, self.label


class FieldMatcher(Matcher):
    """``key: value`` fields. After a value cut short by a ``stop``, the search goes on from the cut, so a
    second field on the same line ("Name: Ann Lee | Name: Bo Ek") is found too."""

    kind = "field"

    def __init__(
        self,
        pattern: Any,
        *,
        stops: list[Any],
        validator: Callable[[str], bool] | None,
        value_bound: int | None = None,
        value_more: Any = None,
        **common: Any,
    ) -> None:
        super().__init__(**common)
        self.pattern = pattern
        self.stops = stops
        self.validator = validator
        #: the most characters the value pattern reads ("line"/"word" values), and a regex of one more
        #: value character: a value that reached the bound and goes on is longer than ``max_length``
        self.value_bound = value_bound
        self.value_more = value_more

    def candidates(self, masked: str) -> Iterator[Candidate]:
        pos = 0
        search = self.pattern.search
        while True:
            m = search(masked, pos)
            if m is None:
                return
            pos = max(m.end(), m.start() + 1)
            s, e = m.span("value")
            if e <= s:
                continue
            value = masked[s:e]
            cut = len(value)
            for stop in self.stops:
                found = stop.search(value)
                if found is not None and found.start() < cut:
                    cut = found.start()
            if cut < len(value):
                pos = max(s + cut, m.start() + 1)  # another field may start where this value was cut
            elif (
                self.value_bound is not None
                and len(value) >= self.value_bound
                and self.value_more.match(masked, e) is not None
            ):
                continue  # the value goes on past the bound: too long to be a field value
            end = cut
            while end and (value[end - 1].isspace() or value[end - 1] in ".,;:"):
                end -= 1
            lead = _LEAD.match(value, 0, end)
            offset = lead.end() if lead else 0
            if offset >= end:
                continue
            start, end = s + offset, s + end
            if self.validator is not None and not self.validator(compact(masked[start:end])):
                continue
            yield start, end, self.label


class ContextNameMatcher(Matcher):
    kind = "context_name"

    def __init__(
        self,
        pattern: Any,
        *,
        direction: str,
        word: Any,
        connectors: frozenset[str],
        stop_words: frozenset[str],
        min_words: int,
        require: Any | None,
        common_words: Mapping[str, float] | None = None,
        name_evidence: Callable[[str], bool] | None = None,
        role_word: Callable[[str], bool] | None = None,
        **common: Any,
    ) -> None:
        super().__init__(**common)
        self.pattern = pattern
        self.name_evidence = name_evidence
        self.role_word = role_word
        self.direction = direction
        self.common_words = common_words
        self.word = word
        self.connectors = connectors
        self.stop_words = stop_words
        self._upper_stops = frozenset(w.upper() for w in stop_words)
        self.min_words = min_words
        self.require = require

    def _is_stop(self, item: str) -> bool:
        """Stop words match as written, or in upper case ("Servicio", "SERVICIO"), with or without a
        trailing ``.:,;`` -- so a stop word "De" does not stop at the connector "de"."""
        word = item.rstrip(".:,;")
        stops = self.stop_words
        return item in stops or word in stops or (word.isupper() and word in self._upper_stops)

    def _known_or_rare(self, word: str) -> bool:
        if self.require.contains(word):
            return True
        common = self.common_words
        return common is not None and len(word) >= 4 and word.isalpha() and word.casefold() not in common

    def candidates(self, masked: str) -> Iterator[Candidate]:
        for m in self.pattern.finditer(masked):
            s = m.start("name")
            items = [(s + w.start(), s + w.end(), w.group()) for w in _NON_SPACE.finditer(m.group("name"))]
            if self.direction == "after":
                for i, item in enumerate(items):
                    if self._is_stop(item[2]):
                        items = items[:i]
                        break
                while items and items[-1][2] in self.connectors:
                    items.pop()
            else:
                for i in range(len(items) - 1, -1, -1):
                    if self._is_stop(items[i][2]):
                        items = items[i + 1 :]
                        break
                while items and items[0][2] in self.connectors:
                    items.pop(0)
            words = [it for it in items if it[2] not in self.connectors]
            if len(words) < self.min_words:
                continue
            if self.require is not None and not any(self._known_or_rare(w[2].rstrip(".")) for w in words):
                continue
            if self.name_evidence is not None and not self._evident(masked, m, words):
                continue
            yield items[0][0], items[-1][1], self.label

    def _evident(self, masked: str, m: Any, words: list[tuple[int, int, str]]) -> bool:
        """A name written all in capitals or all in lower case shows no case: after a cue that is no title,
        role or kinship word, one of its words must read as a name by the word lists ("SEEN BY RENAL TEAM"
        is no doctor; "SEEN BY HARRIS", "DR. PALMIERI", "moglie rosa" are names)."""
        texts = [w[2].rstrip(".:,;") for w in words if any(c.isalpha() for c in w[2])]
        if not texts or not (all(t.isupper() for t in texts) or all(t.islower() for t in texts)):
            return True
        if any(self.name_evidence(t) for t in texts):
            return True
        if self.direction == "after":
            cue = masked[m.start() : m.start("name")].split()
            cue_word = cue[-1] if cue else ""
        else:
            cue = masked[m.end("name") : m.end()].split()
            cue_word = cue[0] if cue else ""
        return self.role_word is not None and bool(cue_word) and self.role_word(cue_word.strip(":,;"))


class GazetteerMatcher(Matcher):
    kind = "gazetteer"

    #: a capitalised word, digits glued before it or not ("000Smith"), as the gazetteer's tokens split them
    _CAPITALISED = regex.compile(r"(?<![\p{L}\p{M}])\p{Lu}[\p{L}\p{M}]*")

    def __init__(
        self,
        gazetteer: Any,
        *,
        require_capital: bool,
        labels_from_entries: bool = False,
        first_tokens: frozenset[str] | None = None,
        max_chars: int = 0,
        normalize: Callable[[str], str] | None = None,
        extend_right: Any = None,
        extend_left: Any = None,
        extend_max: int = 3,
        require_extension: bool = False,
        allowlist: Any = None,
        **common: Any,
    ) -> None:
        super().__init__(**common)
        self.gazetteer = gazetteer
        self.require_capital = require_capital
        self.labels_from_entries = labels_from_entries
        # with require_capital, only capitalised words whose normalised form starts an entry are looked
        # up (in a window long enough for the longest entry): much less work than matching every token
        self.first_tokens = first_tokens
        self.max_chars = max_chars
        self.normalize = normalize
        self._norm_cache: dict[str, str] = {}
        self.extend_right = extend_right
        self.extend_left = extend_left
        self.extend_max = extend_max
        self.require_extension = require_extension
        self.allowlist = allowlist

    def _find(self, masked: str) -> Iterator[tuple[int, int, str]]:
        if not (self.require_capital and self.first_tokens is not None and self.normalize is not None):
            yield from self.gazetteer.find(masked)
            return
        cache = self._norm_cache
        if len(cache) > 200_000:
            cache.clear()
        next_free = 0
        for m in self._CAPITALISED.finditer(masked):
            start = m.start()
            if start < next_free:
                continue
            word = m.group()
            key = cache.get(word)
            if key is None:
                key = cache[word] = self.normalize(word)
            if key not in self.first_tokens:
                continue
            hit = self.gazetteer.find_at_start(masked[start : start + self.max_chars])
            if hit is not None and hit[0] == 0:
                next_free = start + hit[1]
                yield start, start + hit[1], hit[2]

    def _extend(self, masked: str, s: int, e: int) -> tuple[int, int, bool]:
        grown = False
        if self.extend_right is not None:
            for _ in range(self.extend_max):
                m = self.extend_right.match(masked, e)
                if m is None or m.end() == e:
                    break
                e, grown = m.end(), True
        if self.extend_left is not None:
            for _ in range(self.extend_max):
                m = self.extend_left.search(masked, max(0, s - 80), s)
                if m is None or m.start() == s:
                    break
                s, grown = m.start(), True
        return s, e, grown

    def candidates(self, masked: str) -> Iterator[Candidate]:
        extending = self.extend_right is not None or self.extend_left is not None
        for s, e, value in self._find(masked):
            if self.require_capital and not masked[s].isupper():
                continue
            if extending and self.allowlist is not None and self.allowlist.contains(masked[s:e]):
                continue
            if extending:
                s, e, grown = self._extend(masked, s, e)
                if self.require_extension and not grown:
                    continue
            yield s, e, value if self.labels_from_entries else self.label
