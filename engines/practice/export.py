"""Hand-outs: a lesson's drawn variants as Moodle XML (the question-bank format Moodle imports) or
an HTML worksheet (questions, then the answer key with worked solutions on separate pages).

Moodle XML follows https://docs.moodle.org/en/Moodle_XML_format: one ``category`` question per
lesson, ``numerical`` questions with a ``tolerance`` per answer (modelled mistakes as 0 % answers
with their own feedback) and ``multichoice`` questions whose fractions come from Moodle's allowed
grade list. Set-the-knobs exercises need the app, so they appear in the worksheet only."""
from __future__ import annotations

import html
from typing import Iterable, Sequence
from xml.sax.saxutils import escape

from engines.practice.exercise import Variant, draw, format_number
from engines.practice.schema import Template

MOODLE_FRACTIONS = {1: "100", 2: "50", 3: "33.33333", 4: "25", 5: "20", 6: "16.66667", 7: "14.28571", 8: "12.5",
                    9: "11.11111", 10: "10"}
"""Moodle accepts only listed grade percentages; an equal share for k of at most 10 answers is one."""
CATEGORY_ROOT = "$course$/top/AI Systems Explorer"


def variants(templates: Sequence[Template], count: int, seed: int = 1) -> list[Variant]:
    """``count`` variants of each template, seeded so a worksheet can be drawn again identically; a
    repeated question is drawn again (a few times) so a sheet rarely asks the same thing twice."""
    out: list[Variant] = []
    for t in templates:
        seen: set[str] = set()
        for i in range(count):
            for k in range(8):
                v = draw(t, seed * 100_003 + i + k * 7_919)
                if v.prompt not in seen:
                    break
            seen.add(v.prompt)
            out.append(v)
    return out


def _html_text(text: str) -> str:
    return "<br>".join(html.escape(line) for line in text.split("\n"))


def step_number(x: float, decimals: int) -> str:
    """A worked step's number: whole numbers whole, others with enough digits to read (at least the
    answer's decimals; more for small values, so 1.05 is not shown as 1)."""
    if x.is_integer() and abs(x) < 1e15:
        return f"{int(x):,}"
    mag = abs(x)
    digits = 1 if mag >= 100 else 2 if mag >= 1 else 4 if mag >= 0.01 else 6
    return f"{x:,.{max(decimals, digits)}f}" if mag < 1e15 else f"{x:.4g}"


def solution_html(v: Variant) -> str:
    """The worked solution: every step with the engine's value, unit and source (a source shared
    with the step before is not repeated: the list reads as working, not as citations)."""
    rows = []
    before = ""
    for s in v.outcome.steps:
        value = step_number(float(s.value), v.template.decimals) if isinstance(s.value, (int, float)) \
            else html.escape(str(s.value))
        src = f' <span class="src">[{html.escape(s.source)}]</span>' if s.source and s.source != before else ""
        before = s.source
        sep = " —" if s.text.rstrip().endswith("?") else ":"
        rows.append(f"<li>{html.escape(s.text)}{sep} <b>{value}</b> {html.escape(s.unit)}{src}</li>")
    return f"<ol>{''.join(rows)}</ol>"


def _cdata(text: str) -> str:
    return "<![CDATA[" + text.replace("]]>", "]]]]><![CDATA[>") + "]]>"


def _text(tag: str, body: str, fmt: str | None = "html") -> str:
    attr = f' format="{fmt}"' if fmt else ""
    return f"<{tag}{attr}><text>{_cdata(body)}</text></{tag}>"


def _numerical(v: Variant) -> str:
    t, o = v.template, v.outcome
    answers = [f'<answer fraction="100" format="moodle_auto_format"><text>{o.answer!r}</text>'
               f"{_text('feedback', 'Correct.')}<tolerance>{v.tolerance!r}</tolerance></answer>"]
    for m in o.mistakes:
        if isinstance(m.value, (int, float)):
            answers.append(f'<answer fraction="0" format="moodle_auto_format"><text>{float(m.value)!r}</text>'
                           f"{_text('feedback', html.escape(t.mistakes[m.key]))}"
                           f"<tolerance>{t.tol(float(m.value))!r}</tolerance></answer>")
    units = (f"<units><unit><multiplier>1</multiplier><unit_name>{escape(t.unit)}</unit_name></unit></units>"
             if t.unit else "")
    return (f'<question type="numerical"><name><text>{escape(v.id)}</text></name>'
            f"{_text('questiontext', '<p>' + _html_text(v.prompt) + (f' ({html.escape(t.unit)})' if t.unit else '') + '</p>')}"
            f"{_text('generalfeedback', solution_html(v))}<defaultgrade>1</defaultgrade><penalty>0.3333333</penalty>"
            f"<hidden>0</hidden><idnumber>{escape(v.id)}</idnumber>{''.join(answers)}"
            f"<unitgradingtype>0</unitgradingtype><unitpenalty>0.1</unitpenalty><showunits>3</showunits>"
            f"<unitsleft>0</unitsleft>{units}</question>")


