"""Helpers of the `partner_contradiction` check: the details a customer gives (names, days,
dates, numbers, items), read slot by slot so a reply that restates them differently is caught."""
