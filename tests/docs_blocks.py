"""The code blocks of README.md and docs/ as tests (tests/test_docs_blocks.py): how a page's blocks are read, run and
compared with the output the page documents.

Conventions (docs/index.md, "Reading the code blocks"):

- A ```sh / ```bash block: every line ``fsa2rnn …`` (optionally after ``$ ``, optionally fed by ``echo '…' |``)
  runs in process, in order, in one scratch folder per page (``mkdir -p DIR`` lines make folders; other lines such
  as ``make …`` or ``source …`` are not run). The exit code is 0, or what the line's comment says (``# exit 2``), or 2
  when the next line of a transcript starts with ``error:``.
- A result comment ``# → TEXT`` after a command: the command's output, stripped, matches TEXT.
- A transcript (``$ fsa2rnn …`` lines): the lines after a command, up to the next ``$ `` line, are its output
  (``…`` alone on a line stands for any number of lines).
- An output block: a ```text block right after a code block holds what that block prints (for a sh block: the
  outputs of its commands, in order); ``...`` alone on a line matches any number of lines, ``…`` inside a line any
  text; trailing blanks are ignored.
- A ```python block runs with ``exec`` in one namespace per page, in the same scratch folder; its printed output is
  compared with the output block after it, if any. A block in doctest form (``>>> ``) runs as a doctest (ELLIPSIS).
- ``<!-- docs-test: skip REASON -->`` on the line before a block keeps it from running (used sparingly; the tests
  list every skip and its reason).
"""

from __future__ import annotations

import itertools
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```([a-z]*)\s*$")
SKIP = re.compile(r"<!--\s*docs-test:\s*skip\s+(.+?)\s*-->")
RESULT = re.compile(r"#\s*→\s*(.*)$")


@dataclass
class Block:
    path: Path
    line: int  #: 1-based line of the opening fence
    lang: str
    code: str
    output: str | None = None  #: the ```text block after it
    skip: str | None = None  #: the reason, when marked

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT).as_posix()}:{self.line}"


@dataclass
class Command:
    argv: list[str]
    stdin: str | None
    exit_code: int
    result: str | None = None  #: the ``# →`` comment
    mkdir: bool = False
    output: str | None = None  #: in a transcript, the lines after ``$ fsa2rnn …`` up to the next ``$ ``


@dataclass
class Page:
    path: Path
    blocks: list[Block] = field(default_factory=list)


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def read_blocks(path: Path) -> list[Block]:
    """The fenced blocks of a page, each with the ```text block that follows it (blank lines between allowed)."""
    lines = path.read_text().splitlines()
    raw: list[tuple[int, str, str, str | None]] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, lang = i, m.group(1)
        j = i + 1
        while j < len(lines) and lines[j].rstrip() != "```":
            j += 1
        prev = next((lines[k] for k in range(start - 1, -1, -1) if lines[k].strip()), "")
        s = SKIP.search(prev)
        raw.append((start + 1, lang, "\n".join(lines[start + 1 : j]), s.group(1) if s else None))
        i = j + 1
    blocks: list[Block] = []
    for n, (line, lang, code, skip) in enumerate(raw):
        if lang == "text" and blocks and blocks[-1].output is None and _follows(lines, raw[n - 1], line):
            blocks[-1].output = code
            continue
        blocks.append(Block(path, line, lang, code, skip=skip))
    return blocks


def _follows(lines: list[str], previous: tuple, line: int) -> bool:
    """Whether the fence at ``line`` comes right after the block ``previous`` (only blank lines between)."""
    prev_line, _, code, _ = previous
    end = prev_line + code.count("\n") + (1 if code else 0) + 1  # the closing fence's 1-based line
    return all(not lines[k].strip() for k in range(end, line - 1))


def _joined(lines: list[str]) -> list[str]:
    """The block's lines with each backslash continuation joined onto the line it continues."""
    out: list[str] = []
    for line in lines:
        if out and out[-1].endswith("\\"):
            out[-1] = out[-1][:-1].rstrip() + " " + line.strip()
        else:
            out.append(line)
    return out


def shell_commands(block: Block) -> list[Command]:
    """The runnable lines of a sh/bash block (module docstring)."""
    out: list[Command] = []
    lines = _joined(block.code.splitlines())
    for i, line in enumerate(lines):
        shows_error = i + 1 < len(lines) and lines[i + 1].startswith("error:")
        line = line.removeprefix("$ ").strip()
        result = RESULT.search(line)
        stdin = None
        piped = re.match(r"(?:echo|printf '%s\\n') ('(?:[^']*)'(?: '[^']*')*) \| (fsa2rnn .*)", line)
        if piped:
            stdin = "\n".join(shlex.split(piped.group(1))) + "\n"
            line = piped.group(2)
        if line.startswith("mkdir -p "):
            out.append(Command(shlex.split(line, comments=True)[2:], None, 0, mkdir=True))
            continue
        if not line.startswith("fsa2rnn "):
            continue
        comment = line.split("#", 1)[1] if "#" in line else ""
        code = re.search(r"exit (\d)", comment)
        words = shlex.split(line, comments=True)
        expected = int(code.group(1)) if code else 2 if shows_error else 0
        cmd = Command(words[1:], stdin, expected, result.group(1).strip() if result else None)
        if lines[i].startswith("$ "):
            shown = [x for x in itertools.takewhile(lambda x: not x.startswith("$ "), lines[i + 1 :])]
            cmd.output = "\n".join("..." if x.strip() == "…" else x for x in shown) if shown else None
        out.append(cmd)
    return out


def matches(expected: str, got: str) -> bool:
    """Whether output ``got`` matches the documented ``expected`` (module docstring: ``...`` lines, ``…``)."""
    want = [w.rstrip() for w in expected.strip("\n").splitlines()]
    have = [h.rstrip() for h in got.strip("\n").splitlines()]
    return _match_lines(want, have)


def _match_lines(want: list[str], have: list[str]) -> bool:
    if not want:
        return not have
    if want[0].strip() == "...":
        return any(_match_lines(want[1:], have[k:]) for k in range(len(have) + 1))
    return bool(have) and _match_line(want[0], have[0]) and _match_lines(want[1:], have[1:])


def _match_line(want: str, have: str) -> bool:
    pattern = ".*".join(re.escape(part) for part in want.split("…"))
    return re.fullmatch(pattern, have) is not None
