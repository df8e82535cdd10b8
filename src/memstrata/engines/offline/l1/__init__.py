"""Offline L1: messages -> atoms (sentences, subjects, dates, classification, topic labels, dedup)."""
