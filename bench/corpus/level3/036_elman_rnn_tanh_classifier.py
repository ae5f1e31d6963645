"""Two-layer Elman RNN (tanh) over embedded tokens; mean of the outputs over time feeds a linear classifier."""

import torch
import torch.nn as nn

batch_size = 128
seq_len = 200
vocab_size = 20000
embed_dim = 128
hidden_size = 256
num_classes = 5


class Model(nn.Module):
    def __init__(self, vocab_size, embed_dim, hidden_size, num_classes):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim)
        self.rnn = nn.RNN(embed_dim, hidden_size, num_layers=2, nonlinearity="tanh", batch_first=True)
        self.classifier = nn.Linear(hidden_size, num_classes)

    def forward(self, tokens):
        out, _ = self.rnn(self.embedding(tokens))
        return self.classifier(out.mean(dim=1))


def get_inputs():
    return [torch.randint(0, vocab_size, (batch_size, seq_len))]


def get_init_inputs():
    return [vocab_size, embed_dim, hidden_size, num_classes]
