"""Contact surrogates: phone and fax numbers (shape kept), e-mail addresses (surrogate name parts),
URLs (surrogate host, path shape kept) and IP addresses (valid, same version and kind)."""

from __future__ import annotations

import ipaddress
import re
from functools import cache
from urllib.parse import urlsplit, urlunsplit

from clinideid.transform.keys import KeyedRandom
from clinideid.transform.surrogates.base import SurrogateGenerator, SurrogateRequest, SurrogateUnavailable
from clinideid.transform.surrogates.lists import list_language, surrogate_values
from clinideid.transform.surrogates.names import (
    first_name_surrogate,
    initial_surrogate,
    parse_name,
    surname_surrogate,
)
from clinideid.transform.textcase import normalize, reshape, strip_accents

# --- phone / fax ---------------------------------------------------------------------------------------------

#: calling codes used to split a country code written without a separator ("+34912...")
_CALLING_CODES = frozenset(
    {"1", "7", "20", "27", "30", "31", "32", "33", "34", "36", "39", "40", "41", "43", "44", "45", "46", "47",
     "48", "49", "51", "52", "53", "54", "55", "56", "57", "58", "60", "61", "62", "63", "64", "65", "66",
     "81", "82", "84", "86", "90", "91", "92", "93", "94", "95", "98", "212", "213", "216", "351", "352",
     "353", "354", "356", "357", "358", "359", "370", "371", "372", "373", "374", "375", "376", "377", "378",
     "380", "381", "385", "386", "387", "389", "420", "421", "423", "502", "503", "504", "505", "506", "507",
     "591", "593", "595", "598", "971", "972", "974", "994", "995", "996", "998"}
)  # fmt: skip
_PREFIX = re.compile(r"^(\s*)(\+|00)(\d+)")


def _kept_prefix(text: str) -> int:
    """How many leading characters of a phone number stay: ``+``/``00`` and the country code."""
    m = _PREFIX.match(text)
    if m is None:
        return 0
    digits = m.group(3)
    if m.end() < len(text) and not text[m.end()].isdigit() and len(digits) <= 3:
        return m.end()  # "+34 912..." : the whole digit group is the code
    for n in (3, 2, 1):
        if digits[:n] in _CALLING_CODES and len(digits) > n:
            return m.start(3) + n
    return m.start(3) + min(2, len(digits))


class PhoneGenerator(SurrogateGenerator):
    """Digits replaced by keyed digits; separators, length, a leading ``+``/``00`` with the country code,
    the trunk ``0`` and the first significant digit (mobile or landline) kept. North-American numbers keep
    area and exchange codes starting with 2-9."""

    labels = ("PHONE", "FAX")

    def generate(self, req: SurrogateRequest, attempt: int) -> str:
        text = req.value
        digits = re.sub(r"\D", "", text)
        if not digits:
            raise SurrogateUnavailable
        rng = req.rng("phone", digits, attempt)
        keep = _kept_prefix(text)
        national = [i for i in range(keep, len(text)) if text[i].isdigit()]
        fixed: set[int] = set()
        for n, i in enumerate(national[:3]):  # trunk zeros ("0", "(0)") and the first significant digit
            fixed.add(i)
            if text[i] != "0":
                break
            if n == 1:  # at most two trunk zeros
                fixed.add(national[2])
                break
        if len(national) - len(fixed) < 4:
            fixed = set()
        nanp = len(national) == 10 and (list_language(req.language) == "en" or text[keep - 1 : keep] == "1")
        out = list(text)
        for n, i in enumerate(national):
            if i in fixed:
                continue
            low = 2 if nanp and n in (0, 3) else 0
            out[i] = rng.digit(low)
        return "".join(out)


# --- e-mail / URL -------------------------------------------------------------------------------------------

