"""What a run takes from earlier runs instead of running cells again; one face for the rest of the harness.

    --resume RESULTS   the same run, stopped: its finished cells stay, the rest run (resume.py)
    --reuse RESULTS    any earlier run: a cell whose content key is unchanged is copied, with where it came from
                       (cells.py); the key: the kernel code the spec reaches, the spec's data, the harness's
                       source, torch, triton, the GPU, the tier and the options that change an outcome (key.py)
"""

from harness.run.earlier.cells import ReuseError, reused_cells
from harness.run.earlier.key import cell_keys, outcome_options, run_inputs
from harness.run.earlier.resume import ResumeError, check_resumable, repair_torn_tail, resume_command

__all__ = ["ResumeError", "ReuseError", "cell_keys", "check_resumable", "outcome_options", "repair_torn_tail",
           "resume_command", "reused_cells", "run_inputs"]
