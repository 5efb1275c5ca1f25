"""A pre-norm self-attention block: LayerNorm, QKV projection, scaled dot-product attention
(causal), output projection, residual add. `kiln bench` model file."""
import torch
import torch.nn.functional as F

# batch, sequence, width, heads, dtype
SIZES = {"small": (2, 16, 64, 4, torch.float32), "cpu": (4, 128, 256, 4, torch.float32),
         "gpu": (8, 1024, 768, 12, torch.bfloat16)}


class AttentionBlock(torch.nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.norm = torch.nn.LayerNorm(width)
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.out = torch.nn.Linear(width, width)

    def forward(self, x):
        b, s, w = x.shape
        q, k, v = self.qkv(self.norm(x)).split(w, dim=-1)
        q, k, v = (t.view(b, s, self.heads, w // self.heads).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return x + self.out(y.transpose(1, 2).reshape(b, s, w))


def model(size):
    batch, seq, width, heads, dtype = SIZES[size]
    return AttentionBlock(width, heads).to(dtype), (torch.randn(batch, seq, width, dtype=dtype),)
