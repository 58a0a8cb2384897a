"""OpenTelemetry for jobsched: a span per attempt, linked to the submitting request, and metrics.

``instrument(scheduler)`` adds a submit hook (the trace context current at
``submit`` goes into ``job.headers``, so it is pickled into a durable store's
row too) and a listener (a span and the metrics for each attempt, in whichever
process runs it). The core never imports OpenTelemetry.
"""

from ._instrument import Instrumentation as Instrumentation
from ._instrument import instrument as instrument

__all__ = ["Instrumentation", "instrument"]
