"""Canary analysis: compare a treatment (canary) arm against a control arm and decide."""
