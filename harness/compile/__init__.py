"""CUDA sources and their compilation (NVRTC, CuPy modules). The compiler census built on them
lives in the porting package (porting.census), outside the runtime package.
May import: harness.core.
"""
