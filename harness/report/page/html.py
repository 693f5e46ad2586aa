"""One self-contained HTML page from results files: the API-choice chart, a heatmap of kernels x pipelines
per style (each cell's evidence on hover and click), filters, and the history when several versions are given.

Inline CSS and JS, no network: it opens from disk. Everything untrusted (error messages, kernel names)
travels as JSON inside a <script type="application/json"> block and reaches the page through textContent,
never innerHTML, so a message cannot inject markup.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from harness.report.compare.history import HistoryError, verdict_changed, version_columns
from harness.report.markdown.aggregate import cell_order, cells_for, verdict_of
from harness.report.markdown.call_sites import main_cells
from harness.report.markdown.capabilities import CAPABILITIES
from harness.report.markdown.chart import chart_columns
from harness.report.markdown.environment import environment_line
from harness.report.markdown.escape import first_line, one_line, truncate
from harness.report.markdown.known_reports import citation, known_reports_for
from harness.results import CellResult, ResultsFile
from harness.vocab import OUTCOMES, PIPELINES, STYLES

MESSAGE_LIMIT = 600
RENDERED_MARKER = "data-rendered"  # set on <body> by the script once every view is drawn (the browser test reads it)


def kernel_features(files: Sequence[tuple[str, ResultsFile]]) -> dict[str, list[str]]:
    """Feature tags per kernel, as the results headers recorded them (run-time, from each KernelSpec)."""
    features: dict[str, list[str]] = {}
    for _, results in files:
        for kernel, info in (results.header.get("kernels") or {}).items():
            if isinstance(info, dict):
                features[kernel] = sorted(set(features.get(kernel, [])) | {str(t) for t in info.get("features") or []})
    return features


def _cell_record(version: str, cell: CellResult, upstream: str = "") -> dict[str, Any]:
    return {"version": version, "kernel": cell.kernel, "style": cell.style, "pipeline": cell.pipeline,
            "outcome": cell.outcome, "stage": cell.stage or "", "error_type": cell.error_type or "",
            "message": truncate(one_line(first_line(cell.error)), MESSAGE_LIMIT),
            "reason": truncate(one_line(first_line(cell.reason)), MESSAGE_LIMIT), "upstream": upstream}


def _upstream(cell: CellResult, cells: dict[str, CellResult], features: dict[str, list[str]]) -> str:
    """The known upstream reports this cell matches (harness.report.markdown.known_reports), cited."""
    return "; ".join(citation(match) for match in known_reports_for(cell, cells, features))


def page_data(files: Sequence[tuple[str, ResultsFile]]) -> dict[str, Any]:
    """What the page's script draws: versions newest first, every final cell of each, the chart of the
    newest version, and (with two or more versions) the verdict per capability x style per version."""
    if not files:
        raise HistoryError("no results files given")
    columns = version_columns(list(files))
    newest = columns[0]
    newest_header = max((r for _, r in files if r.environment.get("torch") == newest.torch
                         and r.environment.get("triton") == newest.triton),
                        key=lambda r: str(r.header.get("started") or "")).header
    chart_cols = chart_columns(newest.cells)
    features = kernel_features(files)
    chart = [{"capability": cap.name,
              "verdicts": [verdict_of(cells_for(newest.cells, col.style, cap.pipelines)).text() for col in chart_cols]}
             for cap in CAPABILITIES]
    history = []
    if len(columns) > 1:
        all_cells = {k: v for column in columns for k, v in column.cells.items()}
        for cap in CAPABILITIES:
            for col in chart_columns(all_cells):
                evidence = [cells_for(column.cells, col.style, cap.pipelines) for column in columns]
                verdicts = [verdict_of(cells) for cells in evidence]
                if not any(v.asked or v.not_asked for v in verdicts):
                    continue
                changed = [i for i in range(len(columns) - 1) if evidence[i] and evidence[i + 1]
                           and verdict_changed(evidence[i + 1], evidence[i])]
                history.append({"capability": cap.name, "style": col.style, "verdicts": [v.text() for v in verdicts],
                                "words": [v.word for v in verdicts], "changed_at": changed})
    return {
        "versions": [column.label for column in columns],
        "environment": environment_line(newest_header).replace("\\", ""),
        "styles": list(STYLES), "pipelines": list(PIPELINES), "outcomes": list(OUTCOMES),
        "features": features,
        "chart": {"columns": [col.label for col in chart_cols], "rows": chart},
        "history": history,
        # the chart's cells; call-site cells (same style and pipeline, another call site) have their own table
        # in the Markdown report and would land on a main cell's square
        "cells": [_cell_record(column.label, cell, _upstream(cell, column.cells, features)) for column in columns
                  for cell in sorted(main_cells(column.cells).values(), key=cell_order)],
    }


def _json_for_script(data: dict[str, Any]) -> str:
    """JSON that cannot end its <script> block early: every "<" is escaped."""
    return json.dumps(data, sort_keys=True, ensure_ascii=True).replace("<", "\\u003c").replace(">", "\\u003e")


STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:16px;color:#222}
h1{font-size:20px;margin:0 0 4px} h2{font-size:16px;margin:18px 0 6px} .env{color:#555;margin-bottom:8px}
nav button{margin-right:4px;padding:4px 10px;border:1px solid #888;background:#f4f4f4;cursor:pointer}
nav button.on{background:#334;color:#fff} .filters{margin:8px 0} .filters label{margin-right:12px}
table{border-collapse:collapse;margin-bottom:10px} th,td{border:1px solid #ccc;padding:3px 6px;font-size:12px}
th{background:#f0f0f0;text-align:left} .heat th.p{writing-mode:vertical-rl;transform:rotate(180deg);height:120px}
.heat td.c{width:22px;height:18px;cursor:pointer;text-align:center;color:#fff;font-size:10px}
.o-pass{background:#2e7d32}.o-wrong{background:#ad1457}.o-fail{background:#c62828}.o-crash{background:#4a148c}
.o-timeout{background:#ef6c00}.o-skip{background:#bdbdbd}.o-env{background:#795548}.o-flaky{background:#f9a825}
.o-none{background:#fff}.legend span{display:inline-block;padding:1px 6px;margin-right:4px;color:#fff;font-size:12px}
#detail{position:sticky;top:0;background:#fffbe6;border:1px solid #e0c97f;padding:6px;min-height:20px;white-space:pre-wrap}
.v-Yes{background:#e8f5e9}.v-No{background:#ffebee}.changed{outline:2px solid #1565c0}
.styles{display:flex;flex-wrap:wrap;gap:18px}
"""

