"""Probe: once a second, runnable threads by command (and the most in one process), and the CPU split."""
import json, os, sys, time, collections
out = open(sys.argv[1], "w")
def cpu():
    f = open("/proc/stat").readline().split()[1:]
    return [int(x) for x in f]
prev = cpu()
while True:
    time.sleep(1.0)
    by_comm = collections.Counter(); comm_of = {}; per_proc = collections.Counter(); threads = collections.Counter()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            for tid in os.listdir(f"/proc/{pid}/task"):
                s = open(f"/proc/{pid}/task/{tid}/stat").read()
                comm = s[s.index("(") + 1:s.rindex(")")]; state = s[s.rindex(")") + 2]
                threads[pid] += 1; comm_of.setdefault(pid, comm)
                if state == "R":
                    by_comm[comm] += 1; per_proc[pid] += 1
        except (FileNotFoundError, ProcessLookupError, ValueError):
            continue
    now = cpu(); d = [a - b for a, b in zip(now, prev)]; prev = now; tot = sum(d) or 1
    out.write(json.dumps({"t": time.time(), "R": sum(by_comm.values()), "by_comm": dict(by_comm.most_common(8)),
                          "max_R_one_proc": max(per_proc.values(), default=0), "top_R_procs": [(comm_of[p], c) for p, c in per_proc.most_common(3)],
                          "max_threads_one_proc": max(threads.values(), default=0),
                          "user": round(d[0] / tot, 3), "sys": round(d[2] / tot, 3), "idle": round((d[3] + d[4]) / tot, 3)}) + "\n")
    out.flush()
