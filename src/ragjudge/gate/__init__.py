"""The gate's walk, one module a step: cases -> endpoint -> checks -> judge -> scoring -> suite -> report."""
