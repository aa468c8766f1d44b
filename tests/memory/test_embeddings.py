"""The embedding model: the ONNX export gives the vectors of the original, normalised, 384-dimensional."""
import numpy as np
import pytest

from memory.embeddings import DIMENSIONS, TorchEmbedder, embed


@pytest.mark.slow
def test_onnx_vectors_match_the_sentence_transformers_model():
    texts = [
        "The deploy window is Friday 14:00 UTC.",
        "x",
        "A much longer memory about the billing service, its owners and the on-call rotation. " * 12,
    ]
    onnx, reference = embed(texts), TorchEmbedder().embed(texts)
    assert onnx.shape == (3, DIMENSIONS)
    assert np.allclose(np.linalg.norm(onnx, axis=1), 1.0, atol=1e-5)
    assert (onnx * reference).sum(axis=1).min() > 0.99999


def test_meaning_decides_distance():
    deploy, deploy_again, lunch = embed([
        "Deploys go out on Fridays after the standup.",
        "We ship to production every Friday morning.",
        "The cafeteria serves pasta on Wednesdays.",
    ])
    assert deploy @ deploy_again > deploy @ lunch + 0.2


def test_a_large_batch_keeps_its_order_and_gives_each_text_its_own_vector():
    # More texts than one ONNX run, lengths shuffled: the chunking by length must put every vector back in place.
    texts = [f"Note {i}: " + "the cache warms slowly " * (i % 7) for i in range(150)]
    batch = embed(texts)
    alone = np.stack([embed([text])[0] for text in texts[::29]])
    assert batch.shape == (150, DIMENSIONS)
    assert (batch[::29] * alone).sum(axis=1).min() > 0.99999
