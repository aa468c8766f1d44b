"""The judge: one small interface, backends chosen by settings.JUDGE_BACKEND (`local` or `vllm`)."""
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

from django.conf import settings

from memory.vocabulary import Relation

RELATIONS = tuple(Relation)  # in the order the local model was trained on: its output columns


@dataclass(frozen=True)
class Pair:
    """An older memory and a newer one that may replace it."""

    older: str
    newer: str
    older_kind: str = "note"
    newer_kind: str = "note"


@dataclass(frozen=True)
class Judgement:
    relation: str
    confidence: float
    rationale: str
    # Who answered, when it is not the judge that was asked (a fallback): recorded on the verdict and conflict rows.
    judge: str = ""
    prompt_version: str = ""


class JudgeUnavailable(RuntimeError):
    """The judge could not answer (down, timing out, or answering nonsense): retry later."""


class Judge(Protocol):
    name: str  # backend and model, recorded on every verdict
    prompt_version: str

    def judge(self, pairs: list[Pair]) -> list[Judgement]: ...


@lru_cache(maxsize=1)
def get_judge() -> Judge:
    if settings.JUDGE_BACKEND == "vllm":
        from hygiene.judge.vllm import VllmJudge

        return VllmJudge.from_settings()
    if settings.JUDGE_BACKEND == "local":
        from hygiene.judge.local import LocalJudge

        return LocalJudge()
    raise ValueError(f"Unknown JUDGE_BACKEND {settings.JUDGE_BACKEND!r}: use local or vllm")
