"""Segmentation head: 1x1 Conv2d to class logits, bilinear upsample by 4 (align_corners=False), sigmoid."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
channels = 256
feat_h = 128
feat_w = 128
num_classes = 8


class Model(nn.Module):
    def __init__(self, channels, num_classes):
        super().__init__()
        self.classifier = nn.Conv2d(channels, num_classes, kernel_size=1)

    def forward(self, feats):
        logits = self.classifier(feats)
        logits = F.interpolate(logits, scale_factor=4, mode="bilinear", align_corners=False)
        return torch.sigmoid(logits)


def get_inputs():
    return [torch.randn(batch_size, channels, feat_h, feat_w)]


def get_init_inputs():
    return [channels, num_classes]
