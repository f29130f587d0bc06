"""``python -m pointrt compare ...`` and ``python -m pointrt check ...`` (see ``--help``)."""
import argparse
import sys
from typing import List, Optional


def _load_module(spec: str):
    """'path/to/file.py:EXPR' -> the nn.Module that EXPR evaluates to in that file's namespace."""
    import importlib.util
    import os
    path, _, expr = spec.partition(":")
    if not expr:
        raise ValueError(f"--torch {spec}: give FILE.py:EXPRESSION, e.g. models/pvn3d_pointnet2.py:Pointnet2MSG()")
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    s = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
    mod = importlib.util.module_from_spec(s)
    s.loader.exec_module(mod)
    return eval(expr, vars(mod))  # noqa: S307 - the user's own model file


def _compare_main(argv: List[str]) -> int:
    p = argparse.ArgumentParser(prog="pointrt compare", description=(
        "Per layer: where do pointrt's values drift from a reference? Exit 0: every layer within "
        "tolerance, 1: some layer over it, 2: error."))
    p.add_argument("model", help="the ONNX file")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--torch", metavar="FILE.py:EXPR", help="PyTorch reference: EXPR (evaluated in FILE.py) is the "
                     "nn.Module; its weights: --state-dict")
    src.add_argument("--onnxruntime", action="store_true", help="reference: ONNX Runtime on the same file")
    src.add_argument("--ref", metavar="FILE", help="saved reference values (.npz, or Polygraphy --save-outputs .json)")
    p.add_argument("--state-dict", help="torch.load()-able state_dict for --torch")
    p.add_argument("--runner", help="Polygraphy runner to read from --ref .json (default: the first)")
    p.add_argument("--input", "-i", action="append", default=[], help="NAME=FILE.npy, or an .npz/.json of all inputs")
    p.add_argument("--mode", choices=["cumulative", "isolated", "both"], default="both")
    p.add_argument("--precision", choices=["fp32", "fp16"], default="fp32")
    p.add_argument("--atol", type=float, default=1e-5)
    p.add_argument("--rtol", type=float, default=1e-3)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--json", metavar="FILE", help="write the report as JSON")
    p.add_argument("--plot", metavar="FILE.png", help="plot the error per layer, every mode on one figure")
    p.add_argument("--save-ref", metavar="FILE", help="write the reference values compared (.npz or Polygraphy .json)")
    p.add_argument("--limit", type=int, default=0, help="print at most this many layers (0: all)")
    a = p.parse_args(argv)
    from .compare_engine import compare
    from .compare_io import parse_feeds, write_arrays
    from .compare_report import plot, write_json
    feeds = parse_feeds(a.input)
    if a.torch:
        import torch
        model = _load_module(a.torch)
        if a.state_dict:
            model.load_state_dict(torch.load(a.state_dict, map_location="cpu"))
        reference, inputs = model, feeds  # forward arguments in the file's input order
    else:
        reference = "onnxruntime" if a.onnxruntime else (a.ref or "pointrt")
        inputs = feeds
    if not feeds:
        raise ValueError("compare needs the model's inputs: --input NAME=FILE.npy (or one .npz)")
    modes = ["cumulative", "isolated"] if a.mode == "both" else [a.mode]
    report = compare(a.model, inputs, reference, modes=modes, precision=a.precision, atol=a.atol, rtol=a.rtol,
                     threads=a.threads, runner=a.runner)
    from .compare_report import format_table
    print(format_table(report, a.limit or None))
    if a.json:
        write_json(report, a.json)
    if a.plot:
        plot(report, a.plot)
    if a.save_ref:
        write_arrays(a.save_ref, report.reference_values)
    return 0 if report.ok else 1


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    commands = {"compare": _compare_main}
    try:
        from .check import main as check_main
        commands["check"] = check_main
    except ImportError:
        pass
    if not argv or argv[0] not in commands:
        print(f"usage: python -m pointrt {{{','.join(commands)}}} ... (--help for each)", file=sys.stderr)
        return 2
    try:
        return commands[argv[0]](argv[1:])
    except SystemExit as e:  # argparse: --help is 0, a usage error 2
        return int(e.code or 0)
    except Exception as e:  # one line, exit status 2
        print(f"error: {type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}",
              file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
