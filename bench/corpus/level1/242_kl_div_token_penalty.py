"""Per-token KL divergence between reference and policy log-probabilities (log_target), summed over the vocabulary."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 4
response_len = 512
vocab = 32000


class Model(nn.Module):
    def forward(self, ref_logprobs, policy_logprobs):
        return F.kl_div(ref_logprobs, policy_logprobs, reduction="none", log_target=True).sum(dim=-1)


def get_inputs():
    ref = torch.randn(batch, response_len, vocab).log_softmax(-1)
    policy = torch.randn(batch, response_len, vocab).log_softmax(-1)
    return [ref, policy]


def get_init_inputs():
    return []
