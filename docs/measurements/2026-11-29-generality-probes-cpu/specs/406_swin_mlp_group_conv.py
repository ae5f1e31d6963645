import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim=16, heads=4, window=4, shift=2):
        super().__init__()
        self.heads, self.window, self.shift = heads, window, shift
        self.padding = [window - shift, shift, window - shift, shift]
        self.norm = nn.LayerNorm(dim)
        self.spatial_mlp = nn.Conv1d(heads * window ** 2, heads * window ** 2, kernel_size=1, groups=heads)

    def forward(self, x):
        B, H, W, C = x.shape
        w, nh = self.window, self.heads
        x = self.norm(x)
        x = F.pad(x, [0, 0, self.padding[0], self.padding[1], self.padding[2], self.padding[3]], "constant", 0)
        _, Hp, Wp, _ = x.shape
        xw = x.view(B, Hp // w, w, Wp // w, w, C).permute(0, 1, 3, 2, 4, 5).reshape(-1, w * w, C)
        xw = xw.view(-1, w * w, nh, C // nh).transpose(1, 2).reshape(-1, nh * w * w, C // nh)
        out = self.spatial_mlp(xw)
        out = out.view(-1, nh, w * w, C // nh).transpose(1, 2).reshape(-1, w * w, C)
        out = out.reshape(-1, w, w, C).view(B, Hp // w, Wp // w, w, w, C).permute(0, 1, 3, 2, 4, 5).reshape(B, Hp, Wp, C)
        return out[:, self.padding[2]:Hp - self.padding[3], self.padding[0]:Wp - self.padding[1], :].contiguous()


def get_inputs():
    return [torch.randn(2, 8, 8, 16)]


def get_init_inputs():
    return []
