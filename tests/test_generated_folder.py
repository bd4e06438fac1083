"""Never delete what pqlab did not write (issue 24, item 3): ``pqlab amort-vectors --out D`` removes only files its
previous run recorded in D's manifest.json; a foreign file matching the vector names stops it unless --force, and
is never removed."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from pqlab import cli, io
from pqlab.errors import OutputError
from pqlab.generated import replace_files, signed
from tests.conftest import VECTORS

COMMITTED = VECTORS / "amort_differential"
PATTERN = re.compile(r"^\d{3}_[a-z0-9_]+\.json$")


def _contents(folder: Path) -> dict[str, bytes]:
    """Every file of ``folder`` (its subfolders, e.g. the committed extension/ set, are another set's)."""
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def _manifest(*names: str) -> str:
    """A manifest as pqlab writes it: with its content digest (generated.signed)."""
    return json.dumps(signed({"files": list(names)})) + "\n"


def test_a_foreign_file_in_amort_vectors_out_is_untouched(tmp_path, capsys):
    out = tmp_path / "vectors"
    shutil.copytree(COMMITTED, out)  # a previous run's folder, with its manifest.json
    mine = out / "999_my_notes.json"
    mine.write_text('{"mine": true}\n')
    before = _contents(out)

    assert cli.main(["amort-vectors", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("pqlab: error [OUTPUT_UNWRITABLE]: --out ")
    assert "999_my_notes.json" in err[0] and "--force" in err[0]
    assert _contents(out) == before  # nothing written, nothing removed

    assert cli.main(["amort-vectors", "--out", str(out), "--force"]) == 0
    assert mine.read_text() == '{"mine": true}\n'
    after = _contents(out)  # the same seed writes the same files; the manifest records this --out
    assert {n: b for n, b in after.items() if n != "manifest.json"} == \
        {n: b for n, b in before.items() if n != "manifest.json"}
    assert io.read_json(out / "manifest.json")["files"] == json.loads(before["manifest.json"])["files"]


def test_a_file_with_a_vector_name_that_pqlab_did_not_write_is_not_overwritten(tmp_path, capsys):
    out = tmp_path / "vectors"
    out.mkdir()
    theirs = out / "001_device_two_tags_tag8.json"
    theirs.write_text("a user's file\n")
    assert cli.main(["amort-vectors", "--out", str(out)]) == 2
    assert "001_device_two_tags_tag8.json" in capsys.readouterr().err
    assert theirs.read_text() == "a user's file\n" and sorted(p.name for p in out.iterdir()) == [theirs.name]


def test_a_rerun_removes_only_the_vectors_its_previous_manifest_recorded(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    replace_files(out, {"001_a.json": "a\n", "002_b.json": "b\n", "manifest.json": _manifest("001_a.json",
                                                                                           "002_b.json")},
                  manifest="manifest.json", pattern=PATTERN)
    (out / "notes.txt").write_text("not a vector name\n")
    replace_files(out, {"001_a.json": "a2\n", "manifest.json": _manifest("001_a.json")},
                  manifest="manifest.json", pattern=PATTERN)
    assert sorted(p.name for p in out.iterdir()) == ["001_a.json", "manifest.json", "notes.txt"]
    assert (out / "001_a.json").read_text() == "a2\n"


def test_an_interrupted_run_is_finished_by_the_next_one(tmp_path):
    """Files a killed run wrote before its manifest are what the rerun writes, so they are not foreign."""
    out = tmp_path / "out"
    out.mkdir()
    texts = {"001_a.json": "a\n", "002_b.json": "b\n", "manifest.json": _manifest("001_a.json", "002_b.json")}
    (out / "001_a.json").write_text("a\n")  # written, then killed before 002 and the manifest
    assert len(replace_files(out, texts, manifest="manifest.json", pattern=PATTERN)) == 3


def test_a_manifest_that_is_not_pqlabs_owns_nothing(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "manifest.json").write_text('{"files": ["../../etc/passwd"]}\n')
    with pytest.raises(OutputError, match=r"holds 1 file\(s\) pqlab did not write here \(manifest.json"):
        replace_files(out, {"001_a.json": "a\n", "manifest.json": _manifest("001_a.json")},
                      manifest="manifest.json", pattern=PATTERN)


def test_a_hand_made_manifest_listing_a_users_file_deletes_nothing(tmp_path, capsys):
    """Issue 36: a manifest.json without pqlab's digest listing a user's file made `pqlab amort-vectors` delete it
    (the list was trusted). Now such a manifest owns nothing: the folder is foreign, one line, nothing removed."""
    out = tmp_path / "vectors"
    out.mkdir()
    (out / "500_my_vector.json").write_text('{"mine": true}\n')
    (out / "manifest.json").write_text(json.dumps({"files": ["500_my_vector.json"]}) + "\n")
    before = _contents(out)
    assert cli.main(["amort-vectors", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("pqlab: error [OUTPUT_UNWRITABLE]: --out ")
    assert "500_my_vector.json" in err[0] and "manifest.json" in err[0]
    assert _contents(out) == before


def test_a_manifest_whose_digest_does_not_match_owns_nothing(tmp_path, capsys):
    """A pqlab manifest edited to list another file (its digest no longer matches) is not pqlab's either."""
    out = tmp_path / "vectors"
    shutil.copytree(COMMITTED, out, ignore=shutil.ignore_patterns("extension"))
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["files"].append("500_my_vector.json")
    (out / "manifest.json").write_text(json.dumps(manifest))
    (out / "500_my_vector.json").write_text("mine\n")
    assert cli.main(["amort-vectors", "--out", str(out)]) == 2
    assert "500_my_vector.json" in capsys.readouterr().err
    assert (out / "500_my_vector.json").read_text() == "mine\n"


def test_the_manifest_records_the_out_folder_it_was_written_to(tmp_path):
    """Issue 36: the manifest said `--out tests/vectors/amort_differential` whatever --out was."""
    out = tmp_path / "elsewhere"
    assert cli.main(["amort-vectors", "--set", "extension", "--out", str(out)]) == 0
    manifest = io.read_json(out / "manifest.json")  # carries pqlab's digest, so the checked reader takes it
    assert manifest["command"] == f"pqlab amort-vectors --set extension --out {out} --seed {manifest['seed']}"
