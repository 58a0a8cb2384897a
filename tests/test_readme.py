"""The README's runnable examples run and do what they say."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)
RUNNABLE = [block for block in BLOCKS if "anyio.run(main" in block]


def test_readme_has_runnable_examples() -> None:
    """The examples this test runs are really there."""
    assert len(RUNNABLE) >= 3


@pytest.mark.parametrize("code", RUNNABLE, ids=[f"example{i}" for i in range(len(RUNNABLE))])
def test_readme_example_runs(code: str, tmp_path: Path) -> None:
    """Each example runs to completion in a fresh interpreter (asserts included)."""
    script = tmp_path / "example.py"
    script.write_text(code)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip()
