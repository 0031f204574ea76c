"""README.md stays true: its tour runs and prints what its comments say."""
import os
import pathlib
import re

from support import assert_exited, run_python

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def _readme():
    return README.read_text(encoding="utf-8")


def test_tour_runs_and_prints_what_it_claims():
    blocks = re.findall(r"```python\n(.*?)```", _readme(), re.S)
    assert blocks, "README.md has no python example"
    tour = blocks[0]
    expected = [
        line.split("#", 1)[1].strip()
        for line in tour.splitlines()
        if line.startswith("print(") and "#" in line
    ]
    # A fresh interpreter: the tour registers fixed names.
    proc = run_python(["-c", tour])
    assert_exited(proc)
    assert proc.stdout.splitlines() == expected


def test_quick_start_commands():
    commands = re.findall(r"```sh\n(.*?)\n```", _readme(), re.S)
    assert commands == [
        "python -m pip install . && python -m stride_weave",
        "python -m pip install '.[test]' && python -m pytest -n auto",
    ]


def test_the_test_extra_provides_the_parallel_runner():
    """`-n auto` in the README's test command needs pytest-xdist, which the
    test extra must install."""
    import tomllib

    with open(README.parent / "pyproject.toml", "rb") as f:
        extras = tomllib.load(f)["project"]["optional-dependencies"]
    assert any(re.match(r"pytest-xdist\b", req) for req in extras["test"])


def test_tree_excerpt_matches_the_real_output():
    excerpt = re.findall(r"```text\n(.*?)```", _readme(), re.S)[0]
    shown = [line for line in excerpt.splitlines() if line != "..."]
    proc = run_python(["-m", "stride_weave"], env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    assert_exited(proc)
    out = proc.stdout.splitlines()
    start = out.index(shown[0])
    assert out[start:start + len(shown)] == shown
