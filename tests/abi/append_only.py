#!/usr/bin/env python3
"""Reads `abidiff --leaf-changes-only --no-show-locs` of the baseline and
today's layouts and passes only appends: a struct may grow by data members
inserted after every member it had (today's layout, from its abidw record,
says where each member sits); anything else (a member removed, moved or
retyped, a size that shrank, a function removed or changed) fails, quoting
abidiff's lines. Also fails when a struct of the headers is not recorded.

usage: append_only.py REPORT TODAY.abi HEADER..."""
import re
import sys
import xml.etree.ElementTree as ET


def member_offsets(abi_path):
    """struct name -> {member name: offset in bits} from an abidw record."""
    structs = {}
    for cls in ET.parse(abi_path).iter("class-decl"):
        name = cls.get("name")
        if not name or cls.get("is-declaration-only") == "yes":
            continue
        offsets = structs.setdefault(name, {})
        for member in cls.findall("data-member"):
            var = member.find("var-decl")
            if var is not None and member.get("layout-offset-in-bits") is not None:
                offsets[var.get("name")] = int(member.get("layout-offset-in-bits"))
    return structs


def main():
    report_path, today_path, headers = sys.argv[1], sys.argv[2], sys.argv[3:]
    today = member_offsets(today_path)
    problems = []
    for header in headers:
        for name in re.findall(r"typedef struct (nnp_\w+) \{", open(header).read()):
            if name not in today:
                problems.append(f"struct {name} ({header}) is not recorded: add it to tests/abi/abi_types.c")
    lines = open(report_path).read().splitlines()
    grown = []
    struct, inserted = None, []
    allowed = (r"type size changed from (\d+) to (\d+) \(in bits\)$", r"\d+ data member insertions?:$")

    def finish():
        if struct is None:
            return
        offsets = today.get(struct, {})
        kept = [o for m, o in offsets.items() if m not in inserted]
        for member in inserted:
            if kept and offsets.get(member, -1) <= max(kept):
                problems.append(f"struct {struct}: member '{member}' was inserted before existing members")
        grown.append(struct)

    for line in lines:
        summary = re.match(r"Removed/Changed/Added (functions|variables) summary: (\d+) Removed, (\d+) Changed", line)
        if summary and (summary.group(2) != "0" or summary.group(3) != "0"):
            problems.append("abidiff: " + line)
        header = re.match(r"'struct (\w+)' changed:$", line)
        if header:
            finish()
            struct, inserted = header.group(1), []
            continue
        if struct is None or not line.strip():
            continue
        text = line.strip()
        size = re.match(allowed[0], text)
        if size:
            if int(size.group(2)) < int(size.group(1)):
                problems.append(f"struct {struct}: {text}")
            continue
        if re.match(allowed[1], text):
            continue
        member = re.match(r"'.*?(\w+)(\[\d+\])?', at offset \d+ \(in bits\)$", text)
        if member:
            inserted.append(member.group(1))
            continue
        problems.append(f"struct {struct}: {text}")
    finish()
    for line in lines:  # changes abidiff reports outside struct blocks (typedefs, enums, unions)
        if re.match(r"'(typedef|enum|union) ", line):
            problems.append("abidiff: " + line)
    if problems:
        print("ABI check FAILED: only appended members are allowed (sdk/README.md, ABI and versioning):")
        for p in problems:
            print("  " + p)
        return 1
    print(f"ABI check: {len(grown)} structs grew by appended members since the baseline"
          + (f" ({', '.join(sorted(grown))})" if grown else "") + "; nothing else changed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
