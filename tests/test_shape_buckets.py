"""Shape buckets for compiled graphs (issue 27): a dynamic dimension runs
at its bucket, masked where padding would change a result, so many sizes
compile one program per bucket; every result equals the unpadded CPU run.

Compiles are counted from the metrics (the suite runs without the
persistent cache, so each is a real XLA compile)."""

import copy

import pytest
import torch

import torch_tpu
from torch_tpu import debug, shape_buckets
from torch_tpu.shape_buckets import Buckets, parse

POW2_FLOOR8 = Buckets(None, 8)


def _buckets_of(sizes, rule=POW2_FLOOR8):
    return {rule.bucket(n) for n in sizes}


@pytest.fixture(autouse=True)
def _default_buckets():
    torch._dynamo.reset()
    shape_buckets.set_shape_buckets("pow2")
    shape_buckets._refusals.clear()
    yield
    shape_buckets.set_shape_buckets("pow2")
    torch._dynamo.reset()


def _run(fn, inputs, **compile_kwargs):
    """fn compiled on tpu over each input tuple: (results, compiles)."""
    compiled = torch.compile(fn, backend="tpu", dynamic=True, **compile_kwargs)
    results = []
    debug.reset_metrics()
    for args in inputs:
        with torch.no_grad():
            out = compiled(*[a.to("tpu") for a in args])
        results.append(out.cpu() if isinstance(out, torch.Tensor) else [o.cpu() for o in out])
    return results, debug.metrics()["compiles"]


def _check(results, fn, inputs, atol=1e-5):
    for got, args in zip(results, inputs):
        want = fn(*args)
        got = got if isinstance(got, list) else [got]
        want = list(want) if isinstance(want, (tuple, list)) else [want]
        for g, w in zip(got, want):
            assert g.shape == w.shape
            torch.testing.assert_close(g, w, atol=atol, rtol=1e-5)


def reductions(x, w):
    # every way positions along the dynamic dimension (1) are combined; the
    # padding is 1.0 after this add (inputs are padded with zeros), so an
    # unmasked sum, max, softmax or contraction would be wrong
    x = x + 1.0
    s = x.softmax(1) + x.log_softmax(1).exp()
    return (x.sum(1), x.mean(1), x.amax(1), x.amin(1), x.argmax(1), x.argmin(1),
            torch.logsumexp(x, 1), x.max(1).values, (x > 0).any(1), (x > -5).all(1),
            (x * 0.1 + 1).prod(1), x.norm(dim=1), s, x.cumsum(1),
            torch.einsum("bld,blk->bdk", x, x),  # contracts the dynamic dimension
            x @ w)  # keeps it (row-wise)


def test_reductions_over_a_padded_dimension_equal_cpu_and_compile_once_per_bucket():
    torch.manual_seed(0)
    lengths = [3, 5, 7, 8, 9, 12, 16, 17, 25, 31]
    w = torch.randn(4, 6)
    # shifted away from zero: garbage or zero padding would change every result
    inputs = [(torch.randn(2, n, 4) - 3.0, w) for n in lengths]
    results, compiles = _run(reductions, inputs)
    _check(results, reductions, inputs)
    assert compiles <= len(_buckets_of(lengths)), compiles
    assert shape_buckets.refusals() == []


def attention(x):
    # keys past the real length must get no weight: no mask here to hide them
    x = x + 1.0
    return torch.nn.functional.scaled_dot_product_attention(x, x, x), torch.nn.functional.scaled_dot_product_attention(
        x, x, x, is_causal=True)


def test_attention_over_a_padded_length_equals_cpu():
    # only the length is dynamic (mark_dynamic), as in a model whose head
    # count and size come from its weights
    torch.manual_seed(0)
    lengths = [3, 5, 9, 12, 17]
    compiled = torch.compile(attention, backend="tpu")
    debug.reset_metrics()
    for n in lengths:
        x = torch.randn(2, 4, n, 8)
        tx = x.to("tpu")
        torch._dynamo.mark_dynamic(tx, 2)
        with torch.no_grad():
            got = [t.cpu() for t in compiled(tx)]
        _check([got], attention, [(x,)])
    assert shape_buckets.refusals() == []
    assert debug.metrics()["compiles"] <= len(_buckets_of(lengths))


def test_batch_sizes_share_a_bucket():
    torch.manual_seed(0)
    lin = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.LayerNorm(16))
    tl = copy.deepcopy(lin).to("tpu")
    inputs = [(torch.randn(b, 8),) for b in range(2, 9)]
    results, compiles = _run(tl, inputs)
    _check(results, lin, inputs)
    assert compiles <= 1, compiles


def _gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=2, n_embd=32, n_head=4, vocab_size=300, n_positions=256,
                     bos_token_id=0, eos_token_id=0)
    return GPT2LMHeadModel(cfg).eval()


def _llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=4, num_key_value_heads=2,
                      intermediate_size=64, vocab_size=300, max_position_embeddings=256,
                      bos_token_id=0, eos_token_id=0, pad_token_id=0)
    return LlamaForCausalLM(cfg).eval()


def _bert():
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    cfg = BertConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=4, intermediate_size=64,
                     vocab_size=300, max_position_embeddings=256)
    return BertModel(cfg).eval()


