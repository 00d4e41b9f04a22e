"""Every CUDA source compiles with NVRTC for sm_80 and sm_90, without local memory (no GPU)."""

import pytest

from harness.compile import cuda_source, nvrtc
from harness.core import catalogue
from tests.test_catalogue import cuda_sources

pytestmark = pytest.mark.skipif(
    not nvrtc.available(), reason="libnvrtc not installed (pip install -e '.[cuda13]')"
)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("source", cuda_source.sources())
def test_source_compiles_without_spills(source, arch):
    r = nvrtc.compile_file(source, arch)
    exprs = catalogue.name_expressions(source)
    assert set(r.lowered) == set(exprs)
    assert len(r.resources) == len(set(r.lowered.values())), r.log
    for name, res in r.resources.items():
        assert res.spill_store_bytes == 0 and res.spill_load_bytes == 0, name
        assert res.stack_bytes == 0, f"{name} uses a {res.stack_bytes}-byte stack frame"
        assert res.registers > 0


def test_every_catalogue_source_exists():
    assert set(cuda_sources()) <= set(cuda_source.sources())


def test_compile_errors_name_the_file_and_line():
    code = cuda_source.expand("sequential.cu") + "\n__global__ void broken() { int x = ; }\n"
    with pytest.raises(nvrtc.CudaCompileError) as e:
        nvrtc.compile_source(code, "sequential.cu", [], "sm_90")
    msg = str(e.value)
    assert "sequential.cu" in msg and "error" in msg


def test_include_expansion_keeps_line_numbers():
    text = cuda_source.expand("interleaved.cu")
    assert '#line 1 "common.cuh"' in text
    assert "#include" not in text
