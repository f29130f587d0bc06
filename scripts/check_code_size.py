#!/usr/bin/env python3
"""Size goals of the project (PREAMBLE): no source file over 600 lines, no function over 80.

Scans the C++ (.cc, .h, .cpp, .hpp, .cu, .cuh) and Python files under src/, tools/, include/ and
python/: the length of every file, and of every C++ function from the first line of its signature
to its closing brace (brace matching after comments, strings and preprocessor lines are blanked;
lambdas and local classes count as part of their function; overloads of one name in one file are
reported once, the longest).

Exceptions live in scripts/code_size_allowlist.txt, one per line with its reason; an entry also
caps the offender at its recorded size. Exits 1 naming every new offender, every allowed one that
grew and every entry that is no longer needed (so the list only shrinks).

    scripts/check_code_size.py            # check (ctest: code_size)
    scripts/check_code_size.py --list     # print every offender with its size, allowed or not
"""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 80
ROOTS = ("src", "tools", "include", "python")
CPP_SUFFIXES = {".cc", ".h", ".cpp", ".hpp", ".cu", ".cuh"}
REPO = Path(__file__).resolve().parent.parent
ALLOWLIST = REPO / "scripts" / "code_size_allowlist.txt"


@dataclass(frozen=True)
class Offender:
    key: str  # "path" for a file, "path:function" for a function
    lines: int
    limit: int


def blank_cpp(text: str) -> str:
    """Comments, string/char literals and preprocessor lines replaced by spaces; newlines kept."""
    out: list[str] = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == "#" or (at_line_start and c in " \t" and text[i:].lstrip(" \t").startswith("#")):
            end = i
            while end < n and (text[end] != "\n" or text[end - 1] == "\\"):
                end += 1
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
            continue
        at_line_start = c == "\n"
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            delim = text[i + 2 : text.find("(", i + 2)]
            end = text.find(")" + delim + '"', i)
            end = n if end < 0 else end + len(delim) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif c in "\"'" and not (c == "'" and i > 0 and text[i - 1].isalnum()):  # 1'000 digit separators
            end = i + 1
            while end < n and text[end] != c and text[end] != "\n":
                end += 2 if text[end] == "\\" else 1
            out.append(" " * (min(end + 1, n) - i))
            i = end + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


FUNCTION_HEAD = re.compile(r"\)\s*(?:const|override|final|noexcept|mutable|volatile|&|&&|\s|->\s*[\w:<>,*&\s]+)*$")
INIT_LIST_START = re.compile(r"\)\s*(?:const\s*|noexcept\s*)*:(?!:)")  # end of a constructor's parameter list
INIT_MEMBER = re.compile(r"(?:\)\s*:|,)\s*[\w:]+\s*$")  # `: member_{` / `, member_{` inside an initializer list
NAME = re.compile(r"([~\w:]+(?:operator\s*[^\s(]+)?)\s*\($")


def parameter_list_end(head: str) -> int:
    """Index just past the ')' that closes the parameter list: before a constructor's initializer list."""
    depth = 0
    for j, c in enumerate(head):
        if c in "(<[":
            depth += 1
        elif c in ")>]":
            depth -= 1
            if c == ")" and depth == 0 and INIT_LIST_START.match(head, j):
                return j + 1
    return len(head)


def function_name(head: str) -> str:
    head = head[: parameter_list_end(head)]
    depth, end = 0, len(head)
    for j in range(len(head) - 1, -1, -1):  # the '(' that opens the parameter list
        if head[j] == ")":
            depth += 1
        elif head[j] == "(":
            depth -= 1
            if depth == 0:
                end = j
                break
    match = NAME.search(head[: end + 1])
    return match.group(1) if match else "?"


def classify(head: str) -> str:
    """What a '{' outside any function opens, from the text before it."""
    if re.search(r"\bnamespace\b", head) or re.match(r"extern\b", head):
        return "scope"
    if re.search(r"\b(class|struct|union)\b[^()]*$", head):
        return "scope"
    if INIT_MEMBER.search(head) and INIT_LIST_START.search(head):
        return "init"  # a member's brace initializer: the function body comes later
    if FUNCTION_HEAD.search(head):
        return "function"
    return "block"


