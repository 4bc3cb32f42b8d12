"""Physical operators: how each logical node runs on pyarrow compute / Acero. `plan.to_physical`
chooses the operator per logical node; every operator's `execute()` returns a pa.Table whose columns are
the node's output ids."""
