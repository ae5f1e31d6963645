"""Token-level cross-entropy with label smoothing 0.1 and ignore_index=-100 on (batch, seq, vocab) logits."""

import torch
import torch.nn as nn

batch_size = 8
seq_len = 1024
vocab_size = 32000


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.loss_fn = nn.CrossEntropyLoss(ignore_index=-100, label_smoothing=0.1)

    def forward(self, logits, labels):
        return self.loss_fn(logits.view(-1, logits.size(-1)), labels.view(-1))


def get_inputs():
    logits = torch.randn(batch_size, seq_len, vocab_size)
    labels = torch.randint(0, vocab_size, (batch_size, seq_len))
    labels[:, :100] = -100
    return [logits, labels]


def get_init_inputs():
    return []