def cpp_functions(text: str) -> list[tuple[str, int]]:
    """(name, lines) of every function body at namespace or class scope."""
    code = blank_cpp(text)
    result: list[tuple[str, int]] = []
    stack: list[tuple[str, int, str]] = []  # (kind, start line, name)
    head_start = 0
    for i, c in enumerate(code):
        if c not in ";{}":
            continue
        in_function = any(kind == "function" for kind, _, _ in stack)
        if c == "{":
            head = code[head_start:i]
            offset = head_start
            for label in re.finditer(r"\b(public|private|protected)\s*:(?!:)", head):
                offset = head_start + label.end()
            offset += len(code[offset:i]) - len(code[offset:i].lstrip())
            kind = "block" if in_function else classify(code[offset:i].strip())
            name = function_name(code[offset:i].strip()) if kind == "function" else ""
            stack.append((kind, code.count("\n", 0, offset) + 1, name))
            if kind == "init":
                continue  # keep the head: it is still the constructor's
        elif c == "}" and stack:
            kind, start, name = stack.pop()
            if kind == "function" and not any(k == "function" for k, _, _ in stack):
                result.append((name, code.count("\n", 0, i) + 1 - start + 1))
            if kind == "init":
                continue
        elif c == ";" and stack and stack[-1][0] == "init":
            continue
        head_start = i + 1
    return result


def source_files() -> list[Path]:
    files: list[Path] = []
    for root in ROOTS:
        for path in sorted((REPO / root).rglob("*")):
            if path.is_file() and (path.suffix in CPP_SUFFIXES or path.suffix == ".py"):
                if "__pycache__" not in path.parts:
                    files.append(path)
    return files


def offenders() -> list[Offender]:
    found: list[Offender] = []
    for path in source_files():
        rel = path.relative_to(REPO).as_posix()
        text = path.read_text(encoding="utf-8", errors="replace")
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        if lines > MAX_FILE_LINES:
            found.append(Offender(rel, lines, MAX_FILE_LINES))
        if path.suffix == ".py":
            continue  # Python: file length only
        functions = cpp_functions(text)
        longest: dict[str, int] = {}
        for name, length in functions:  # overloads of one name: the longest
            longest[name] = max(length, longest.get(name, 0))
        for name, length in longest.items():
            if length > MAX_FUNCTION_LINES:
                found.append(Offender(f"{rel}:{name}", length, MAX_FUNCTION_LINES))
    return found


def read_allowlist() -> dict[str, int]:
    allowed: dict[str, int] = {}
    for number, raw in enumerate(ALLOWLIST.read_text().splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if "#" not in raw:
            sys.exit(f"{ALLOWLIST}:{number}: an entry needs its reason after '#': {raw!r}")
        key, size = line.rsplit(None, 1)
        allowed[key] = int(size)
    return allowed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="print every offender with its size")
    args = parser.parse_args()
    found = offenders()
    if args.list:
        for o in sorted(found, key=lambda o: -o.lines):
            print(f"{o.lines:5d}  {o.key}")
        return 0
    allowed = read_allowlist()
    problems: list[str] = []
    for o in found:
        what = "file" if ":" not in o.key else "function"
        if o.key not in allowed:
            problems.append(f"{o.key}: {what} has {o.lines} lines, more than {o.limit} (split it)")
        elif o.lines > allowed[o.key]:
            problems.append(f"{o.key}: allowed {what} grew to {o.lines} lines (allow-list: {allowed[o.key]})")
    for key in sorted(set(allowed) - {o.key for o in found}):
        problems.append(f"{key}: within the limits now; remove its line from {ALLOWLIST.name}")
    for p in problems:
        print(p)
    print(f"code size: {len(found)} offenders, {len(allowed)} allowed, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
