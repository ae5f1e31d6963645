"""The retriever: context memory (diagnosis), deep search over the KB, prompt synthesis.

Consumes ExpandRequest (kv.work.expand), publishes GenerateRequest (kv.work.generate) with
the rendered prompt stored under ``prompts/<sha>.md``.
"""
