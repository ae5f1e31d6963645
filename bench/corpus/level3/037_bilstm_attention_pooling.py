"""Text classifier: embedding, bidirectional LSTM, additive attention pooling over time (tanh + softmax), linear output."""

import torch
import torch.nn as nn

batch_size = 64
seq_len = 160
vocab_size = 30000
embed_dim = 200
hidden_size = 256
num_labels = 20


class Model(nn.Module):
    def __init__(self, vocab_size, embed_dim, hidden_size, num_labels):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed_dim, padding_idx=0)
        self.lstm = nn.LSTM(embed_dim, hidden_size, batch_first=True, bidirectional=True)
        self.att_w = nn.Linear(2 * hidden_size, 2 * hidden_size)
        self.att_v = nn.Linear(2 * hidden_size, 1, bias=False)
        self.out = nn.Linear(2 * hidden_size, num_labels)

    def forward(self, token_ids):
        h, _ = self.lstm(self.embed(token_ids))
        scores = self.att_v(torch.tanh(self.att_w(h))).squeeze(-1)
        weights = torch.softmax(scores, dim=1).unsqueeze(-1)
        return self.out((weights * h).sum(dim=1))


def get_inputs():
    return [torch.randint(1, vocab_size, (batch_size, seq_len))]


def get_init_inputs():
    return [vocab_size, embed_dim, hidden_size, num_labels]
