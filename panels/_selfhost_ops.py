"""Operating views of the self-hosting panel: a simulated day on the monitoring signals with their alert
thresholds, capacity over months, the upgrade surge, the security checklist and the retirement
signals. Pure drawing of :mod:`engines.selfhost.operate` results."""
from __future__ import annotations

from html import escape

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGridLayout, QHeaderView, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from engines.selfhost.operate import SECURITY, Day, Month, Signal, Upgrade
from explorer.ui.live_text import LiveText
from explorer.ui.whole_rows import WholeRowTable
from explorer.ui.widgets import legend_below, make_plot, pen, set_title

# (Hour field, chart title, unit scale, y label, the metric a server exports)
SIGNALS = (
    ("ttft_p90_s", "TTFT p90", 1.0, "s", "vllm:time_to_first_token_seconds"),
    ("tpot_p90_s", "TPOT p90", 1e3, "ms", "vllm:inter_token_latency_seconds"),
    ("queue_depth", "Queue depth", 1.0, "requests", "vllm:num_requests_waiting"),
    ("kv_use", "KV cache", 100.0, "%", "vllm:kv_cache_usage_perc"),
    ("utilisation", "Load ρ · GPU busy", 100.0, "%", "arrivals ÷ saturation (solid); time a batch runs (dotted)"),
    ("usd_per_mtok", "$ per M output tok", 1.0, "$", "fleet $/h ÷ tokens served (vs the API's P_mix)"),
)


