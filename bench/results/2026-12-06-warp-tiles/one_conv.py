import sys, torch, torch.nn.functional as F
sys.path.insert(0, "."); import kiln
from conv_tiles import config_with
c, k, size, stride, dtype, layout, variant = sys.argv[1:8]
c, k, size, stride = int(c), int(k), int(size), int(stride)
dt = dict(f32=torch.float32, bf16=torch.bfloat16)[dtype]
fmt = torch.channels_last if layout == "nhwc" else torch.contiguous_format
x = torch.randn(16, c, size, size, device="cuda", dtype=dt).to(memory_format=fmt)
w = (torch.randn(k, c, 3, 3, device="cuda", dtype=dt) / (3 * c**0.5)).to(memory_format=fmt)
fn = lambda x, w: F.conv2d(x, w, stride=stride, padding=1)
g = torch.compile(fn, backend=kiln.torch_backend, options={"config": config_with("../configs/nvidia.yaml", variant)})
with torch.no_grad():
    for _ in range(6): g(x, w)
torch.cuda.synchronize(); print("done")
