"""Models built in code with random weights (no downloads), at sizes CI runs on 2 cores:
ResNet-18 and ResNet-50 (narrow), a BERT-base-shaped encoder, a GPT-2-small-shaped decoder and an
MLP-Mixer block. The shapes follow the originals; the widths are cut down."""
import math

import torch
from torch import nn
import torch.nn.functional as F


def shortcut(cin, cout, stride):
    """A residual block's projection (1x1 conv, batch norm), or None where x fits as it is."""
    if stride == 1 and cin == cout:
        return None
    return nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = shortcut(cin, cout, stride)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (x if self.down is None else self.down(x)))


class Bottleneck(nn.Module):
    """ResNet-50's block: 1x1 down to `mid`, 3x3 (strided), 1x1 up to 4 * mid."""

    def __init__(self, cin, mid, stride):
        super().__init__()
        cout = 4 * mid
        self.conv1 = nn.Conv2d(cin, mid, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(mid)
        self.conv2 = nn.Conv2d(mid, mid, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(mid)
        self.conv3 = nn.Conv2d(mid, cout, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(cout)
        self.down = shortcut(cin, cout, stride)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = F.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        return F.relu(y + (x if self.down is None else self.down(x)))


class ResNet(nn.Module):
    """The ResNet stem, four stages of `depths` blocks (the first block of stages 2-4
    strided) and a linear classifier."""

    def __init__(self, block, depths, width, classes, expansion):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 7, 2, 3, bias=False), nn.BatchNorm2d(width),
                                  nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        blocks, cin = [], width
        for i, depth in enumerate(depths):
            for j in range(depth):
                blocks.append(block(cin, width << i, 2 if (i > 0 and j == 0) else 1))
                cin = (width << i) * expansion
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class ResNet18(ResNet):
    def __init__(self, width=8, classes=10):
        super().__init__(BasicBlock, [2, 2, 2, 2], width, classes, expansion=1)


class ResNet50(ResNet):
    def __init__(self, width=8, classes=10):
        super().__init__(Bottleneck, [3, 4, 6, 3], width, classes, expansion=4)


class SelfAttention(nn.Module):
    """Multi-head self-attention written out (scores, softmax, product), or with `sdpa` through
    F.scaled_dot_product_attention as Hugging Face's models call it by default (a mask of None
    then means causal)."""

    def __init__(self, hidden, heads, sdpa=False):
        super().__init__()
        self.heads = heads
        self.sdpa = sdpa
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, x, mask):
        b, s, h = x.shape
        q, k, v = self.qkv(x).split(h, dim=-1)
        q, k, v = (t.view(b, s, self.heads, h // self.heads).transpose(1, 2) for t in (q, k, v))
        if self.sdpa:
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=mask is None)
        else:
            scores = q @ k.transpose(-1, -2) / math.sqrt(h // self.heads) + mask
            out = scores.softmax(-1) @ v
        return self.proj(out.transpose(1, 2).reshape(b, s, h))


class BertLayer(nn.Module):
    def __init__(self, hidden, heads, sdpa=False):
        super().__init__()
        self.attn = SelfAttention(hidden, heads, sdpa)
        self.ln1 = nn.LayerNorm(hidden)
        self.ff = nn.Sequential(nn.Linear(hidden, 4 * hidden), nn.GELU(), nn.Linear(4 * hidden, hidden))
        self.ln2 = nn.LayerNorm(hidden)

    def forward(self, x, mask):
        x = self.ln1(x + self.attn(x, mask))
        return self.ln2(x + self.ff(x))


class BertEncoder(nn.Module):
    """BERT-base's structure (embeddings, post-norm layers, padding mask as finfo.min)."""

    def __init__(self, vocab=100, hidden=64, heads=4, layers=2, max_len=32, sdpa=False):
        super().__init__()
        self.words = nn.Embedding(vocab, hidden)
        self.positions = nn.Embedding(max_len, hidden)
        self.types = nn.Embedding(2, hidden)
        self.ln = nn.LayerNorm(hidden)
        self.layers = nn.ModuleList(BertLayer(hidden, heads, sdpa) for _ in range(layers))

    def forward(self, ids, attention_mask):
        s = ids.shape[1]
        pos = torch.arange(s, device=ids.device)
        x = self.ln(self.words(ids) + self.positions(pos) + self.types(torch.zeros_like(ids)))
        mask = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        for layer in self.layers:
            x = layer(x, mask)
        return x


class GptBlock(nn.Module):
    def __init__(self, hidden, heads, sdpa=False):
        super().__init__()
        self.ln1 = nn.LayerNorm(hidden)
        self.attn = SelfAttention(hidden, heads, sdpa)
        self.ln2 = nn.LayerNorm(hidden)
        self.fc = nn.Linear(hidden, 4 * hidden)
        self.out = nn.Linear(4 * hidden, hidden)

    def forward(self, x, mask):
        x = x + self.attn(self.ln1(x), mask)
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class Gpt2(nn.Module):
    """GPT-2-small's structure (pre-norm, tied head, causal mask as -inf; with `sdpa`, causal
    scaled_dot_product_attention)."""

    def __init__(self, vocab=100, hidden=64, heads=4, layers=2, max_len=32, sdpa=False):
        super().__init__()
        self.sdpa = sdpa
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Embedding(max_len, hidden)
        self.blocks = nn.ModuleList(GptBlock(hidden, heads, sdpa) for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden)

    def forward(self, ids):
        s = ids.shape[1]
        x = self.wte(ids) + self.wpe(torch.arange(s, device=ids.device))
        causal = torch.ones(s, s, dtype=torch.bool, device=ids.device).triu(1)
        mask = None if self.sdpa else torch.zeros(s, s, dtype=x.dtype, device=ids.device).masked_fill(
            causal, float("-inf"))
        for block in self.blocks:
            x = block(x, mask)
        return self.ln_f(x) @ self.wte.weight.t()


class MixerBlock(nn.Module):
    """An MLP-Mixer block: token mixing across patches, then channel mixing."""

    def __init__(self, patches=16, channels=32):
        super().__init__()
        self.ln1 = nn.LayerNorm(channels)
        self.tokens = nn.Sequential(nn.Linear(patches, 2 * patches), nn.GELU(), nn.Linear(2 * patches, patches))
        self.ln2 = nn.LayerNorm(channels)
        self.channels = nn.Sequential(nn.Linear(channels, 4 * channels), nn.GELU(),
                                      nn.Linear(4 * channels, channels))

    def forward(self, x):
        x = x + self.tokens(self.ln1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.channels(self.ln2(x))


class ConvZoo(nn.Module):
    """Every convolution form kiln lowers: 1-d/2-d/3-d, stride, padding, dilation, groups,
    depthwise, transposed with output_padding; the loss mixes them so each gets a gradient."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv1d(4, 6, 3, stride=2, padding=1, groups=2)
        self.c2 = nn.Conv2d(4, 6, (3, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2))
        self.t2 = nn.ConvTranspose2d(6, 4, 3, stride=2, padding=1, output_padding=1, groups=2)
        self.dw = nn.Conv2d(4, 4, 3, padding=1, groups=4, bias=False)
        self.c3 = nn.Conv3d(2, 3, 2, stride=(1, 2, 1), padding=1)
        self.t1 = nn.ConvTranspose1d(6, 3, 4, stride=3, padding=2, dilation=2, output_padding=1)

    def forward(self, x1, x2, x3):
        a = self.c1(x1)
        b = self.dw(self.t2(self.c2(x2)))
        return a.sum() + (b * b).mean() + self.c3(x3).square().sum() + self.t1(a).tanh().sum()


class PoolZoo(nn.Module):
    """Pooling whose backward kiln lowers: max (stride below the kernel, dilation, ceil_mode),
    average (padding counted or not, ceil_mode, divisor_override) and adaptive average."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        a = F.max_pool2d(y, 3, 2, 1)
        b = F.max_pool2d(y, (2, 3), (1, 2), 1, dilation=2, ceil_mode=True)
        c = F.avg_pool2d(y, 3, 2, 1, ceil_mode=True, count_include_pad=False)
        d = F.avg_pool2d(y, (2, 3), 2, (0, 1), divisor_override=5)
        e = F.adaptive_avg_pool2d(y, (4, 3))
        f = F.adaptive_avg_pool2d(y, (11, 13))
        return sum((t * t).mean() for t in (a, b, c, d, e, f))


class Interpolations(nn.Module):
    """F.interpolate as users call it: nearest and bilinear, sizes and fractional scale
    factors, align_corners both ways."""

    def forward(self, x):
        outs = [F.interpolate(x, scale_factor=2, mode="nearest"),
                F.interpolate(x, size=(5, 11), mode="nearest"),
                F.interpolate(x, scale_factor=(1.7, 0.6), mode="nearest"),
                F.interpolate(x, size=(9, 13), mode="bilinear", align_corners=False),
                F.interpolate(x, scale_factor=1.5, mode="bilinear", align_corners=True),
                F.interpolate(x, scale_factor=(2.5, 0.75), mode="bilinear", align_corners=False)]
        return [o.relu() for o in outs]


class Distances(nn.Module):
    """torch.cdist and F.pdist with the p values users pass."""

    def forward(self, a, b):
        outs = [torch.cdist(a, b, p=p) for p in (1.0, 2.0, 0.5, float("inf"))]
        return outs + [F.pdist(a[0], p=p) for p in (2.0, 3.0)]


class ResNetLoss(nn.Module):
    """ResNet-18 in training mode (batch norm on batch statistics, running stats updated)
    ending in a scalar loss."""

    def __init__(self):
        super().__init__()
        self.net = ResNet18()

    def forward(self, x):
        return self.net(x).square().mean()


def training_cases():
    """(name, module, input shapes) whose whole training step kiln runs as kernels."""
    return [
        ("conv_zoo", ConvZoo(), [(2, 4, 11), (2, 4, 9, 8), (1, 2, 4, 5, 3)]),
        ("pool_zoo", PoolZoo(), [(2, 3, 9, 7)]),
        # Batch 8 at 64x64: the last blocks' batch norms see 32 values per channel, enough
        # that their gradients are well conditioned (at batch 2 and 1x1 they amplify rounding).
        ("resnet18_train", ResNetLoss().train(), [(8, 3, 64, 64)]),
    ]


def inference_cases():
    """(name, module in eval mode, example inputs), seeded."""
    torch.manual_seed(20261125)
    ids = torch.randint(0, 100, (2, 16))
    attention = torch.ones(2, 16, dtype=torch.int64)
    attention[1, 11:] = 0
    return [
        ("resnet18", ResNet18().eval(), (torch.randn(2, 3, 32, 32),)),
        ("bert_encoder", BertEncoder().eval(), (ids, attention)),
        ("gpt2", Gpt2().eval(), (ids,)),
        ("mixer_block", MixerBlock().eval(), (torch.randn(2, 16, 32),)),
    ]
