import torch
class M(torch.nn.Module):
    def forward(self, x):
        return x.cumsum(1)
def model(size):
    return M(), (torch.randn(1024, 4096),)
