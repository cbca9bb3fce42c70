# In-house KernelBench-format task (written from the task description).
import torch
import torch.nn as nn


class Model(nn.Module):
    """AlexNet (dropout p=0, so it is an identity)."""

    def __init__(self, num_classes=1000):
        super().__init__()
        conv = [(3, 96, 11, 4, 2, True), (96, 256, 5, 1, 2, True),
                (256, 384, 3, 1, 1, False), (384, 384, 3, 1, 1, False),
                (384, 256, 3, 1, 1, True)]
        layers = []
        for cin, cout, k, s, p, pool in conv:
            layers += [nn.Conv2d(cin, cout, k, stride=s, padding=p), nn.ReLU(inplace=True)]
            if pool:
                layers.append(nn.MaxPool2d(kernel_size=3, stride=2))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(
            nn.Linear(256 * 6 * 6, 4096), nn.ReLU(inplace=True), nn.Dropout(p=0.0),
            nn.Linear(4096, 4096), nn.ReLU(inplace=True), nn.Dropout(p=0.0),
            nn.Linear(4096, num_classes))

    def forward(self, x):
        x = torch.flatten(self.features(x), 1)
        return self.classifier(x)


def get_inputs():
    return [torch.randn(1024, 3, 224, 224)]


def get_init_inputs():
    return [1000]
