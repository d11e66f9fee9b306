"""The one progress-callback type of the library.

``progress(label, done, total)``: a phase's label (a task's name, ``"task: reading predictions"``, ``"real images
(folder)"`` …), the units done so far and the units in all (samples, bytes or images, as the label says). Callers
report before the first unit and after the last.
"""

from typing import Callable

ProgressFn = Callable[[str, int, int], None]

__all__ = ["ProgressFn"]
