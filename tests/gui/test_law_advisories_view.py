"""The SBOM tab matches an OSV or CSAF advisory the user downloaded against the open SBOM."""
from __future__ import annotations

from pathlib import Path

from panels.law import LawPanel

ADV = Path(__file__).resolve().parents[1] / "data" / "advisories"
SBOMS = Path(__file__).resolve().parents[1] / "data" / "sbom"


def test_advisory_hits_show_beside_the_components(make_panel):
    p = make_panel(LawPanel)
    v = p.sbom
    p.update_params(sbom_source=":example", advisory_source=":example")
    assert "1 component version(s) affected" in v.vulns.text() and "⚠ openssl 3.0.13" in v.vulns.text()
    assert "Part I(2)(a)" in v.vulns.text() and "OASIS CSAF 2.0 JSON schema" in v.vulns.text()
    cells = {v.table.item(r, 0).text(): v.table.item(r, 4).text() for r in range(v.table.rowCount())}
    assert cells["openssl"] == "TEST-2026-0010: affected" and cells["zlib"] == "—"
    assert ["openssl", "3.0.13", "TEST-2026-0010", "affected"] in p.result()["sbom"]["advisories"]
    p.update_params(sbom_source=str(SBOMS / "thermostat-app.spdx.json"), advisory_source=str(ADV / "thermostat.osv.json"))
    assert "x_TEST-2026-0001, introduced in 2.0.0, fixed in 2.5.0" in v.vulns.text()
    p.update_params(advisory_source=str(ADV / "broken-range-type.osv.json"))
    assert "ranges[0].type: 'RANGE' is not one of" in v.error.text() and "could not be read" in v.vulns.text()
    p.update_params(advisory_source="")
    assert not v.error.text() and "No advisory open" in v.vulns.text()
    assert "sbom_advisories" in p.views()