@pytest.mark.parametrize("make", [_gpt2, _llama, _bert], ids=["gpt2", "llama", "bert"])
def test_twenty_prompt_lengths_compile_at_most_the_bucket_count(make):
    """A Transformers model compiled once, called with 20 prompt lengths from
    3 to 200 (batch 2, the second prompt left-padded): one program per
    bucket, and CPU's logits at every length."""
    model = make()
    tpu_model = copy.deepcopy(model).to("tpu")
    compiled = torch.compile(tpu_model, backend="tpu", dynamic=True)
    # (not 2 first: Dynamo would give batch and length one symbol, and the
    # next length would be a second graph; 1 is always specialized)
    lengths = [3, 4, 5, 8, 11, 15, 16, 19, 24, 31, 33, 40, 50, 64, 70, 90, 111, 128, 150, 200]
    gen = torch.Generator().manual_seed(1)
    debug.reset_metrics()
    for n in lengths:
        ids = torch.randint(1, 300, (2, n), generator=gen)
        mask = torch.ones(2, n, dtype=torch.long)
        mask[1, : n // 3] = 0
        kwargs = dict(input_ids=ids, attention_mask=mask)
        if make is not _bert:
            kwargs["use_cache"] = False
        with torch.no_grad():
            got = compiled(**{k: (v.to("tpu") if isinstance(v, torch.Tensor) else v) for k, v in kwargs.items()})
            want = model(**kwargs)
        field = "last_hidden_state" if make is _bert else "logits"
        torch.testing.assert_close(getattr(got, field).cpu(), getattr(want, field), atol=1e-4, rtol=1e-4)
    compiles = debug.metrics()["compiles"]
    assert shape_buckets.refusals() == [], shape_buckets.refusals()
    # lengths 3..200 fall in 6 buckets (8 .. 256); batch 2 in one
    assert compiles <= len(_buckets_of(lengths)), compiles


def scaled_by_length(x):
    return x / x.shape[1]


def sorted_rows(x):
    return x.sort(dim=1).values


@pytest.mark.parametrize("fn", [scaled_by_length, sorted_rows])
def test_graphs_the_analysis_cannot_prove_run_exact_and_say_why(fn):
    torch.manual_seed(0)
    inputs = [(torch.randn(2, n, 3),) for n in (5, 6, 9)]
    results, _ = _run(fn, inputs)
    _check(results, fn, inputs)
    reasons = [r for _, r in shape_buckets.refusals()]
    assert reasons, "expected a refusal"


def test_negative_index_tensors_count_from_the_real_end():
    def pick(x, i):
        return x[:, i] + 1

    torch.manual_seed(0)
    inputs = [(torch.randn(2, n, 3), torch.tensor([-1, 0, -2])) for n in (5, 6, 7)]
    results, compiles = _run(pick, inputs)
    _check(results, pick, inputs)
    assert compiles <= 1


def from_the_end(x):
    return x[:, -1] * 2, x[:, -3:].sum(1), x[:, :-1].amax(1), x[:, 1:].amin(1)


def test_positions_from_the_end_read_the_real_end():
    torch.manual_seed(0)
    inputs = [(torch.randn(2, n, 3),) for n in (5, 6, 7, 9, 13)]
    results, compiles = _run(from_the_end, inputs)
    _check(results, from_the_end, inputs)
    assert shape_buckets.refusals() == []
    assert compiles <= 2, compiles


def test_sizes_above_every_bucket_run_exact():
    def f(x):
        return x.sum(1)

    inputs = [(torch.randn(2, n),) for n in (5, 12, 40, 41)]
    results, compiles = _run(f, inputs, options={"shape_buckets": [16]})
    _check(results, f, inputs)
    # 5 and 12 share the 16 bucket; 40 and 41 are above it: one program each
    assert compiles == 3, compiles


def test_bucketing_off_compiles_per_shape():
    def f(x):
        return x.softmax(1)

    shape_buckets.set_shape_buckets(None)
    inputs = [(torch.randn(2, n),) for n in (5, 6, 7)]
    results, compiles = _run(f, inputs)
    _check(results, f, inputs)
    assert compiles == 3


def test_training_graphs_keep_exact_shapes():
    lin = torch.nn.Linear(4, 4).to("tpu")
    step = torch.compile(lambda x: lin(x).sum(), backend="tpu", dynamic=True)
    for n in (3, 5):
        x = torch.randn(n, 4)
        loss = step(x.to("tpu"))
        loss.backward()
        torch.testing.assert_close(loss.cpu(), (x @ lin.weight.detach().cpu().T + lin.bias.detach().cpu()).sum(),
                                   atol=1e-5, rtol=1e-5)


def test_options_and_parsing():
    assert parse("pow2").bucket(3) == 8 and parse("pow2").bucket(9) == 16
    assert parse("pow2:32").bucket(33) == 64
    assert parse("16,64").bucket(17) == 64 and parse("16,64").bucket(65) is None
    assert parse("off") is None and parse(None) is None
    assert parse([4, 2]).sizes == [2, 4]
    with pytest.raises(ValueError, match="shape buckets"):
        parse("powers")
    with pytest.raises(ValueError, match="positive"):
        parse([0, 4])
    f = torch.compile(lambda x: x + 1, backend="tpu", options={"bucket": 8})
    with pytest.raises(Exception, match="unknown options"):
        f(torch.ones(2, device="tpu"))
    g = torch.compile(lambda x: x * 2, backend="tpu", mode="reduce-overhead")
    assert torch.equal(g(torch.ones(2, device="tpu")).cpu(), torch.full((2,), 2.0))
    assert isinstance(torch_tpu.shape_buckets.get_shape_buckets(), Buckets)
