"""Language-model loss: final projection to the vocabulary, then cross-entropy against next-token ids (mean)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 4
seq_len = 2048
hidden = 2048
vocab = 32000


class Model(nn.Module):
    def __init__(self, hidden, vocab):
        super().__init__()
        self.lm_head = nn.Linear(hidden, vocab, bias=False)

    def forward(self, hidden_states, targets):
        logits = self.lm_head(hidden_states)
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def get_inputs():
    return [torch.randn(batch, seq_len, hidden), torch.randint(0, vocab, (batch, seq_len))]


def get_init_inputs():
    return [hidden, vocab]
