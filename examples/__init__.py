"""Example RAG service, cases and config for trying ragjudge end to end."""
