"""Target attention over user history: MLP on [h, t, h-t, h*t], masked by history length, weighted sum."""

import torch
import torch.nn as nn

batch_size = 2048
history_len = 200
embed_dim = 64


class Model(nn.Module):
    def __init__(self, embed_dim):
        super().__init__()
        self.att_mlp = nn.Sequential(
            nn.Linear(4 * embed_dim, 80), nn.Sigmoid(),
            nn.Linear(80, 40), nn.Sigmoid(),
            nn.Linear(40, 1),
        )

    def forward(self, history, target, lengths):
        t = target.unsqueeze(1).expand_as(history)
        scores = self.att_mlp(torch.cat([history, t, history - t, history * t], dim=-1)).squeeze(-1)
        mask = torch.arange(history.size(1), device=history.device)[None, :] < lengths[:, None]
        scores = scores * mask
        return torch.bmm(scores.unsqueeze(1), history).squeeze(1)


def get_inputs():
    history = torch.randn(batch_size, history_len, embed_dim)
    target = torch.randn(batch_size, embed_dim)
    lengths = torch.randint(1, history_len + 1, (batch_size,))
    return [history, target, lengths]


def get_init_inputs():
    return [embed_dim]
