#!/usr/bin/env bash
# CPU throughput of this machine for the work that dominates AOTI cells (C++ compiles): N jobs at once, each
# compiling the same file 3 times; per-compile mean seconds for N = 1, nproc/2, nproc.
set -u
d=$(mktemp -d); cd $d
printf '#include <bits/stdc++.h>\nint main(){std::map<std::string,std::vector<int>> m; std::regex r("a+b*"); std::sort(m.begin()->second.begin(), m.begin()->second.end()); return (int)m.size()+std::regex_match("aab", r);}\n' > w.cpp
job() { for k in 1 2 3; do g++ -O2 -c w.cpp -o w$1-$k.o; done; }
export -f job
c=$(nproc); echo "nproc $c; $(lscpu | grep -E 'Model name|MHz|L3' | tr -s ' ' | tr '\n' ';')"
for n in 1 $((c/2)) $c; do
  t0=$(date +%s.%N); for i in $(seq $n); do job $i & done; wait; t1=$(date +%s.%N)
  python3 -c "print('N=$n wall %.2f s, per compile %.2f s' % ($t1 - $t0, ($t1 - $t0) / 3))"
done
