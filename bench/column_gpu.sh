#!/usr/bin/env bash
# Reductions over the outer dim on a GPU, kernel against kernel, in one run: kiln's kernel
# time from `kiln run --profile` (the plugin's events, median) for bench/graphs/colsum.json
# (an f32 [8192, 1024] sum over dim 0) and softmax_dim0.json (softmax over dim 0), then
# PyTorch eager and torch.compile on the same shapes (CUDA events around 50 calls back to
# back, median of 20 samples: launch costs hidden as in a stream of calls), and a device copy
# of the same bytes. From an unpacked device bundle:
#   bench/column_gpu.sh [KILN] [CONFIG]   (default: bin/kiln configs/nvidia.yaml)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kiln=${1:-bin/kiln}
config=${2:-configs/nvidia.yaml}
for graph in colsum softmax_dim0; do
  echo "== kiln $graph (kiln run --profile 50)"
  KILN_LOG=warn "$kiln" run "$here/graphs/$graph.json" --config "$config" --profile 50 | tail -n +1
done
python3 - <<'PY'
import statistics, torch
def median_ms(fn, runs=20, per=50):
    for _ in range(3): fn()
    torch.cuda.synchronize(); t = []
    for _ in range(runs):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(per): fn()
        b.record(); b.synchronize(); t.append(a.elapsed_time(b) / per)
    return statistics.median(t)
x = torch.randn(8192, 1024, device="cuda")
src = torch.empty(x.numel() * 4 // 2, dtype=torch.uint8, device="cuda"); dst = torch.empty_like(src)
print(f"copy of 33.6 MB: {median_ms(lambda: dst.copy_(src)):.4f} ms")
src2 = torch.empty(x.numel() * 4, dtype=torch.uint8, device="cuda"); dst2 = torch.empty_like(src2)
print(f"copy of 67.1 MB: {median_ms(lambda: dst2.copy_(src2)):.4f} ms")
for name, fn in [("colsum", lambda x: x.sum(0)), ("softmax_dim0", lambda x: torch.softmax(x, 0))]:
    eager = median_ms(lambda: fn(x))
    torch._dynamo.reset(); c = torch.compile(fn)
    comp = median_ms(lambda: c(x))
    print(f"{name}: eager {eager:.4f} ms, torch.compile {comp:.4f} ms")
PY
