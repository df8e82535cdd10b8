"""Forgetting on purpose: the daily retention sweep, removals with their dependants, erasing a
tenant for good.

    schedule    when the sweep is due (a local time of day; a missed one runs at once)
    dependants  what a removal takes with it: atoms left without sources, scene membership
    sweep       the sweep: L0 past retention, expired atoms, L1 past retention
    erase       a tenant erased from every layer, index and file
"""
