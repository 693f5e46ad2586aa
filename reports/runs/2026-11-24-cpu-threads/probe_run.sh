#!/usr/bin/env bash
# The whole catalogue, N workers, TAG names the files; every child's rusage, and a sampler of runnable threads.
set -u
n=$1; tag=$2; source .device/probe_common.sh
rm -rf /root/ru-$tag; mkdir -p /root/ru-$tag
python3 .device/sampler.py $OUT/sample-$tag.jsonl & sp=$!
t0=$(date +%s.%N)
TCM_RUSAGE_DIR=/root/ru-$tag PYTHONPATH=/root/w/.device/rusage timeout 400 python3 -m harness run --tier gpu --isolation worker -n $n \
  --durations-from reports/runs/h200x2-2026-11-23-worker-start/p2-1gpu-16workers-16cores.jsonl -o $OUT/$tag.jsonl > $OUT/$tag.log 2>&1
echo "$tag exit $? wall $(python3 -c "import time;print(round(time.time()-$t0,1))") s OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset}"; tail -2 $OUT/$tag.log
kill $sp
python3 - $tag <<'PY'
import glob, json, os, sys
tag = sys.argv[1]
with open(os.path.join(os.environ["OUT"], f"rusage-{tag}.jsonl"), "w") as out:
    for f in glob.glob(f"/root/ru-{tag}/*.jsonl"):
        for line in open(f):
            r = json.loads(line); argv = r.pop("argv") or r["cmd"].split()
            r["out"] = argv[argv.index("-o") + 1][-60:] if "-o" in argv else None
            r["cmd"] = r["cmd"][:160]; r.pop("cwd")
            out.write(json.dumps(r) + "\n")
PY
