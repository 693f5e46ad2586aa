# sourced: copy the checkout once per loan, the environment every probe uses
export LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libstdc++.so.6 PYTHONUNBUFFERED=1
if [ ! -d /root/w ]; then
  cp -a "$PWD" /root/w
  env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX=/tmp/tcm-caches-0/pycache python3 -c "import torch, torch._inductor.compile_fx, torch._dynamo, torch.export, triton, harness.cli, pytest, xdist, hypothesis"
fi
cd /root/w
