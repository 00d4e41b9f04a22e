"""torch.ops.reduce_ladder.sum without a GPU: registered by `import harness` (in a fresh
interpreter, nothing else imported), its fake implementation (shape and dtype under
FakeTensorMode), opcheck, eager results equal to reduce_sum's bits, and
torch.compile(fullgraph=True) with no graph break; with dim (the axis family): torch.sum's shape,
reduce_sum's errors eager and fake, no graph break. The Triton variants run interpreted on CPU
tensors (on the GPU where there is one). The GPU twins: tests/test_gpu_callable.py,
tests/test_gpu_cache_families.py."""

import subprocess
import sys

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

import harness
from harness.check import verify
from harness.core import catalogue, dtypes
from harness.launch import torch_op

VID = "triton/fastest"


def test_import_harness_registers_the_op():
    code = "import torch, harness; op = torch.ops.reduce_ladder.sum; print(op.default._schema.name)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "reduce_ladder::sum"


def test_registered_under_its_name():
    assert torch_op.OP_NAME == "reduce_ladder::sum"
    schema = str(torch.ops.reduce_ladder.sum.default._schema)
    assert schema.startswith("reduce_ladder::sum(Tensor x, str variant=")
    assert torch_op.DEFAULT_VARIANT == "cuda/fastest" and "cuda/fastest" in schema


@pytest.mark.parametrize("vid", ["cuda/fastest", "triton/fastest", "triton/tile-256"])
def test_fake_gives_a_0d_tensor_of_the_sum_dtype(vid):
    v = catalogue.get(vid)
    for name in v.dtypes:
        with FakeTensorMode():
            x = torch.empty(10, 3, dtype=dtypes.torch_dtype(name))
            out = torch.ops.reduce_ladder.sum(x, vid)
        want = v.launch.mapping.sum_dtype(name)
        assert out.shape == () and out.dtype == dtypes.torch_dtype(want), (vid, name)
        if v.launch.mapping.one_launch:
            assert want == dtypes.get(name).sum_dtype


def test_fake_refuses_what_the_variant_does_not_support():
    with FakeTensorMode(), pytest.raises(TypeError, match="unsupported dtype"):
        torch.ops.reduce_ladder.sum(torch.empty(4, dtype=torch.int64), VID)


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_opcheck(dtype, dev):
    x = verify.seed_like_input(1000, dtype, dev)
    torch.library.opcheck(torch.ops.reduce_ladder.sum.default, (x,), {"variant": VID})


@pytest.mark.parametrize("dtype", catalogue.FASTEST_DTYPES)
def test_eager_equals_reduce_sum(dtype, dev):
    x = verify.seed_like_input(3001, dtype, dev)[1:]
    got = torch.ops.reduce_ladder.sum(x, VID)
    assert verify.same_bits(got, harness.reduce_sum(x, VID))
    assert got.dtype == dtypes.get(dtype).sum_torch


def test_compiled_fullgraph_has_no_graph_break(dev):
    x = verify.seed_like_input(2000, "float32", dev)

    def f(t: torch.Tensor) -> torch.Tensor:
        return torch.ops.reduce_ladder.sum(t * 2, VID) + 1

    explained = torch._dynamo.explain(f)(x)
    assert explained.graph_break_count == 0 and explained.graph_count == 1
    compiled = torch.compile(f, fullgraph=True, backend="aot_eager")
    assert verify.same_bits(compiled(x), f(x))


def test_noop_op_dispatches_and_returns_one_0d_tensor(dev):
    x = torch.ones(8, device=dev)
    a, b = torch.ops.reduce_ladder.noop(x), torch.ops.reduce_ladder.noop(x, VID)
    assert a.shape == () and a is b  # made once: the body is a dict get
    with FakeTensorMode():
        assert torch.ops.reduce_ladder.noop(torch.empty(3)).shape == ()


def test_registered_on_the_device_keys_not_through_custom_op():
    handle = torch._C._dispatch_find_schema_or_throw(torch_op.OP_NAME, "")
    assert handle is not None
    for key in torch_op.KEYS:
        assert torch._C._dispatch_has_kernel_for_dispatch_key(torch_op.OP_NAME, key), key
    # custom_op would also have registered an Autograd kernel of its own (Python, per call)
    assert not torch._C._dispatch_has_kernel_for_dispatch_key(torch_op.OP_NAME, "Autograd")


# -- dim: the axis family through the op ---------------------------------------------------------

ROW, COLUMN = "triton/axis-r0-thread-row", "triton/axis-c0-thread-column"


