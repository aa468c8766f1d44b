"""Wall time per named step of one operation: recall's trace shows it, responses carry it as Server-Timing, the
benchmarks print it, and ``finish`` hands it to the metrics and, when tracing, to the trace as child spans.
Instrumentation of the real code path, not a benchmark hook."""
import time

from telemetry import metrics, tracing


class StepTimer:
    def __init__(self, operation: str | None = None) -> None:
        self.operation = operation  # remember, recall: the operations whose steps the metrics keep
        self.ms: dict[str, float] = {}
        self._mark = time.perf_counter()
        # The laps' wall-clock times, for the trace's step spans: only kept while tracing.
        self._laps: list[tuple[str, int, int]] | None = [] if tracing.enabled() else None
        self._mark_ns = time.time_ns() if self._laps is not None else 0

    def lap(self, step: str) -> None:
        """Charge the time since the previous lap to ``step``."""
        now = time.perf_counter()
        self.ms[step] = self.ms.get(step, 0.0) + (now - self._mark) * 1000
        self._mark = now
        if self._laps is not None:
            now_ns = time.time_ns()
            self._laps.append((step, self._mark_ns, now_ns))
            self._mark_ns = now_ns

    def rounded(self) -> dict[str, float]:
        return {step: round(ms, 2) for step, ms in self.ms.items()}

    def server_timing(self) -> str:
        """The Server-Timing header value (RFC: name;dur=milliseconds)."""
        return ", ".join(f"{step};dur={ms:.2f}" for step, ms in self.ms.items())

    def finish(self) -> None:
        """The operation is over: its steps into the step metrics (named operations only) and the trace."""
        if self.operation is not None:
            for step, ms in self.ms.items():
                metrics.step_duration.labels(self.operation, step).observe(ms / 1000)
        if self._laps:
            tracing.record_steps(self.operation, self._laps)
