"""Usage errors of the CLI, on any machine: exit 2 with a message that says why, before any work
(nothing runs, nothing is written)."""

import json
import sys
from pathlib import Path

import pytest

from harness.cli.common import UsageError, check_writable
from harness.cli.main import main
from harness.compile import nvrtc
from harness.core import catalogue, device


def _err(capsys) -> str:
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return captured.err


# -- a named variant with a dtype it does not support -------------------------------------------


@pytest.mark.parametrize("command", ["check", "run"])
def test_named_variant_with_unsupported_dtype_names_its_dtypes(command, capsys):
    assert main([command, "--variants", "triton/tile-256", "--dtype", "float64"]) == 2
    err = _err(capsys)
    assert "triton/tile-256 supports float32, int32, not float64" in err


def test_inspect_named_variant_with_unsupported_dtype(capsys):
    assert main(["inspect", "--variants", "cuda/v3-sequential", "--dtype", "float64"]) == 2
    assert "float32, int32" in _err(capsys)


# -- selections that leave nothing to check -----------------------------------------------------


@pytest.mark.parametrize("option", ["--study", "--seed"])
def test_study_001_points_to_the_host_command(option, capsys):
    assert main(["check", option, "001"]) == 2
    assert "reduce-ladder host" in _err(capsys)


def test_study_with_none_of_its_variants_named(capsys):
    assert main(["check", "--study", "004", "--variants", "cuda/v3-sequential"]) == 2
    assert "study 004" in _err(capsys)


def test_study_is_shown_in_help_and_so_is_its_old_name_seed(capsys):
    assert main(["run", "--help"]) == 0
    text = capsys.readouterr().out
    assert "--study" in text and "--seed NOTE" in text and "old name of --study" in text


# -- --json paths, checked before running -------------------------------------------------------


def test_missing_json_folders_are_created_when_written(tmp_path, capsys):
    target = tmp_path / "no-such-folder" / "deeper" / "run.json"
    rc = main(["check", "--variants", "triton/tile-256", "--sizes", "3", "--json", str(target)])
    assert rc == 0
    # the document of the run that happened: the CPU path's, or a GPU check
    assert json.loads(target.read_text())["mode"] == ("check" if device.gpu_available() else "cpu")
    assert "folder" not in capsys.readouterr().out  # nothing said about it


