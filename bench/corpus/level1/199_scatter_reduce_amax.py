"""scatter_reduce with 'amax' of edge messages into destination nodes, excluding the initial values."""

import torch
import torch.nn as nn

num_nodes = 65536
num_edges = 1048576
feat_dim = 64


class Model(nn.Module):
    def forward(self, messages, dst, node_feat):
        index = dst.unsqueeze(-1).expand_as(messages)
        return node_feat.scatter_reduce(0, index, messages, reduce="amax", include_self=False)


def get_inputs():
    messages = torch.randn(num_edges, feat_dim)
    dst = torch.randint(0, num_nodes, (num_edges,))
    node_feat = torch.randn(num_nodes, feat_dim)
    return [messages, dst, node_feat]


def get_init_inputs():
    return []
