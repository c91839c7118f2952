"""The progress line Keras prints for an epoch (what ProgbarLogger shows): with
verbose=1 a bar with the averaged loss and the metrics, rewritten after each batch on a
terminal and completed at the end of the epoch; with verbose=2 one line at the end.
Values named in `stateful_metrics` are shown as they are, the others averaged over the
samples (or steps) seen."""
from __future__ import annotations

import collections
import sys
import time


class Progbar:
    """The progress line of an epoch: with verbose=1 rewritten after each batch on a
    terminal (a bar, the averaged loss, the metrics) and completed at the end; with
    verbose=2 one line at the end."""

    def __init__(self, target, verbose: int, stateful_metrics, unit_name: str):
        self.target = target
        self.verbose = verbose
        self.stateful_metrics = set(stateful_metrics)
        self.unit_name = unit_name
        self._values = collections.OrderedDict()
        self._seen = 0
        self._start = time.time()
        self._width = 0
        self._dynamic = hasattr(sys.stdout, "isatty") and sys.stdout.isatty()

    def update(self, current: int, values, finalize: bool) -> None:
        for key, value in values:
            if key in self.stateful_metrics:
                self._values[key] = [value, 1]
            else:
                weight = max(current - self._seen, 1)
                total = self._values.setdefault(key, [0.0, 0])
                total[0] += value * weight
                total[1] += weight
        self._seen = current
        if self.verbose == 1 and (finalize or self._dynamic):
            self._print_bar(current, finalize)
        elif self.verbose == 2 and finalize:
            elapsed = time.time() - self._start
            digits = len(str(self.target))
            line = "%*d/%d - %.0fs%s" % (digits, current, self.target, elapsed,
                                         self._metrics_text())
            line += " - %s/epoch - %s" % (format_time(elapsed),
                                          format_time(elapsed / max(self.target, 1)) +
                                          "/" + self.unit_name)
            print(line)

    def _metrics_text(self) -> str:
        text = ""
        for key, (total, count) in self._values.items():
            mean = total / max(1, count)
            text += " - %s: %s" % (key, ("%.4f" if abs(mean) > 1e-3 else "%.4e") % mean)
        return text

    def _print_bar(self, current: int, finalize: bool) -> None:
        digits = len(str(self.target))
        done = int(30 * current / self.target) if self.target else 0
        bar = "%*d/%d [" % (digits, current, self.target)
        if done > 0:
            bar += "=" * (done - 1) + ("=" if current >= self.target else ">")
        bar += "." * (30 - done) + "]"
        elapsed = time.time() - self._start
        if finalize:
            info = " - %.0fs %s/%s" % (elapsed, format_time(elapsed / max(current, 1)),
                                       self.unit_name)
        else:
            info = " - ETA: %ds" % (elapsed / max(current, 1) * (self.target - current))
        line = bar + info + self._metrics_text()
        padding = " " * max(0, self._width - len(line))
        self._width = len(line)
        end = "\n" if finalize else ""
        sys.stdout.write(("\r" if self._dynamic else "") + line + padding + end)
        sys.stdout.flush()


def format_time(seconds: float) -> str:
    if seconds >= 1:
        return "%.0fs" % seconds
    if seconds >= 1e-3:
        return "%.0fms" % (seconds * 1e3)
    return "%.0fus" % (seconds * 1e6)
