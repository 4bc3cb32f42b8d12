"""Compaction (Doris's BE compaction): merging a tablet's rowsets in the background.

policy.py / scheduling.py: the rules on rowset metadata alone (cumulative point, size-based input
selection, base compaction conditions, scores, task selection, permits). merge.py: one compaction of one
tablet (a streaming, vectorized k-way merge into one output rowset). readers.py: which rowsets running
scans hold, and the deferred deletion of replaced rowsets. manager.py: the producer thread, the worker pool,
manual runs and the per-tablet state the HTTP API shows.
"""
