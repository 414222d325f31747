"""Helpers of the `kb_noise_echo` check: telling the KB's noise (misspellings, markup debris,
scanning garble) from its words."""
