"""The optional native launcher on any machine: its C++ source builds against this torch where a
C++ compiler and ninja are installed (skipped, with the reason, where they are not), its launch
refuses a bad parameter layout, and it is off unless REDUCE_LADDER_NATIVE asks for it. Its sums
on the GPU: tests/test_gpu_native.py."""

import ctypes.util
import shutil

import pytest
import torch
from torch.utils import cpp_extension

from harness.launch import native


def test_it_is_off_unless_asked_for(monkeypatch):
    for value, on in (("", False), ("0", False), ("1", True)):
        monkeypatch.setenv(native.ENV, value)
        assert native.requested() is on
    monkeypatch.delenv(native.ENV)
    assert not native.requested()


def test_the_source_builds_and_refuses_a_bad_parameter_layout():
    if shutil.which("c++") is None or not cpp_extension.is_ninja_available():
        pytest.skip("the launcher needs a C++ compiler (c++) and ninja (pip install ninja)")
    module = native.load()
    assert native.build_dir().is_dir()
    proto = torch.empty(1)
    if ctypes.util.find_library("cuda") is None:  # no driver library: said when the launch is made
        with pytest.raises(RuntimeError, match="libcuda"):
            module.Launch(0, proto)
        return
    launch = module.Launch(0, proto)
    with pytest.raises(ValueError, match="bad parameter layout"):  # x slot past the parameters
        launch.add(1, 1, 32, 0, [0, 0, 5], [7], [0], 1)
    with pytest.raises(ValueError, match="bad parameter layout"):  # an offset per x slot
        launch.add(1, 1, 32, 0, [0, 0, 5], [0], [], 1)
    with pytest.raises(ValueError, match="bad parameter layout"):  # more than 16 parameters
        launch.add(1, 1, 32, 0, [0] * 17, [0], [0], 1)
    launch.add(1, 1, 32, 0, [0, 0, 5], [0], [0], -1)  # a step that writes no output
