"""Progress on long work: a stage bar on stderr (tqdm), shown only when stderr is a terminal."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def stages(command: str, total: int) -> Iterator[Callable[[str], None]]:
    """Yield ``step(name)``: call it as each stage starts; the bar names the running stage and counts the done ones.

    Nothing is printed when stderr is not a terminal (pipes, CI, tests) — tqdm's ``disable=None``.
    """
    from tqdm import tqdm

    fmt = "{desc}: {n}/{total} stages done [{elapsed}]{postfix}"  # stages differ in cost: no rate, no ETA
    with tqdm(total=total, desc=command, bar_format=fmt, disable=None, leave=False) as bar:
        started = [False]

        def step(name: str) -> None:
            if started[0]:
                bar.update(1)
            started[0] = True
            bar.set_postfix_str(f"now: {name}", refresh=True)

        yield step
        if started[0]:
            bar.update(1)
