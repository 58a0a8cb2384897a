"""The smallest settings a Django site that enqueues jobs needs (no database of its own)."""

import os

SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "recipe-only-not-a-secret")
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "testserver"]
ROOT_URLCONF = "djangosite.urls"
INSTALLED_APPS: list[str] = []
MIDDLEWARE: list[str] = []
USE_TZ = True
# The jobs' store is shopjobs.jobs's (JOBSCHED_STORE): the views and
# `jobsched worker --app shopjobs:jobs` read it from the same place.
