"""GitHub Actions integration: outputs, job summary, workflow commands and the sticky PR comment."""
