"""Stands for a plugin's heavy modules: only running its command imports it."""

from __future__ import annotations


def greeting(who: str) -> str:
    return f"hello {who}, from jobsched-testplugin"
