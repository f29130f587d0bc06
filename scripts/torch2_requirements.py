"""Print the requirements of the installed torch wheel that a CPU-only run loads, one per line.

PyPI's Linux torch is a CUDA build: `pip install torch` pulls ~5.5 GB of CUDA libraries. On the
CPU, `import torch` needs only the libraries that libtorch_cuda.so links (the dynamic loader
resolves them at import); cuSOLVER (loaded with CUDA linear algebra), NVTX, triton and
cuda-bindings are never loaded. scripts/setup.sh installs torch with --no-deps and then these.
Run with the venv's python after `pip install --no-deps torch==...`."""
import importlib.metadata
import re
import sys

# never loaded by a CPU-only process (measured: `import torch` and the export tests pass without)
SKIPPED_PACKAGES = {"triton", "cuda-bindings"}
SKIPPED_EXTRAS = {"cusolver", "nvtx"}


def cpu_requirements() -> list:
    out = []
    for req in importlib.metadata.requires("torch") or []:
        spec, _, marker = req.partition(";")
        if "extra ==" in marker:
            continue
        name = re.split(r"[\[<>=~! ]", spec.strip(), maxsplit=1)[0]
        if name.lower() in SKIPPED_PACKAGES:
            continue
        extras = re.search(r"\[([^\]]*)\]", spec)
        if extras:
            kept = [e for e in extras.group(1).split(",") if e.strip() not in SKIPPED_EXTRAS]
            spec = spec.replace(extras.group(0), "[" + ",".join(kept) + "]")
        out.append(spec.strip())
    return out


if __name__ == "__main__":
    sys.stdout.write("\n".join(cpu_requirements()) + "\n")
