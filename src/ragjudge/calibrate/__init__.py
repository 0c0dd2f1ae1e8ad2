"""`ragjudge calibrate`: how well an LLM judge agrees with human labels, and the record the gate checks.

Labels and the judge's score for each, the pairing of the judge's criteria scores and reference-point
verdicts with the people's, the verdict, the bias items file and the calibration record. The agreement
metrics are `ragjudge.stats.agreement`; the judges themselves (the evidence judge, the bias checks) live in
`ragjudge.judge`; the gate reads only `calibrate.fingerprint` (tests/test_gate.py keeps it so).
"""
