"""Self-hosting (lessons C1, C2): the honest total cost against an API, the dated price file behind it,
what stays private, and what operating the deployment means day to day.

A thin view over :mod:`engines.selfhost`: the comparison (with the serving engine's steady-state
sizing) runs in the "main" job slot, the simulated day in the "ops" slot after it; capacity, upgrade
and retirement figures are one cheap engine call (:func:`engines.selfhost.outlook`) made inline."""
from __future__ import annotations

import logging
from datetime import date
from pathlib import Path

from PySide6.QtWidgets import QComboBox, QLabel, QVBoxLayout, QWidget

from engines.selfhost import (OWNERSHIP, SHIPPED_WHERE, Params, PriceBook, age_words, checked_book, dump_prices,
                              load_prices, open_book, outlook, sizing_key, tco)
from explorer.binder import ParamBinder, param_slider, quiet
from explorer.exports import save_document, write_document
from explorer.files import FileProblem, atomic_write_text, read_text_limited
from explorer.panel import Panel
from explorer.ui.flow_layout import FlowLayout, keep_together
from explorer.ui.live_text import LiveText
from explorer.ui.widgets import ElidedCombo, ErrorLabel, Tabs
from panels._selfhost_cost import CostView
from panels._selfhost_jobs import day_call, planned, sizing_call
from panels._selfhost_ops import CapacityView, DayView, SecurityTable, signal_words, upgrade_words
from panels._selfhost_prices import PriceEditor, PricesView, book_rows
from panels._selfhost_pages import Page, on_top, page_around, size_by_current_page
from panels._selfhost_prices import PRICE_FILE, user_price_path  # noqa: F401  (importable here, as before)
from panels._selfhost_privacy import PrivacyView

TAB_TITLES = ("Cost against an API", "Prices and assumptions", "What stays private", "Operating it")
OPS_TITLES = ("A day of traffic", "Capacity over months", "Upgrades", "Security", "Retire?")
COST_SLIDERS = ("traffic_per_s", "peak_to_average", "prompt_tokens", "output_tokens", "api_price_change_pct")
ASSUMPTION_SLIDERS = ("efficiency_pct", "spares")
OWN_SLIDERS = {"commit": ("commit_discount_pct",), "own": ("life_years", "usd_per_kwh", "pue", "capital_rate_pct"),
               "rent": ()}
FIXED_SLIDERS = ("fte", "usd_per_fte_year", "other_fixed_per_month")
DAY_SLIDERS = ("ttft_target_s", "tpot_target_ms", "max_utilisation_pct")
PRIVACY_FIELDS = frozenset({"privacy_tree", "privacy_answers"})
CHEAP_FIELDS = frozenset({"growth_pct_per_month", "upgrade_days"})
DEBOUNCE_MS = 150
log = logging.getLogger(__name__)
K8S_HINT = ("Kubernetes loops ▸ the model-server scenario shows the same rolling update pod by pod: the surge pod "
            "is scheduled, loads its weights and only then takes traffic.")