class DayView(QWidget):
    """Six small charts over the 24 hours: the signal, its alert threshold (dashed) and ✕ on alert hours."""

    def __init__(self, theme) -> None:
        super().__init__()
        self.theme = theme
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        self.plots = {}
        for i, (field, title, _scale, unit, metric) in enumerate(SIGNALS):
            plot = make_plot(theme, title, unit, "hour of day")
            plot.setAccessibleName(f"{title} over a simulated day")
            plot.setToolTip(f"Exported as {metric}")
            plot.setMouseEnabled(x=False, y=False)
            plot.setMinimumHeight(150)
            line = pg.PlotDataItem()
            if field == "utilisation":           # the busy share DCGM's GPU_UTIL would report, dotted
                self.busy_line = pg.PlotDataItem()
                plot.addItem(self.busy_line)
            limit = pg.InfiniteLine(angle=0, movable=False)
            alerts = pg.ScatterPlotItem(symbol="x", size=14)
            for item in (line, limit, alerts):
                plot.addItem(item)
            self.plots[field] = (plot, line, limit, alerts)
            grid.addWidget(plot, i // 3, i % 3)
        self.text = LiveText()
        self.text.reserve_lines(3)
        grid.addWidget(self.text, 2, 0, 1, 3)
        self.apply_theme(theme)

    def apply_theme(self, theme) -> None:
        self.theme = theme
        self.busy_line.setPen(pen(theme.fg, 2, Qt.DotLine))
        for plot, line, limit, alerts in self.plots.values():
            line.setPen(pen(theme.color(0), 2.5))
            limit.setPen(pen(theme.color(5), 2, Qt.DashLine))
            alerts.setPen(pen(theme.fg, 2))
            alerts.setBrush(pg.mkBrush(theme.fg))

    def show_day(self, day: Day | None) -> None:
        if day is None:
            return
        hours = np.arange(len(day.hours))
        for field, title, scale, unit, _metric in SIGNALS:
            plot, line, limit, alerts = self.plots[field]
            y = day.series(field) * scale
            over = np.array([field in h.alerts for h in day.hours]) | np.array([h.overloaded for h in day.hours])
            line.setData(hours, y, connect="finite")
            lim = day.thresholds[field] * scale
            limit.setPos(lim)
            ys = np.where(np.isfinite(y), y, lim)
            alerts.setData(hours[over], ys[over])
            if field == "utilisation":
                self.busy_line.setData(hours, day.series("gpu_busy") * 100, connect="finite")
                y = np.concatenate([y, day.series("gpu_busy") * 100])
            finite = y[np.isfinite(y)]
            top = max(float(finite.max()) if finite.size else 0.0, lim) * 1.15 or 1.0
            plot.setYRange(0, top, padding=0)
            plot.setXRange(-0.5, len(hours) - 0.5, padding=0)
            n = int(over.sum())
            set_title(plot, f"{title} · ✕ {n} h" if n else f"{title} · quiet")
        worst = max(day.hours, key=lambda h: h.fleet_rate)
        self.text.setText(
            f"One replica of {day.replicas} through a simulated day (the serving engine's batching simulator, one run "
            f"an hour); busiest hour {worst.hour}:00 at {worst.fleet_rate:,.1f} req/s across the fleet. Dashed = alert "
            "threshold, ✕ = an hour that would page someone. On the load chart, dotted is the share of time a batch "
            "runs, what DCGM_FI_DEV_GPU_UTIL reports: near 100 % long before the chip is full.")


class CapacityView(QWidget):
    """Both bills over the months as traffic grows; the months a replica is added, with what it costs."""

    def __init__(self, theme) -> None:
        super().__init__()
        self.theme = theme
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.plot = make_plot(theme, "Monthly cost as traffic grows", "$ per month", "month")
        self.plot.setAccessibleName("Monthly cost of self-hosting and the API as traffic grows")
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.setMinimumHeight(220)
        legend_below(self.plot, 2)
        self.self_line = pg.PlotDataItem(name="self-hosted", stepMode="center")
        self.api_line = pg.PlotDataItem(name="API")
        self.plot.addItem(self.self_line)
        self.plot.addItem(self.api_line)
        lay.addWidget(self.plot, 1)
        self.text = LiveText()
        self.text.reserve_lines(3)
        lay.addWidget(self.text)
        self.apply_theme(theme)

    def apply_theme(self, theme) -> None:
        self.theme = theme
        self.self_line.setPen(pen(theme.color(0), 3))
        self.api_line.setPen(pen(theme.color(5), 3, Qt.DashLine))

    def show_months(self, months: tuple[Month, ...] | None, price_per_replica_month: float, growth_pct: float,
                    cheaper_from: int | None = None) -> None:
        if not months:
            return
        m = np.array([x.month for x in months], float)
        edges = np.concatenate([m - 0.5, [m[-1] + 0.5]])
        self.self_line.setData(edges, np.array([x.self_monthly for x in months]))
        self.api_line.setData(m, np.array([x.api_monthly for x in months]))
        self.plot.setXRange(-0.5, m[-1] + 0.5, padding=0)
        top = max(max(x.self_monthly for x in months), max(x.api_monthly for x in months)) * 1.05
        self.plot.setYRange(0, top, padding=0)
        added = [x for x in months if x.added > 0]
        if added:
            when = ", ".join(f"month {x.month} (+{x.added})" for x in added[:8]) + (" …" if len(added) > 8 else "")
            words = (f"Traffic growing {growth_pct:g} % a month needs another replica in {when}; each costs "
                     f"${price_per_replica_month:,.0f} a month from then on.")
        else:
            words = f"At {growth_pct:g} % growth a month the fleet needs no new replica within {int(m[-1])} months."
        fleet = {x.month: x.replicas for x in months}
        sizes = [f"{fleet[k]} {when}" for k, when in ((0, "replicas now"), (12, "in a year"), (24, "in two"))
                 if k in fleet]
        set_title(self.plot, f"Monthly cost as traffic grows {growth_pct:g} % a month: " + ", ".join(sizes))
        if cheaper_from:              # the engine's month the two bills cross for good (not month 0)
            words += f" From month {cheaper_from} on, self-hosting is the cheaper of the two."
        self.text.setText(words + " Rented capacity to scale up is not guaranteed to be there when you need it.")


def upgrade_words(u: Upgrade | None, k8s_hint: str) -> str:
    if u is None:
        return ""
    return (f"<p><b>Blue/green:</b> the new model's whole fleet runs beside the old one for {u.days:g} days: "
            f"{u.blue_green_gpus} extra GPUs, <b>${u.blue_green_usd:,.0f}</b> (p × GPUs × 24 h × days).</p>"
            f"<p><b>Rolling, one surge replica at a time</b> (Kubernetes maxSurge = 1): {u.rolling_gpus} extra GPU(s) "
            f"for the same days, <b>${u.rolling_usd:,.0f}</b>, but old and new answers mix while it rolls.</p>"
            "<p>Why upgrades are harder than they look: a new tokenizer changes every token count (Llama 2's 32,000 "
            "tokens to Llama 3's 128,256); chat templates change silently; a longer context multiplies KV-cache "
            "memory (one 70B sequence of 131,072 tokens holds 40 GiB in bf16), which can need more GPUs per "
            "replica; the serving engine, torch and the CUDA driver move with the model; adapters and evaluation "
            "sets must be redone.</p>"
            f"<p>{escape(k8s_hint)}</p>")


class SecurityTable(WholeRowTable):
    """The hardening checklist, each practice with the incident or fact behind it and its source. Rows
    are as tall as their wrapped lines at the width the table has (measured once per width: sized before
    it was laid out, the cells were cut with an ellipsis), and the view ends on a whole row."""

    def __init__(self) -> None:
        super().__init__(len(SECURITY), 4)
        self.setHorizontalHeaderLabels(["Practice", "Why: the incident or fact", "Source", "Confidence"])
        self.setAccessibleName("Security checklist with cited incidents")
        self.setEditTriggers(QTableWidget.NoEditTriggers)
        self.setWordWrap(True)
        for i, row in enumerate(SECURITY):
            for j, v in enumerate(row):
                item = QTableWidgetItem(v)
                item.setToolTip(v)
                self.setItem(i, j, item)
        h = self.horizontalHeader()
        h.setSectionResizeMode(0, QHeaderView.Stretch)
        h.setSectionResizeMode(1, QHeaderView.Stretch)
        h.setSectionResizeMode(2, QHeaderView.Interactive)
        h.setSectionResizeMode(3, QHeaderView.ResizeToContents)
        self.setColumnWidth(2, 220)
        self.rows_follow_width()


def signal_words(signals: tuple[Signal, ...] | None) -> str:
    if not signals:
        return ""
    items = "".join(f"<li><b>{'● FIRING' if s.firing else '○ quiet'}: {escape(s.name)}</b> — {escape(s.detail)} "
                    f"<i>({escape(s.rule)})</i></li>" for s in signals)
    firing = sum(s.firing for s in signals)
    head = (f"<p><b>{firing} of {len(signals)} retirement signals are firing.</b></p>" if firing else
            "<p><b>No retirement signal is firing.</b></p>")
    rest = ("<p>Not computed here, but as real: the model scores below a current API of equal or lower price on your "
            "own evaluation set; serious advisories pile up faster than you patch; the one person who knows the "
            "stack leaves; the hardware's life has run out; the reason you self-hosted (a missing certification or "
            "region) has been met by a provider.</p>")
    return head + f"<ul>{items}</ul>" + rest
