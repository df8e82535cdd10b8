"""Offline L2: atoms -> topic scenes (grouping into scenes, rendering their Markdown)."""
