"""Triton twins of the CUDA ladder stages.

Each kernel hands every program exactly the tile(s) of the input that the twin CUDA kernel hands
its block, so with integer-valued data the per-program partial sums equal the per-block ones.
The kernels are plain `@triton.jit` functions; the harness launches them (grid and meta-parameters
come from the variant's catalogue record).

Import note: Triton chooses between compiling and interpreting (TRITON_INTERPRET=1) when a kernel
is decorated, i.e. when this package is first imported. The harness sets the variable before
importing it on a machine without a GPU.
"""
