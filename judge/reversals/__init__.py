"""Helpers of the `self_contradiction` check: what replies state, for telling when a later reply
goes back on an earlier one (positions, restated figures, lexical reversals)."""
