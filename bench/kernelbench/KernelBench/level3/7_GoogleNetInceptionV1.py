# In-house KernelBench-format task (written from the task description).
import torch
import torch.nn as nn
import torch.nn.functional as F


class Inception(nn.Module):
    """Four branches: 1x1; 1x1->3x3; 1x1->5x5; 3x3 max pool->1x1; concat."""

    def __init__(self, cin, c1, c3r, c3, c5r, c5, pool_proj):
        super().__init__()
        self.b1 = nn.Conv2d(cin, c1, 1)
        self.b3 = nn.Sequential(nn.Conv2d(cin, c3r, 1), nn.Conv2d(c3r, c3, 3, padding=1))
        self.b5 = nn.Sequential(nn.Conv2d(cin, c5r, 1), nn.Conv2d(c5r, c5, 5, padding=2))
        self.bp = nn.Sequential(nn.MaxPool2d(3, stride=1, padding=1), nn.Conv2d(cin, pool_proj, 1))

    def forward(self, x):
        return torch.cat([self.b1(x), self.b3(x), self.b5(x), self.bp(x)], 1)


class Model(nn.Module):
    """GoogLeNet v1 without auxiliary heads (dropout p=0)."""

    def __init__(self, num_classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3)
        self.conv2 = nn.Conv2d(64, 64, 1)
        self.conv3 = nn.Conv2d(64, 192, 3, padding=1)
        cfg = [(192, 64, 96, 128, 16, 32, 32), (256, 128, 128, 192, 32, 96, 64), None,
               (480, 192, 96, 208, 16, 48, 64), (512, 160, 112, 224, 24, 64, 64),
               (512, 128, 128, 256, 24, 64, 64), (512, 112, 144, 288, 32, 64, 64),
               (528, 256, 160, 320, 32, 128, 128), None,
               (832, 256, 160, 320, 32, 128, 128), (832, 384, 192, 384, 48, 128, 128)]
        self.stages = nn.ModuleList(
            nn.MaxPool2d(3, stride=2, padding=1) if c is None else Inception(*c) for c in cfg)
        self.dropout = nn.Dropout(0.0)
        self.fc = nn.Linear(1024, num_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 3, stride=2, padding=1)
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(F.relu(self.conv3(x)), 3, stride=2, padding=1)
        for stage in self.stages:
            x = stage(x)
        x = torch.flatten(F.adaptive_avg_pool2d(x, (1, 1)), 1)
        return self.fc(self.dropout(x))


def get_inputs():
    return [torch.randn(10, 3, 224, 224)]


def get_init_inputs():
    return [1000]
