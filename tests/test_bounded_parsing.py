"""Bounded parsing (issue 24, items 2, 7 and 9): alias bombs, huge documents, 5,001-digit integers, --configs files
over the entry count, and names with control characters or over the length limit are each one line, at once.

The alias-bomb tests run the real CLI in a child process that reports its CPU time and peak resident memory
(VmHWM): the issue's bound is "under a second with memory under 100 MB". CPU time, not wall time, so
a busy machine does not make the test flaky; the refusal itself takes milliseconds. The child also runs under a
1 GiB address-space limit, so a regression fails the test instead of exhausting the machine.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pqlab import bounded, cli, params
from pqlab.errors import ParamsError
from pqlab.report import load_reference
from pqlab.transport import case_inputs
from tests import faults
from tests.conftest import REPO

# The CLI in a child that reports its own peak resident memory (VmHWM, which starts afresh at exec: the kernel's
# ru_maxrss of a child would include the forking test process's) and CPU time, under a 1 GiB address-space limit.
MEASURED_CLI = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
from pqlab import cli
try:
    code = cli.main(sys.argv[2:])
finally:
    status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    with open(sys.argv[1], "w") as report:
        report.write(f"{int(status['VmHWM'].split()[0])} {usage.ru_utime + usage.ru_stime}")
sys.exit(code)
"""
ENTRY = {"sizes": [300, 700, 600, 60], "device_compute_ms": [1.0, 2.0]}


