#!/usr/bin/env python3
"""Checks the project's Markdown documents (CTest docs.links and docs.deviations).

links       every relative link and image in README.md, DEVELOPERS.md, CHANGELOG.md, CONTRIBUTING.md, docs/*.md and
            tests/data/README.md points at a file or folder inside the repository, and every
            #anchor at a heading of the target document; no document points at ../shared. And every
            citation in the code (include/, tools/, tests/ but tests/data, python/, benchmarks/,
            examples/) and in those documents resolves: no SEMANTICS.md / FORMAT.md / DEVIATIONS.md
            (documents that are not in the repository); `docs/semantics.md §N[.M]`,
            `docs/format.md §N[.M]` and `SCHEMA.md §N[.M]` name numbered headings of
            docs/semantics.md, docs/format.md and tests/data/conformance/SCHEMA.md;
            `docs/deviations.md Dn` names an id explained there; `docs/<doc>.md "Heading"` names a
            heading of that document, and every `docs/<doc>.md` exists. In the code, a `§` is part
            of such a citation or of "issue N §M".
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


def headings(path):
    """The text of every heading of a Markdown file, outside code blocks, in order."""
    out, fenced = [], False
    for line in path.read_text(encoding="utf-8").splitlines() if path.suffix == ".md" else []:
        if FENCE.match(line):
            fenced = not fenced
            continue
        m = None if fenced else re.match(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            out.append(m.group(1))
    return out


def anchors(path):
    seen, out = {}, set()
    for heading in headings(path):
        s = slug(heading)
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
    cited = check_citations(errors)
    for e in errors:
        print(e)
    for p in sorted(pending):
        print(f"pending: {p} (written on another branch, not merged yet)")
    print(f"{len(docs)} documents and {cited} citations checked, {len(errors)} broken links or citations")
    return 1 if errors else 0


# ---- citations in the code (`links`) ------------------------------------------------------------

CODE_DIRS = ["include", "tools", "tests", "python", "benchmarks", "examples"]
CODE_SKIP = {"node_modules", "__pycache__", "build"}
SECTION_LIST = r"§\d+(?:\.\d+)*(?:\s*(?:,|–|-|/|and|to)\s*§\d+(?:\.\d+)*)*"
OLD_SPEC = re.compile(r"\b(?:SEMANTICS|FORMAT|DEVIATIONS)\.md\b")
SECTION_CITE = re.compile(r"(?<![\w/.-])(?:docs/)?(semantics|format)\.md,?\s*(" + SECTION_LIST + ")")
SCHEMA_CITE = re.compile(r"\bSCHEMA\.md,?\s*(" + SECTION_LIST + ")")
ISSUE_CITE = re.compile(r"(?i)\bissue\s+\d+\s*(" + SECTION_LIST + ")")
DEVIATION_CITE = re.compile(r"docs/deviations\.md,?\s*(D\d+(?:\s*(?:,|–|-|and)\s*D\d+)*)")
HEADING_CITE = re.compile(r"docs/([\w.-]+\.md),?\s*\"([^\"\n]+)\"")
DOC_PATH = re.compile(r"(?<![\w/.-])docs/([\w.-]+\.md)\b")


def code_files():
    for top in CODE_DIRS:
        base = ROOT / top
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            rel = path.relative_to(ROOT)
            if not path.is_file() or rel.parts[:2] == ("tests", "data"):
                continue
            if any(part in CODE_SKIP or part.startswith(".") for part in rel.parts):
                continue
            if path.stat().st_size > 4 << 20:
                continue
            try:
                yield path, path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue  # binary


def heading_texts(path):
    """(section numbers, heading texts without their numbers, lower case) of a Markdown file."""
    numbers, texts = set(), set()
    for heading in headings(path):
        head = re.sub(r"`|\*\*", "", heading)
        n = re.match(r"(\d+(?:\.\d+)*)\.?\s+(.*)$", head)
        if n:
            numbers.add(n.group(1))
            head = n.group(2)
        texts.add(head.strip().lower())
    return numbers, texts


def check_citations(errors):
    """Appends an error for every citation that does not resolve; returns how many were checked."""
    sections = {
        "semantics": heading_texts(ROOT / "docs" / "semantics.md")[0],
        "format": heading_texts(ROOT / "docs" / "format.md")[0],
    }
    schema = ROOT / "tests" / "data" / "conformance" / "SCHEMA.md"
    schema_sections = heading_texts(schema)[0] if schema.exists() else set()
    deviations = set(re.findall(r"^##\s+D(\d+)\b", (ROOT / "docs" / "deviations.md").read_text(encoding="utf-8"), re.M))
    checked = 0
    sources = list(code_files()) + [(d, d.read_text(encoding="utf-8")) for d in documents()
                                    if d.name != "CHANGELOG.md"]
    for path, text in sources:
        rel = path.relative_to(ROOT)
        is_code = path.suffix != ".md" or (rel.parts[0] != "docs" and rel.as_posix() not in DOCS)
        for lineno, line in enumerate(text.splitlines(), 1):
            where = f"{rel}:{lineno}"
            for m in OLD_SPEC.finditer(line):
                errors.append(f"{where}: cites {m.group(0)}, which is not in the repository "
                              "(cite docs/semantics.md §N, docs/format.md §N, docs/deviations.md Dn)")
            cited = []  # spans of the line that are citations
            for m in SECTION_CITE.finditer(line):
                cited.append(m.span())
                for num in re.findall(r"§(\d+(?:\.\d+)*)", m.group(2)):
                    checked += 1
                    if num not in sections[m.group(1)]:
                        errors.append(f"{where}: docs/{m.group(1)}.md has no section §{num}")
            for m in SCHEMA_CITE.finditer(line):
                cited.append(m.span())
                for num in re.findall(r"§(\d+(?:\.\d+)*)", m.group(1)):
                    checked += 1
                    if num not in schema_sections:
                        errors.append(f"{where}: tests/data/conformance/SCHEMA.md has no section §{num}")
            cited += [m.span() for m in ISSUE_CITE.finditer(line)]
            for m in DEVIATION_CITE.finditer(line):
                for d in re.findall(r"D(\d+)", m.group(1)):
                    checked += 1
                    if d not in deviations:
                        errors.append(f"{where}: docs/deviations.md has no D{d}")
            for m in HEADING_CITE.finditer(line):
                doc = ROOT / "docs" / m.group(1)
                checked += 1
                if doc.exists() and m.group(2).strip().lower() not in heading_texts(doc)[1]:
                    errors.append(f"{where}: docs/{m.group(1)} has no heading \"{m.group(2)}\"")
            for m in DOC_PATH.finditer(line):
                checked += 1
                if not (ROOT / "docs" / m.group(1)).exists():
                    errors.append(f"{where}: docs/{m.group(1)} does not exist")
            if is_code:
                for i, ch in enumerate(line):
                    if ch == "§" and not any(a <= i < b for a, b in cited):
                        errors.append(f"{where}: '§' outside a citation of docs/semantics.md, docs/format.md, "
                                      "SCHEMA.md or an issue (which document does it mean?)")
    return checked


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
