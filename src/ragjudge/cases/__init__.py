"""Case files: read at the edge, validated into frozen `Case` values, one module a job.

* `case`: the `Case` value a run asks, and an `Exchange` of a conversation.
* `scope`: what a category says about whether a case is to be answered.
* `schema`: the pydantic models of a case as written in a case file.
* `files`: reading a case file (YAML 1.2 or JSONL) into raw items: the one loader every reader uses.
* `caseset`: raw items validated into the case set a run asks, with errors naming file, case and key.
* `conversations`: a conversation's turns, built, rehearsed and asked in order.
* `duplicates`: what two cases share when one duplicates the other.
* `saving`: cases written back (appended as text, so what is already there stays byte for byte).
"""
