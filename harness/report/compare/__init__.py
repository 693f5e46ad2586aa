"""Results against results: `diff` (what changed between two runs), `merge` (shards into one file), `baseline`
(the reviewed outcomes of an environment) and `history` (the chart across torch releases)."""
