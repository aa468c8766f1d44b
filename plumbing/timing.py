"""Wall time per named step of one operation: recall's trace shows it, responses carry it as Server-Timing, and the
benchmarks print it. Instrumentation of the real code path, not a benchmark hook."""
import time


class StepTimer:
    def __init__(self) -> None:
        self.ms: dict[str, float] = {}
        self._mark = time.perf_counter()

    def lap(self, step: str) -> None:
        """Charge the time since the previous lap to ``step``."""
        now = time.perf_counter()
        self.ms[step] = self.ms.get(step, 0.0) + (now - self._mark) * 1000
        self._mark = now

    def rounded(self) -> dict[str, float]:
        return {step: round(ms, 2) for step, ms in self.ms.items()}

    def server_timing(self) -> str:
        """The Server-Timing header value (RFC: name;dur=milliseconds)."""
        return ", ".join(f"{step};dur={ms:.2f}" for step, ms in self.ms.items())
