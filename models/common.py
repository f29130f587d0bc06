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


def demo_cache_path(name: str) -> str:
    """Where the demo trainers keep generated training data (a function of the seeds, so a rerun
    reuses it): $POINTRT_DEMO_CACHE, default ~/.cache/pointrt-demos; outside the repository."""
    import os
    d = os.environ.get("POINTRT_DEMO_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "pointrt-demos"))
    os.makedirs(d, exist_ok=True)
    return os.path.join(d, name)


def training_clock(cpu_budget: bool, threads: int):
    """Seconds of training so far: wall time, or (cpu_budget) the process's CPU seconds / threads,
    i.e. the wall time the same work takes when the cores are not shared with other jobs."""
    import time
    start, cpu0 = time.time(), time.process_time()
    if cpu_budget:
        return lambda: (time.process_time() - cpu0) / threads
    return lambda: time.time() - start


def write_training_record(out_dir: str, facts: dict, wall_start: float, argv) -> None:
    """training.json next to a demo's weights: the facts, the total wall time and the command."""
    import json
    import os
    import time
    facts["wall_seconds_total"] = round(time.time() - wall_start, 1)
    facts["command"] = " ".join(["python"] + list(argv))
    with open(os.path.join(out_dir, "training.json"), "w") as f:
        json.dump(facts, f, indent=1)
    print(json.dumps({k: v for k, v in facts.items() if k != "curve"}))


def run_cli(root, *args) -> str:
    """Runs a command, echoing it with paths relative to `root`; exits with its output on failure."""
    import subprocess
    import sys
    print("$ " + " ".join(str(a).replace(str(root) + "/", "") for a in args), flush=True)
    out = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"command failed ({out.returncode}):\n{out.stdout}{out.stderr}")
    return out.stdout