SCRIPT = r"""
(function () {
  const D = JSON.parse(document.getElementById('data').textContent);
  const el = (tag, attrs, text) => { const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]); if (text !== undefined) e.textContent = text; return e; };
  const params = new URLSearchParams(location.search.slice(1) + '&' + location.hash.slice(1));
  const state = {version: params.get('version') || D.versions[0], style: params.get('style') || '',
    pipeline: params.get('pipeline') || '', outcome: params.get('outcome') || '', feature: params.get('feature') || '',
    view: params.get('view') || 'heatmap'};
  const evidence = c => [c.kernel + ' / ' + c.style + ' / ' + c.pipeline + ' (' + c.version + ')', 'outcome: ' + c.outcome,
    c.stage && 'stage: ' + c.stage, c.error_type && 'error: ' + c.error_type, c.message && 'message: ' + c.message,
    c.reason && 'reason: ' + c.reason, c.upstream && 'known upstream report: ' + c.upstream].filter(Boolean).join('\n');
  function select(name, values) {
    const s = el('select', {id: 'f-' + name}); s.appendChild(el('option', {value: ''}, 'all'));
    values.forEach(v => { const o = el('option', {value: v}, v); if (state[name] === v) o.selected = true; s.appendChild(o); });
    s.addEventListener('change', () => { state[name] = s.value; draw(); });
    const l = el('label', {}, name + ' '); l.appendChild(s); return l;
  }
  function heatmap(root) {
    const cells = D.cells.filter(c => c.version === state.version);
    const styles = D.styles.filter(s => cells.some(c => c.style === s) && (!state.style || s === state.style));
    const pipes = D.pipelines.filter(p => cells.some(c => c.pipeline === p) && (!state.pipeline || p === state.pipeline));
    const kernels = [...new Set(cells.map(c => c.kernel))].sort()
      .filter(k => !state.feature || (D.features[k] || []).includes(state.feature));
    const at = {}; cells.forEach(c => at[c.kernel + '/' + c.style + '/' + c.pipeline] = c);
    let shown = 0; const wrap = el('div', {class: 'styles'});
    styles.forEach(style => {
      const box = el('div'); box.appendChild(el('h2', {}, style));
      const t = el('table', {class: 'heat'}); const head = el('tr'); head.appendChild(el('th', {}, 'kernel'));
      pipes.forEach(p => head.appendChild(el('th', {class: 'p'}, p))); t.appendChild(head);
      kernels.forEach(k => { const tr = el('tr'); tr.appendChild(el('th', {}, k));
        pipes.forEach(p => { const c = at[k + '/' + style + '/' + p];
          if (!c || (state.outcome && c.outcome !== state.outcome)) { tr.appendChild(el('td', {class: 'c o-none'})); return; }
          const td = el('td', {class: 'c o-' + c.outcome, title: evidence(c), 'data-cell': c.outcome}, c.outcome[0]);
          td.addEventListener('click', () => { document.getElementById('detail').textContent = evidence(c); });
          tr.appendChild(td); shown++; });
        t.appendChild(tr); });
      box.appendChild(t); wrap.appendChild(box); });
    root.appendChild(wrap); return [shown, cells.length];
  }
  function chart(root) {
    const t = el('table'); const head = el('tr'); head.appendChild(el('th', {}, 'Capability'));
    D.chart.columns.forEach(c => head.appendChild(el('th', {}, c))); t.appendChild(head);
    D.chart.rows.forEach(r => { const tr = el('tr'); tr.appendChild(el('th', {}, r.capability));
      r.verdicts.forEach(v => tr.appendChild(el('td', {class: 'v-' + v.split(' ')[0]}, v))); t.appendChild(tr); });
    root.appendChild(el('h2', {}, 'Which API? (' + D.versions[0] + ')')); root.appendChild(t);
  }
  function history(root) {
    const t = el('table'); const head = el('tr'); ['Capability', 'style'].concat(D.versions)
      .forEach(h => head.appendChild(el('th', {}, h))); t.appendChild(head);
    D.history.filter(r => !state.style || r.style === state.style).forEach(r => {
      const tr = el('tr'); tr.appendChild(el('th', {}, r.capability)); tr.appendChild(el('td', {}, r.style));
      r.verdicts.forEach((v, i) => tr.appendChild(el('td', {class: 'v-' + r.words[i].split(' ')[0]
        + (r.changed_at.includes(i) ? ' changed' : ''),
        title: r.changed_at.includes(i) ? 'changed from the version to its right' : ''}, v)));
      t.appendChild(tr); });
    root.appendChild(el('h2', {}, 'History (newest first; a blue frame: changed from the older version)')); root.appendChild(t);
  }
  function draw() {
    const root = document.getElementById('view'); root.textContent = '';
    document.querySelectorAll('nav button').forEach(b => b.classList.toggle('on', b.dataset.view === state.view));
    let status;
    if (state.view === 'chart') { chart(root); status = 'chart'; }
    else if (state.view === 'history') { history(root); status = 'history of ' + D.versions.length + ' versions'; }
    else { const [shown, total] = heatmap(root); status = 'shown ' + shown + ' of ' + total + ' cells'; }
    document.getElementById('status').textContent = status;
    document.body.setAttribute('data-rendered', state.view);
  }
  document.getElementById('env').textContent = D.environment;
  const nav = document.querySelector('nav');
  ['heatmap', 'chart'].concat(D.versions.length > 1 ? ['history'] : []).forEach(v => {
    const b = el('button', {'data-view': v}, v);
    b.addEventListener('click', () => { state.view = v; draw(); }); nav.appendChild(b); });
  const f = document.querySelector('.filters');
  const features = [...new Set(Object.values(D.features).flat())].sort();
  const present = k => D.cells.map(c => c[k]);
  f.appendChild(select('version', D.versions));
  f.appendChild(select('style', D.styles.filter(s => present('style').includes(s))));
  f.appendChild(select('pipeline', D.pipelines.filter(p => present('pipeline').includes(p))));
  f.appendChild(select('outcome', D.outcomes.filter(o => present('outcome').includes(o))));
  f.appendChild(select('feature', features));
  const legend = document.querySelector('.legend');
  D.outcomes.forEach(o => legend.appendChild(el('span', {class: 'o-' + o}, o)));
  draw();
})();
"""


def render_html(files: Sequence[tuple[str, ResultsFile]]) -> str:
    """The whole page as one string; the same inputs give the same bytes."""
    data = page_data(files)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<title>triton-compat-matrix</title>\n<style>" + STYLE + "</style></head>\n"
            "<body><h1>Which way of wrapping a Triton kernel works with which PyTorch pipeline</h1>\n"
            "<div class=\"env\" id=\"env\"></div><nav></nav><div class=\"filters\"></div>"
            "<div class=\"legend\"></div><div id=\"status\"></div>"
            "<div id=\"detail\">Click a cell for its evidence.</div><div id=\"view\"></div>\n"
            "<noscript>This page draws its tables with JavaScript.</noscript>\n"
            "<script type=\"application/json\" id=\"data\">" + _json_for_script(data) + "</script>\n"
            "<script>" + SCRIPT + "</script></body></html>\n")
