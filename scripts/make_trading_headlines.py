"""Write ``assets/trading/headlines.json``: headlines we wrote ourselves, about fictional companies,
labelled by two independent rules (the H4 gold set of the trading panel).

Run: ``.venv/bin/python scripts/make_trading_headlines.py [--seed 20261201] [--out assets/trading/headlines.json]``
(deterministic: seeded; the file records this command in ``generated_by``).

Process, recorded in the file:
- Labeler A (the gold standard) labels each headline by the template it came from: the guideline
  "label the event the headline reports as its main news" was applied once, by hand, to each template.
- Labeler B is an independent keyword rule set written from a different guideline ("label by the first
  matching cue in the priority legal > leadership > deal > results direction"). It never sees the template.
  Where a headline mixes cues the two disagree; that disagreement is what Cohen's κ measures.
- The shifted set uses other templates (terse wire-desk style with jargon) and another class mix, as a
  later period or a new news source would: the drift a deployed extractor meets.
All companies and people are invented; any likeness to a real name is accidental.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engines.core.writing import atomic_write_text  # noqa: E402
from scripts.provenance import record  # noqa: E402

CLASSES = ("results_up", "results_down", "deal", "legal", "leadership")
COMPANIES = ("Zorvex Holdings", "Quillmere Foods", "Tarnwick Mining", "Halvorn Systems", "Pellucid Grid",
             "Vantorra Motors", "Kelpmark Retail", "Drennick Bio", "Ombrel Chemicals", "Sallowby Insurance",
             "Crestlin Logistics", "Marrowind Energy", "Ithren Semiconductors", "Yarrowdale Bank", "Corvane Media",
             "Nimbrel Pharma", "Faldor Airlines", "Questry Software", "Brannoch Steel", "Luvenna Telecom",
             "Orrisdale Water", "Pintleway Freight", "Saffrey Apparel", "Tollemere Games")
PEOPLE = ("Mara Okonjo", "Lars Feddersen", "Priya Ramaswell", "Tomas Quell", "Ines Harrowgate", "Dev Castellane",
          "Noor Abernethy", "Felix Lindqvale", "Sun-hee Marlowe", "Ada Wrenfield")
ROLES = ("chief executive", "finance chief", "chair", "chief operating officer")

# (class, template); {c} company, {o} another company, {p} person, {r} role, {n} a percentage, {q}/{Q} quarter
BASE = [
    ("results_up", "{c} quarterly profit rises {n}% on strong demand"),
    ("results_up", "{c} beats forecasts as {q} sales climb {n}%"),
    ("results_up", "{c} raises full-year outlook after record {q}"),
    ("results_up", "{c} shares jump as earnings top analyst estimates"),
    ("results_up", "Higher prices lift {c} margins to a five-year high"),
    ("results_up", "{c} posts surprise {q} profit, revenue up {n}%"),
    ("results_down", "{c} profit falls {n}% as costs bite"),
    ("results_down", "{c} misses estimates and cuts its full-year forecast"),
    ("results_down", "{c} swings to a {q} loss on weak orders"),
    ("results_down", "{c} shares slide after revenue drops {n}%"),
    ("results_down", "{c} warns that {q} earnings will disappoint"),
    ("results_down", "Legal costs drag {c} quarterly profit down {n}%"),
    ("deal", "{c} agrees to buy {o} in all-share deal"),
    ("deal", "{c} and {o} announce merger of equals"),
    ("deal", "{c} to acquire rival {o} for cash"),
    ("deal", "{o} accepts takeover bid from {c}"),
    ("deal", "{c} sells its logistics arm to {o}"),
    ("deal", "{c} profit outlook lifted by purchase of {o}"),
    ("legal", "{c} sued by investors over misleading statements"),
    ("legal", "Regulator opens probe into {c} accounting"),
    ("legal", "{c} fined by watchdog over data breach"),
    ("legal", "Court blocks {c} patent claim against {o}"),
    ("legal", "{c} settles lawsuit with former distributors"),
    ("legal", "Prosecutors charge {c} over safety failures"),
    ("leadership", "{c} names {p} as new {r}"),
    ("leadership", "{c} {r} {p} steps down"),
    ("leadership", "{p} to leave {c} after board dispute"),
    ("leadership", "{c} appoints {p} {r} with immediate effect"),
    ("leadership", "{c} board ousts {r} {p}"),
    ("leadership", "{c} {r} resigns amid regulator investigation"),
]
SHIFTED = [
    ("results_up", "{c} {Q} EPS tops consensus; guidance raised"),
    ("results_up", "{c} Q/Q rev +{n}%, beats Street"),
    ("results_up", "{c} lifts FY EBITDA target"),
    ("results_down", "{c} {Q} EPS below consensus; FY guide cut"),
    ("results_down", "{c} rev -{n}% Y/Y, shares lower pre-market"),
    ("results_down", "{c} flags impairment, {Q} net loss widens"),
    ("results_down", "{c} sinks on deal-integration charges"),
    ("deal", "{c} inks pact to take over {o}"),
    ("deal", "{c} in advanced talks for {o} stake"),
    ("deal", "{c} tender offer for {o} gets go-ahead"),
    ("legal", "{c} faces class action over disclosures"),
    ("legal", "SEC-style inquiry widens at {c}"),
    ("legal", "{c} hit with antitrust complaint by {o}"),
    ("legal", "{c} units raided in bribery inquiry"),
    ("leadership", "{c} CFO exit effective immediately"),
    ("leadership", "{c} taps {p} for top job"),
    ("leadership", "{c} CEO quits as probe widens"),
]
BASE_MIX = {k: 80 for k in CLASSES}
SHIFTED_MIX = {"results_up": 40, "results_down": 40, "deal": 30, "legal": 70, "leadership": 20}

# Labeler B: cue lists in priority order (word-boundary, case-insensitive); default results_up.
CUES = (
    ("legal", r"sue|sued|lawsuit|probe|fined?|court|prosecutor|charge[sd]?|settles?|class action|inquiry|"
              r"antitrust|complaint|raided|investigation|watchdog|legal"),
    ("leadership", r"names|appoints?|steps down|resigns?|ousts?|to leave|cfo|ceo|chief executive|chair|top job"),
    ("deal", r"buy|acquire|merger|takeover|take over|sells?|purchase|stake|tender offer|deal"),
    ("results_down", r"falls?|miss(es)?|loss|slides?|drops?|warns?|cuts?|below|lower|impairment|disappoint|down"),
)
NEGATIVE_FIGURE = re.compile(r"-\d")   # "rev -12%": a falling figure is a results_down cue too
LABELER_B = ("First matching cue wins, in the priority legal > leadership > deal > results_down; "
             "a headline with none of these cues is results_down if it shows a negative figure, "
             "else results_up. Cues: "
             + "; ".join(f"{k}: {v.replace('|', ', ')}" for k, v in CUES))


def label_b(text: str) -> str:
    for cls, pattern in CUES:
        if re.search(rf"\b(?:{pattern})\b", text, re.IGNORECASE):
            return cls
    return "results_down" if NEGATIVE_FIGURE.search(text) else "results_up"


def _fill(template: str, rng: random.Random) -> str:
    c, o = rng.sample(COMPANIES, 2)
    return template.format(c=c, o=o, p=rng.choice(PEOPLE), r=rng.choice(ROLES), n=rng.randint(3, 40),
                           q=rng.choice(("first-quarter", "second-quarter", "third-quarter", "fourth-quarter")),
                           Q=rng.choice(("Q1", "Q2", "Q3", "Q4")))


def _make(templates, mix, split: str, rng: random.Random) -> list[dict]:
    items, seen = [], set()
    for cls in CLASSES:
        pool = [(i, t) for i, (k, t) in enumerate(templates) if k == cls]
        made = 0
        while made < mix[cls]:
            i, t = pool[made % len(pool)]
            text = _fill(t, rng)
            if text in seen:
                continue
            seen.add(text)
            items.append({"set": split, "template": f"{split}.{i}", "text": text, "label_a": cls,
                          "label_b": label_b(text)})
            made += 1
    rng.shuffle(items)
    return items


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=20261201)
    ap.add_argument("--out", type=Path, default=ROOT / "assets" / "trading" / "headlines.json")
    return ap


def make_items(seed: int) -> list[dict]:
    """Every headline with both labels, in file order (a pure function of the seed)."""
    rng = random.Random(seed)
    items = _make(BASE, BASE_MIX, "base", rng) + _make(SHIFTED, SHIFTED_MIX, "shifted", rng)
    for i, it in enumerate(items):
        it["id"] = f"h{i:04d}"
    return [{k: it[k] for k in ("id", "set", "template", "text", "label_a", "label_b")} for it in items]


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    items = make_items(args.seed)
    doc = {
        "schema_version": 1,
        "kind": "trading.headlines",
        "about": "Headlines written for AI Systems Explorer about invented companies; no licensed text. "
                 "Labelled by two independent rules (see labelers).",
        "classes": list(CLASSES),
        "labelers": {
            "label_a": "Gold: the event class assigned once to each template under the guideline "
                       "'label the event the headline reports as its main news'.",
            "label_b": LABELER_B,
        },
        "sets": {"base": "training and held-out test (plain newspaper style, balanced classes)",
                 "shifted": "drift check (terse wire-desk jargon, legal-heavy class mix)"},
        "items": items,
        "generated_by": record("scripts/make_trading_headlines.py", parser, args),
    }
    text = json.dumps(doc, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    atomic_write_text(args.out, text)
    print(args.out, len(items), "items, sha256", hashlib.sha256(text.encode()).hexdigest()[:12])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
