"""A small ResNet: a 3x3 stem, two basic blocks (conv, batch norm, ReLU, residual add; the
second strided with a 1x1 shortcut), global average pooling and a linear classifier, in
inference. `kiln bench` model file."""
import torch
from torch import nn

# batch, channels, image side, dtype
SIZES = {"small": (2, 8, 16, torch.float32), "cpu": (8, 32, 56, torch.float32),
         "gpu": (64, 64, 56, torch.bfloat16)}


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = (nn.Sequential() if stride == 1 and cin == cout else
                         nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                       nn.BatchNorm2d(cout)))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(y)) + self.shortcut(x))


class ConvNet(nn.Module):
    def __init__(self, channels, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, channels, 3, 1, 1, bias=False),
                                  nn.BatchNorm2d(channels), nn.ReLU())
        self.blocks = nn.Sequential(BasicBlock(channels, channels, 1),
                                    BasicBlock(channels, 2 * channels, 2))
        self.head = nn.Linear(2 * channels, classes)

    def forward(self, x):
        y = self.blocks(self.stem(x))
        return self.head(torch.flatten(nn.functional.adaptive_avg_pool2d(y, 1), 1))


def model(size):
    batch, channels, side, dtype = SIZES[size]
    net = ConvNet(channels)
    for m in net.modules():  # statistics as a trained network has them, not 0 and 1
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.1, 0.1)
            m.running_var.uniform_(0.5, 1.5)
    return net.to(dtype), (torch.randn(batch, 3, side, side, dtype=dtype),)
