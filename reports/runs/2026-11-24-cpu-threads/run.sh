#!/usr/bin/env bash
# The whole catalogue in worker isolation, N workers, TAG names the files, a sampler of runnable threads beside it;
# then the longest cell's group alone (one worker). Files to $OUT.
set -u
n=$1; tag=$2; source .device/probe_common.sh
{ date -u; git log --oneline -1; nproc; lscpu | grep -E 'Model name|Thread|Core|Socket|NUMA node|^CPU\(s\)'; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $OUT/machine-$tag.txt 2>&1
python3 .device/sampler.py $OUT/sample-$tag.jsonl & sp=$!
t0=$(date +%s.%N)
timeout 400 python3 -m harness run --tier gpu --isolation worker -n $n \
  --durations-from reports/runs/h200x2-2026-11-23-worker-start/p2-1gpu-16workers-16cores.jsonl -o $OUT/$tag.jsonl > $OUT/$tag.log 2>&1
echo "$tag exit $? wall $(python3 -c "import time;print(round(time.time()-$t0,1))") s"; tail -2 $OUT/$tag.log
kill $sp
python3 -m harness timings $OUT/$tag.jsonl -o $OUT/$tag.timings.md > /dev/null 2>&1
if [ "${ALONE:-0}" = 1 ]; then
  t0=$(date +%s.%N)
  timeout 200 python3 -m harness run --tier gpu --isolation worker -n 1 -k add_autotuned -s native,raw -p eager_inputs -o $OUT/$tag-alone.jsonl > $OUT/$tag-alone.log 2>&1
  echo "alone exit $? wall $(python3 -c "import time;print(round(time.time()-$t0,1))") s"; tail -1 $OUT/$tag-alone.log
fi
