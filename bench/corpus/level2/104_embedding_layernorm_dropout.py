"""Input embeddings: word + learned position + token-type embeddings summed, LayerNorm, dropout (eval)."""

import torch
import torch.nn as nn

batch_size = 64
seq_length = 512
vocab_size = 30522
hidden_size = 768
type_vocab_size = 2


class Model(nn.Module):
    def __init__(self, vocab_size, hidden_size, max_position, type_vocab_size):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, hidden_size, padding_idx=0)
        self.position_embeddings = nn.Embedding(max_position, hidden_size)
        self.token_type_embeddings = nn.Embedding(type_vocab_size, hidden_size)
        self.LayerNorm = nn.LayerNorm(hidden_size, eps=1e-12)
        self.dropout = nn.Dropout(0.1)
        self.register_buffer("position_ids", torch.arange(max_position).unsqueeze(0))

    def forward(self, input_ids, token_type_ids):
        positions = self.position_ids[:, : input_ids.size(1)]
        emb = self.word_embeddings(input_ids) + self.position_embeddings(positions)
        emb = emb + self.token_type_embeddings(token_type_ids)
        return self.dropout(self.LayerNorm(emb))


def get_inputs():
    input_ids = torch.randint(0, vocab_size, (batch_size, seq_length))
    token_type_ids = (torch.arange(seq_length) >= seq_length // 2).long().expand(batch_size, -1).contiguous()
    return [input_ids, token_type_ids]


def get_init_inputs():
    return [vocab_size, hidden_size, seq_length, type_vocab_size]
