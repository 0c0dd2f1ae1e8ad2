"""Calibration: measuring how well an LLM judge agrees with human labels."""
