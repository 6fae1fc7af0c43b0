#!/usr/bin/env python3
"""Checks the project's Markdown documents (CTest docs.links and docs.deviations).

links       every relative link and image in README.md, DEVELOPERS.md, CHANGELOG.md, CONTRIBUTING.md, docs/*.md and
            tests/data/README.md points at a file or folder inside the repository, and every
            #anchor at a heading of the target document; no document points at ../shared.
deviations  every deviation id the conformance cases carry ("cpp": {"deviation": "D3-..."}) is
            explained in docs/deviations.md, and every id D1..Dn listed there is used by the code
            or the cases or documented as such.
"""
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ["README.md", "DEVELOPERS.md", "CHANGELOG.md", "CONTRIBUTING.md", "tests/data/README.md"]

LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HTML_REF = re.compile(r"""(?:href|src)\s*=\s*["']([^"']+)["']""")
FENCE = re.compile(r"^\s*(```|~~~)")
# Documents that may be linked before they exist (reported, not failed). None today: every
# linked document must exist.
PENDING = set()


def documents():
    out = [ROOT / d for d in DOCS if (ROOT / d).exists()]
    out += sorted((ROOT / "docs").glob("*.md"))
    return out


def strip_code(text):
    """The text outside fenced code blocks, with inline code spans blanked (line numbers kept)."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            lines.append("")
            continue
        lines.append("" if fenced else re.sub(r"`[^`]*`", "``", line))
    return lines


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes."""
    h = re.sub(r"`|\*\*|__", "", heading.strip().lower())
    h = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", h)
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def anchors(path):
    seen, out = {}, set()
    for line in strip_code(path.read_text(encoding="utf-8")) if path.suffix == ".md" else []:
        m = re.match(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        s = slug(m.group(1))
        n = seen.get(s, 0)
        seen[s] = n + 1
        out.add(s if n == 0 else f"{s}-{n}")
    # explicit anchors: <a id="..."> / <a name="...">
    out.update(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", path.read_text(encoding="utf-8")))
    return out


def check_links():
    errors, pending = [], set()
    docs = documents()
    if not (ROOT / "README.md").exists():
        errors.append("README.md is missing")
    for doc in docs:
        raw = doc.read_text(encoding="utf-8")
        rel_doc = doc.relative_to(ROOT)
        if "../shared" in raw:
            errors.append(f"{rel_doc}: points at ../shared (not part of the repository)")
        for lineno, line in enumerate(strip_code(raw), 1):
            targets = [m.group(1) for m in LINK.finditer(line)]
            targets += [m.group(1) for m in HTML_REF.finditer(line)]
            m = REF_DEF.match(line)
            if m:
                targets.append(m.group(1))
            for target in targets:
                if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto: ...
                    continue
                path_part, _, anchor = target.partition("#")
                dest = doc if not path_part else (doc.parent / path_part).resolve()
                where = f"{rel_doc}:{lineno}: link '{target}'"
                try:
                    dest.relative_to(ROOT)
                except ValueError:
                    errors.append(f"{where} leaves the repository")
                    continue
                if not dest.exists():
                    if dest.relative_to(ROOT).as_posix() in PENDING:
                        pending.add(dest.relative_to(ROOT).as_posix())
                        continue
                    errors.append(f"{where}: {dest.relative_to(ROOT)} does not exist")
                    continue
                if anchor and dest.is_file() and anchor not in anchors(dest):
                    errors.append(f"{where}: no heading '#{anchor}' in {dest.relative_to(ROOT)}")
    for e in errors:
        print(e)
    for p in sorted(pending):
        print(f"pending: {p} (written on another branch, not merged yet)")
    print(f"{len(docs)} documents checked, {len(errors)} broken links")
    return 1 if errors else 0


def check_deviations():
    doc = ROOT / "docs" / "deviations.md"
    if not doc.exists():
        print("docs/deviations.md is missing")
        return 1
    text = doc.read_text(encoding="utf-8")
    documented = set(re.findall(r"\bD(\d+)\b", text))
    used = set()
    cases = sorted((ROOT / "tests" / "data" / "conformance" / "cases").glob("*/expected.json"))
    if not cases:
        print("no conformance cases under tests/data/conformance/cases")
        return 1
    for case in cases:
        used.update(re.findall(r'"deviation":\s*"D(\d+)-', case.read_text(encoding="utf-8")))
    errors = [f"D{d} is used by the conformance cases but not explained in docs/deviations.md"
              for d in sorted(used - documented, key=int)]
    numbers = sorted(int(d) for d in documented)
    if numbers and numbers != list(range(1, numbers[-1] + 1)):
        errors.append(f"docs/deviations.md skips ids: has {numbers}")
    for e in errors:
        print(e)
    print(f"{len(used)} deviation ids used by {len(cases)} cases, {len(documented)} documented")
    return 1 if errors else 0


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "links"
    sys.exit({"links": check_links, "deviations": check_deviations}[what]())
