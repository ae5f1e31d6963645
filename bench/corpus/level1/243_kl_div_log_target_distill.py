"""Distillation loss: KL(teacher || student) on temperature-scaled logits with log_target, times T^2."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
num_classes = 10000
temperature = 4.0


class Model(nn.Module):
    def __init__(self, temperature):
        super().__init__()
        self.T = temperature

    def forward(self, student_logits, teacher_logits):
        s = F.log_softmax(student_logits / self.T, dim=-1)
        t = F.log_softmax(teacher_logits / self.T, dim=-1)
        return F.kl_div(s, t, reduction="batchmean", log_target=True) * self.T * self.T


def get_inputs():
    return [torch.randn(batch_size, num_classes) * 3, torch.randn(batch_size, num_classes) * 3]


def get_init_inputs():
    return [temperature]
