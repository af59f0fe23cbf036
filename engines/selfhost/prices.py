"""The price book: API, GPU-rental and hardware prices as a dated, cited, user-editable JSON file.

Prices go stale (AWS cut H100 rental by about 45 % in mid-2025; some hosted model prices rose), so
every row carries the day (or month) it was observed, where, and how sure that is. The shipped
file is ``assets/selfhost/prices.json``; a user's edited copy replaces it. Reading validates the
whole document first, so a broken file raises a :class:`ValidationError` naming the row and field
and nothing changes. No network: the figures were extracted once from offline tables.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import date
from pathlib import Path

from engines.core.assets import asset_path
from engines.core.cited import CONFIDENCE, Cited, check_cited, cited_date
from engines.core.errors import ValidationError, require_number
from engines.core.hardware import GPUS
from engines.core.reading import in_file, load_json, read_text
from engines.core.versioned import upgrade

KIND = "explorer-prices"
SCHEMA_VERSION = 2
SECTIONS = ("api", "gpu_rental", "hardware")
V1_CONFIDENCE = {"provider page": "checked", "price table": "secondary", "secondary": "secondary",
                 "unverified": "unverified"}
"""Version 1's own confidence words in the shared vocabulary (engines.core.cited.CONFIDENCE): a provider's
own page is the primary source; a third-party price table is a secondary one."""


def _v1_to_v2(doc: dict) -> dict:
    """Version 2 rows use the shared cited-row scheme: ``observed`` is ``date``, confidence words are
    the shared ones. A word version 1 did not know is left as it is, for the validator to name."""
    out = dict(doc, schema_version=2)
    for key in SECTIONS:
        rows = doc.get(key)
        if not isinstance(rows, list):
            continue
        new = []
        for raw in rows:
            if isinstance(raw, Mapping):
                raw = {("date" if k == "observed" else k): v for k, v in raw.items()}
                if isinstance(raw.get("confidence"), str):
                    raw["confidence"] = V1_CONFIDENCE.get(raw["confidence"], raw["confidence"])
            new.append(raw)
        out[key] = new
    return out


MIGRATIONS: dict = {1: _v1_to_v2}
"""One step per old version (v → v + 1)."""
MAX_BYTES = 2_000_000
STALE_DAYS = 365
"""A price older than a year is flagged on screen."""
TERMS = ("on-demand", "committed", "spot")


@dataclass(frozen=True)
class _Seen(Cited):
    """A price row is a cited row; its date is the day (or month) the price was seen."""

    @property
    def observed(self) -> str:
        """The row's ``date`` under the name version 1 files used."""
        return self.date


@dataclass(frozen=True)
class ApiPrice(_Seen):
    """One API's list price per million tokens, with when and where it was seen."""

    id: str
    provider: str
    model: str
    input_per_mtok: float
    output_per_mtok: float
    cached_input_per_mtok: float | None = None
    note: str = ""

    @property
    def label(self) -> str:
        return f"{self.provider} {self.model}"


@dataclass(frozen=True)
class GpuRental(_Seen):
    """One rental offer's price per GPU-hour for a GPU of the app's catalogue."""

    id: str
    gpu: str
    provider: str
    offer: str
    usd_per_gpu_hour: float
    term: str

    @property
    def label(self) -> str:
        return f"{self.provider} {self.offer}"


@dataclass(frozen=True)
class HardwarePrice(_Seen):
    """One server's purchase price, GPU count and power draw (the inputs of an owned GPU-hour)."""

    id: str
    gpu: str
    item: str
    capex_usd_per_server: float
    gpus_per_server: int
    server_kw: float


