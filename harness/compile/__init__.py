"""CUDA sources and their compilation (NVRTC, CuPy modules) and the compiler census.
May import: harness.core.
"""
