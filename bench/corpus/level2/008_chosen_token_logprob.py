"""Log-probability of chosen tokens: LM head, temperature scaling, log_softmax, gather at the label ids."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 4
seq_len = 1024
hidden = 2048
vocab = 32000


class Model(nn.Module):
    def __init__(self, hidden, vocab, temperature):
        super().__init__()
        self.lm_head = nn.Linear(hidden, vocab, bias=False)
        self.temperature = temperature

    def forward(self, hidden_states, labels):
        logits = self.lm_head(hidden_states) / self.temperature
        logp = F.log_softmax(logits, dim=-1)
        return torch.gather(logp, -1, labels.unsqueeze(-1)).squeeze(-1)


def get_inputs():
    return [torch.randn(batch, seq_len, hidden), torch.randint(0, vocab, (batch, seq_len))]


def get_init_inputs():
    return [hidden, vocab, 0.7]