@dataclass(frozen=True)
class PriceBook:
    """A whole validated price file."""

    api: tuple[ApiPrice, ...]
    gpu_rental: tuple[GpuRental, ...]
    hardware: tuple[HardwarePrice, ...]
    note: str = ""
    licence: str = ""

    def api_row(self, row_id: str) -> ApiPrice:
        for row in self.api:
            if row.id == row_id:
                return row
        raise ValidationError("api", f"{row_id!r} is not in the price file", ", ".join(r.id for r in self.api))

    def rentals_for(self, gpu: str) -> tuple[GpuRental, ...]:
        return tuple(r for r in self.gpu_rental if r.gpu == gpu)

    def rental_row(self, row_id: str, gpu: str) -> GpuRental:
        """The rental row ``row_id`` for ``gpu``; "" picks the median-priced on-demand offer for that GPU."""
        rows = self.rentals_for(gpu)
        if not rows:
            raise ValidationError("gpu_offer", f"the price file has no rental price for {gpu}",
                                  ", ".join(sorted({r.gpu for r in self.gpu_rental})))
        if row_id == "":
            pool = sorted((r for r in rows if r.term == "on-demand"), key=lambda r: (r.usd_per_gpu_hour, r.id)) \
                or sorted(rows, key=lambda r: (r.usd_per_gpu_hour, r.id))
            return pool[(len(pool) - 1) // 2]
        for row in rows:
            if row.id == row_id:
                return row
        raise ValidationError("gpu_offer", f"{row_id!r} is not a rental offer for {gpu} in the price file",
                              ", ".join(r.id for r in rows))

    def hardware_for(self, gpu: str) -> HardwarePrice | None:
        return next((h for h in self.hardware if h.gpu == gpu), None)


def observed_date(text: str) -> date:
    """The day a price was seen: "YYYY-MM-DD"; "YYYY-MM" (or "YYYY") is read as its first day."""
    return cited_date(text)


def age_days(observed: str, today: date) -> int:
    """Days between the observation and ``today``."""
    return (today - observed_date(observed)).days


def is_stale(observed: str, today: date) -> bool:
    """Older than :data:`STALE_DAYS`: flagged wherever the price is shown."""
    return age_days(observed, today) > STALE_DAYS


def age_words(observed: str, today: date) -> str:
    """"observed 2026-09-25, 67 days ago" with a STALE mark past a year (text, never colour alone)."""
    days = age_days(observed, today)
    when = ("in the future?" if days < 0 else "today" if days == 0 else "1 day ago" if days == 1
            else f"{days:,} days ago")
    return f"observed {observed}, {when}" + (" — STALE (over a year)" if days > STALE_DAYS else "")


# ---- reading and validating -----------------------------------------------------------------

def _text(raw: Mapping, key: str, where: str, required: bool = True, longest: int = 400) -> str:
    value = raw.get(key, "" if not required else None)
    if not isinstance(value, str) or (required and not value.strip()) or len(value) > longest:
        raise ValidationError(f"{where}.{key}", f"expected text of 1…{longest} characters, got {value!r}", "text")
    return value


def _number(raw: Mapping, key: str, where: str, lo: float = 0.0, hi: float = 1e9) -> float:
    if key not in raw:
        raise ValidationError(f"{where}.{key}", "missing", f"a number {lo}…{hi:g}")
    return require_number(raw[key], f"{where}.{key}", lo, hi)


def _common(raw: Mapping, where: str) -> dict:
    return {**check_cited(raw, where), "id": _text(raw, "id", where, longest=80)}


def _gpu(raw: Mapping, where: str) -> str:
    gpu = raw.get("gpu")
    if not isinstance(gpu, str) or gpu not in GPUS:    # {} or [] would raise TypeError in a dict lookup
        raise ValidationError(f"{where}.gpu", f"{gpu!r} is not a GPU of the app's catalogue", ", ".join(GPUS))
    return gpu


def _api(raw: Mapping, where: str) -> ApiPrice:
    base = _common(raw, where)
    cached = raw.get("cached_input_per_mtok")
    return ApiPrice(**base, provider=_text(raw, "provider", where, longest=80),
                    model=_text(raw, "model", where, longest=120),
                    input_per_mtok=_number(raw, "input_per_mtok", where, 0, 10_000),
                    output_per_mtok=_number(raw, "output_per_mtok", where, 0, 10_000),
                    cached_input_per_mtok=None if cached is None else _number(raw, "cached_input_per_mtok", where,
                                                                              0, 10_000),
                    note=_text(raw, "note", where, required=False))


def _rental(raw: Mapping, where: str) -> GpuRental:
    base = _common(raw, where)
    term = raw.get("term")
    if term not in TERMS:
        raise ValidationError(f"{where}.term", f"{term!r} is not known", ", ".join(TERMS))
    return GpuRental(**base, gpu=_gpu(raw, where), provider=_text(raw, "provider", where, longest=80),
                     offer=_text(raw, "offer", where), usd_per_gpu_hour=_number(raw, "usd_per_gpu_hour", where, 0, 1000),
                     term=term)


def _hardware(raw: Mapping, where: str) -> HardwarePrice:
    base = _common(raw, where)
    n = raw.get("gpus_per_server")
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 1024:
        raise ValidationError(f"{where}.gpus_per_server", f"expected an integer, got {n!r}", "1…1024")
    return HardwarePrice(**base, gpu=_gpu(raw, where), item=_text(raw, "item", where),
                         capex_usd_per_server=_number(raw, "capex_usd_per_server", where, 0, 1e9),
                         gpus_per_server=n, server_kw=_number(raw, "server_kw", where, 0, 1000))


def parse_prices(doc) -> PriceBook:
    """A validated :class:`PriceBook` from a parsed document; the first problem raises, naming its field."""
    doc = upgrade(doc, SCHEMA_VERSION, MIGRATIONS, "price")
    if doc.get("kind") != KIND:
        raise ValidationError("kind", f"{doc.get('kind')!r} is not a price file", KIND)
    if doc.get("currency", "USD") != "USD":     # every figure is read as US dollars; no rate is stated
        raise ValidationError("currency", f"{doc.get('currency')!r}: the prices must be in US dollars", "USD")
    sections = {}
    for key, read in zip(SECTIONS, (_api, _rental, _hardware)):
        rows = doc.get(key)
        if not isinstance(rows, list):
            raise ValidationError(key, f"expected a list of rows, got {type(rows).__name__}", "[{…}, …]")
        parsed = tuple(read(raw, f"{key}[{i}]") for i, raw in enumerate(rows))
        seen: set[str] = set()
        for i, row in enumerate(parsed):
            if row.id in seen:
                raise ValidationError(f"{key}[{i}].id", f"{row.id!r} is used twice", "unique ids")
            seen.add(row.id)
        sections[key] = parsed
    if not sections["api"]:
        raise ValidationError("api", "needs at least one API price", "one row or more")
    return PriceBook(**sections, note=str(doc.get("note", "")), licence=str(doc.get("licence", "")))


def parse_price_text(text: str) -> PriceBook:
    if not isinstance(text, str):
        raise ValidationError("file", f"expected the text of a price file, got {type(text).__name__}")
    if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise ValidationError("file", f"more than {MAX_BYTES:,} bytes", "a price file of a few kB")
    return parse_prices(load_json(text, "file"))


def load_prices(path: str | Path | None = None) -> PriceBook:
    """The shipped price file, or the one at ``path``; any problem is a ValidationError saying what."""
    p = Path(path) if path is not None else asset_path("selfhost", "prices.json")
    text = read_text(p, MAX_BYTES, lambda name, why: ValidationError("file", f"{p} {why}"), not_text="is not UTF-8 text")
    try:
        return parse_price_text(text)
    except ValidationError as exc:
        raise in_file(exc, p.name) from None


def dump_prices(book: PriceBook) -> str:
    """The book as the JSON a price file holds (read back by :func:`parse_price_text` unchanged)."""
    def rows(items):
        out = []
        for item in items:
            d = asdict(item)
            d = {"id": d.pop("id"), **d}          # a row reads from its id
            if d.get("cached_input_per_mtok", 0) is None:
                d.pop("cached_input_per_mtok")
            out.append(d)
        return out

    doc = {"kind": KIND, "schema_version": SCHEMA_VERSION, "currency": "USD", "note": book.note,
           "licence": book.licence, "api": rows(book.api), "gpu_rental": rows(book.gpu_rental),
           "hardware": rows(book.hardware)}
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


__all__ = ["KIND", "SCHEMA_VERSION", "STALE_DAYS", "CONFIDENCE", "TERMS", "ApiPrice", "GpuRental", "HardwarePrice",
           "PriceBook", "observed_date", "age_days", "is_stale", "age_words", "parse_prices", "parse_price_text",
           "load_prices", "dump_prices"]


SHIPPED_WHERE = "the shipped file assets/selfhost/prices.json"


def open_book(user_path: Path) -> tuple[PriceBook, str, str | None]:
    """The user's edited price file if there is one and it reads, else the shipped one: the book, where
    it came from, and why the user's file was set aside (it is kept as it is), or None."""
    if user_path.exists():
        try:
            return load_prices(user_path), f"your edited file {user_path}", None
        except Exception as exc:   # noqa: BLE001 — whatever is in the user's file, the app opens
            return load_prices(), SHIPPED_WHERE, f"your price file {user_path} is not used (kept as it is): {exc}"
    return load_prices(), SHIPPED_WHERE, None


def checked_book(text: str, api: str, gpu_offer: str | None, gpu: str) -> PriceBook:
    """``text`` as a price book that still holds the rows the current view uses (the API row ``api``
    and, unless the GPUs are owned (``gpu_offer`` None), the rental offer for ``gpu``), so the view can
    still be drawn; a ValidationError names the field otherwise."""
    book = parse_price_text(text)
    book.api_row(api)
    if gpu_offer is not None:
        book.rental_row(gpu_offer, gpu)
    return book
