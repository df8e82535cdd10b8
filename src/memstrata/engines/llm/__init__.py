"""The LLM engine: stage judgement by an OpenAI-compatible chat model (prompts beside their
response models, tolerant parsing, strict validation)."""

from memstrata.engines.llm.l1 import LLMDeduplicator, LLMExtractor

__all__ = ["LLMDeduplicator", "LLMExtractor"]
