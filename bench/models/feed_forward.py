"""A transformer's feed-forward block: LayerNorm, Linear, GELU, Linear, residual add.
`kiln bench` model file (python3 -m kiln.export_model)."""
import torch

# batch x tokens, model width, hidden width, dtype
SIZES = {"small": (8, 64, 256, torch.float32), "cpu": (256, 768, 3072, torch.float32),
         "gpu": (8192, 768, 3072, torch.bfloat16)}


class FeedForward(torch.nn.Module):
    def __init__(self, width, hidden):
        super().__init__()
        self.norm = torch.nn.LayerNorm(width)
        self.up = torch.nn.Linear(width, hidden)
        self.down = torch.nn.Linear(hidden, width)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))


def model(size):
    tokens, width, hidden, dtype = SIZES[size]
    return FeedForward(width, hidden).to(dtype), (torch.randn(tokens, width, dtype=dtype),)