def alias_bomb(levels: int = 9, fan_out: int = 10) -> str:
    """``levels`` levels of ``fan_out`` aliases each: fan_out**levels leaves from a few hundred bytes."""
    lines = [f"a0: &a0 [{', '.join(['x'] * fan_out)}]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * fan_out)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def run_measured(args: list[str], report: Path) -> tuple[int, str, float, float]:
    """(exit status, stderr, CPU seconds, peak RSS in MB) of ``pqlab args`` in a child process."""
    done = subprocess.run([sys.executable, "-c", MEASURED_CLI, str(report), *args], capture_output=True, text=True,
                          timeout=120, check=False)
    peak_kib, cpu_s = report.read_text().split()
    return done.returncode, done.stderr, float(cpu_s), int(peak_kib) / 1024


@pytest.fixture
def small_project(tmp_path) -> Path:
    return faults.make_project(tmp_path / "project")


def _assert_refused_at_once(project: Path, args: list[str], *needles: str) -> None:
    code, err, cpu_s, rss_mb = run_measured(args, project / "measured.txt")
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert lines[0].startswith("pqlab: error [PARAMS_INVALID]: ") and all(n in lines[0] for n in needles), lines[0]
    assert cpu_s < 1.0, f"the refusal took {cpu_s:.2f} s of CPU (interpreter start included)"
    assert rss_mb < 100, f"peak resident memory {rss_mb:.0f} MB"


def test_an_alias_bomb_in_params_yaml_is_refused_in_under_a_second_and_100_mb(small_project):
    path = small_project / "params" / "params.yaml"
    path.write_text(path.read_text() + alias_bomb())
    _assert_refused_at_once(small_project, ["params", "--params", str(path)], str(path), "aliases expand to 12,345,6",
                            "at most 100,000")


def test_an_alias_bomb_in_a_configs_file_is_refused_in_under_a_second_and_100_mb(small_project, tmp_path):
    bomb = tmp_path / "configs.yaml"
    bomb.write_text(alias_bomb())
    params_file = str(small_project / "params" / "params.yaml")
    _assert_refused_at_once(small_project, ["transport", "--params", params_file, "--configs", str(bomb), "--workers",
                                            "1", "--quiet"], str(bomb), "aliases expand to")


def test_aliases_within_the_budget_still_work(tmp_path):
    reference = load_reference(REPO / "params" / "paper_reference.yaml")  # names its bands with aliases
    assert reference.quantities
    path = tmp_path / "ok.yaml"
    path.write_text("base: &b {a: 1, b: [1, 2]}\nfirst: *b\nsecond: *b\n")
    assert bounded.load_yaml(path) == {"base": {"a": 1, "b": [1, 2]}, "first": {"a": 1, "b": [1, 2]},
                                       "second": {"a": 1, "b": [1, 2]}}


def test_a_recursive_alias_is_one_line(tmp_path):
    path = tmp_path / "loop.yaml"
    path.write_text("a: &a [1, *a]\n")
    with pytest.raises(ParamsError, match="refers to a node that contains it"):
        bounded.load_yaml(path)


def test_a_document_over_the_size_limit_is_refused_before_it_is_parsed(small_project, capsys):
    path = small_project / "params" / "params.yaml"
    path.write_text(path.read_text() + "# padding\n" * (bounded.MAX_DOCUMENT_BYTES // 10 + 1))
    assert cli.main(["params", "--params", str(path)]) == 2
    line = capsys.readouterr().err.strip()
    assert line.startswith("pqlab: error [PARAMS_INVALID]: ") and "at most 2.00 MiB" in line and str(path) in line


def test_a_5001_digit_integer_in_params_is_one_line(small_project, capsys):
    path = small_project / "params" / "params.yaml"
    path.write_text(path.read_text().replace("seed: ", f"seed: {'9' * 5001}\nx_unused: ", 1))
    assert cli.main(["params", "--params", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("pqlab: error [PARAMS_INVALID]: ")
    assert "has 5,001 digits; at most 100" in err[0] and "line " in err[0]


def test_a_5001_digit_integer_in_a_json_configs_file_is_one_line(tmp_path):
    path = tmp_path / "configs.json"
    path.write_text('{"X": {"sizes": [' + "9" * 5001 + ', 2, 3, 4]}}')
    with pytest.raises(ParamsError, match="5,001 digits; at most 100"):
        case_inputs.load_configs(path)


def test_a_configs_file_over_the_entry_count_is_refused(tmp_path):
    path = tmp_path / "configs.yaml"
    path.write_text("".join(f"c{i}: {{sizes: [300, 700, 600, 60]}}\n" for i in range(case_inputs.MAX_CONFIGS + 1)))
    assert path.stat().st_size < case_inputs.MAX_CONFIGS_BYTES  # the count, not the size, refuses this one
    with pytest.raises(ParamsError, match="holds 1,001 configurations; at most 1,000"):
        case_inputs.load_configs(path)


def test_a_75000_entry_configs_file_is_refused_by_its_size(small_project, tmp_path):
    path = tmp_path / "configs.yaml"
    path.write_text("".join(f"cfg_{i}: {{sizes: [300, 700, 600, 60], device_compute_ms: [1.0, 2.0]}}\n"
                            for i in range(75_000)))
    params_file = str(small_project / "params" / "params.yaml")
    _assert_refused_at_once(small_project, ["transport", "--params", params_file, "--configs", str(path), "--workers",
                                            "1", "--quiet"], str(path), "at most 256.0 KiB")


def test_a_configs_run_shows_its_progress(small_project, tmp_path, capsys):
    path = tmp_path / "configs.json"
    path.write_text(json.dumps({"first": ENTRY, "second": ENTRY | {"sizes": [320, 1700, 900, 60]}}))
    assert cli.main(["transport", "--params", str(small_project / "params" / "params.yaml"), "--profile", "smoke",
                     "--configs", str(path), "--workers", "1"]) == 0
    err = capsys.readouterr().err
    assert "thread grid" in err and "paper statistics" in err and "source_accurate statistics" in err


# --- names ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["a\nb", "a\tb", "a\0b", "x" * 65])
def test_a_configuration_name_must_be_short_and_printable(tmp_path, name):
    path = tmp_path / "configs.json"
    path.write_text(json.dumps({name: ENTRY}))
    with pytest.raises(ParamsError) as caught:
        case_inputs.load_configs(path)
    line = str(caught.value)
    assert "\n" not in line and "\t" not in line and "\0" not in line and len(line) < 400
    assert "printable characters only" in line if len(name) < 10 else "at most 64 characters; this one has 65" in line


def test_a_json_configuration_name_over_1024_characters_is_not_called_invalid_yaml(tmp_path):
    path = tmp_path / "configs.json"
    path.write_text(json.dumps({"x" * 1025: ENTRY}))
    with pytest.raises(ParamsError) as caught:
        case_inputs.load_configs(path)
    assert "not valid YAML" not in str(caught.value)
    assert "at most 64 characters; this one has 1,025" in str(caught.value)


def test_a_json_configs_file_at_the_name_limit_is_accepted(tmp_path):
    path = tmp_path / "configs.json"
    path.write_text(json.dumps({"x" * 64: ENTRY, "B with spaces": ENTRY}))
    configs, compute = case_inputs.load_configs(path)
    assert list(configs) == ["x" * 64, "B with spaces"] and compute["B with spaces"] == (1.0, 2.0)


@pytest.mark.parametrize(("section", "name"), [("transport.scenarios", "heavy\twifi"),
                                               ("amortisation.storage", "data\ndisk"),
                                               ("control_cycle.configurations", "a\0b"),
                                               ("transport.scenarios", "x" * 65)])
def test_params_names_must_be_short_and_printable(small_project, section, name):
    path = small_project / "params" / "params.yaml"
    raw = params.load_raw(path)
    top, field = section.split(".")
    value = {"p_good": 0.0} if field == "scenarios" else "data/raw" if field == "storage" else {}
    raw.setdefault(top, {})[field] = {name: value}
    with pytest.raises(ParamsError) as caught:
        params.resolve(raw, "smoke", source=str(path))
    line = str(caught.value)
    assert not any(char in line for char in "\n\t\0") and f"{section}." in line and "(the name)" in line
    assert ("printable characters only" in line) if len(name) < 20 else ("at most 64 characters" in line)
