"""The Markdown report: the chart (`chart`, its rows in `capabilities`), its footnotes, the full report (`render`),
the evidence sections, the call-site table, the run summary and timings; `escape` and `tables` make safe Markdown
for every product of the report."""
