"""Example point-cloud networks built from pointrt.torch.pointnet2, their data generators and
export/training scripts."""
