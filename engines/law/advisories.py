"""Vulnerability advisories the user downloaded (no network here), matched against an SBOM's components:
which component versions an OSV record or a CSAF advisory names as affected, and which as fixed.
This is the input to CRA Annex I Part I(2)(a) (no known exploitable vulnerabilities when made
available) and Part II(1)-(2) (identify, then remediate without delay). Educational, not legal advice.

Formats:
- OSV (https://ossf.github.io/osv-schema/): one record, a list of records, or an OSV API answer
  (``{"vulns": [...]}``). ``affected[].package`` names the package; a version is affected when it is
  listed in ``versions`` or falls in a range: the range's events are taken in version order,
  ``introduced`` opens it, ``fixed`` and ``limit`` close it at that version, ``last_affected`` after
  it (the OSV schema's evaluation rule). ECOSYSTEM and SEMVER versions are compared as PEP 440
  versions (:mod:`packaging.version`); a GIT range or a version that does not parse is reported as
  not evaluated, never as safe. Every record is first checked against the OSV schema's rules for the
  fields read here (:func:`osv_problems`, OSV schema 1.6.x/1.7.x), and a broken one is refused naming
  the field.
- CSAF 2.0 (OASIS, https://docs.oasis-open.org/csaf/csaf/v2.0/csaf-v2.0.html): ``product_tree`` gives
  each product id a name and version (from a ``purl`` when present, else the ``product_name`` and
  ``product_version`` branches); each vulnerability's ``product_status`` lists the ids that are
  affected (known_affected, first_affected, last_affected), fixed (fixed, first_fixed), not affected
  or under investigation. A ``product_version_range`` branch cannot be matched and is reported.

A broken or unknown file raises ValidationError (field ``path``) saying what is wrong. When the
``csaf`` package (the "advisories" extra) and ``jsonschema`` are installed, a CSAF file is also
checked against the official OASIS CSAF 2.0 JSON schema that package ships.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from packaging.version import InvalidVersion, Version

from engines.core.assets import asset_path
from engines.core.errors import ValidationError
from engines.law.sbom import Sbom, load_json, norm, read_text

AFFECTED, FIXED, NOT_AFFECTED, INVESTIGATING, UNKNOWN = ("affected", "fixed", "not affected",
                                                        "under investigation", "not evaluated")
CSAF_STATUS = {"known_affected": AFFECTED, "first_affected": AFFECTED, "last_affected": AFFECTED,
               "fixed": FIXED, "first_fixed": FIXED, "known_not_affected": NOT_AFFECTED,
               "under_investigation": INVESTIGATING}
EXAMPLE = asset_path("law", "example-advisory.csaf.json")    # invented flaws for the example camera SBOM


@dataclass(frozen=True)
class Affected:
    """One package an advisory speaks of: exact versions by status, and OSV ranges."""
    name: str
    ecosystem: str | None
    versions: dict            # version text → status
    ranges: tuple = ()        # OSV (type, ((event, version), ...)) pairs
    complete: bool = True     # OSV: the versions and ranges name every affected version; CSAF: not so


@dataclass(frozen=True)
class Advisory:
    id: str
    summary: str
    aliases: tuple[str, ...]
    packages: tuple[Affected, ...]


@dataclass(frozen=True)
class Advisories:
    format: str               # "OSV" or "CSAF 2.0"
    source: str
    items: tuple[Advisory, ...]
    notes: tuple[str, ...] = ()   # what could not be read or matched, and the schema check


@dataclass(frozen=True)
class Match:
    component: str
    version: str | None
    advisory: str
    status: str               # AFFECTED, FIXED, NOT_AFFECTED, INVESTIGATING or UNKNOWN
    why: str


def _fail(source: str, why: str) -> ValidationError:
    return ValidationError("path", f"{source}: {why}", "an OSV JSON record (or list) or a CSAF 2.0 JSON advisory")


def read(path) -> Advisories:
    p = Path(path)
    return parse(read_text(p, _fail), p.name)


def parse(text: str, source: str = "advisory") -> Advisories:
    doc = load_json(text, source, _fail)
    if isinstance(doc, dict) and isinstance(doc.get("document"), dict) and "csaf_version" in doc["document"]:
        return _csaf(doc, source)
    records = doc.get("vulns") if isinstance(doc, dict) and "vulns" in doc else doc
    if isinstance(records, dict):
        records = [records]
    if isinstance(records, list) and records and all(isinstance(r, dict) and "modified" in r for r in records):
        return Advisories("OSV", source, tuple(_osv(r, f"{source}[{i}]") for i, r in enumerate(records)))
    if isinstance(records, list) and not records:
        raise _fail(source, "the file holds no advisory")
    raise _fail(source, "neither OSV (records with 'id' and 'modified') nor CSAF (document.csaf_version)")


# ---- OSV ---------------------------------------------------------------------------------------
OSV_SCHEMA = "1.7"
"""The OSV schema these rules follow: ossf/osv-schema, docs/schema.md and validation/schema.json, versions
1.6.x and 1.7.x (the fields read here have the same rules in both). Records of another major version
are refused."""
OSV_RANGE_TYPES = ("GIT", "SEMVER", "ECOSYSTEM")
OSV_EVENTS = ("introduced", "fixed", "last_affected", "limit")


def _is_text_list(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _rfc3339(value) -> bool:
    """An RFC 3339 date-time with its offset (the schema's ``format: date-time``; OSV asks for UTC, "Z")."""
    if not isinstance(value, str) or "T" not in value.upper():
        return False
    try:
        stamp = datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    except ValueError:
        return False
    return stamp.tzinfo is not None


def osv_problems(rec) -> list[str]:
    """What in one OSV record breaks the schema's rules for the fields this module reads, each naming its
    field (``affected[0].ranges[1].type``). Written from the OSV schema text (:data:`OSV_SCHEMA`):
    ``id`` and ``modified`` (an RFC 3339 time) are required; ``aliases`` and ``versions`` are lists of
    text; ``summary`` and ``details`` text; an ``affected`` entry's ``package`` has ``ecosystem`` and
    ``name``; a range has a ``type`` of GIT, SEMVER or ECOSYSTEM (GIT with a ``repo``) and a non-empty
    ``events`` list, each event one of introduced / fixed / last_affected / limit with a text value, at
    least one ``introduced``, and never both ``fixed`` and ``last_affected``."""
    if not isinstance(rec, dict):
        return [f"the record is {type(rec).__name__}, not an object"]
    out: list[str] = []
    if not isinstance(rec.get("id"), str) or not rec["id"].strip():
        out.append("id: required, non-empty text")
    if not _rfc3339(rec.get("modified")):
        out.append(f"modified: required, an RFC 3339 time such as 2026-11-02T10:00:00Z (got {rec.get('modified')!r})")
    version = rec.get("schema_version")
    if version is not None and (not isinstance(version, str) or version.split(".")[0] != OSV_SCHEMA.split(".")[0]):
        out.append(f"schema_version: {version!r} is not OSV schema {OSV_SCHEMA.split('.')[0]}.x")
    for key in ("summary", "details"):
        if key in rec and not isinstance(rec[key], str):
            out.append(f"{key}: must be text")
    if rec.get("aliases") is not None and not _is_text_list(rec["aliases"]):
        out.append("aliases: must be a list of text")
    affected = rec.get("affected")
    if affected is not None and not isinstance(affected, list):
        return out + ["affected: must be a list"]
    for i, aff in enumerate(affected or ()):
        at = f"affected[{i}]"
        if not isinstance(aff, dict):
            out.append(f"{at}: must be an object")
            continue
        pkg = aff.get("package")
        if not isinstance(pkg, dict):
            out.append(f"{at}.package: required here (the package to match), an object")
        else:
            for key in ("ecosystem", "name"):
                if not isinstance(pkg.get(key), str) or not pkg[key].strip():
                    out.append(f"{at}.package.{key}: required, non-empty text")
        if "versions" in aff and not _is_text_list(aff["versions"]):
            out.append(f"{at}.versions: must be a list of text")
        ranges = aff.get("ranges", [])
        if not isinstance(ranges, list):
            out.append(f"{at}.ranges: must be a list")
            continue
        for j, rng in enumerate(ranges):
            out += _osv_range_problems(rng, f"{at}.ranges[{j}]")
    return out


def _osv_range_problems(rng, at: str) -> list[str]:
    if not isinstance(rng, dict):
        return [f"{at}: must be an object"]
    out = []
    kind = rng.get("type")
    if kind not in OSV_RANGE_TYPES:
        out.append(f"{at}.type: {kind!r} is not one of {', '.join(OSV_RANGE_TYPES)}")
    if kind == "GIT" and not isinstance(rng.get("repo"), str):
        out.append(f"{at}.repo: required for a GIT range")
    events = rng.get("events")
    if not isinstance(events, list) or not events:
        return out + [f"{at}.events: required, a non-empty list"]
    keys = []
    for k, ev in enumerate(events):
        if not isinstance(ev, dict) or len(ev) != 1:
            out.append(f"{at}.events[{k}]: must be one key and value")
            continue
        ((key, value),) = ev.items()
        if key not in OSV_EVENTS:
            out.append(f"{at}.events[{k}]: {key!r} is not one of {', '.join(OSV_EVENTS)}")
        elif not isinstance(value, str):
            out.append(f"{at}.events[{k}].{key}: must be text")
        keys.append(key)
    if "introduced" not in keys:
        out.append(f"{at}.events: no 'introduced' event")
    if "fixed" in keys and "last_affected" in keys:
        out.append(f"{at}.events: 'fixed' and 'last_affected' in one range")
    return out


def _items(value, where: str, source: str, of: type | None = None) -> list:
    """An OSV list field: absent or null is empty; any other type (or item type) is refused, named."""
    if value is None:
        return []
    if not isinstance(value, list) or (of is not None and not all(isinstance(v, of) for v in value)):
        kind = "a list" if of is None else f"a list of {'strings' if of is str else 'objects'}"
        raise _fail(source, f"{where} is not {kind} ({type(value).__name__})")
    return value


def _osv(rec: dict, source: str) -> Advisory:
    problems = osv_problems(rec)
    if problems:
        name = rec.get("id") if isinstance(rec.get("id"), str) else "record"
        raise _fail(source, f"not a valid OSV record ({name}): " + "; ".join(problems))
    packages = []            # osv_problems has checked every field read here
    for aff in rec.get("affected") or ():
        pkg = aff["package"]
        versions = {v: AFFECTED for v in aff.get("versions") or ()}
        ranges = tuple((r["type"], tuple(next(iter(ev.items())) for ev in r["events"])) for r in aff.get("ranges") or ())
        packages.append(Affected(pkg["name"].strip(), pkg["ecosystem"], versions, ranges))
    summary = rec.get("summary") or (rec.get("details") or "")[:160]
    return Advisory(rec["id"].strip(), str(summary).strip(), tuple(rec.get("aliases") or ()), tuple(packages))


def _version(text: str) -> Version | None:
    try:
        return Version(text)
    except InvalidVersion:
        return None


def osv_range_status(version: str, kind: str, events) -> tuple[str, str]:
    """Whether ``version`` falls in one OSV range: the schema's rule, events taken in version order."""
    if kind == "GIT":
        return UNKNOWN, "a GIT commit range cannot be compared with a release version"
    v = _version(version)
    if v is None:
        return UNKNOWN, f"version {version!r} is not a PEP 440 version"
    parsed = []
    for key, text in events:
        ev = Version("0") if text == "0" else _version(text)
        if ev is None:
            return UNKNOWN, f"range version {text!r} is not a PEP 440 version"
        parsed.append((ev, key, text))
    affected, why = False, ""
    for ev, key, text in sorted(parsed, key=lambda e: e[0]):
        if key == "introduced" and v >= ev:
            affected, why = True, f"introduced in {text}"
        elif key in ("fixed", "limit") and v >= ev:
            affected, why = False, f"fixed in {text}" if key == "fixed" else f"past the range limit {text}"
        elif key == "last_affected" and v > ev:
            affected, why = False, f"after the last affected version {text}"
    if affected:
        fixes = [t for _e, k, t in parsed if k == "fixed" and _e > v]
        return AFFECTED, why + (f", fixed in {min(fixes, key=Version)}" if fixes else ", no fix named")
    return (FIXED if why.startswith("fixed") else NOT_AFFECTED), why or "before the first affected version"


# ---- CSAF --------------------------------------------------------------------------------------
def _seq(value) -> list:
    """A CSAF list field, or nothing when it is not a list (the schema check reports the type)."""
    return value if isinstance(value, list) else []


def _csaf_products(tree: dict, notes: list[str]) -> dict[str, tuple[str, str | None]]:
    """product id → (package name, version) from the product tree's branches and full product names."""
    out: dict[str, tuple[str, str | None]] = {}

    def from_product(prod: dict, name: str | None, version: str | None) -> None:
        pid = prod.get("product_id")
        helper = prod.get("product_identification_helper")
        purl = helper.get("purl") if isinstance(helper, dict) else None
        if isinstance(purl, str) and purl.startswith("pkg:"):
            body = purl[4:].split("?")[0].split("#")[0]
            path, _, ver = body.partition("@")
            name, version = path.rsplit("/", 1)[-1], (ver or version)
        if isinstance(pid, str):
            out[pid] = (name or str(prod.get("name") or pid), version)

    def walk(branches, name: str | None, version: str | None) -> None:
        for b in branches if isinstance(branches, list) else ():
            if not isinstance(b, dict):
                continue
            cat, bname = b.get("category"), b.get("name")
            bname = bname if isinstance(bname, str) else None
            n, v = (bname, version) if cat == "product_name" else (name, bname if cat == "product_version" else version)
            if cat == "product_version_range":
                notes.append(f"version range {bname!r} cannot be matched to a single version")
                v = None
            if isinstance(b.get("product"), dict):
                from_product(b["product"], n, v)
            walk(b.get("branches"), n, v)

    walk(tree.get("branches"), None, None)
    for prod in _seq(tree.get("full_product_names")):
        if isinstance(prod, dict):
            from_product(prod, None, None)
    for rel in _seq(tree.get("relationships")):     # "X installed on Y": X's name and version
        fpn = rel.get("full_product_name") if isinstance(rel, dict) else None
        if isinstance(fpn, dict) and isinstance(fpn.get("product_id"), str) and \
                isinstance(rel.get("product_reference"), str) and rel["product_reference"] in out:
            out[fpn.get("product_id")] = out[rel["product_reference"]]
    return out


@lru_cache(maxsize=1)
def _csaf_validator():
    """The OASIS CSAF 2.0 schema validator (built once: reading and compiling it takes about a second),
    or the note saying why there is none."""
    try:
        dist = metadata.distribution("csaf")
        import jsonschema                                     # noqa: F401 (optional)
        from referencing import Registry, Resource
    except (metadata.PackageNotFoundError, ImportError):
        return "not checked against the OASIS JSON schema (install the 'advisories' extra)"
    base = Path(str(dist.locate_file("csaf/csaf/v20/schema")))
    try:
        schema = json.loads((base / "csaf.json").read_text(encoding="utf-8"))
        refs = [(f"https://www.first.org/cvss/cvss-v{v}.json",
                 Resource.from_contents(json.loads((base / "referenced" / f"cvss-v{v}.json").read_text("utf-8"))))
                for v in ("2.0", "3.0", "3.1")]
    except (OSError, ValueError):
        return "not checked: the csaf package's schema files could not be read"
    return jsonschema.Draft202012Validator(schema, registry=Registry().with_resources(refs))


def _schema_notes(doc: dict, source: str) -> list[str]:
    """The official CSAF 2.0 schema check, when the ``csaf`` package and jsonschema are installed."""
    validator = _csaf_validator()
    if isinstance(validator, str):
        return [validator]
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        where = "/".join(str(x) for x in e.absolute_path) or "(top)"
        raise ValidationError("path", f"{source}: not a valid CSAF 2.0 document: at {where}: {e.message[:200]}"
                              + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""),
                              "a document the OASIS CSAF 2.0 JSON schema accepts")
    return ["checked against the OASIS CSAF 2.0 JSON schema"]


