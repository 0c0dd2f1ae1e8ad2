"""The container action's entry point (ENTRYPOINT ["python", "/app/entrypoint.py"]).

The runner starts the container in /github/workspace, and says so in
$GITHUB_WORKSPACE; relative paths in the inputs (config, cases, report) are
relative to it. Everything else is in ragjudge.github.action.
"""

from __future__ import annotations

import os


def main() -> int:
    from ragjudge.cli import collect_less_often  # the cli module imports nothing heavy

    collect_less_often()  # this process runs one command, as the console script does
    workspace = os.environ.get("GITHUB_WORKSPACE")
    if workspace and os.path.isdir(workspace):
        os.chdir(workspace)
    from ragjudge.github.action import main as action_main

    return action_main()


if __name__ == "__main__":
    raise SystemExit(main())
