"""The README's Python section runs as written (its ```python blocks, in order, in a fresh
folder), after `pip install ./python` or with the checkout's package (tests/install covers the
former)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_readme_python_section_runs_as_written(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert blocks, "no python block in the README's Python section"
    (tmp_path / "readme.py").write_text("\n".join(blocks))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python")}
    r = subprocess.run([sys.executable, "readme.py"], cwd=tmp_path, capture_output=True, text=True, env=env,
                       timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ValueInfo(name='points', dtype=dtype('float32'), shape=[1, 'num_points', 3])" in r.stdout
    assert "input 'points' dimension 2 must be 3, got 2" in r.stdout
