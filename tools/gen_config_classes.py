#!/usr/bin/env python3
"""gen_config_classes.py - the config-class table (engine/source/config_classes.c) from
transformers' configuration_*.py files.

Reads each file with Python's ast (nothing is imported or run) and writes, per class that
names a model_type, one row per rule the class applies when it reads config.json:

  ALIAS    attribute_map: config.json may name the attribute by the mapped key
           (GPT2Config: hidden_size -> n_embd)
  DEFAULT  a literal default of __init__ (or of a dataclass field): what an absent key
           means (a number or boolean as JSON text, a string as itself, FG__CFG_TEXT).  A default of None is left out: the reader's own fallback applies (most
           classes compute it, head_dim = hidden_size // num_attention_heads).
  SPLIT    a string accepted where a list belongs, split on a separator
           (DebertaV2Config: "p2c|c2p" -> ["p2c", "c2p"], lowered and stripped)
  SUB      sub_configs: the class of a sub-config key, for its defaults when the
           sub-config does not name its model_type

Usage:
  tools/gen_config_classes.py --source 'huggingface/transformers@<commit>' \
      SRC/transformers/models > engine/source/config_classes.c

A file whose first lines carry '# Excerpt of <repo>@<commit>' names its own source (the
excerpts the vendored table was generated from, when no whole checkout could be had).
"""
import argparse
import ast
import json
import os
import re
import sys


def literal(node):
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def scalar(v):
    """(text, flags) of a scalar default: JSON text of a number or boolean, or the string
    itself flagged FG__CFG_TEXT; None for what the table does not hold."""
    if isinstance(v, bool):
        return ("true" if v else "false"), ""
    if isinstance(v, (int, float)):
        return json.dumps(v), ""
    if isinstance(v, str):
        return v, "FG__CFG_TEXT"
    return None


def split_rules(func):
    """(name, separator, lowered, stripped) for each `if isinstance(name, str)` /
    `type(name) == str` whose body rebinds name from name...split(sep)."""
    out = []
    for node in ast.walk(func):
        if not isinstance(node, ast.If):
            continue
        t = node.test
        name = None
        if (isinstance(t, ast.Call) and isinstance(t.func, ast.Name) and
                t.func.id == "isinstance" and len(t.args) == 2 and
                isinstance(t.args[0], ast.Name) and isinstance(t.args[1], ast.Name) and
                t.args[1].id == "str"):
            name = t.args[0].id
        elif (isinstance(t, ast.Compare) and isinstance(t.left, ast.Call) and
              isinstance(t.left.func, ast.Name) and t.left.func.id == "type" and
              len(t.left.args) == 1 and isinstance(t.left.args[0], ast.Name) and
              len(t.comparators) == 1 and isinstance(t.comparators[0], ast.Name) and
              t.comparators[0].id == "str"):
            name = t.left.args[0].id
        if not name:
            continue
        for stmt in node.body:
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and
                    isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == name):
                continue
            src = ast.dump(stmt.value)
            for call in ast.walk(stmt.value):
                if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and
                        call.func.attr == "split" and len(call.args) == 1 and
                        isinstance(call.args[0], ast.Constant) and
                        isinstance(call.args[0].value, str)):
                    out.append((name, call.args[0].value, "attr='lower'" in src,
                                "attr='strip'" in src))
    return out


def class_rules(cls):
    model_type = None
    rules = []
    for stmt in cls.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], ast.Name):
            name, value = stmt.targets[0].id, stmt.value
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and \
                stmt.value is not None:
            name, value = stmt.target.id, stmt.value
        else:
            continue
        if name == "model_type":
            ok, v = literal(value)
            model_type = v if ok and isinstance(v, str) else None
        elif name == "attribute_map":
            ok, v = literal(value)
            for k, t in (v.items() if ok and isinstance(v, dict) else []):
                rules.append(("ALIAS", k, json.dumps(t)[1:-1], ""))
        elif name == "sub_configs" and isinstance(value, ast.Dict):
            for k, t in zip(value.keys, value.values):
                if isinstance(k, ast.Constant) and isinstance(t, ast.Name):
                    rules.append(("SUB", k.value, t.id, ""))
        elif isinstance(stmt, ast.AnnAssign) and not name.startswith("_"):
            ok, v = literal(value)  # a dataclass field
            j = scalar(v) if ok else None
            if j is not None:
                rules.append(("DEFAULT", name) + j)
    for stmt in cls.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == "__init__":
            a = stmt.args
            pos = a.args[len(a.args) - len(a.defaults):]
            for arg, d in list(zip(pos, a.defaults)) + list(zip(a.kwonlyargs, a.kw_defaults)):
                ok, v = literal(d) if d is not None else (False, None)
                j = scalar(v) if ok else None
                if j is not None:
                    rules.append(("DEFAULT", arg.arg) + j)
            for name, sep, low, strip in split_rules(stmt):
                flags = " | ".join(f for f, on in (("FG__CFG_LOWER", low),
                                                   ("FG__CFG_STRIP", strip)) if on) or "0"
                rules.append(("SPLIT", name, sep, flags))
    return model_type, rules


def c_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", required=True, help="repo@commit the files come from")
    ap.add_argument("root", help="a transformers models/ folder (or one of excerpts)")
    opt = ap.parse_args()

    files = []
    for d, _, names in os.walk(opt.root):
        files += [os.path.join(d, n) for n in names
                  if n.startswith("configuration_") and n.endswith(".py")]
    classes = {}  # class name -> model_type
    rows = []
    origins = []
    for path in sorted(files):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        m = re.search(r"^# Excerpt of (\S+)\s*\n#\s*(\S+)", text, re.M)
        origin = f"{m.group(1)} {m.group(2)}" if m else \
            f"{opt.source} {os.path.relpath(path, opt.root)}"
        origins.append(origin)
        for node in ast.parse(text, path).body:
            if not isinstance(node, ast.ClassDef):
                continue
            mt, rules = class_rules(node)
            if not mt:
                continue
            classes[node.name] = mt
            rows += [(mt, node.name) + r for r in rules]
    out = sys.stdout
    out.write("/* Generated by tools/gen_config_classes.py; do not edit.  Regenerate with\n"
              f" *   tools/gen_config_classes.py --source '{opt.source}' <models folder>\n"
              " * From:\n")
    for o in origins:
        out.write(f" *   {o}\n")
    out.write(" */\n#include \"source/config_classes.h\"\n\n"
              "const struct fg__cfg_rule fg__cfg_rules[] = {\n")
    seen = set()
    for mt, cls, kind, key, value, flags in sorted(rows, key=lambda r: (r[0], r[3], r[2])):
        if kind == "SUB":
            value = classes.get(value)
            if not value:
                continue  # a class the files did not hold
        if (mt, kind, key) in seen:
            continue  # a field declared twice keeps its first
        seen.add((mt, kind, key))
        out.write(f"    {{{c_str(mt)}, {c_str(cls)}, FG__CFG_{kind}, {c_str(key)}, "
                  f"{c_str(value)}, {flags or '0'}}},\n")
    out.write("};\n\nconst size_t fg__cfg_nrules = sizeof fg__cfg_rules / "
              "sizeof fg__cfg_rules[0];\n")


if __name__ == "__main__":
    main()
