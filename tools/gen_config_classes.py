#!/usr/bin/env python3
"""gen_config_classes.py - the config-class table (engine/source/config_classes.tsv, made
C at build time by tools/gen_config_table.c) from transformers' configuration_*.py files.

Reads each file with Python's ast (nothing is imported or run) and writes, per class that
names a model_type, one row per rule the class applies when it reads config.json:

  ALIAS    attribute_map: config.json may name the attribute by the mapped key
           (GPT2Config: hidden_size -> n_embd); also a legacy name __init__ pops from
           kwargs to stand for a field (FalconConfig: n_embed -> hidden_size)
  DEFAULT  a literal default of __init__ (or of a dataclass field): what an absent key
           means (a number or boolean as JSON text, a string as itself, flag TEXT); not
           for a field __init__ / __post_init__ derives from other values.  A default of None is left out: the reader's own fallback applies (most
           classes compute it, head_dim = hidden_size // num_attention_heads).
  SPLIT    a string accepted where a list belongs, split on a separator
           (DebertaV2Config: "p2c|c2p" -> ["p2c", "c2p"], lowered and stripped)
  SUB      the type a sub-config key is read as when it does not name its model_type:
           the class in sub_configs, or the `key.get("model_type", "t")` an AutoConfig
           sub-config falls back to (LlavaConfig: vision_config is clip_vision_model)
  FILL     the sub-config the class builds when the key is absent or None (LlavaConfig:
           CONFIG_MAPPING["clip_vision_model"](hidden_size=1024, ...)), as a JSON object
           of its model_type and the literal arguments; left out when one is computed
  DIVIDES  `if a % b != 0: raise ValueError(...)`: the class refuses an a that b does not
           divide, with that message ({x} stands for the value of x)

Usage (ROOT holds src/transformers/models/*/configuration_*.py, TYPES the model types
with a reader, one a line: `fitgate families --json`):
  tools/gen_config_classes.py --source 'huggingface/transformers@<commit>' \
      --types TYPES ROOT > engine/source/config_classes.tsv

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
        return v, "TEXT"
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
                field_name(t.args[0]) and isinstance(t.args[1], ast.Name) and
                t.args[1].id == "str"):
            name = field_name(t.args[0])
        elif (isinstance(t, ast.Compare) and isinstance(t.left, ast.Call) and
              isinstance(t.left.func, ast.Name) and t.left.func.id == "type" and
              len(t.left.args) == 1 and field_name(t.left.args[0]) and
              len(t.comparators) == 1 and isinstance(t.comparators[0], ast.Name) and
              t.comparators[0].id == "str"):
            name = field_name(t.left.args[0])
        if not name:
            continue
        for stmt in node.body:
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and
                    field_name(stmt.targets[0]) == name):
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
                field_name(e.body) == field and
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


def made_from(call, sub_names):
    """("class", name) / ("type", model_type) of the config a call builds (Cls(...),
    CONFIG_MAPPING["t"](...), self.sub_configs["key"](...)), or None."""
    f = call.func
    if isinstance(f, ast.Name):
        return ("class", f.id)
    if isinstance(f, ast.Subscript) and isinstance(f.slice, ast.Constant) and \
            isinstance(f.slice.value, str):
        if isinstance(f.value, ast.Name) and f.value.id == "CONFIG_MAPPING":
            return ("type", f.slice.value)
        if isinstance(f.value, ast.Attribute) and f.value.attr == "sub_configs":
            return sub_names.get(f.slice.value)
    return None


def literal_kwargs(call):
    """The keyword arguments of call as a dict when every one is a literal, else None."""
    out = {}
    for kw in call.keywords:
        ok, v = literal(kw.value) if kw.arg else (False, None)
        if not ok:
            return None
        out[kw.arg] = v
    return out if not call.args else None


def auto_sub_types(func):
    """(key, model_type) for each `key.get("model_type", "t")`: the type a sub-config dict
    without its own model_type is read as (LlavaConfig: vision_config is clip_vision_model)."""
    out = []
    for node in ast.walk(func):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and
                node.func.attr == "get" and field_name(node.func.value) and
                len(node.args) == 2 and isinstance(node.args[0], ast.Constant) and
                node.args[0].value == "model_type" and isinstance(node.args[1], ast.Constant) and
                isinstance(node.args[1].value, str)):
            out.append((field_name(node.func.value), node.args[1].value))
    return out


def absent_fills(func, sub_names):
    """(key, made, kwargs) for each sub-config the class builds when key is absent or None:
    `if key is None: self.key = Cls(a=1)` (or CONFIG_MAPPING["t"](...), or
    `key = {...}` then `self.key = Cls(**key)`).  Left out when an argument is computed."""
    built = {}  # key -> what self.key = X(**key) builds
    for node in ast.walk(func):
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and
                field_name(node.targets[0]) and isinstance(node.value, ast.Call) and
                len(node.value.keywords) == 1 and node.value.keywords[0].arg is None and
                field_name(node.value.keywords[0].value) == field_name(node.targets[0])):
            m = made_from(node.value, sub_names)
            if m:
                built[field_name(node.targets[0])] = m
    out = []
    for node in ast.walk(func):
        t = node.test if isinstance(node, ast.If) else None
        if not (isinstance(t, ast.Compare) and field_name(t.left) and len(t.ops) == 1 and
                isinstance(t.ops[0], ast.Is) and isinstance(t.comparators[0], ast.Constant) and
                t.comparators[0].value is None):
            continue
        key = field_name(t.left)
        for stmt in node.body:
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and
                    field_name(stmt.targets[0]) == key):
                continue
            v = stmt.value
            if isinstance(v, ast.Call):
                m, kw = made_from(v, sub_names), literal_kwargs(v)
                if m and kw is not None:
                    out.append((key, m, kw))
            elif isinstance(v, ast.Dict) and key in built:
                ok, kw = literal(v)
                if ok and all(isinstance(k, str) for k in kw):
                    out.append((key, built[key], kw))
    return out


def class_rules(cls):
    model_type = None
    rules = []
    sub_names = {}  # sub-config key -> ("class", name) / ("type", model_type)
    derived = derived_fields(cls)
    for stmt in cls.body:  # a field a legacy name may stand for keeps its default
        if isinstance(stmt, ast.FunctionDef) and stmt.name in ("__init__", "__post_init__"):
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
                if isinstance(k, ast.Constant) and isinstance(t, ast.Name) and \
                        t.id != "AutoConfig":
                    sub_names[k.value] = ("class", t.id)
        elif isinstance(stmt, ast.AnnAssign) and not name.startswith("_"):
            ok, v = literal(value)  # a dataclass field
            j = scalar(v) if ok and name not in derived else None
            if j is not None:
                rules.append(("DEFAULT", name) + j)
    for stmt in cls.body:
        if isinstance(stmt, ast.FunctionDef):
            for a, b, msg in divides_rules(stmt):
                rules.append(("DIVIDES", a, b, "", msg))
            if stmt.name in ("__init__", "__post_init__"):
                for key, t in auto_sub_types(stmt):
                    sub_names.setdefault(key, ("type", t))
                for key, made, kw in absent_fills(stmt, sub_names):
                    rules.append(("FILL", key, made, "", kw))
    for key, made in sub_names.items():
        rules.append(("SUB", key, made, ""))
    for stmt in cls.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == "__post_init__":
            for legacy, field in legacy_names(stmt):
                rules.append(("ALIAS", legacy, field, ""))
            for name, sep, low, strip in split_rules(stmt):
                flags = "|".join(f for f, on in (("LOWER", low), ("STRIP", strip)) if on)
                rules.append(("SPLIT", name, sep, flags))
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
                flags = "|".join(f for f, on in (("LOWER", low), ("STRIP", strip)) if on)
                rules.append(("SPLIT", name, sep, flags))
    return model_type, rules


def tsv(s):
    """s as one TSV field: backslash, tab and newline escaped."""
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def kept_types(rows, classes, wanted):
    """wanted (model types) and every type a kept type's sub-configs are read as."""
    keep, todo = set(), list(wanted)
    while todo:
        t = todo.pop()
        if t in keep:
            continue
        keep.add(t)
        for r in rows:
            if r[0] == t and r[2] in ("SUB", "FILL"):
                made = r[4]
                todo.append(made[1] if made[0] == "type" else classes.get(made[1], ""))
    return keep


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", required=True, help="repo@commit the files come from")
    ap.add_argument("--types", help="file of the model types to keep, one a line (and the "
                    "types their sub-configs are read as); all when absent")
    ap.add_argument("--note", default="", help="a provenance line for the header (where the "
                    "files were read)")
    ap.add_argument("root", help="a folder holding src/transformers/models (or excerpts)")
    opt = ap.parse_args()

    files = []
    for d, _, names in os.walk(opt.root):
        files += [os.path.join(d, n) for n in names
                  if n.startswith("configuration_") and n.endswith(".py")]
    classes = {}  # class name -> model_type
    rows = []
    origins = {}  # model_type -> origin
    for path in sorted(files):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        m = re.search(r"^# Excerpt of (\S+)\s*\n#\s*(\S+)", text, re.M)
        origin = f"{m.group(1)} {m.group(2)}" if m else \
            f"{opt.source} {os.path.relpath(path, opt.root)}"
        for node in ast.parse(text, path).body:
            if not isinstance(node, ast.ClassDef):
                continue
            mt, rules = class_rules(node)
            if not mt:
                continue
            classes[node.name] = mt
            origins[mt] = origin
            rows += [(mt, node.name) + r for r in rules]
    rows = [r if len(r) == 7 else r + (None,) for r in rows]
    keep = set(origins)
    if opt.types:
        with open(opt.types, encoding="utf-8") as f:
            keep = kept_types(rows, classes, [t.strip() for t in f if t.strip()])
    out = sys.stdout
    out.write("# Generated by tools/gen_config_classes.py from transformers' config classes; do\n"
              "# not edit.  The build makes engine/source/config_classes.c of it\n"
              "# (tools/gen_config_table.c).  Regenerate with\n"
              f"#   tools/gen_config_classes.py --source '{opt.source}' --types TYPES ROOT\n"
              "# Columns: model_type, class, kind, key, value, flags, message\n"
              "# (source/config_classes.h).\n")
    if opt.note:
        out.write(f"# {opt.note}\n")
    out.write("# From:\n")
    for o in sorted({origins[t] for t in keep if t in origins}):
        out.write(f"#   {o}\n")
    seen = set()
    for mt, cls, kind, key, value, flags, message in sorted(rows,
                                                            key=lambda r: (r[0], r[3], r[2])):
        if mt not in keep:
            continue
        if kind in ("SUB", "FILL"):
            sub = value[1] if value[0] == "type" else classes.get(value[1])
            if not sub:
                continue  # a class the files did not hold
            if kind == "FILL":
                value = json.dumps(dict({"model_type": sub}, **message), sort_keys=False)
                message = None
            else:
                value = sub
        if (mt, kind, key) in seen:
            continue  # a field declared twice keeps its first
        seen.add((mt, kind, key))
        out.write("\t".join(tsv(x) for x in (mt, cls, kind, key, value, flags or "",
                                             message or "")) + "\n")


if __name__ == "__main__":
    main()
