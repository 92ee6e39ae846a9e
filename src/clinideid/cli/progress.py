"""A progress display for long commands: one bar per stage (epoch, direction...), driven by a callback."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def progress_display() -> tuple[Any, Callable[[str, int, int], None]]:
    """A rich ``Progress`` display and the ``(stage, done, total)`` callback that drives it."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    display = Progress(
        TextColumn("{task.description:<18}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        transient=False,
    )
    tasks: dict[str, Any] = {}

    def callback(stage: str, done: int, total: int) -> None:
        if stage not in tasks:
            tasks[stage] = display.add_task(stage, total=total)
        display.update(tasks[stage], completed=done, total=total)

    return display, callback
