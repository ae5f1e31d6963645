"""Symmetric contrastive loss: normalize both embedding sets, similarity matrix / temperature, cross-entropy both ways."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
embed_dim = 512


class Model(nn.Module):
    def __init__(self, temperature):
        super().__init__()
        self.temperature = temperature

    def forward(self, image_emb, text_emb):
        img = F.normalize(image_emb, dim=-1)
        txt = F.normalize(text_emb, dim=-1)
        logits = img @ txt.t() / self.temperature
        labels = torch.arange(logits.size(0), device=logits.device)
        return 0.5 * (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels))


def get_inputs():
    return [torch.randn(batch_size, embed_dim), torch.randn(batch_size, embed_dim)]


def get_init_inputs():
    return [0.07]
