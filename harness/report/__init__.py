"""The report side: reads results files (never torch) and renders charts, diffs, baselines and history.

Modules, one job each: `capabilities` (the chart's rows), `aggregate` (verdicts),
`escape` and `tables` (safe Markdown), `footnotes`, `environment`, `chart`,
`render` (the full report), `docs`, `diff`, `baseline`, `merge`, `history`,
`atomic` (crash-safe writes) and `cli` (argparse subcommands).
"""
