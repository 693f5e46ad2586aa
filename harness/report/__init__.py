"""The report side: reads results files (never torch) and renders them, one subpackage per product.

`markdown` (the chart and the full report, and the safe Markdown every product uses), `compare` (diff, merge,
baseline, history), `page` (the HTML page and the heatmap), `upkeep` (the repository's reports kept fresh),
`advice` (`harness advise`); `cli` gives them their commands (docs/architecture.md).
"""
