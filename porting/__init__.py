"""The porting tools, apart from the runtime package: the compiler census (`reduce-ladder
inspect`: what NVRTC and Triton make of every variant, counted in the SASS and PTX, no GPU
needed; census, sass, triton_compile, inspect_cmd) and the porting guide built from it and from
the committed results (docs/porting.md and its appendix: doc, with kernel_sources and
measured). What torch.compile writes for the same sum (docs/porting-inductor.md) is
experiments/inductor_code's page.

May import: harness (any layer), triton_kernels. Never the reverse: no module of harness or
triton_kernels imports porting, except the one lazy entry of `reduce-ladder inspect`
(harness.cli.census.porting_entry, which imports porting.inspect_cmd when the command runs);
tests/test_layout.py holds both rules.
"""
