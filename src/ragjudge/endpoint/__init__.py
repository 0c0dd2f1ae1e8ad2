"""Calling the RAG endpoint under test and reading its replies.

Nothing is re-exported here: importing a value module (`endpoint.trace`, `endpoint.result`) must not load
the HTTP client.
"""
