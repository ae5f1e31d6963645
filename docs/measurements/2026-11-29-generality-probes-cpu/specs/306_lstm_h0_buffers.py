import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size=16, hidden=24, layers=2, out=5, batch=4):
        super().__init__()
        self.h0 = torch.randn((layers * 2, batch, hidden))
        self.c0 = torch.randn((layers * 2, batch, hidden))
        self.lstm = nn.LSTM(input_size, hidden, layers, batch_first=True, dropout=0.0, bidirectional=True)
        self.fc = nn.Linear(hidden * 2, out)

    def forward(self, x):
        self.h0 = self.h0.to(x.device)
        self.c0 = self.c0.to(x.device)
        out, hn = self.lstm(x, (self.h0, self.c0))
        return self.fc(out[:, -1, :])


def get_inputs():
    return [torch.randn(4, 12, 16)]


def get_init_inputs():
    return []
