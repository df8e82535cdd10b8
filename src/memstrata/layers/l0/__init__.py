"""L0: raw conversation as captured: the recorder, what it sanitizes and the times it reads."""