_PUBLIC_PROVIDERS = frozenset(
    {"gmail.com", "googlemail.com", "yahoo.com", "yahoo.es", "yahoo.fr", "yahoo.it", "yahoo.de", "hotmail.com",
     "hotmail.es", "hotmail.fr", "hotmail.it", "outlook.com", "outlook.es", "outlook.fr", "live.com",
     "msn.com", "icloud.com", "me.com", "aol.com", "protonmail.com", "proton.me", "gmx.de", "gmx.net",
     "web.de", "t-online.de", "orange.fr", "free.fr", "laposte.net", "wanadoo.fr", "libero.it", "virgilio.it",
     "tiscali.it", "telefonica.net", "mail.ru", "yandex.ru", "ya.ru", "rambler.ru", "bk.ru", "list.ru",
     "inbox.ru"}
)  # fmt: skip
_SECOND_LEVEL = frozenset({"co", "com", "org", "net", "gov", "ac", "edu", "nhs", "gob", "gouv", "or", "ne"})
_LOCAL_RUN = re.compile(r"[A-Za-z]+|\d+|[^A-Za-z\d]+")


def _ascii_slug(value: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", strip_accents(value).lower())


@cache
def _domain_pool(lang: str) -> tuple[str, ...]:
    slugs = []
    for name in ("organizations", "hospitals"):
        for value in (*surrogate_values(lang, name), *surrogate_values("en", name)):
            slug = re.sub(r"[^a-z0-9]+", "-", strip_accents(value).lower()).strip("-")
            if slug and slug.isascii() and len(slug) <= 30:
                slugs.append(slug)
    return tuple(dict.fromkeys(slugs)) or ("example",)


def surrogate_domain(domain: str, req: SurrogateRequest, attempt: int = 0) -> str:
    """A keyed organisation-like domain with the original's top level (``hospital.es`` -> ``labs-sierra.es``);
    public mail providers are kept, they identify nobody."""
    host = domain.lower()
    if host in _PUBLIC_PROVIDERS:
        return domain
    labels = domain.split(".")
    keep = 1
    if len(labels) >= 3 and labels[-2].lower() in _SECOND_LEVEL:
        keep = 2
    prefix = "www." if labels[0].lower() == "www" and len(labels) > keep + 1 else ""
    tld = ".".join(labels[-keep:]) if len(labels) > keep else "org"
    rng = req.rng("domain", host.removeprefix("www."), attempt)
    pool = _domain_pool(list_language(req.language))
    for _ in range(64):
        slug = rng.choice(pool)
        new = f"{prefix}{slug}.{tld}"
        if new.lower() != host:
            return new.upper() if domain.isupper() else new
    raise SurrogateUnavailable


def _local_part(local: str, req: SurrogateRequest, attempt: int) -> str:
    """ "john.smith" -> "peter.jones": the letter runs are read as a name, so each maps like the same
    name part written in the text; digits keep their shape."""
    runs = _LOCAL_RUN.findall(local)
    words = [r for r in runs if r.isalpha()]
    roles = {}
    if words:
        parsed = parse_name(" ".join(words), req.language)
        roles = {(u.start, u.text): u.role for u in parsed.units}
    out, offset = [], 0
    for run in runs:
        if run.isdigit():
            out.append(reshape(run, req.rng("email_digits", local, attempt)))
        elif run.isalpha():
            role = roles.get((offset, run))
            offset += len(run) + 1
            if len(run) == 1 or role == "initial":
                new = initial_surrogate(run, req)
            elif role == "first":
                new = first_name_surrogate(run, req)
            else:
                new = surname_surrogate(run, req)
            slug = _ascii_slug(new) or "x"
            out.append(slug.upper() if run.isupper() else slug.capitalize() if run[0].isupper() else slug)
        else:
            out.append(run)
    return "".join(out)


class EmailGenerator(SurrogateGenerator):
    labels = ("EMAIL",)

    def generate(self, req: SurrogateRequest, attempt: int) -> str:
        text = req.value
        local, at, domain = text.rpartition("@")
        if not at:
            return reshape(text, req.rng("email", normalize(text), attempt))
        new_local = _local_part(local, req, attempt)
        if new_local == local:
            new_local = reshape(local, req.rng("email", normalize(local), attempt))
        return f"{new_local}@{surrogate_domain(domain, req, attempt)}"


_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,5}$")


