"""Who uses what: well-known models, the positional encodings they use, and the sources each fact
was checked against (the Start chapter's table, explain/chapters/start.py models_table). Data only:
a row whose claim could not be checked against a config file or a paper is left out.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Source:
    label: str  # what the link says (a paper section, a config file): the same in every language
    url: str


@dataclass(frozen=True)
class Model:
    """One well-known model and the encodings it uses. `method`: the registry names of what it uses
    (their short names and chapters in the table); `detail`: start.models.<key> in the catalogue, with
    `facts` (numbers read from the sources) filled in."""

    key: str
    name: str
    method: tuple[str, ...]
    facts: dict[str, object]
    sources: tuple[Source, ...]


_HF = "https://huggingface.co"
_TF = "https://github.com/huggingface/transformers/blob/main/src/transformers/models"
# Each fact checked against the source named beside it (see the report of the commit that added
# this chapter); a claim that could not be checked is not here.
MODELS: tuple[Model, ...] = (
    Model(
        "bert",
        "BERT",
        ("learned",),
        {"rows": 512},
        (
            Source("Devlin et al. 2019, Fig. 2", "https://arxiv.org/abs/1810.04805"),
            Source("bert-base-uncased config.json", f"{_HF}/google-bert/bert-base-uncased/blob/main/config.json"),
        ),
    ),
    Model(
        "gpt2",
        "GPT-2",
        ("learned",),
        {"rows": 1024},
        (Source("gpt2 config.json (n_positions)", f"{_HF}/openai-community/gpt2/blob/main/config.json"),),
    ),
    Model(
        "t5",
        "T5",
        ("t5",),
        {"buckets": 32, "distance": 128},
        (
            Source("Raffel et al. 2020, §2.1", "https://arxiv.org/abs/1910.10683"),
            Source("modeling_t5.py", f"{_TF}/t5/modeling_t5.py"),
        ),
    ),
    Model(
        "bloom",
        "BLOOM",
        ("alibi",),
        {},
        (
            Source("BigScience 2022, “ALiBi Positional Embeddings”", "https://arxiv.org/abs/2211.05100"),
            Source("modeling_bloom.py (build_alibi_tensor)", f"{_TF}/bloom/modeling_bloom.py"),
        ),
    ),
    Model(
        "mpt",
        "MPT-7B",
        ("alibi",),
        {"length": 2048},
        (Source("mpt-7b config.json (attn_config.alibi)", f"{_HF}/mosaicml/mpt-7b/blob/main/config.json"),),
    ),
    Model(
        "mistral",
        "Mistral 7B v0.1",
        ("rope",),
        {"base": 10_000, "window": 4096},
        (Source("Mistral-7B-v0.1 config.json", f"{_HF}/mistralai/Mistral-7B-v0.1/blob/main/config.json"),),
    ),
    Model(
        "llama31",
        "Llama 3.1",
        ("rope",),
        {"base": 500_000, "factor": 8, "original": 8192, "length": 131_072},
        (Source("Llama-3.1-8B config.json (rope_scaling)", f"{_HF}/meta-llama/Llama-3.1-8B/blob/main/config.json"),),
    ),
    Model(
        "qwen25",
        "Qwen2.5",
        ("rope",),
        {"base": 1_000_000, "factor": 4, "original": 32_768},
        (
            Source("Qwen2.5-7B-Instruct, “Processing Long Texts”", f"{_HF}/Qwen/Qwen2.5-7B-Instruct"),
            Source("config.json (rope_theta)", f"{_HF}/Qwen/Qwen2.5-7B-Instruct/blob/main/config.json"),
        ),
    ),
    Model(
        "gemma3",
        "Gemma 3",
        ("rope",),
        {"local": 10_000, "global": 1_000_000, "ratio": 5, "factor": 8},
        (
            Source("Gemma Team 2025, “Model Architecture”", "https://arxiv.org/abs/2503.19786"),
            Source("configuration_gemma3.py (rope_local_base_freq)", f"{_TF}/gemma3/configuration_gemma3.py"),
        ),
    ),
    Model(
        "llama4",
        "Llama 4",
        ("rope", "none"),
        {"every": 4},
        (
            Source("Meta AI, “The Llama 4 herd” (iRoPE)", "https://ai.meta.com/blog/llama-4-multimodal-intelligence/"),
            Source("configuration_llama4.py (no_rope_layer_interval)", f"{_TF}/llama4/configuration_llama4.py"),
        ),
    ),
)
