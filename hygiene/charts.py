"""Bar charts of daily counts as geometry for an inline SVG (hygiene/templates/hygiene/chart.html draws it).

The server does the arithmetic so the page needs no script and nothing from elsewhere (the CSP allows neither); the
SVG scales with its viewBox, and every number it shows is also in text and in a data table beside it."""
from dataclasses import dataclass, field
from datetime import date

# The viewBox: narrow enough that 12-unit labels stay readable when the chart is shrunk to a phone's 375 px.
WIDTH, HEIGHT = 400, 220
LEFT, RIGHT, TOP, BOTTOM = 36, 8, 10, 178  # the plot area; room for the y labels left, the x labels below


@dataclass(frozen=True)
class Series:
    key: str  # what is counted, in code words (Link.Origin, Verdict.Decision); the colour goes by position
    label: str
    values: list[int]

    @property
    def total(self) -> int:
        return sum(self.values)


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    css: str


@dataclass(frozen=True)
class Tick:
    at: float  # x or y in the viewBox
    label: str


@dataclass
class Chart:
    id: str
    title: str
    days: list[date]
    series: list[Series]
    stacked: bool = True  # stacked parts add up to a day's total; grouped ones (side by side) do not
    bars: list[Bar] = field(default_factory=list)
    y_ticks: list[Tick] = field(default_factory=list)
    x_ticks: list[Tick] = field(default_factory=list)

    width, height, left, right, top, bottom = WIDTH, HEIGHT, LEFT, WIDTH - RIGHT, TOP, BOTTOM

    @property
    def total(self) -> int:
        return sum(s.total for s in self.series)

    @property
    def rows(self) -> list[tuple[date, list[int], int]]:
        """The data table: each day, its count per series, and the day's sum."""
        columns = [s.values for s in self.series]
        return [(day, [c[i] for c in columns], sum(c[i] for c in columns)) for i, day in enumerate(self.days)]

    @property
    def description(self) -> str:
        """What a screen reader hears for the picture: the window, the totals, the busiest day."""
        if not self.total:
            return f"Nothing from {self.days[0]} to {self.days[-1]} (UTC)."
        parts = ", ".join(f"{s.label} {s.total}" for s in self.series)
        if not self.stacked:
            return f"From {self.days[0]} to {self.days[-1]} (UTC): {parts}."
        busiest = max(self.rows, key=lambda row: row[2])
        return (f"From {self.days[0]} to {self.days[-1]} (UTC): {self.total} in all ({parts}); "
                f"the busiest day was {busiest[0]} with {busiest[2]}.")


def nice_top(peak: int) -> int:
    """The y axis' top: the peak rounded up to 1, 2 or 5 times a power of ten (an empty chart still has a 0..1)."""
    step = 1
    while True:
        for factor in (1, 2, 5):
            if peak <= factor * step:
                return factor * step
        step *= 10


def bar_chart(*, id: str, title: str, days: list[date], series: list[Series], stacked: bool = True) -> Chart:
    """Stacked bars (parts of one whole per day) or grouped ones (side by side: things that do not add up)."""
    chart = Chart(id=id, title=title, days=days, series=series, stacked=stacked)
    sums = [sum(values) for values in zip(*(s.values for s in series), strict=True)]
    peak = max(sums if stacked else [v for s in series for v in s.values], default=0)
    top = nice_top(peak)
    scale = (BOTTOM - TOP) / top
    slot = (WIDTH - RIGHT - LEFT) / len(days)
    for i in range(len(days)):
        chart.bars += _day_bars(series, i, LEFT + i * slot, slot, scale, stacked)
    chart.y_ticks = [Tick(BOTTOM - value * scale, str(value)) for value in sorted({0, top // 2, top})]
    chart.x_ticks = [Tick(LEFT + (i + 0.5) * slot, f"{days[i]:%b} {days[i].day}")
                     for i in (0, len(days) // 2, len(days) - 1)]
    return chart


def _day_bars(series: list[Series], i: int, x: float, slot: float, scale: float, stacked: bool) -> list[Bar]:
    width = slot * 0.8 if stacked else slot * 0.8 / len(series)
    bars, base = [], BOTTOM
    for n, s in enumerate(series):
        height = s.values[i] * scale
        if not height:
            continue  # a zero draws nothing; the table and the text still say 0
        left = x + slot * 0.1 + (0 if stacked else n * width)
        y = base - height if stacked else BOTTOM - height
        bars.append(Bar(round(left, 2), round(y, 2), round(width, 2), round(height, 2), f"s-{n}"))
        if stacked:
            base = y
    return bars
