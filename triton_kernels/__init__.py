"""The Triton kernels: plain `@triton.jit` functions the harness launches with the grid and
meta-parameters of the variant's catalogue record. A twin hands every program the tile(s) its CUDA
twin hands a block, so with integer-valued data their partial sums are equal.

Import note: Triton chooses between compiling and interpreting (TRITON_INTERPRET=1) when a kernel
is decorated, i.e. when this package is first imported. The harness sets the variable before
importing it on a machine without a GPU.
"""
