"""Load the CUDA sources through CuPy, once per process, templates instantiated by name.

Each .cu file becomes one cupy.RawModule compiled with every name expression the catalogue asks of
it (all its variants x dtypes); kernels are looked up by their name expression.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from harness.compile import cuda_source
from harness.compile.nvrtc import CudaCompileError
from harness.core import catalogue

if TYPE_CHECKING:
    import cupy

OPTIONS = ("-std=c++17",)


@cache
def module(source: str | Path, extra: tuple[str, ...] = ()) -> cupy.RawModule:
    """The compiled module of one .cu file: every name expression the catalogue asks of it, plus
    `extra` ones (the experiments instantiate kernels no variant uses; a source given as a Path,
    an experiment's own .cu file, has only those)."""
    import cupy

    code = cuda_source.expand(source)
    asked = [] if isinstance(source, Path) else catalogue.name_expressions(source)
    exprs = list(dict.fromkeys([*asked, *extra]))
    mod = cupy.RawModule(code=code, options=OPTIONS, name_expressions=exprs)
    try:
        mod.compile()
    except cupy.cuda.compiler.CompileException as e:
        name = Path(source).name
        raise CudaCompileError(f"NVRTC (through CuPy) could not compile {name}:\n{e}") from None
    return mod


def kernel(variant: catalogue.Variant, dtype: str) -> cupy.RawKernel:
    if dtype not in variant.dtypes:
        raise ValueError(f"{variant.id} supports {', '.join(variant.dtypes)}, not {dtype}")
    return module(variant.source).get_function(variant.name_expression(dtype))


def kernel_by_expression(source: str | Path, expr: str) -> cupy.RawKernel:
    """Any instantiation of a template in `source` (a cuda_kernels/ name or a Path), e.g.
    "reduce_fastest<float, 256, 4, 0>"."""
    return module(source, (expr,)).get_function(expr)