def test_schema_takes_an_optional_dim():
    (dim,) = [a for a in torch.ops.reduce_ladder.sum.default._schema.arguments if a.name == "dim"]
    assert str(dim.type) == "Optional[int]" and dim.default_value is None


@pytest.mark.parametrize(("vid", "dim"), [(ROW, -1), (ROW, 1), (COLUMN, 0), (COLUMN, 1)])
def test_fake_with_dim_gives_torch_sums_shape_in_the_input_dtype(vid, dim):
    for dt in (torch.int32, torch.float32, torch.float16):
        with FakeTensorMode():
            out = torch.ops.reduce_ladder.sum(torch.empty(6, 40, dtype=dt), vid, dim=dim)
        assert out.shape == torch.empty(6, 40).sum(dim).shape and out.dtype == dt, (vid, dim)
    d3 = 2 if vid == ROW else 1  # 3-D: the innermost dim for a row stage, else a middle one
    with FakeTensorMode():
        out = torch.ops.reduce_ladder.sum(torch.empty(2, 5, 7), vid, dim=d3)
    assert out.shape == torch.empty(2, 5, 7).sum(d3).shape


BAD = [
    ({"variant": ROW}, ValueError, "pass dim="),  # an axis variant without dim
    ({"variant": "triton/tile-256", "dim": 0}, ValueError, "takes no dim"),
    ({"variant": ROW, "dim": 0}, ValueError, "reduces rows"),  # a strided dim for a row stage
    ({"variant": ROW, "dim": 2}, IndexError, "out of range"),
    ({"variant": "triton/axis-nope", "dim": 0}, KeyError, "axis-nope"),
]


@pytest.mark.parametrize(("kwargs", "error", "match"), BAD)
def test_bad_combinations_give_reduce_sums_errors_eager_and_fake(kwargs, error, match, dev):
    x = torch.ones(6, 40, device=dev)
    with pytest.raises(error, match=match) as from_api:
        harness.reduce_sum(x, kwargs["variant"], dim=kwargs.get("dim"))
    with pytest.raises(error) as from_op:
        torch.ops.reduce_ladder.sum(x, **kwargs)
    with FakeTensorMode(), pytest.raises(error) as from_fake:
        torch.ops.reduce_ladder.sum(torch.empty(6, 40), **kwargs)
    assert str(from_op.value) == str(from_api.value) == str(from_fake.value)


def test_fake_with_dim_refuses_a_dtype_the_variant_lacks():
    with FakeTensorMode(), pytest.raises(TypeError, match="unsupported dtype"):
        torch.ops.reduce_ladder.sum(torch.empty(4, 8, dtype=torch.int64), ROW, dim=1)


@pytest.mark.parametrize(("vid", "dim"), [(ROW, -1), (COLUMN, 0)])
def test_eager_with_dim_equals_reduce_sum_and_opcheck(vid, dim, dev):
    x = verify.seed_like_input(6 * 40, "int32", dev).reshape(6, 40)
    got = torch.ops.reduce_ladder.sum(x, vid, dim=dim)
    assert torch.equal(got, harness.reduce_sum(x, vid, dim=dim))
    assert torch.equal(got, x.sum(dim, dtype=torch.int32))
    torch.library.opcheck(torch.ops.reduce_ladder.sum.default, (x, vid, dim))


def test_compiled_fullgraph_with_dim_has_no_graph_break(dev):
    x = verify.seed_like_input(6 * 40, "float32", dev).reshape(6, 40)

    def f(t: torch.Tensor) -> torch.Tensor:
        return torch.ops.reduce_ladder.sum(t * 2, ROW, dim=-1) + 1

    explained = torch._dynamo.explain(f)(x)
    assert explained.graph_break_count == 0 and explained.graph_count == 1
    compiled = torch.compile(f, fullgraph=True, backend="aot_eager")
    assert verify.same_bits(compiled(x), f(x))


def test_an_input_that_requires_grad_is_an_error_not_a_missing_gradient(dev):
    """The op has no autograd formula: torch's fallback would return a result that requires grad
    and leave x.grad None after backward (a warning only); the op refuses instead, and sums such
    an x under torch.no_grad() or detached."""
    x = torch.ones(1000, device=dev, requires_grad=True)
    with pytest.raises(RuntimeError, match="has no gradient"):
        torch.ops.reduce_ladder.sum(x, VID)
    with torch.no_grad():
        assert torch.ops.reduce_ladder.sum(x, VID) == 1000
    assert torch.ops.reduce_ladder.sum(x.detach(), VID) == 1000
