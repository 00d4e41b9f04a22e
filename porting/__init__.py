"""The porting tools, apart from the runtime package: the compiler census (what NVRTC and Triton
make of every variant, counted in the SASS and PTX, no GPU needed) and the porting guide built
from it and from the committed results (docs/porting.md and its appendices).

May import: harness (any layer), triton_kernels. Never the reverse: no module of harness or
triton_kernels imports porting, except the one lazy entry of `reduce-ladder inspect`
(harness.cli.census.porting_entry, which imports porting.inspect_cmd when the command runs);
tests/test_layout.py holds both rules.

    census         the census rows, the selection, the JSON document (docs/census-sm_90.json)
    sass           cuobjdump / ptxas output counted: registers, shared memory, opcodes
    triton_compile Triton kernels compiled for an explicit target, in a worker process if needed
    inspect_cmd    the work of `reduce-ladder inspect`: the census table, --write-doc
    doc            the guide, docs/porting.md, and its appendix: the templates guide.md and
                   appendix.md (Jinja2) rendered with the data below
    stages         the stages of every family, the committed census and results, measured lines
    kernel_sources the kernels' text, read from cuda_kernels/ and triton_kernels/, each printed once
    lessons        each stage's lesson and the counter notes' words (porting/lessons.md)
    hardware       the Nsight Compute counters per stage (results/*/profile.json)
    sanitizer      what compute-sanitizer found (results/*/sanitize.json)

What torch.compile writes for the same sum (docs/porting-inductor.md, linked from the guide) is
experiments/inductor_code's page, rendered there from its captures.
"""
