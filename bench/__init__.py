"""Benchmarks (not tests): data generators, workloads, reports. Run modules with `python -m bench.<name>`."""
