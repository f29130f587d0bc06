"""pytest setup: test the package of this checkout (python/), on the CPU, with small inputs."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, ROOT)  # models/

import torch  # noqa: E402

torch.set_num_threads(1)