class UrlGenerator(SurrogateGenerator):
    """The host becomes a keyed organisation domain with the same top level; path and query keep their
    shape (letters stay letters, digits stay digits, separators and file extensions stay)."""

    labels = ("URL",)

    def generate(self, req: SurrogateRequest, attempt: int) -> str:
        text = req.value
        has_scheme = "://" in text
        parts = urlsplit(text if has_scheme else "//" + text)
        host = parts.hostname or ""
        rng = req.rng("url", normalize(text), attempt)
        if host:
            new_host = surrogate_domain(host, req, attempt)
            netloc = parts.netloc.replace(parts.netloc.rsplit("@", 1)[-1].split(":")[0], new_host, 1)
            netloc = (
                reshape(netloc.split("@")[0], rng) + "@" + netloc.split("@", 1)[1]
                if "@" in netloc
                else netloc
            )
        else:
            netloc = parts.netloc
        segments = []
        for segment in parts.path.split("/"):
            ext = _EXTENSION.search(segment)
            head, tail = (segment[: ext.start()], ext.group()) if ext else (segment, "")
            segments.append(reshape(head, rng) + tail)
        new = urlunsplit((parts.scheme, netloc, "/".join(segments), reshape(parts.query, rng),
                          reshape(parts.fragment, rng)))  # fmt: skip
        if not has_scheme:
            new = new.removeprefix("//")
        if new == text:
            raise SurrogateUnavailable
        return new


# --- IP addresses -------------------------------------------------------------------------------------------


class IpGenerator(SurrogateGenerator):
    """A valid address of the same version; private addresses stay in their private block, public ones
    become public unicast addresses. IPv6 keeps the original's compressed or exploded writing."""

    labels = ("IPADDR",)

    def generate(self, req: SurrogateRequest, attempt: int) -> str:
        text = req.value.strip()
        try:
            ip = ipaddress.ip_address(text.split("/")[0].strip("[]"))
        except ValueError:
            return reshape(req.value, req.rng("ip", normalize(req.value), attempt))
        rng = req.rng("ip", ip.compressed, attempt)
        suffix = text[len(text.split("/")[0]) :]
        if isinstance(ip, ipaddress.IPv4Address):
            new = self._v4(ip, rng)
            rendered = str(new)
        else:
            new6 = ipaddress.IPv6Address(
                (int(ip) >> 64 << 64 if ip.is_private else 0x20010DB8 << 96) | rng.randbelow(2**64)
            )
            rendered = new6.exploded if text.count(":") == 7 and "::" not in text else new6.compressed
        lead = req.value[: len(req.value) - len(req.value.lstrip())]
        trail = req.value[len(req.value.rstrip()) :]
        return lead + rendered + suffix + trail

    @staticmethod
    def _v4(ip: ipaddress.IPv4Address, rng: KeyedRandom) -> ipaddress.IPv4Address:
        for block in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"):
            net = ipaddress.ip_network(block)
            if ip in net:
                for _ in range(64):
                    new = net.network_address + 1 + rng.randbelow(net.num_addresses - 2)
                    if new != ip and new != net.broadcast_address:
                        return new
        for _ in range(256):
            new = ipaddress.IPv4Address(rng.randbelow(2**32))
            if new.is_global and not new.is_multicast and new != ip and int(new) & 0xFF not in (0, 255):
                return new
        raise SurrogateUnavailable


__all__ = ["EmailGenerator", "IpGenerator", "PhoneGenerator", "UrlGenerator", "surrogate_domain"]
