"""Names and places shared by a patient's documents: the first pass of a run with ``--patient-id``.

A name found in one note of a patient ("Karen Harris", the daughter) is PHI in every other note of that
patient, wherever it stands in the input. So, when documents carry a patient id, a run reads its input
twice: a first pass detects every document that has a patient id (in the worker processes, under the same
limits) and collects, per patient, the distinct names and places found (``Mention``: label and text);
the de-identifying pass then gives each document its patient's mentions, which the pipeline's
``propagate_mentions`` step marks like the document's own. The cost is one more detection per document.

The collected mentions are PHI: they are held in the memory of the command's own process only, never
written (not in the state folder, the journal, the reports or the logs). A resumed run therefore collects
them again from the whole input before it de-identifies what is left. A union of sets does not depend on
the order in which workers finish, and each document gets its patient's mentions sorted, so any number of
workers, and a resumed run, write the same bytes. A document that fails in the first pass (over its time
limit, unreadable) adds nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from clinideid.errors import ClinideidError
from clinideid.mentions import Mention

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from clinideid.batch.compute import Outcome
    from clinideid.batch.inputs import InputItem
    from clinideid.batch.limits import StopRequest
    from clinideid.batch.runner import _Pending, _Run


@dataclass
class PatientMentions:
    """Patient id -> the names and places found in that patient's documents."""

    by_patient: dict[str, set[Mention]] = field(default_factory=dict)

    def add(self, patient_id: str, mentions: Iterable[Mention]) -> None:
        self.by_patient.setdefault(patient_id, set()).update(mentions)

    def of(self, patient_id: str | None) -> tuple[Mention, ...]:
        """The patient's mentions in a fixed order (none without a patient id)."""
        if patient_id is None:
            return ()
        return tuple(sorted(self.by_patient.get(patient_id, ())))

    def __len__(self) -> int:
        return len(self.by_patient)


def collect_mentions(items: Iterable[InputItem], run: _Run, stop: StopRequest) -> bool:
    """Fill ``run.mentions`` from ``items`` with ``run.pool``; True when every input was read, False when
    stopped by a signal."""
    from clinideid.batch.parallel import _Parallel

    log.info("first pass: collecting each patient's names and places")
    return _Parallel(run, run.pool, stop, None, _prepare_collect, _finish_collect).run(iter(items))


def _prepare_collect(item: InputItem, run: _Run) -> _Pending:
    """A task that only detects, for a readable input with a patient id; nothing for any other."""
    from clinideid.batch.runner import _Pending, new_task, record_fields

    pending = _Pending(item, "", None, [])
    if item.ignored is not None or (item.source is None and item.error is not None):
        return pending
    if run.patient_id(item) is None:
        return pending
    try:
        fields: Sequence = record_fields(item, run.options)
    except ClinideidError:
        return pending  # the de-identifying pass fails it with the reason
    pending.task = new_task(item, run, list(fields), collect=True)
    return pending


def _finish_collect(pending: _Pending, run: _Run, outcome: Outcome | None) -> None:
    task = pending.task
    if outcome is None or outcome.mentions is None or task is None or task.patient_id is None:
        return
    assert run.mentions is not None
    run.mentions.add(task.patient_id, outcome.mentions)
