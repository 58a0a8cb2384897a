"""The smallest settings a Django site that submits jobs needs (no database of its own)."""

import os

SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "recipe-only-not-a-secret")
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "testserver"]
ROOT_URLCONF = "djangosite.urls"
INSTALLED_APPS: list[str] = []
MIDDLEWARE: list[str] = []
USE_TZ = True

# The store the views submit to and `jobsched worker` runs jobs from.
JOBSCHED_STORE = os.environ.get("JOBSCHED_STORE", "sqlite:///jobs.db")