def _choices(v: Variant) -> tuple[list[tuple[str, bool, str]], bool]:
    """(text, correct, feedback) per option, and whether exactly one is correct."""
    t, o = v.template, v.outcome
    if t.kind == "choice":
        wrong_fb = {k: t.mistakes[m.key] for m in o.mistakes for k in m.value if k not in o.answer}
        out = [(f"{opt.text} ({opt.cite})", opt.key in o.answer,
                "Correct." if opt.key in o.answer else wrong_fb.get(opt.key, t.wrong_option or "Not this one."))
               for opt in o.options]
        return out, len(o.answer) == 1

    def says(direction: str, value: float) -> str:
        size = f"{format_number(float(value), t.decimals)} {t.unit}".strip()
        return f"It stays unchanged, at {size}" if direction == "unchanged" else f"It {direction}, to {size}"

    out = [(says(o.direction, o.answer), True, "Correct.")]
    for d in ("grows", "shrinks", "unchanged"):
        if d != o.direction:
            out.append((says(d, o.answer), False, t.mistakes.get(f"dir_{d}", f"It {o.direction}.")))
    for m in o.mistakes:
        if isinstance(m.value, (int, float)):
            out.append((says(o.direction, m.value), False, t.mistakes[m.key]))
    return out, True


def _multichoice(v: Variant) -> str:
    options, single = _choices(v)
    n_right = sum(1 for _, ok, _ in options if ok)
    n_wrong = len(options) - n_right
    answers = []
    for text, ok, fb in options:
        frac = MOODLE_FRACTIONS[n_right] if ok else ("0" if single else "-" + MOODLE_FRACTIONS[max(1, n_wrong)])
        answers.append(f'<answer fraction="{frac}" format="html"><text>{_cdata(html.escape(text))}</text>'
                       f"{_text('feedback', html.escape(fb))}</answer>")
    hint = "" if single else "<p>(Choose every answer that applies.)</p>"
    return (f'<question type="multichoice"><name><text>{escape(v.id)}</text></name>'
            f"{_text('questiontext', '<p>' + _html_text(v.prompt) + '</p>' + hint)}"
            f"{_text('generalfeedback', solution_html(v))}<defaultgrade>1</defaultgrade><penalty>0.3333333</penalty>"
            f"<hidden>0</hidden><idnumber>{escape(v.id)}</idnumber><single>{'true' if single else 'false'}</single>"
            f"<shuffleanswers>true</shuffleanswers><answernumbering>abc</answernumbering>"
            f"{_text('correctfeedback', 'Correct.')}{_text('partiallycorrectfeedback', 'Partly correct.')}"
            f"{_text('incorrectfeedback', 'Not quite: read the worked solution.')}{''.join(answers)}</question>")


def moodle_xml(lesson: str, title: str, items: Iterable[Variant]) -> str:
    """A Moodle question bank: one category for the lesson, then its numerical and multichoice questions."""
    body = [f'<question type="category"><category><text>{escape(f"{CATEGORY_ROOT}/{lesson} {title}")}</text></category>'
            f"<info format=\"html\"><text></text></info></question>"]
    for v in items:
        if v.template.kind == "numeric":
            body.append(_numerical(v))
        elif v.template.kind in ("choice", "direction"):
            body.append(_multichoice(v))
    return '<?xml version="1.0" encoding="UTF-8"?>\n<quiz>\n' + "\n".join(body) + "\n</quiz>\n"


def worksheet_blocks(lesson: str, title: str, items: Sequence[Variant]) -> tuple[str, list[str], str, list[str]]:
    """The worksheet's pieces: a heading, one HTML block per question, the key's heading, one
    block per answer (a PDF keeps each block whole on a page)."""
    qs, key = [], []
    for i, v in enumerate(items, 1):
        t = v.template
        extra = ""
        if t.kind in ("choice", "direction"):
            options, single = _choices(v)
            extra = ("<ol type=\"a\">" + "".join(f"<li>{html.escape(text)}</li>" for text, _, _ in options) + "</ol>"
                     + ("" if single else "<p><i>Choose every answer that applies.</i></p>"))
        elif t.kind == "knobs":
            extra = "<p><i>Do this in AI Systems Explorer; the panel checks your settings.</i></p>"
        unit = f" ({html.escape(t.unit)})" if t.unit and t.kind == "numeric" else ""
        qs.append(f'<div class="q"><h3>Question {i}</h3><p>{_html_text(v.prompt)}{unit}</p>{extra}</div>')
        if t.kind in ("choice", "direction"):
            options, _ = _choices(v)
            letters = ", ".join(chr(97 + j) for j, (_, ok, _) in enumerate(options) if ok)
            answer = f"({letters}) {html.escape(v.answer_text())}"
        else:
            answer = html.escape(v.answer_text())
        key.append(f'<div class="q"><h3>Question {i}</h3><p><b>Answer:</b> {answer}</p>{solution_html(v)}'
                   f'<p class="src">Source: {html.escape(t.source)}</p></div>')
    return (f"<h1>{html.escape(lesson)} · {html.escape(title)}: exercises</h1>", qs, "<h1>Answer key</h1>", key)


STYLE = ("body{font-family:'DejaVu Sans',sans-serif;max-width:48em;margin:auto}"
         ".q{page-break-inside:avoid;margin-bottom:1.2em}.src{color:#555;font-size:90%}")


def worksheet_html(lesson: str, title: str, items: Sequence[Variant]) -> str:
    """Questions first, then (from a new page) the answer key with each worked solution and its sources."""
    head, qs, key_head, key = worksheet_blocks(lesson, title, items)
    return (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(lesson)} exercises</title>"
            f"<style>{STYLE}</style></head><body>{head}{''.join(qs)}"
            f"<div class=\"key\" style=\"page-break-before:always\">{key_head}{''.join(key)}</div></body></html>\n")
