"""Test helpers shared by every suite (real servers on loopback, fixtures)."""
