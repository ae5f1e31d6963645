import torch
import torch.nn as nn


def segsum(x):
    T = x.size(-1)
    x = x[..., None].repeat(*([1] * x.dim()), T)
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=-1)
    x = x.masked_fill(~mask, 0)
    x_segsum = torch.cumsum(x, dim=-2)
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=0)
    return x_segsum.masked_fill(~mask, -torch.inf)


class Model(nn.Module):
    def __init__(self, heads=4, dstate=8, block=16):
        super().__init__()
        self.block = block
        self.A = nn.Parameter(torch.randn(heads) * 0.1 - 0.5)

    def forward(self, X, B, C):
        b, L, h, d = X.shape
        c = L // self.block
        X = X.view(b, c, self.block, h, d)
        B = B.view(b, c, self.block, h, -1)
        C = C.view(b, c, self.block, h, -1)
        A = (self.A.view(1, 1, 1, h) * torch.ones(b, c, self.block, h)).permute(0, 3, 1, 2)
        A_cumsum = torch.cumsum(A, dim=-1)
        Lm = torch.exp(segsum(A))
        Y_diag = torch.einsum("bclhn,bcshn,bhcls,bcshp->bclhp", C, B, Lm, X)
        decay = torch.exp(A_cumsum[:, :, :, -1:] - A_cumsum)
        states = torch.einsum("bclhn,bhcl,bclhp->bchpn", B, decay, X)
        return Y_diag.reshape(b, L, h, d), states


def get_inputs():
    return [torch.randn(2, 64, 4, 16), torch.randn(2, 64, 4, 8), torch.randn(2, 64, 4, 8)]


def get_init_inputs():
    return []
