# In-house KernelBench-format task (written from the task description).
import torch
import torch.nn as nn


def conv_bn(cin, cout, k, stride=1):
    return nn.Sequential(nn.Conv2d(cin, cout, k, stride=stride, padding=k // 2, bias=False),
                         nn.BatchNorm2d(cout))


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.a = conv_bn(cin, cout, 3, stride)
        self.b = conv_bn(cout, cout, 3)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = conv_bn(cin, cout, 1, stride)

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.b(self.relu(self.a(x)))
        return self.relu(out + identity)


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, cin, width, stride=1):
        super().__init__()
        cout = width * 4
        self.a = conv_bn(cin, width, 1)
        self.b = conv_bn(width, width, 3, stride)
        self.c = conv_bn(width, cout, 1)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = conv_bn(cin, cout, 1, stride)

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.a(x))
        out = self.relu(self.b(out))
        return self.relu(self.c(out) + identity)


class ResNet(nn.Module):
    def __init__(self, block, counts, num_classes):
        super().__init__()
        self.stem = conv_bn(3, 64, 7, 2)
        self.relu = nn.ReLU(inplace=True)
        self.pool = nn.MaxPool2d(3, stride=2, padding=1)
        layers, cin = [], 64
        for i, n in enumerate(counts):
            width = 64 * 2 ** i
            for j in range(n):
                layers.append(block(cin, width, 2 if (j == 0 and i > 0) else 1))
                cin = width * block.expansion
        self.layers = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(cin, num_classes)

    def forward(self, x):
        x = self.pool(self.relu(self.stem(x)))
        x = self.avgpool(self.layers(x))
        return self.fc(x.flatten(1))


class Model(nn.Module):
    """ResNet-18 (BatchNorm in training mode)."""

    def __init__(self, num_classes=1000):
        super().__init__()
        self.net = ResNet(BasicBlock, [2, 2, 2, 2], num_classes)

    def forward(self, x):
        return self.net(x)


def get_inputs():
    return [torch.randn(2, 3, 224, 224)]


def get_init_inputs():
    return [1000]
