"""What the law panel's SBOM tab shows for one (SBOM, advisory) pair: the CRA Annex I Part II(1) check
of the SBOM and the opened OSV/CSAF advisory's matches against it, as one frozen result, so the view
only draws it. The ``":example"`` source stands for the shipped example file of either kind."""
from __future__ import annotations

from dataclasses import dataclass

from engines.core.errors import ValidationError
from engines.law import advisories, sbom

EXAMPLE = ":example"


@dataclass(frozen=True)
class SbomStudy:
    """An open SBOM with its clause check and advisory matches; ``advisory`` is None when no advisory
    is open or it could not be read (``advisory_error`` says why)."""
    sbom: sbom.Sbom
    check: sbom.SbomCheck
    advisory: advisories.Advisories | None
    matches: tuple[advisories.Match, ...]
    advisory_error: str | None


def read_sbom(source: str) -> sbom.Sbom:
    """The SBOM ``source`` names (a path or :data:`EXAMPLE`); a ValidationError says why it cannot be read."""
    return sbom.read(sbom.EXAMPLE if source == EXAMPLE else source)


def study(s: sbom.Sbom, sbom_source: str, advisory_source: str) -> SbomStudy:
    """Check ``s`` against the clause (with the expected top level its source implies) and match the
    advisory ``advisory_source`` names against it; an unreadable advisory is reported, not raised."""
    check = sbom.check(s, sbom.expected_for(sbom_source))
    if not advisory_source:
        return SbomStudy(s, check, None, (), None)
    try:
        a = advisories.read(advisories.EXAMPLE if advisory_source == EXAMPLE else advisory_source)
    except ValidationError as exc:
        return SbomStudy(s, check, None, (), str(exc))
    return SbomStudy(s, check, a, advisories.match(s, a), None)
