"""Run the README's Python code blocks, in order, as one program (later blocks may use names
from earlier ones), at toy size: a real (non-symbolic) context from a full-size preset becomes
a small insecure ring, so the check takes seconds and little memory. Symbolic contexts keep
their preset (trace mode does no arithmetic).

    python scripts/readme_snippets.py README.md
"""

import re
import sys

TOY = "toy_insecure(log_n=11, levels=3, "


def blocks(markdown: str) -> list:
    return re.findall(r"^```python\n(.*?)^```", markdown, flags=re.S | re.M)


def at_toy_size(code: str) -> str:
    out = []
    for line in code.splitlines():
        if "symbolic=True" not in line:
            line = re.sub(r'ckks\.Context\.preset\("[A-Za-z0-9_]+",\s*', "ckks.Context." + TOY,
                          line)
        out.append(line)
    return "\n".join(out)


def main(path: str) -> int:
    found = blocks(open(path, encoding="utf-8").read())
    if not found:
        print(f"{path}: no ```python blocks", file=sys.stderr)
        return 1
    program = "\n".join(at_toy_size(b) for b in found)
    exec(compile(program, f"{path} (python blocks, toy size)", "exec"), {"__name__": "__main__"})
    print(f"{path}: {len(found)} python block(s) ran", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "README.md"))