class SelfHostPanel(Panel):
    key = "selfhost"
    title = "Self-hosting"
    order = 75
    Params = Params
    reads = frozenset({"model", "arch", "gpu", "weight_bits", "kv_bits", "serve_batch", "serve_context"})
    lesson = "selfhost.md"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.today = date.today()
        self.book, self.book_where, startup_problem = open_book(user_price_path())
        if startup_problem:
            log.warning("the price file is set aside: %s", startup_problem)
        self.result_tco = None
        self.day = None
        self.months = None
        self.upgrade = None
        self.signals = None
        self._sizing_cache: tuple | None = None
        self._refresh = self.debounce(self._start, DEBOUNCE_MS)
        self.error = ErrorLabel()
        self.sliders = {}
        self.tabs = Tabs()
        self.tabs.addTab(self._cost_page(), TAB_TITLES[0])
        self.tabs.addTab(self._prices_page(), TAB_TITLES[1])
        self.tabs.addTab(self._privacy_page(), TAB_TITLES[2])
        self.tabs.addTab(self._ops_page(), TAB_TITLES[3])
        for tabs in (self.tabs, self.ops_tabs):
            size_by_current_page(tabs)
        self.body.addWidget(self.error)
        self.body.addWidget(self.tabs, 1)
        self.binder = ParamBinder(self, {**self.sliders, "ownership": self.own_combo},
                                  choices={"ownership": OWNERSHIP}, error=self.error.show_error)
        for name, widget in self.sliders.items():
            self.name_view(name, widget, Params.spec(name)["label"])
        self._fill_choices()
        self._show_ownership()
        self.privacy.show_walk(self.params.walk())
        self.price_error.show_error(startup_problem)

    # --- pages --------------------------------------------------------------------------------------
    def _row(self, names, extra=()) -> FlowLayout:
        row = FlowLayout()
        for name in names:
            self.sliders[name] = param_slider(Params, name)
            row.addWidget(self.sliders[name])
        for w in extra:
            row.addWidget(w)
        return row

    def _cost_page(self) -> QWidget:
        page = Page()
        lay = QVBoxLayout(page)
        self.api_combo = ElidedCombo()
        self.api_combo.setAccessibleName("API to compare with")
        self.api_combo.setMinimumContentsLength(18)
        self.api_combo.activated.connect(lambda i: self._set(api=self.api_combo.itemData(i)))
        self.gpu_combo = ElidedCombo()
        self.gpu_combo.setAccessibleName("GPU rental offer")
        self.gpu_combo.setMinimumContentsLength(18)
        self.gpu_combo.activated.connect(lambda i: self._set(gpu_offer=self.gpu_combo.itemData(i)))
        self.own_combo = QComboBox()
        self.own_combo.setAccessibleName("How the GPUs are paid for")
        self.own_combo.addItems(list(OWNERSHIP.values()))
        row = self._row(COST_SLIDERS, (keep_together(QLabel("API:"), self.api_combo),
                                       keep_together(QLabel("GPUs:"), self.own_combo),
                                       keep_together(QLabel("Offer:"), self.gpu_combo), self.tasks.widget()))
        lay.addLayout(row)
        self.cost_view = CostView(self.theme)
        lay.addWidget(self.cost_view, 1)
        for name, widget, title in (("cost", self.cost_view, "Cost against an API"),
                                    ("cost_chart", self.cost_view.plot, "Monthly cost against traffic"),
                                    ("bill", self.cost_view.text_box, "The bill and the break-evens"),
                                    ("api", self.api_combo, "API to compare with"),
                                    ("gpu_offer", self.gpu_combo, "GPU rental offer"),
                                    ("ownership", self.own_combo, "How the GPUs are paid for")):
            self.name_view(name, widget, title)
        return page

    def _prices_page(self) -> QWidget:
        page = Page()
        lay = QVBoxLayout(page)
        own = [n for names in OWN_SLIDERS.values() for n in names]
        lay.addLayout(self._row((*ASSUMPTION_SLIDERS, *own, *FIXED_SLIDERS)))
        v = self.prices_view = PricesView()
        lay.addWidget(v, 1)
        self.price_error, self.price_table, self.save_prices_btn = v.price_error, v.price_table, v.save_prices_btn
        v.edit_requested.connect(self.edit_prices)
        v.open_requested.connect(self.open_price_file)
        v.save_requested.connect(lambda: save_document(self, "Save the price file", "prices.json",
                                                       "Price files (*.json)", self.export_prices,
                                                       self.price_error.show_error))
        v.restore_requested.connect(self.restore_prices)
        self.name_view("prices", self.price_table, "The price file: dates, ages and sources")
        return page

    # --- the price file: the user's edited copy (checked before it is used, saved atomically), another
    # file opened, or the shipped one restored ----------------------------------------------------------
    def use_price_text(self, text: str, where: str) -> str | None:
        """Validate ``text`` as a price file; only if valid, save it as the user's copy and use it."""
        try:
            offer = None if self.params.ownership == "own" else self.params.gpu_offer
            book = checked_book(text, self.params.api, offer, self.ctx.scenario.value.gpu)
        except ValueError as exc:
            self.price_error.show_error(f"{where}: {exc} — nothing changed.")
            return str(exc)
        try:
            atomic_write_text(user_price_path(), dump_prices(book), make_parents=True)
        except OSError as exc:
            self.price_error.show_error(f"cannot save the price file: {exc} — nothing changed.")
            return str(exc)
        self._use_book(book, f"your edited file {user_price_path()} (from {where})")
        return None

    def _use_book(self, book: PriceBook, where: str) -> None:
        self.price_error.show_error(None)
        self.book, self.book_where = book, where
        self._fill_choices()
        self._schedule()

    def edit_prices(self) -> None:
        dlg = PriceEditor(dump_prices(self.book), self)
        if dlg.exec() and dlg.book is not None:
            self.use_price_text(dlg.edit.toPlainText(), "the editor")

    def export_prices(self, path: str | Path) -> Path:
        """Write the price file in use, as the editor shows it (atomically)."""
        return write_document(path, dump_prices(self.book))

    def open_price_file(self, path: str) -> str | None:
        try:
            text = read_text_limited(path, 2_000_000)
        except FileProblem as exc:
            self.price_error.show_error(f"{exc} — nothing changed.")
            return str(exc)
        return self.use_price_text(text, Path(path).name)

    def restore_prices(self) -> None:
        try:
            user_price_path().unlink(missing_ok=True)
        except OSError as exc:
            self.price_error.show_error(f"cannot remove {user_price_path()}: {exc}")
            return
        self._use_book(load_prices(), SHIPPED_WHERE)

    def _privacy_page(self) -> QWidget:
        self.privacy = PrivacyView(self.theme)
        self.privacy.moved.connect(lambda tree, moves: self._set(privacy_tree=tree, privacy_answers=moves))
        self.name_view("privacy", self.privacy, "What stays private: the decision trees")
        self.name_view("privacy_card", self.privacy.card, "The question, its source and the answers")
        return page_around(self.privacy)

    def view_widget(self, name: str):
        """A tour step about the privacy walk shows the card's outcome (else its answers) whole, the other
        parts folded behind one button if the card is too short (as the law panel does), not half scrolled."""
        widget = super().view_widget(name)
        if name in ("privacy", "privacy_card"):
            self.privacy.card.show_part(None)
        return widget

    def _ops_page(self) -> QWidget:
        self.ops_tabs = Tabs()
        day_page = Page()
        dl = QVBoxLayout(day_page)
        dl.addLayout(self._row(DAY_SLIDERS, (self.jobs("ops").widget(),)))
        self.day_view = DayView(self.theme)
        dl.addWidget(self.day_view, 1)
        self.ops_tabs.addTab(day_page, OPS_TITLES[0])
        cap_page = Page()
        cl = QVBoxLayout(cap_page)
        cl.addLayout(self._row(("growth_pct_per_month",)))
        self.capacity_view = CapacityView(self.theme)
        cl.addWidget(self.capacity_view, 1)
        self.ops_tabs.addTab(cap_page, OPS_TITLES[1])
        upgrade = QWidget()          # the step's view: the knob and its figures, not the page's blank below
        ul = QVBoxLayout(upgrade)
        ul.setContentsMargins(0, 0, 0, 0)
        ul.addLayout(self._row(("upgrade_days",)))
        self.upgrade_text = LiveText()
        ul.addWidget(self.upgrade_text)
        ul.addStretch(1)             # a slide given to it: the figures under their knob, the blank below
        self.ops_tabs.addTab(on_top(upgrade), OPS_TITLES[2])
        self.security = SecurityTable()
        self.ops_tabs.addTab(page_around(self.security), OPS_TITLES[3])
        self.retire_text = LiveText()
        self.ops_tabs.addTab(on_top(self.retire_text), OPS_TITLES[4])
        for name, widget, title in (("day", self.day_view, "A simulated day on the monitoring signals"),
                                    ("capacity", self.capacity_view, "Capacity and cost over months"),
                                    ("upgrade", upgrade, "The surge GPUs an upgrade needs"),
                                    ("security", self.security, "Security checklist with cited incidents"),
                                    ("retire", self.retire_text, "Retirement signals, computed")):
            self.name_view(name, widget, title)
        for field, (plot, *_items) in self.day_view.plots.items():
            self.name_view(f"day_{field}", plot, plot.accessibleName())
        return page_around(self.ops_tabs)

    def _fill_choices(self) -> None:
        """API and rental combos from the price file, each entry with its date; the current choice selected."""
        gpu = self.ctx.scenario.value.gpu
        for combo, rows, current in ((self.api_combo, [(a.id, f"{a.label} ({a.date})") for a in self.book.api],
                                      self.params.api),
                                     (self.gpu_combo, [("", "median on-demand offer")] +
                                      [(r.id, f"{r.provider} ${r.usd_per_gpu_hour:g}/h {r.term} ({r.date})")
                                       for r in self.book.rentals_for(gpu)], self.params.gpu_offer)):
            with quiet(combo):
                combo.clear()
                for data, text in rows:
                    combo.addItem(text, data)
                combo.setCurrentIndex(max(0, combo.findData(current)))
        self.prices_view.show_result(self.book, self.today, self.book_where, self._used_rows())

    def _used_rows(self) -> set[str]:
        t = self.result_tco
        return set() if t is None else {t.api.id} | ({t.gpu_price.row_id} if t.gpu_price else set())

    def _show_ownership(self) -> None:
        for how, names in OWN_SLIDERS.items():
            for name in names:
                self.sliders[name].setVisible(how == self.params.ownership)
        self.gpu_combo.setEnabled(self.params.ownership != "own")

    # --- scenario and parameters -----------------------------------------------------------------------
    def _set(self, **changes) -> None:
        self.error.show_error(self.update_params(**changes))

    def set_scenario(self, scenario) -> None:
        self._fill_choices()
        self._schedule()

    def params_updated(self, changed: frozenset[str]) -> None:
        if changed & PRIVACY_FIELDS:
            self.privacy.show_walk(self.params.walk())
        if "ownership" in changed:
            self._show_ownership()
        if changed & {"api", "gpu_offer"}:
            self._fill_choices()
        if changed <= PRIVACY_FIELDS:
            return
        if changed <= CHEAP_FIELDS and self.result_tco is not None:
            self._operating_figures()
            return
        self._schedule()

    def _schedule(self) -> None:
        if self.result_tco is None and not self.tasks.running and not self._refresh.isActive():
            self._start()
            return
        self.tasks.cancel()
        self.jobs("ops").cancel()
        self._refresh.start()

    def _start(self) -> None:
        self._refresh.stop()
        s, p, book, today = self.ctx.scenario.value, self.params, self.book, self.today
        key = sizing_key(s, p)
        memo = self._sizing_cache[1] if self._sizing_cache and self._sizing_cache[0] == key else None

        def done(sizing) -> None:        # the rest of the comparison takes under a millisecond
            self._sizing_cache = (key, sizing)
            try:
                result = tco(s, p, book, today, sizing)
            except ValueError as exc:
                self._failed(str(exc))
                return
            self.error.show_error(None)
            self._tco_done(result)

        work = sizing_call(s, p) if memo is None else (lambda progress, cancelled: memo)
        self.tasks.run(work, done, label="sizing on the serving engine", on_error=self._failed)

    @classmethod
    def planned_jobs(cls, scenario, params, tabs, device) -> list:
        return planned(scenario, params)

    def _failed(self, text: str) -> None:
        self.error.show_error(text.splitlines()[0])

    def _tco_done(self, result) -> None:
        self.result_tco = result
        self.cost_view.show_result(result, self._price_ages(result))
        self.prices_view.show_result(self.book, self.today, self.book_where, self._used_rows())
        self._operating_figures()
        if result.feasible:
            self._start_day(result)

    def _price_ages(self, result) -> dict[str, str]:
        used = [(result.api.id, result.api.date)]
        if result.gpu_price is not None:
            used.append((result.gpu_price.row_id, result.gpu_price.observed))
        return {rid: age_words(obs, self.today) for rid, obs in used}

    def _operating_figures(self) -> None:
        t, p = self.result_tco, self.params
        if t is None or not t.feasible:
            self.months = self.upgrade = self.signals = None
            self.upgrade_text.setText("")
            self.retire_text.setText(t.reason if t is not None else "")
            return
        o = outlook(t, p, self.book)
        self.months, self.upgrade, self.signals = o.months, o.upgrade, o.signals
        self.capacity_view.show_months(o.months, o.replica_usd_per_month, p.growth_pct_per_month, o.self_cheaper_from)
        self.upgrade_text.setText(upgrade_words(self.upgrade, K8S_HINT))
        self.retire_text.setText(signal_words(self.signals))

    def _start_day(self, result) -> None:
        def done(day) -> None:
            self.day = day
            self.day_view.show_day(day)

        self.jobs("ops").run(day_call(self.ctx.scenario.value, result, self.params), done,
                             label="simulating a day", on_error=self._failed)

    def unbind(self) -> None:
        self.jobs("ops").cancel()
        super().unbind()

    # --- theme, exports, self-test -----------------------------------------------------------------------
    def apply_theme(self, theme) -> None:
        super().apply_theme(theme)
        for view in (self.cost_view, self.day_view, self.capacity_view):
            view.apply_theme(theme)
        self.privacy.theme = theme
        self.privacy.graph.theme = theme
        if self.result_tco is not None:
            self._tco_done_redraw()
        self.privacy.show_walk(self.params.walk())

    def _tco_done_redraw(self) -> None:
        self.cost_view.show_result(self.result_tco, self._price_ages(self.result_tco))
        self.day_view.show_day(self.day)
        self._operating_figures()

    def result(self) -> object:
        return {"cost": self.result_tco, "day": self.day, "months": self.months, "upgrade": self.upgrade,
                "retirement_signals": self.signals, "privacy_record": self.params.walk().record(),
                "prices_from": self.book_where}

    def table(self) -> list[dict]:
        return book_rows(self.book, self.today)

    def selftest(self) -> None:
        self.update_params(traffic_per_s=40.0)
        if not self.settle():
            raise RuntimeError(self.tasks.last_error or "the comparison did not finish")
        assert self.result_tco is not None and self.result_tco.sizing.rate_per_s == 40.0 * self.params.peak_to_average
        self.update_params(privacy_answers=("no", "onprem"))
        assert self.privacy.walk.current.id == "o_onprem"
        self.update_params(traffic_per_s=20.0, privacy_answers=())


PANEL = SelfHostPanel
