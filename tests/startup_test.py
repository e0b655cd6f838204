"""The quiet TensorFlow start belongs to zoo's commands, never to `import zoo`.

`import zoo` in a program leaves its standard error alone (no file descriptor is redirected,
`zoo_startup.quiet_tensorflow_start` is not called), while the recipes, `python -m zoo` and
the `zoo` console script start TensorFlow without its CPU start-up lines.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import zoo_startup

REPO = Path(__file__).resolve().parents[1]


def run_python(*args, env_extra=None):
    env = {k: v for k, v in os.environ.items() if k != "ZOO_TF_VERBOSE"}
    env.update(env_extra or {})
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, cwd=REPO, env=env, timeout=300
    )


def noise(stderr):
    return [line for line in stderr.splitlines() if zoo_startup.STARTUP_NOISE.search(line)]


def test_importing_zoo_startup_loads_neither_zoo_nor_tensorflow():
    code = (
        "import sys, zoo_startup; print(sorted({'zoo', 'keras', 'tensorflow'} & set(sys.modules)))"
    )
    result = run_python("-c", code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_import_zoo_leaves_stderr_alone():
    """A fresh process imports zoo: no quiet start, no dup/dup2, fd 2 the same file after."""
    code = """
import os, sys
import zoo_startup
calls = []
zoo_startup.quiet_tensorflow_start = lambda: calls.append("quiet_tensorflow_start")
for name in ("dup", "dup2"):
    real = getattr(os, name)
    def spy(*args, real=real, name=name):
        calls.append(name)
        return real(*args)
    setattr(os, name, spy)
before = os.fstat(2)
import zoo
after = os.fstat(2)
print(calls, (before.st_dev, before.st_ino) == (after.st_dev, after.st_ino),
      "tensorflow" in sys.modules)
"""
    result = run_python("-c", code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[] True True"


@pytest.mark.skipif(zoo_startup.has_gpu_device(), reason="the quiet start filters on CPUs only")
def test_python_m_zoo_starts_quietly():
    """(A recipe's quiet start: tests/recipes/recipes_test.py, the data error test.)"""
    result = run_python("-m", "zoo", "--help")
    assert result.returncode == 0, result.stderr
    assert "usage:" in result.stdout
    assert noise(result.stderr) == []


@pytest.mark.skipif(zoo_startup.has_gpu_device(), reason="the quiet start filters on CPUs only")
def test_console_script_starts_quietly():
    script = Path(sys.executable).with_name("zoo")  # where pip installs it
    if not script.is_file() or "zoo_startup" not in script.read_text(errors="replace"):
        pytest.skip("the `zoo` console script of this checkout is not installed")
    env = {k: v for k, v in os.environ.items() if k != "ZOO_TF_VERBOSE"}
    result = subprocess.run(
        [str(script), "--help"], capture_output=True, text=True, cwd=REPO, env=env, timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert "usage:" in result.stdout
    assert noise(result.stderr) == []


@pytest.mark.parametrize(
    "argv, orig_argv, expected",
    [
        (["-m"], ["python", "-m", "zoo", "--help"], "zoo"),
        (["-m"], ["python", "-X", "utf8", "-m", "zoo.models.params"], "zoo.models.params"),
        (["-m"], ["python", "-mzoo"], "zoo"),
        (["-m"], ["python", "-m", "pytest", "-m", "zoo"], "pytest"),
        (["-c"], ["python", "-c", "import zoo"], ""),
        (["recipes/luong_base.py"], ["python", "recipes/luong_base.py", "-m", "zoo"], ""),
    ],
)
def test_python_m_module(monkeypatch, argv, orig_argv, expected):
    monkeypatch.setattr(sys, "argv", argv)
    monkeypatch.setattr(sys, "orig_argv", orig_argv)
    assert zoo_startup.python_m_module() == expected
