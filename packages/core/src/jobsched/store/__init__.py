"""The store seam: what a durable store implements and the scheduler relies on.

Public for store authors; see docs/stores.md, "Writing a store".
"""
