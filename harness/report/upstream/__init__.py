"""From the matrix to an upstream action: known PyTorch reports, PyTorch's own faults as ready issues, the tutorial's chart.

Report side: reads results files only, never imports torch (the import-linter contract covers it).
"""
