"""Small building blocks shared by the example models (state_dict layout of
``etw_pytorch_utils``, as Pointnet2_PyTorch and PVN3D checkpoints hold it)."""
import torch.nn as nn


class Conv1dBlock(nn.Sequential):
    """``conv`` (1x1 Conv1d) + optional ``normlayer.bn`` (BatchNorm1d) + optional activation:
    the keys of ``etw_pytorch_utils.Conv1d``."""

    def __init__(self, c_in, c_out, bn=False, activation=True):
        super().__init__()
        conv = nn.Conv1d(c_in, c_out, kernel_size=1, bias=not bn)
        nn.init.kaiming_normal_(conv.weight)
        if not bn:
            nn.init.constant_(conv.bias, 0)
        self.add_module("conv", conv)
        if bn:
            norm = nn.Sequential()
            norm.add_module("bn", nn.BatchNorm1d(c_out))
            self.add_module("normlayer", norm)
        if activation:
            self.add_module("activation", nn.ReLU(inplace=True))


def break_up_pc(pc):
    """[B, N, 3 + C] -> xyz [B, N, 3], features [B, C, N] or None."""
    xyz = pc[..., 0:3].contiguous()
    features = pc[..., 3:].transpose(1, 2).contiguous() if pc.size(-1) > 3 else None
    return xyz, features
