import sys, torch
sys.path.insert(0, "tests/python")
from models import Gpt2
def model(size):
    m = Gpt2(vocab=50257, hidden=768, heads=12, layers=12, max_len=1024, sdpa=True).to(torch.bfloat16)
    ids = torch.randint(50257, (2, 128))
    return m, (ids,)
