"""`ragjudge.yml`: the config model and what loading it needs (env substitution, safe YAML, headers, template paths)."""
