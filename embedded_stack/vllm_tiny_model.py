"""Build a tiny Llama that a real vLLM server can load: random weights, a byte-level BPE tokenizer trained on a few
KB of the judge's own prompt and answers, and a chat template. No model hub: everything is made here in seconds.

Run by the vLLM venv's Python (it imports torch and transformers, which the project's venv does not have):

    .venv-vllm/bin/python embedded_stack/vllm_tiny_model.py OUT_DIR

It only answers what the grammar lets it: enough to hold our client to what a real server accepts and returns, not to
judge anything. Random weights leave every string open until its ``maxLength``, so its answers are the longest the
schema allows: the worst case of the token budget.
"""
import sys
from pathlib import Path

CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|>\n{{ message['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
CONTEXT = 16384


def corpus() -> list[str]:
    """Text in the shape of what the judge sends and receives, with every character a JSON answer needs."""
    relations = ["supersedes", "duplicate", "complementary", "contradicts", "unrelated"]
    lines = ['{"verdicts": [{"relation": "%s", "confidence": 0.%d, "rationale": "B moves the date"}]}' % (r, 5 + i)
             for i, r in enumerate(relations)]
    lines += ["The deploy moved from Friday to Monday. The billing service is owned by Dana. 0123456789 .,;:!?-+*/",
              'A was written before B. Say how B relates to A: {"pair": 1, "A": {"kind": "fact", "text": "x"}}',
              "".join(chr(c) for c in range(32, 127))]
    return lines * 20


def build(out: Path) -> None:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    out.mkdir(parents=True, exist_ok=True)
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    specials = ["<s>", "</s>", "<unk>"]
    trainer = trainers.BpeTrainer(vocab_size=512, special_tokens=specials,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(corpus(), trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, bos_token="<s>", eos_token="</s>", unk_token="<unk>",
                                   model_max_length=CONTEXT)
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(out)

    torch.manual_seed(0)
    # head_dim 64: vLLM's CPU attention has kernels for some head sizes only (16 is refused at the first request).
    config = LlamaConfig(vocab_size=len(fast), hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=CONTEXT,
                         bos_token_id=fast.bos_token_id, eos_token_id=fast.eos_token_id, tie_word_embeddings=False,
                         torch_dtype="float32")
    model = LlamaForCausalLM(config)
    model.save_pretrained(out, safe_serialization=True)


if __name__ == "__main__":
    build(Path(sys.argv[1]))
