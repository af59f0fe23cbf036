"""H4: the duties that apply once a model's output feeds a regulated trading or banking process.

Each entry is our summary of one text, its source, and how far we checked it (the reference sheet's
status, re-stated): "checked" (read in the primary text or its official page), "secondary" (third-party
copies agree, the primary was not read), "interpretation" (our reading; no regulator guidance found).
Not legal advice.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Duty:
    regime: str
    duty: str
    source: str
    status: str


GOVERNANCE: tuple[Duty, ...] = (
    Duty("EU AI Act", "In force since 1 Aug 2024; prohibitions and AI literacy (Art. 4) apply from 2 Feb 2025, "
         "general-purpose model duties from 2 Aug 2025, most other provisions from 2 Aug 2026.",
         "Regulation (EU) 2024/1689, Art. 113", "checked"),
    Duty("EU AI Act", "Annex III's finance entries cover credit scoring of natural persons and life/health "
         "insurance pricing; trading and investment algorithms are not among them, so a headline extractor "
         "for trading is usually not a high-risk system.",
         "Regulation (EU) 2024/1689, Annex III point 5(b), 5(c)", "secondary"),
    Duty("MiFID II", "A firm trading algorithmically must be able to describe its strategies, their parameters "
         "and limits, its risk controls and its testing to its regulator, and keep records that let the "
         "regulator check compliance.", "Directive 2014/65/EU, Art. 17(2)", "checked"),
    Duty("RTS 6", "Algorithms are tested before deployment (Art. 5–8), validated in an annual self-assessment "
         "(Art. 9), changed only under a material-change process (Art. 11), can be killed (Art. 12), pass "
         "pre-trade controls (Art. 15) and are monitored in real time (Art. 16).",
         "Commission Delegated Regulation (EU) 2017/589", "checked"),
    Duty("RTS 6", "An extractor feeding an algorithm that sets order parameters falls inside that perimeter, "
         "so a prompt edit or a model swap would be a material change to re-test.",
         "our reading of Delegated Regulation (EU) 2017/589, Art. 11", "interpretation"),
    Duty("SR 11-7 (US)", "A model needs an inventory entry, validation (conceptual soundness, ongoing monitoring, "
         "outcomes analysis) and effective challenge; an extractor whose output feeds quantitative estimates "
         "plausibly counts as a model component.",
         "Federal Reserve / OCC, SR 11-7, 4 Apr 2011", "secondary"),
    Duty("PRA SS1/23 (UK)", "Five principles: model identification and risk tiering, governance, development and "
         "use, independent validation, risk mitigants; AI and machine-learning risks are managed within them. "
         "Scope: banks with internal-model approval.",
         "PRA Supervisory Statement SS1/23, 17 May 2023", "checked"),
)
