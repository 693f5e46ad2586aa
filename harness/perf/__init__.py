"""`harness perf`: what each style costs per call, in each mode, at a launch-bound and a large size.

options/plan (what to time, and what the matrix lets us time), sizes, stats (the stop rule), timing
(the clocks), worker (the child that times one kernel x style x mode), runner (one worker at a time),
cli (the commands); performance, performance_diff, performance_plot and gpu_peaks render the records (never
torch). The records are harness.perf_results.
"""
