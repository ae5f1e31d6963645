import math
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, clusters=8, feature_size=16, ghost=2):
        super().__init__()
        self.feature_size, self.clusters = feature_size, clusters
        init_sc = 1 / math.sqrt(feature_size)
        total = clusters + ghost
        self.clusters_w = nn.Parameter(init_sc * torch.randn(feature_size, total))
        self.batch_norm = nn.BatchNorm1d(total)
        self.clusters2 = nn.Parameter(init_sc * torch.randn(1, feature_size, clusters))
        self.out_dim = clusters * feature_size

    def forward(self, x):
        max_sample = x.size()[1]
        x = x.view(-1, self.feature_size)
        assignment = torch.matmul(x, self.clusters_w)
        assignment = self.batch_norm(assignment)
        assignment = F.softmax(assignment, dim=1)
        assignment = assignment[:, :self.clusters]
        assignment = assignment.view(-1, max_sample, self.clusters)
        a_sum = torch.sum(assignment, dim=1, keepdim=True)
        a = a_sum * self.clusters2
        assignment = assignment.transpose(1, 2)
        x = x.view(-1, max_sample, self.feature_size)
        vlad = torch.matmul(assignment, x).transpose(1, 2)
        vlad = F.normalize(vlad - a)
        vlad = vlad.reshape(-1, self.clusters * self.feature_size)
        return F.normalize(vlad)


def get_inputs():
    return [torch.randn(4, 20, 16)]


def get_init_inputs():
    return []