@pytest.mark.parametrize(
    "argv",
    [
        ["host"],
        ["inspect", "--variants", "cuda/v3-sequential"],
        ["fastest-bench"],
        ["ablation"],
        ["run", "--sizes", "2^24"],
    ],
)
def test_every_command_checks_its_json_path_first(argv, tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    target = blocker / "missing" / "out.json"
    assert main([*argv, "--json", str(target)]) == 2
    assert f"{blocker} is a file, not a folder" in _err(capsys)
    assert blocker.read_text() == ""


def test_checking_a_missing_folder_leaves_nothing_behind(tmp_path):
    check_writable(str(tmp_path / "a" / "b" / "run.json"))
    check_writable(str(tmp_path / "c" / "d"), "--out", folder=True)
    assert list(tmp_path.iterdir()) == []


def test_inspect_write_doc_path_is_checked(tmp_path, capsys):
    (tmp_path / "f").write_text("")
    assert main(["inspect", "--write-doc", str(tmp_path / "f" / "porting.md")]) == 2
    assert "is a file, not a folder" in _err(capsys)


def test_json_path_that_is_a_folder(tmp_path, capsys):
    assert main(["check", "--json", str(tmp_path)]) == 2
    assert "is a folder" in _err(capsys)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc (Linux)")
def test_json_path_where_nothing_can_be_created(capsys):
    # /proc exists and is a folder, but no file can be created in it, not even by root.
    assert main(["check", "--json", "/proc/reduce-ladder-test.json"]) == 2
    assert "cannot write" in _err(capsys)


def test_check_writable_leaves_no_file_behind_and_existing_files_untouched(tmp_path):
    fresh = tmp_path / "fresh.json"
    check_writable(str(fresh))
    assert not fresh.exists()
    kept = tmp_path / "kept.json"
    kept.write_text("old")
    check_writable(str(kept))
    assert kept.read_text() == "old"
    with pytest.raises(UsageError, match="is a file, not a folder"):
        check_writable(str(kept / "x.json"))
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")  # a folder's name taken by a broken link
    with pytest.raises(UsageError, match="is a file, not a folder"):
        check_writable(str(dangling / "x.json"))


# -- numbers and architectures ------------------------------------------------------------------


@pytest.mark.parametrize("reps", ["0", "-5", "two"])
def test_reps_must_be_a_positive_integer(reps, capsys):
    assert main(["run", "--reps", reps]) == 2
    assert "--reps" in _err(capsys)


def test_host_reps_must_be_positive(capsys):
    assert main(["host", "--reps", "0"]) == 2
    assert "--reps" in _err(capsys)


def test_check_has_no_timing_reps(capsys):
    assert main(["check", "--help"]) == 0
    assert "--reps" not in capsys.readouterr().out
    assert main(["check", "--reps", "3"]) == 2
    assert "unrecognized arguments: --reps 3" in _err(capsys)


def test_inspect_unknown_architecture_lists_the_valid_ones(capsys):
    assert main(["inspect", "--arch", "sm_999"]) == 2
    err = _err(capsys)
    assert "sm_999" in err
    if nvrtc.available():
        assert "sm_80" in err and "sm_90" in err


def test_inspect_accepts_architecture_suffixes():
    from harness.cli.census import check_arch

    if not nvrtc.available():
        pytest.skip("needs the NVRTC wheel")
    check_arch("sm_90")
    check_arch("sm_90a")
    with pytest.raises(UsageError, match="valid: sm_"):
        check_arch("sm_91")


# -- ids: suggestions instead of 52 ids ---------------------------------------------------------


def test_unknown_variant_suggests_the_close_match(capsys):
    assert main(["check", "--variants", "v3-sequential"]) == 2
    err = _err(capsys)
    assert "did you mean cuda/v3-sequential?" in err
    assert "peer/copy" not in err  # not the whole list


def test_typo_in_a_variant_id_is_suggested(capsys):
    assert main(["check", "--variants", "triton/tile256"]) == 2
    assert "did you mean triton/tile-256" in _err(capsys)


def test_unknown_variant_with_nothing_close_lists_every_id(capsys):
    assert main(["check", "--variants", "qqqq"]) == 2
    err = _err(capsys)
    assert all(i in err for i in catalogue.BY_ID)


def test_suggestions_prefer_the_same_name_under_a_backend():
    valid = list(catalogue.BY_ID)
    assert catalogue.close_ids("tile-256", valid)[0] == "triton/tile-256"
    assert catalogue.close_ids("fastest", valid)[:2] == ["cuda/fastest", "triton/fastest"]


def test_version_is_the_projects(capsys):
    import tomllib
    from pathlib import Path

    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    expected = tomllib.loads(pyproject.read_text())["project"]["version"]
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"reduce-ladder {expected}"


def test_run_is_the_default_command_and_bad_options_exit_2(capsys):
    assert main(["--no-such-option"]) == 2
    assert "unrecognized arguments" in _err(capsys)


# -- one rule for every output folder ------------------------------------------------------------


def test_report_out_that_is_a_file_says_so(tmp_path, capsys):
    (tmp_path / "README.md").write_text("keep")
    run = "tests/data/synthetic_bench.json"
    assert main(["report", run, "--out", str(tmp_path / "README.md")]) == 2
    err = _err(capsys)
    assert "README.md is a file, not a folder" in err and "File exists" not in err
    assert (tmp_path / "README.md").read_text() == "keep"


def test_distributed_render_creates_its_missing_out_folder(tmp_path, capsys):
    # the committed several-GPU run, rendered again into folders that do not exist yet
    doc = Path(__file__).resolve().parents[1] / "results" / "nvidia-h200-x4" / "distributed.json"
    out = tmp_path / "a" / "b"
    assert main(["distributed", "--render", str(doc), "--out", str(out)]) == 0
    assert (out / "distributed.md").is_file()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_json_to_a_full_device_is_refused_before_the_work(capsys):
    rc = main(["check", "--variants", "triton/tile-256", "--sizes", "3", "--json", "/dev/full"])
    assert rc == 2
    captured = capsys.readouterr()
    assert "No space left on device" in captured.err and captured.out == ""


def test_a_write_that_fails_after_the_work_is_exit_1(tmp_path, capsys, monkeypatch):
    """The disk fills between the check before the work and the write after it: the file's own
    write fails (whichever runner writes it: the CPU path here, the suites' runner on a GPU)."""
    target = tmp_path / "run.json"
    write_text = Path.write_text

    def full(self, *args, **kwargs):
        if self == target:
            raise OSError(28, "No space left on device")
        return write_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", full)
    rc = main(["check", "--variants", "triton/tile-256", "--sizes", "3", "--json", str(target)])
    assert rc == 1
    err = _err(capsys)
    assert f"cannot write {target}: No space left on device" in err
