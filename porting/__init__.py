"""The porting tools, apart from the runtime package: the compiler census (what NVRTC and Triton
make of every variant, counted in the SASS and PTX, no GPU needed) and the porting guide built
from it and from the committed results (docs/porting.md and its appendix).

May import: harness (any layer), triton_kernels. Never the reverse: no module of harness or
triton_kernels imports porting, except the one lazy entry of `reduce-ladder inspect`
(harness.cli.census.porting_entry, which imports porting.inspect_cmd when the command runs);
tests/test_layout.py holds both rules.

    census, sass, triton_compile   the compiler census: rows and document; SASS / PTX counting;
                                   Triton compiled for an explicit target (a worker process)
    inspect_cmd                    the work of `reduce-ladder inspect` (the census, --write-doc)
    doc                            the guide and its appendix: the Jinja2 templates guide.md,
                                   appendix.md, shared.md and lessons.md rendered with what
                                   stages (the catalogue's stages, the census), kernel_sources
                                   and measured (the committed results, counters, sanitizer) read

What torch.compile writes for the same sum (docs/porting-inductor.md, linked from the guide) is
experiments/inductor_code's page, rendered there from its captures.
"""
