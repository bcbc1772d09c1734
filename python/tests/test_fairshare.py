"""fairshare from Python against the ``fairshare`` command: the same inputs give the same JSON,
to the byte, and bad inputs raise ``fairshare.InputError`` saying where and what."""

from __future__ import annotations

import json
import subprocess

import pytest

import fairshare
from conftest import ROOT, cli
from fairshare import _native

INSTANCES = sorted((ROOT / "examples" / "allocate").glob("*.json"))


def test_the_examples_are_there():
    assert len(INSTANCES) >= 4, INSTANCES


@pytest.mark.parametrize("path", INSTANCES, ids=lambda p: p.name)
def test_allocate_is_the_cli_to_the_byte(path):
    printed = subprocess.run(
        [cli(), "allocate", path, "--json"], check=True, capture_output=True, text=True
    ).stdout
    assert _native.allocate_json(path.read_text()) + "\n" == printed
    assert fairshare.allocate(path) == json.loads(printed)
    assert fairshare.allocate(json.loads(path.read_text())) == json.loads(printed)


@pytest.mark.parametrize("path", INSTANCES, ids=lambda p: p.name)
def test_the_skip_rule_is_the_cli_s(path):
    printed = subprocess.run(
        [cli(), "allocate", path, "--json", "--rule", "skip"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert fairshare.allocate(path, rule="skip") == json.loads(printed)


def test_policies_list_the_registry():
    policies = {p["name"]: p for p in fairshare.policies()}
    for name in ["fifo", "drf", "weighted-drf", "asset", "sdrf", "fairshare", "kueue-afs"]:
        assert name in policies, name
    sdrf = policies["sdrf"]
    assert "replay" in sdrf["engines"]
    assert [p["key"] for p in sdrf["params"]][:2] == ["delta", "epsilon"]
    assert all(isinstance(p["about"], str) and p["about"] for p in policies.values())
    function = next(p for p in policies["fairshare"]["params"] if p["key"] == "function")
    assert "htcondor[:floor=N]" in function["choices"], function
    assert policies["heaviness"]["engines"] == ["runtime"]


def test_a_bad_instance_is_an_input_error_that_says_what():
    with pytest.raises(fairshare.InputError) as error:
        fairshare.allocate({"policy": "drf", "capacity": {"cpu": 1}, "users": []})
    assert "missing field `mode`" in str(error.value), error.value
    assert isinstance(error.value, ValueError)


def test_a_bad_file_is_an_input_error_that_names_it(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text("{ not json")
    with pytest.raises(fairshare.InputError, match=str(broken)) as caught:
        fairshare.allocate(broken)
    assert caught.value.file == str(broken)
    with pytest.raises(fairshare.InputError, match="cannot read it"):
        fairshare.allocate(tmp_path / "missing.json")


def test_an_unknown_rule_names_the_choices():
    with pytest.raises(fairshare.InputError, match="head-of-line or skip"):
        fairshare.allocate(INSTANCES[0], rule="sideways")


def test_the_package_shows_its_version_and_only_its_own_names():
    from importlib import metadata

    assert fairshare.__version__ == metadata.version("fairshare")
    public = [name for name in dir(fairshare) if not name.startswith("_")]
    assert sorted(public) == sorted(n for n in fairshare.__all__ if not n.startswith("_")), public



def test_importing_from_the_source_folder_says_so():
    import sys

    run = subprocess.run(
        [sys.executable, "-c", "import fairshare"], cwd=ROOT / "python", capture_output=True, text=True
    )
    assert run.returncode != 0 and "package's source folder" in run.stderr, run.stderr
