"""Offline L3: scenes and atoms -> the persona document."""
