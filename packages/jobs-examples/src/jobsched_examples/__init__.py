"""Example jobs for jobsched, one per kind of work, and the demo (``jobsched-demo``)."""

from ._jobs import CsvExportJob as CsvExportJob
from ._jobs import EmailJob as EmailJob
from ._jobs import FlakyUploadJob as FlakyUploadJob
from ._jobs import PrimeCountJob as PrimeCountJob
from ._jobs import SleepJob as SleepJob
from ._jobs import count_primes as count_primes

__all__ = [
    "CsvExportJob",
    "EmailJob",
    "FlakyUploadJob",
    "PrimeCountJob",
    "SleepJob",
    "count_primes",
]