def _csaf(doc: dict, source: str) -> Advisories:
    version = doc["document"].get("csaf_version")
    if version != "2.0":
        raise _fail(source, f"CSAF {version!r} is not read here; CSAF 2.0 is")
    notes = _schema_notes(doc, source)
    tree = doc.get("product_tree")
    if not isinstance(tree, dict):
        raise _fail(source, "CSAF without a product_tree names no product")
    products = _csaf_products(tree, notes)
    items = []
    for i, vul in enumerate(_items(doc.get("vulnerabilities"), "vulnerabilities", source)):
        if not isinstance(vul, dict):
            raise _fail(source, f"vulnerabilities[{i}] is not an object")
        tracking = doc["document"].get("tracking")
        ids = _seq(vul.get("ids"))
        first_id = ids[0].get("text") if ids and isinstance(ids[0], dict) else None
        vid = next((v for v in (vul.get("cve"), first_id) if isinstance(v, str) and v),
                   f"{tracking.get('id', 'CSAF') if isinstance(tracking, dict) else 'CSAF'}#{i + 1}")
        by_pkg: dict[str, dict[str, str]] = {}
        status_lists = vul.get("product_status") if isinstance(vul.get("product_status"), dict) else {}
        for key, status in CSAF_STATUS.items():
            for pid in _seq(status_lists.get(key)):
                if not isinstance(pid, str) or pid not in products:
                    notes.append(f"{vid}: product id {pid!r} is not in the product tree")
                    continue
                name, ver = products[pid]
                if isinstance(name, str) and isinstance(ver, str):
                    by_pkg.setdefault(name, {})[ver] = status
        packages = tuple(Affected(n, None, v, complete=False) for n, v in by_pkg.items())
        items.append(Advisory(str(vid), str(vul.get("title") or doc["document"].get("title") or ""), (), packages))
    return Advisories("CSAF 2.0", source, tuple(items), tuple(dict.fromkeys(notes)))


