"""A repository's files, read and written back: the one bounded reader and the one atomic writer.

A file in the repository is input a pull request can carry: a symlink to anything on the runner, a FIFO that
never ends, a file of gigabytes. Every reader of such a file goes through `bounded.read_bounded`, every write
back into the repository (`cases review`, `cases import-bad`, `dedupe`, `cases generate`) through
`atomic.write_atomic`.
"""
