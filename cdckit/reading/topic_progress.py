"""The progress bar of reading a live Kafka topic: the records read, of each partition.

The bar counts the sample's records as the client gives them (:class:`~cdckit.io.kafka.PartitionCounts`,
the count ``cdckit capture`` shows too) and shows each partition's in its postfix (``p0 1,200 · p1 1,180``),
towards the partitions' ends minus their starts where the broker tells them (a broker whose high watermark
lags its last records makes that total short: the bar's total then grows to what was read). Whether it is
drawn follows :mod:`cdckit.reading.progress`: ``progress=True`` always, False never, None (automatic)
where there is a place to draw it, once the read has taken :data:`~cdckit.reading.progress.DELAY` seconds
and the sample is large (:data:`~cdckit.reading.progress.AUTOMATIC_MESSAGES` records, read or to come: a
topic's size is known only once it is read from).

>>> bar_of_topic(False).bar.disable
True
"""

from __future__ import annotations

from ..io.kafka import PartitionCounts
from . import progress as bars

__all__ = ["TopicProgress", "bar_of_topic"]


def bar_of_topic(progress: bool | None) -> bars.Progress:
    """The bar of reading a topic: a :class:`TopicProgress` where it is drawn, else one that draws nothing
    and counts nothing."""
    if progress is False or (progress is None and not bars.place_to_draw()):
        return bars.CountProgress(None, int, show=False)
    return TopicProgress(PartitionCounts(), automatic=progress is None)


class TopicProgress(bars.Progress):
    """A bar of the records a topic's read has taken (``counts``, told by the client's loop), each
    partition's shown in its postfix; ``automatic``: shown only for a large sample, after a delay."""

    def __init__(self, counts: PartitionCounts, desc: str = "reading", automatic: bool = False) -> None:
        self.counts = counts
        self.automatic = automatic
        super().__init__(None, "msg", desc, show=True, delay=bars.DELAY if automatic else 0.0)

    def done(self) -> int:
        return self.counts.read()

    def worth_showing(self) -> bool:
        """Always when asked for; automatic: once the sample is large (read, or to come)."""
        big = max(self.counts.total or 0, self.counts.read()) >= bars.AUTOMATIC_MESSAGES
        return not self.automatic or big

    def tick(self) -> None:
        """Take the total the partitions' ends give (never under what was read), the counts, and redraw."""
        total = self.counts.total
        if total is not None:
            self.total = self.bar.total = max(total, self.done())
        self.bar.set_postfix_str(self.counts.text(), refresh=False)
        super().tick()

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        if kind is None and not self.bar.disable:  # done to the end: the total is what was read
            self.total = self.bar.total = self.done()
            self.bar.set_postfix_str(self.counts.text(), refresh=False)
        super().__exit__(kind, *exc)
