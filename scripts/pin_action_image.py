"""Point action.yml's `runs.image` at a prebuilt image (used by .github/workflows/release.yml).

    python scripts/pin_action_image.py action.yml docker://ghcr.io/OWNER/ragjudge-action:1.2.3

Only the `image:` line under `runs:` changes, so the file's comments and layout survive.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from pathlib import Path

_IMAGE = re.compile(r"^(?P<indent>[ \t]+)image:[ \t]*\S.*$")
_REF = re.compile(r"^docker://[a-z0-9.-]+(:[0-9]+)?/[a-z0-9._/-]+:[A-Za-z0-9._-]+$")


def pin(text: str, image: str) -> str:
    if not _REF.match(image):
        raise ValueError(f"not a docker://registry/name:tag reference: {image!r}")
    lines = text.splitlines(keepends=True)
    in_runs = False
    for i, line in enumerate(lines):
        if re.match(r"^runs:\s*(#.*)?$", line):
            in_runs = True
            continue
        if in_runs and line.strip() and not line[0].isspace():
            break
        match = _IMAGE.match(line.rstrip("\r\n"))
        if in_runs and match:
            ending = line[len(line.rstrip("\r\n")) :]
            lines[i] = f"{match['indent']}image: {image}{ending}"
            return "".join(lines)
    raise ValueError("no `image:` key under `runs:`")


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2:
        print("usage: pin_action_image.py ACTION_YML docker://REGISTRY/NAME:TAG", file=sys.stderr)
        return 2
    path = Path(args[0])
    try:
        path.write_text(pin(path.read_text(encoding="utf-8"), args[1]), encoding="utf-8")
    except (OSError, ValueError) as exc:
        print(f"pin_action_image: {path}: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
