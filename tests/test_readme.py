"""The README's and the docs' examples run as written: every Python block, the cheap shell commands, DVC's `-S`
override; the README's stage count is the pipeline's, it stays an entry point, and docs/index.md lists every page."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text()
PAGES = {path.relative_to(REPO).as_posix(): path.read_text() for path in [REPO / "README.md",
                                                                          *sorted((REPO / "docs").glob("*.md"))]}
BLOCKS = [block for text in PAGES.values() for block in re.findall(r"```(\w+)\n(.*?)```", text, flags=re.S)]
SKETCH = "<!-- an API sketch"  # a Python block right after this line shows an API and is not run
NUMBERS = {word: n for n, word in enumerate(["zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
                                             "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen",
                                             "sixteen", "seventeen", "eighteen", "nineteen", "twenty"])}


def _expected(comment: str):
    """A literal written after `# ` as the expected value (trailing words such as "(Table I, C5)" ignored)."""
    for end in range(len(comment), 0, -1):
        if comment[end - 1] in "}])'\"0123456789":
            try:
                return ast.literal_eval(comment[:end])
            except (ValueError, SyntaxError):
                continue
    raise ValueError("no literal")


def _python_blocks() -> list[str]:
    found = [block for text in PAGES.values()
             for block in re.findall(r"(<!-- an API sketch[^\n]*\n)?```python\n(.*?)```", text, flags=re.S)]
    return [code for sketch, code in found if not sketch]


@pytest.mark.parametrize("code", _python_blocks(), ids=lambda code: code.splitlines()[0][:40])
def test_python_examples_run_and_print_what_they_say(code):
    namespace: dict = {}
    checked = 0
    for statement in ast.parse(code).body:
        source = ast.get_source_segment(code, statement)
        lines = code.splitlines()
        line = lines[statement.end_lineno - 1]
        after = lines[statement.end_lineno] if statement.end_lineno < len(lines) else ""
        comment = ""
        if isinstance(statement, ast.Expr):  # the value written after the expression, same line or the next
            comment = line.split("#", 1)[1].strip() if "#" in line else \
                after.strip()[1:].strip() if after.strip().startswith("#") else ""
        if comment.startswith(("{", "[", "(")):
            assert eval(compile(ast.Expression(statement.value), "<README>", "eval"), namespace) == _expected(comment)
            checked += 1
        else:
            exec(compile(ast.Module([statement], []), "<README>", "exec"), namespace)
    assert checked == code.count("# {"), source  # every printed value written in the README was compared


def _shell_commands() -> list[str]:
    commands = []
    for lang, code in BLOCKS:
        if lang != "sh":
            continue
        for line in code.splitlines():
            command = line.split("  #", 1)[0].strip()
            if re.match(r"^(\.venv/bin/)?pqlab \w", command) and "[" not in command:
                commands.append(command)
    return commands


@pytest.mark.parametrize("command", _shell_commands())
def test_cheap_shell_examples_run(command, tmp_path):
    """Run from a copy of the repository's params/ (never in the repository: `amort-vectors --out tests/…` would
    rewrite the committed vectors while other tests read them); what a command writes under tests/ must equal the
    committed files."""
    shutil.copytree(REPO / "params", tmp_path / "params")
    argv = command.split()
    argv = [sys.executable, "-m", "pqlab.cli", *argv[1:]]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
    for written in (tmp_path / "tests").rglob("*") if (tmp_path / "tests").exists() else ():
        if written.is_file():
            assert written.read_bytes() == (REPO / written.relative_to(tmp_path)).read_bytes(), written


def test_the_stage_count_is_the_pipelines():
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    claim = re.search(r"^(\w+) DVC stages", README, flags=re.M)
    assert claim
    count = claim.group(1)
    assert (int(count) if count.isdigit() else NUMBERS[count.lower()]) == len(stages)
    for name in stages:
        assert f"`{name}`" in README, f"README does not mention stage {name}"


@pytest.mark.slow
def test_the_dvc_experiment_override_runs_as_written(tmp_path):
    """`dvc exp run -S 'params/params.yaml:profile=paper'` in a scratch repository: DVC rewrites params.yaml, the
    pipeline's first stage (resolve_params) resolves it, and every stage's block of params/resolved.yaml is the paper
    profile's (the notebooks read their profile from the file); the form without the file name is the one DVC
    refuses."""
    from pqlab import params
    from pqlab.pipeline import registry
    from pqlab.studies import resolve_params

    command = next(line.split("#")[0].strip() for lang, code in BLOCKS if lang == "sh"
                   for line in code.splitlines() if line.startswith("dvc exp run -S"))
    override = re.search(r"-S '([^']+)'", command).group(1)
    for name in ("params", "notebooks", ".dvc", "lib"):
        shutil.copytree(REPO / name, tmp_path / name,
                        ignore=shutil.ignore_patterns("tmp", "cache", "__pycache__", "*.so", "*.egg-info"))
    shutil.copy(REPO / "dvc.yaml", tmp_path / "dvc.yaml")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for git in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "scratch"]):
        subprocess.run(["git", *git], cwd=tmp_path, check=True, env=env, capture_output=True)
    dvc = Path(sys.executable).parent / "dvc"
    done = subprocess.run([dvc, "exp", "run", "-S", override, registry.RESOLVE_STAGE], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    resolved = yaml.safe_load((tmp_path / "params" / resolve_params.RESOLVED).read_text())
    paper = resolve_params.blocks(params.load(REPO / "params" / "params.yaml", "paper"))
    assert resolved == paper and {block.get("profile") for block in resolved.values()} == {"paper", None}
    wrong = subprocess.run([dvc, "exp", "run", "--dry", "-S", "profile=paper"], cwd=tmp_path, capture_output=True,
                           text=True, timeout=300, env=env)
    assert wrong.returncode != 0 and "not in struct" in wrong.stderr + wrong.stdout


def test_the_readme_is_an_entry_point_with_a_table_of_contents():
    """Under about 25 KB, its sections listed at the top; the detail lives in docs/ and the measured times in
    benchmarks/results/recorded/timings.json, which must stay valid JSON with the machine it was measured on."""
    assert len(README.encode()) < 25_000
    headings = re.findall(r"^## (.+)$", README, flags=re.M)
    assert headings[0] == "Contents"
    contents = README.split("## Contents", 1)[1].split("\n## ", 1)[0]
    assert re.findall(r"^- \[(.+?)\]\(#", contents, flags=re.M) == headings[1:]
    timings = json.loads((REPO / "benchmarks" / "results" / "recorded" / "timings.json").read_text())
    assert timings["machine"]["cores"] and timings["entries"]


def test_the_docs_index_lists_every_page():
    index = (REPO / "docs" / "index.md").read_text()
    listed = set(re.findall(r"\]\(([\w-]+\.md)\)", index))
    assert {path.name for path in (REPO / "docs").glob("*.md")} - {"index.md"} <= listed
