#!/usr/bin/env python3
"""gen_config_classes.py - the config-class table (engine/source/config_classes.c) from
transformers' configuration_*.py files.

Reads each file with Python's ast (nothing is imported or run) and writes, per class that
names a model_type, one row per rule the class applies when it reads config.json:

  ALIAS    attribute_map: config.json may name the attribute by the mapped key
           (GPT2Config: hidden_size -> n_embd); also a legacy name __init__ pops from
           kwargs to stand for a field (FalconConfig: n_embed -> hidden_size)
  DEFAULT  a literal default of __init__ (or of a dataclass field): what an absent key
           means (a number or boolean as JSON text, a string as itself, FG__CFG_TEXT); not
           for a field __init__ / __post_init__ derives from other values.  A default of None is left out: the reader's own fallback applies (most
           classes compute it, head_dim = hidden_size // num_attention_heads).
  SPLIT    a string accepted where a list belongs, split on a separator
           (DebertaV2Config: "p2c|c2p" -> ["p2c", "c2p"], lowered and stripped)
  SUB      sub_configs: the class of a sub-config key, for its defaults when the
           sub-config does not name its model_type
  DIVIDES  `if a % b != 0: raise ValueError(...)`: the class refuses an a that b does not
           divide, with that message ({x} stands for the value of x)

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
    """(True, value) of a literal, or of arithmetic on numbers (4096 * 32); (False, None)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Pow)):
        ok_l, left = literal(node.left)
        ok_r, right = literal(node.right)
        num = (int, float)
        if ok_l and ok_r and isinstance(left, num) and isinstance(right, num) and \
                not isinstance(left, bool) and not isinstance(right, bool):
            op = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
                  ast.Mult: lambda a, b: a * b, ast.Pow: lambda a, b: a ** b}[type(node.op)]
            return True, op(left, right)
        return False, None
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


def derived_fields(cls):
    """Fields __init__ or __post_init__ sets from anything but the argument of the same name
    (Qwen2Config: sliding_window is None unless use_sliding_window): their literal default is
    not what the class holds, so the table leaves them to the reader."""
    out = set()
    for stmt in cls.body:
        if not (isinstance(stmt, ast.FunctionDef) and stmt.name in ("__init__", "__post_init__")):
            continue
        for node in ast.walk(stmt):
            if not isinstance(node, (ast.Assign, ast.AnnAssign)):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if (isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and
                        t.value.id == "self" and
                        not (isinstance(node.value, ast.Name) and node.value.id == t.attr)):
                    out.add(t.attr)
    return out


def legacy_names(func):
    """(legacy, field) for each `v = kwargs.pop("legacy", None)` whose value then stands for
    a field, `self.field = field if v is None else v` (FalconConfig's n_embed)."""
    popped, out = {}, []
    for node in ast.walk(func):
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and
                isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Call) and
                isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "pop" and
                isinstance(node.value.func.value, ast.Name) and
                node.value.func.value.id == "kwargs" and node.value.args and
                isinstance(node.value.args[0], ast.Constant)):
            popped[node.targets[0].id] = node.value.args[0].value
    for node in ast.walk(func):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and
                isinstance(node.targets[0], ast.Attribute) and
                isinstance(node.value, ast.IfExp)):
            continue
        field, e = node.targets[0].attr, node.value
        t = e.test
        if (isinstance(t, ast.Compare) and isinstance(t.left, ast.Name) and
                t.left.id in popped and isinstance(t.ops[0], ast.Is) and
                isinstance(e.body, ast.Name) and e.body.id == field and
                isinstance(e.orelse, ast.Name) and e.orelse.id == t.left.id):
            out.append((popped[t.left.id], field))
    return out


def message_template(node):
    """The text of a ValueError's message, each {self.x} / {x} kept as {x}; None when the
    message is built some other way."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if not isinstance(node, ast.JoinedStr):
        return None
    out = []
    for part in node.values:
        if isinstance(part, ast.Constant):
            out.append(str(part.value))
        elif isinstance(part, ast.FormattedValue):
            v = part.value
            if isinstance(v, ast.Attribute) and isinstance(v.value, ast.Name) and \
                    v.value.id == "self":
                out.append("{" + v.attr + "}")
            elif isinstance(v, ast.Name):
                out.append("{" + v.id + "}")
            else:
                return None
    return "".join(out)


def field_name(node):
    """x of self.x or of a bare name x, else None."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
            node.value.id == "self":
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def divides_rules(func):
    """(a, b, message) for each `if a % b != 0: raise ValueError(message)`: the class
    refuses an a that b does not divide (LlamaConfig.validate_architecture)."""
    out = []
    for node in ast.walk(func):
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)):
            continue
        t = node.test
        if not (isinstance(t.left, ast.BinOp) and isinstance(t.left.op, ast.Mod) and
                len(t.ops) == 1 and isinstance(t.ops[0], ast.NotEq) and
                isinstance(t.comparators[0], ast.Constant) and t.comparators[0].value == 0):
            continue
        a, b = field_name(t.left.left), field_name(t.left.right)
        raise_ = node.body[0] if node.body else None
        if not (a and b and isinstance(raise_, ast.Raise) and
                isinstance(raise_.exc, ast.Call) and isinstance(raise_.exc.func, ast.Name) and
                raise_.exc.func.id == "ValueError" and raise_.exc.args):
            continue
        msg = message_template(raise_.exc.args[0])
        if msg:
            out.append((a, b, msg))
    return out


def class_rules(cls):
    model_type = None
    rules = []
    derived = derived_fields(cls)
    for stmt in cls.body:  # a field a legacy name may stand for keeps its default
        if isinstance(stmt, ast.FunctionDef) and stmt.name == "__init__":
            derived -= {field for _, field in legacy_names(stmt)}
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
            j = scalar(v) if ok and name not in derived else None
            if j is not None:
                rules.append(("DEFAULT", name) + j)
    for stmt in cls.body:
        if isinstance(stmt, ast.FunctionDef):
            for a, b, msg in divides_rules(stmt):
                rules.append(("DIVIDES", a, b, "", msg))
    for stmt in cls.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == "__init__":
            a = stmt.args
            pos = a.args[len(a.args) - len(a.defaults):]
            for arg, d in list(zip(pos, a.defaults)) + list(zip(a.kwonlyargs, a.kw_defaults)):
                ok, v = literal(d) if d is not None else (False, None)
                j = scalar(v) if ok and arg.arg not in derived else None
                if j is not None:
                    rules.append(("DEFAULT", arg.arg) + j)
            for legacy, field in legacy_names(stmt):
                rules.append(("ALIAS", legacy, field, ""))
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
    rows = [r if len(r) == 7 else r + (None,) for r in rows]
    for mt, cls, kind, key, value, flags, message in sorted(rows,
                                                            key=lambda r: (r[0], r[3], r[2])):
        if kind == "SUB":
            value = classes.get(value)
            if not value:
                continue  # a class the files did not hold
        if (mt, kind, key) in seen:
            continue  # a field declared twice keeps its first
        seen.add((mt, kind, key))
        out.write(f"    {{{c_str(mt)}, {c_str(cls)}, FG__CFG_{kind}, {c_str(key)}, "
                  f"{c_str(value)}, {flags or '0'}, "
                  f"{c_str(message) if message else 'NULL'}}},\n")
    out.write("};\n\nconst size_t fg__cfg_nrules = sizeof fg__cfg_rules / "
              "sizeof fg__cfg_rules[0];\n")


if __name__ == "__main__":
    main()
