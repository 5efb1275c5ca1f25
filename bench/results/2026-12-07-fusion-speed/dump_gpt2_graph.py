# The kiln graph of GPT-2 small (tests/python/models.py, sdpa, batch 1 x 64) as the PyTorch
# bridge hands it to kiln, written to argv[1]; run from the repository root:
#   PYTHONPATH=python KILN_LIBRARY=build/default/lib/libkiln.so python3 THIS gpt2.json
import json
import sys

import torch

sys.path.insert(0, "tests/python")
import kiln  # noqa: E402
import kiln.runtime as rt  # noqa: E402
import models  # noqa: E402


def dump(self, session, graph, weights=None):
    with open(sys.argv[1], "w") as f:
        json.dump(graph if isinstance(graph, dict) else json.loads(graph), f)
    raise SystemExit("dumped")


rt.CompiledGraph.__init__ = dump
torch.manual_seed(0)
net = models.Gpt2(vocab=50257, hidden=768, heads=12, layers=12, max_len=1024, sdpa=True).eval()
args = (torch.randint(0, 50257, (1, 64)),)
fn = torch.compile(net, backend=kiln.torch_backend)
with torch.no_grad():
    fn(*args)
