"""Probe only: log every child process's wall time and rusage (os.wait4) to $TCM_RUSAGE_DIR/<pid>.jsonl."""
import json, os, subprocess, time

_dir = os.environ.get("TCM_RUSAGE_DIR")
if _dir:
    _init, _try_wait = subprocess.Popen.__init__, subprocess.Popen._try_wait

    def __init__(self, args, *a, **k):
        self._tcm = (time.time(), args, k.get("cwd"), bool(k.get("shell")))
        _init(self, args, *a, **k)

    def _try_wait(self, wait_flags):
        try:
            pid, sts, ru = os.wait4(self.pid, wait_flags)
        except ChildProcessError:
            pid, sts, ru = self.pid, 0, None
        if pid == self.pid and ru is not None:
            t0, args, cwd, shell = getattr(self, "_tcm", (None, None, None, None))
            text = args if isinstance(args, str) else " ".join(map(str, args))
            rec = {"pid": os.getpid(), "child": pid, "t0": t0, "t1": time.time(), "cmd": text[:20000], "cwd": str(cwd) if cwd else None, "shell": shell, "argv": None if isinstance(args, str) else list(map(str, args)),
                   "utime": ru.ru_utime, "stime": ru.ru_stime, "maxrss": ru.ru_maxrss, "minflt": ru.ru_minflt,
                   "majflt": ru.ru_majflt, "nvcsw": ru.ru_nvcsw, "nivcsw": ru.ru_nivcsw, "inblock": ru.ru_inblock,
                   "oublock": ru.ru_oublock}
            with open(os.path.join(_dir, f"{os.getpid()}.jsonl"), "a") as f:
                f.write(json.dumps(rec) + "\n")
        return (pid, sts)

    subprocess.Popen.__init__ = __init__
    subprocess.Popen._try_wait = _try_wait