# ---- matching ----------------------------------------------------------------------------------
def match(sbom: Sbom, advisories: Advisories) -> tuple[Match, ...]:
    """Every (component, advisory) pair whose package name matches (PEP 503 normalised), with the
    status of the component's version: listed, or in an OSV range, or not evaluated."""
    out = []
    for comp in sbom.components:
        for adv in advisories.items:
            for pkg in adv.packages:
                if norm(pkg.name) != norm(comp.name):
                    continue
                if comp.version is None:
                    out.append(Match(comp.name, None, adv.id, UNKNOWN, "the SBOM gives no version"))
                elif comp.version in pkg.versions:
                    out.append(Match(comp.name, comp.version, adv.id, pkg.versions[comp.version],
                                     "version listed in the advisory"))
                elif pkg.ranges:
                    results = [osv_range_status(comp.version, kind, ev) for kind, ev in pkg.ranges]
                    known = [r for r in results if r[0] != UNKNOWN]      # a GIT range says nothing of releases
                    status, why = next((r for r in known if r[0] == AFFECTED), (known or results)[0])
                    out.append(Match(comp.name, comp.version, adv.id, status, why))
                elif pkg.complete:
                    out.append(Match(comp.name, comp.version, adv.id, NOT_AFFECTED,
                                     "not among the versions the record lists as affected"))
                else:
                    out.append(Match(comp.name, comp.version, adv.id, UNKNOWN,
                                     "the advisory names other versions of this product only"))
    return tuple(out)
