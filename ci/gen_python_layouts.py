#!/usr/bin/env python3
"""Writes harness/src/inspect/python_layouts_generated.inc from CPython's own headers.

Usage:
  python3 ci/gen_python_layouts.py [--out FILE | --check FILE] INCLUDE_DIR...

Each INCLUDE_DIR is a CPython include tree with its internal/ headers (Debian's
libpython3.X-dev: /usr/include/python3.11; ci/fetch_old_pythons.sh unpacks 3.9 and 3.13
under .cache/old-pythons/3.X/usr/include/python3.X). For each one, the version is read
from its patchlevel.h (PY_VERSION) and a small C program compiled with
`gcc -DPy_BUILD_CORE` over those headers prints offsetof()/sizeof() of every member that
diagnose's Python reader (python_layout.cpp) follows:

  3.9 to 3.12  one row of named values (struct CPythonOffsets), the member each value is
               taken from written beside it;
  3.13         a mirror of _Py_DebugOffsets, parsed from the declaration in
               internal/pycore_runtime.h (field names as CPython's), with static_asserts of
               every field's offset as gcc measured it over the same header.

A version whose headers are not given keeps the block the committed file already has.
3.10's block is still the values typed by hand before this script (it says so: no 3.10
headers are at hand). 3.12's was written on the GPU machine (Ubuntu 24.04, whose
libpython3.12-dev has /usr/include/python3.12), by running this script there with the
committed file as --out; no machine of CI has 3.12's headers, so its test keeps that block.
--out FILE writes the result (default: the committed file); --check FILE writes nothing
and exits 1 with a diff when the regenerated blocks differ from FILE (the test
PythonLayoutsGenerated.* runs that for every version whose headers are on the machine).
"""
import argparse
import difflib
import os
import re
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(REPO, "harness", "src", "inspect", "python_layouts_generated.inc")
FIXED_MINORS = (9, 10, 11, 12)
DEBUG_OFFSETS_MINOR = 13

# Every value of a 3.9-3.12 row: (name, {minor: C expression}). A version a field does not
# name has no such member, or python_layout.cpp does not read it for that version; its
# value stays kAbsent.
FRAME_OBJECT = (9, 10)  # PyFrameObject linked by f_back
INTERP_FRAME = (11, 12)  # _PyInterpreterFrame reached through tstate->cframe
ALL = FIXED_MINORS


def each(minors, expr):
    return {m: expr for m in minors}


FIELDS = [
    ("runtime_interpreters_head", each(ALL, "offsetof(_PyRuntimeState, interpreters.head)")),
    ("runtime_ceval_gil", each((9, 10, 11), "offsetof(_PyRuntimeState, ceval.gil)")),
    ("interp_next", each(ALL, "offsetof(PyInterpreterState, next)")),
    ("interp_threads_head", {**each(FRAME_OBJECT, "offsetof(PyInterpreterState, tstate_head)"),
                             **each(INTERP_FRAME, "offsetof(PyInterpreterState, threads.head)")}),
    ("interp_ceval_gil", each((12,), "offsetof(PyInterpreterState, ceval.gil)")),
    ("gil_last_holder", each(ALL, "offsetof(struct _gil_runtime_state, last_holder)")),
    ("gil_locked", each(ALL, "offsetof(struct _gil_runtime_state, locked)")),
    ("tstate_next", each(ALL, "offsetof(PyThreadState, next)")),
    ("tstate_thread_id", each(FRAME_OBJECT, "offsetof(PyThreadState, thread_id)")),
    ("tstate_native_thread_id", each(INTERP_FRAME, "offsetof(PyThreadState, native_thread_id)")),
    ("tstate_frame", each(FRAME_OBJECT, "offsetof(PyThreadState, frame)")),
    ("tstate_cframe", each(INTERP_FRAME, "offsetof(PyThreadState, cframe)")),
    ("cframe_current_frame", each(INTERP_FRAME, "offsetof(_PyCFrame, current_frame)")),
    ("frame_previous", {**each(FRAME_OBJECT, "offsetof(PyFrameObject, f_back)"),
                        **each(INTERP_FRAME, "offsetof(_PyInterpreterFrame, previous)")}),
    ("frame_code", {**each(FRAME_OBJECT, "offsetof(PyFrameObject, f_code)"),
                    **each(INTERP_FRAME, "offsetof(_PyInterpreterFrame, f_code)")}),
    ("frame_trace", each((9,), "offsetof(PyFrameObject, f_trace)")),
    ("frame_lasti", each(FRAME_OBJECT, "offsetof(PyFrameObject, f_lasti)")),
    ("frame_lineno", each(FRAME_OBJECT, "offsetof(PyFrameObject, f_lineno)")),
    ("frame_prev_instr", each(INTERP_FRAME, "offsetof(_PyInterpreterFrame, prev_instr)")),
    ("frame_owner", each(INTERP_FRAME, "offsetof(_PyInterpreterFrame, owner)")),
    ("frame_is_entry", each((11,), "offsetof(_PyInterpreterFrame, is_entry)")),
    ("code_filename", each(ALL, "offsetof(PyCodeObject, co_filename)")),
    ("code_name", each(ALL, "offsetof(PyCodeObject, co_name)")),
    ("code_qualname", each(INTERP_FRAME, "offsetof(PyCodeObject, co_qualname)")),
    ("code_linetable", {9: "offsetof(PyCodeObject, co_lnotab)",
                        **each((10, 11, 12), "offsetof(PyCodeObject, co_linetable)")}),
    ("code_firstlineno", each(ALL, "offsetof(PyCodeObject, co_firstlineno)")),
    ("code_code_adaptive", each(INTERP_FRAME, "offsetof(PyCodeObject, co_code_adaptive)")),
    ("ascii_length", each(ALL, "offsetof(PyASCIIObject, length)")),
    ("ascii_state", each(ALL, "offsetof(PyASCIIObject, state)")),
    ("ascii_size", each(ALL, "sizeof(PyASCIIObject)")),
    ("compact_size", each(ALL, "sizeof(PyCompactUnicodeObject)")),
    ("bytes_ob_size", each(ALL, "offsetof(PyBytesObject, ob_base.ob_size)")),
    ("bytes_ob_sval", each(ALL, "offsetof(PyBytesObject, ob_sval)")),
]

INCLUDES = {
    9: ["Python.h", "frameobject.h", "internal/pycore_runtime.h", "internal/pycore_interp.h"],
    10: ["Python.h", "frameobject.h", "internal/pycore_runtime.h", "internal/pycore_interp.h"],
    11: ["Python.h", "internal/pycore_runtime.h", "internal/pycore_interp.h", "internal/pycore_frame.h"],
    12: ["Python.h", "internal/pycore_runtime.h", "internal/pycore_interp.h", "internal/pycore_frame.h"],
    13: ["Python.h", "internal/pycore_runtime.h"],
}

# What the blocks of 3.10 and 3.12 held when this script was first run: python_layout.cpp's
# hand-typed values (3.10 from offsetof() over 3.10.4's and 3.10.12's internal headers, 3.12
# from reading its struct definitions). Used only when neither headers nor a committed block
# are at hand.
CARRIED = {
    10: ("not regenerated here: headers not at hand; the values typed by hand before this script "
         "(offsetof() over the internal headers of 3.10.4 and 3.10.12)",
         dict(runtime_interpreters_head=32, runtime_ceval_gil=352, interp_next=0, interp_threads_head=8,
              gil_last_holder=8, gil_locked=16, tstate_next=8, tstate_thread_id=176, tstate_frame=24,
              frame_previous=24, frame_code=32, frame_lasti=96, frame_lineno=100, code_filename=104,
              code_name=112, code_linetable=120, code_firstlineno=40, ascii_length=16, ascii_state=32,
              ascii_size=48, compact_size=72, bytes_ob_size=16, bytes_ob_sval=32)),
    12: ("not regenerated here: headers not at hand; the values typed by hand before this script "
         "(read from 3.12's struct definitions)",
         dict(runtime_interpreters_head=40, interp_next=0, interp_threads_head=72, interp_ceval_gil=384,
              gil_last_holder=8, gil_locked=16, tstate_next=8, tstate_native_thread_id=144, tstate_cframe=56,
              cframe_current_frame=0, frame_previous=8, frame_code=0, frame_prev_instr=56, frame_owner=70,
              code_filename=112, code_name=120, code_qualname=128, code_linetable=136, code_firstlineno=68,
              code_code_adaptive=192, ascii_length=16, ascii_state=32, ascii_size=40, compact_size=56,
              bytes_ob_size=16, bytes_ob_sval=32)),
}


def fail(message):
    print(f"gen_python_layouts: {message}", file=sys.stderr)
    sys.exit(2)


def shown_path(path):
    """The header tree as the generated file names it: relative to the repository when inside it."""
    path = os.path.abspath(path)
    rel = os.path.relpath(path, REPO)
    return path if rel.startswith("..") else rel


def py_version(include_dir):
    try:
        with open(os.path.join(include_dir, "patchlevel.h")) as f:
            text = f.read()
    except OSError as e:
        fail(f"{include_dir}: no patchlevel.h ({e.strerror})")
    m = re.search(r'#define\s+PY_VERSION\s+"([^"]+)"', text)
    if not m:
        fail(f"{include_dir}/patchlevel.h defines no PY_VERSION")
    version = m.group(1)
    parts = version.split(".")
    if parts[0] != "3" or not parts[1].isdigit():
        fail(f"{include_dir}: PY_VERSION {version} is not a CPython 3 version")
    if not os.path.isdir(os.path.join(include_dir, "internal")):
        fail(f"{include_dir}: no internal/ headers (Debian's libpython3.X-dev has them)")
    return version, int(parts[1])


def run_c(include_dir, minor, body, prelude=""):
    """Compiles and runs a C program over the headers in include_dir; returns what it printed."""
    includes = "".join(f'#include "{h}"\n' for h in INCLUDES[minor])
    source = f"#include <stddef.h>\n#include <stdio.h>\n{includes}{prelude}\nint main(void) {{\n{body}  return 0;\n}}\n"
    with tempfile.TemporaryDirectory(prefix="gen_python_layouts.") as tmp:
        c_file, exe = os.path.join(tmp, "layout.c"), os.path.join(tmp, "layout")
        with open(c_file, "w") as f:
            f.write(source)
        # pyconfig.h includes <x86_64-linux-gnu/python3.X/pyconfig.h> from the tree above (Debian's multiarch).
        cmd = ["gcc", "-std=gnu11", "-DPy_BUILD_CORE", "-I", include_dir, "-I", os.path.join(include_dir, "internal"),
               "-idirafter", os.path.dirname(include_dir), "-o", exe, c_file]
        built = subprocess.run(cmd, capture_output=True, text=True)
        if built.returncode != 0:
            fail(f"gcc over {include_dir} failed:\n{built.stderr}\n--- the program:\n{source}")
        ran = subprocess.run([exe], capture_output=True, text=True, check=True)
        return ran.stdout


def fixed_block(include_dir, version, minor):
    exprs = [(name, by_minor[minor]) for name, by_minor in FIELDS if minor in by_minor]
    body = "".join(f'  printf("%s %ld\\n", "{name}", (long)({expr}));\n' for name, expr in exprs)
    values = dict(line.split() for line in run_c(include_dir, minor, body).splitlines())
    source = f"CPython {version} (PY_VERSION), headers {shown_path(include_dir)}"
    return render_fixed(minor, source, {name: (int(values[name]), expr) for name, expr in exprs})


def render_fixed(minor, source, values):
    lines = [f"// 3.{minor}: {source}", "{", f"    .minor = {minor},"]
    for name, (value, expr) in values.items():
        lines.append(f"    .{name} = {value},  // {expr}" if expr else f"    .{name} = {value},")
    lines.append("},")
    return "\n".join(lines) + "\n"


def carried_block(minor):
    source, values = CARRIED[minor]
    ordered = {name: (values[name], by_minor.get(minor)) for name, by_minor in FIELDS if name in values}
    return render_fixed(minor, source, ordered)


def parse_debug_offsets(header):
    """The fields of `typedef struct _Py_DebugOffsets {...}` in order: [(path, C++ declaration line)]."""
    with open(header) as f:
        text = f.read()
    m = re.search(r"typedef struct _Py_DebugOffsets \{(.*?)\n\} _Py_DebugOffsets;", text, re.S)
    if not m:
        fail(f"{header} declares no _Py_DebugOffsets")
    body = re.sub(r"//[^\n]*", "", re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S))
    leaves, decl, group = [], [], None
    for raw in body.splitlines():
        line = raw.strip()
        if not line:
            continue
        if re.fullmatch(r"struct \w+\s*\{", line):
            group = []
            continue
        closing = re.fullmatch(r"\}\s*(\w+);", line)
        if closing:
            name = closing.group(1)
            decl.append(f"  struct {{\n" + "".join(f"    std::uint64_t {f};\n" for f in group) + f"  }} {name};")
            leaves += [f"{name}.{f}" for f in group]
            group = None
            continue
        cookie = re.fullmatch(r"char (\w+)\[(\d+)\](?: \w+)?;", line)
        field = re.fullmatch(r"uint64_t (\w+);", line)
        if cookie and group is None:
            decl.append(f"  char {cookie.group(1)}[{cookie.group(2)}];")
            leaves.append(cookie.group(1))
        elif field and group is not None:
            group.append(field.group(1))
        elif field:
            decl.append(f"  std::uint64_t {field.group(1)};")
            leaves.append(field.group(1))
        else:
            fail(f"{header}: _Py_DebugOffsets has a line this script does not know: {line!r}")
    return leaves, decl


def debug_offsets_block(include_dir, version, minor):
    header = os.path.join(include_dir, "internal", "pycore_runtime.h")
    leaves, decl = parse_debug_offsets(header)
    body = '  printf("sizeof %ld\\n", (long)sizeof(_Py_DebugOffsets));\n'
    body += '  printf("compact_extra %ld\\n", (long)(sizeof(PyCompactUnicodeObject) - sizeof(PyASCIIObject)));\n'
    body += "".join(f'  printf("%s %ld\\n", "{p}", (long)offsetof(_Py_DebugOffsets, {p}));\n' for p in leaves)
    measured = dict(line.split() for line in run_c(include_dir, minor, body).splitlines())
    lines = [f"// 3.{minor}: CPython {version} (PY_VERSION), headers {shown_path(include_dir)}",
             f"// _Py_DebugOffsets as internal/pycore_runtime.h declares it; the offsets gcc measured over it.",
             f"struct PyDebugOffsets3{minor} {{"]
    lines += decl
    lines.append("};")
    lines.append(f"static_assert(sizeof(PyDebugOffsets3{minor}) == {measured['sizeof']});")
    lines += [f"static_assert(offsetof(PyDebugOffsets3{minor}, {p}) == {measured[p]});" for p in leaves]
    lines.append("// Not in _Py_DebugOffsets: what PyCompactUnicodeObject adds to PyASCIIObject (utf8_length, utf8).")
    lines.append(f"inline constexpr std::int64_t kCompactUnicodeExtra3{minor} = {measured['compact_extra']};"
                 "  // sizeof(PyCompactUnicodeObject) - sizeof(PyASCIIObject)")
    return "\n".join(lines) + "\n"


HEADER = """\
// Generated by ci/gen_python_layouts.py from CPython's own headers: do not edit.
// Regenerate: python3 ci/gen_python_layouts.py INCLUDE_DIR... (each a tree with internal/,
// e.g. /usr/include/python3.11 and .cache/old-pythons/3.X/usr/include/python3.X from
// ci/fetch_old_pythons.sh); a version whose headers are not given keeps its block. The test
// PythonLayoutsGenerated.* regenerates the versions whose headers are on the machine and
// fails when this file differs. Included by python_layout.cpp only (after <cstddef>, <cstdint>).
//
// Where each block came from:
{sources}
// 3.9 to 3.12: offsetof()/sizeof() over gcc -DPy_BUILD_CORE, named for what python_layout.cpp
// follows; the member each value is beside it. kAbsent: no such member in that version, or
// not read for it.
struct CPythonOffsets {{
  static constexpr std::int64_t kAbsent = -1;
  int minor = 0;
{members}}};

// BEGIN fixed rows
inline constexpr CPythonOffsets kCPythonOffsets[] = {{
{rows}}};
// END fixed rows

// BEGIN debug offsets
{debug}// END debug offsets
"""


def split_committed(path):
    """The committed blocks by minor version: {minor: text}."""
    blocks = {}
    if not os.path.exists(path):
        return blocks
    with open(path) as f:
        text = f.read()
    rows = re.search(r"// BEGIN fixed rows\n.*?\{\n(.*?)^\};\n// END fixed rows\n", text, re.S | re.M)
    debug = re.search(r"// BEGIN debug offsets\n(.*?)// END debug offsets\n", text, re.S)
    for block in re.findall(r"^// 3\.\d+: .*?(?=^// 3\.\d+: |\Z)", rows.group(1) if rows else "", re.S | re.M):
        blocks[int(re.match(r"// 3\.(\d+):", block).group(1))] = block
    if debug and debug.group(1):
        blocks[int(re.match(r"// 3\.(\d+):", debug.group(1)).group(1))] = debug.group(1)
    return blocks


def render(blocks):
    sources = "".join(f"//   {blocks[m].splitlines()[0][3:]}\n" for m in sorted(blocks))
    members = "".join(f"  std::int64_t {name} = kAbsent;\n" for name, _ in FIELDS)
    rows = "".join(blocks[m] for m in FIXED_MINORS)
    return HEADER.format(sources=sources, members=members, rows=rows, debug=blocks[DEBUG_OFFSETS_MINOR])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("include_dirs", nargs="*", metavar="INCLUDE_DIR")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--out", default=None, help="the file to write (default: the committed one)")
    mode.add_argument("--check", default=None, help="compare with this file instead of writing")
    args = parser.parse_args()
    target = args.check or args.out or DEFAULT_OUT

    blocks = split_committed(target)
    regenerated = []
    for include_dir in args.include_dirs:
        include_dir = os.path.abspath(include_dir.rstrip("/"))
        version, minor = py_version(include_dir)
        if minor in FIXED_MINORS:
            blocks[minor] = fixed_block(include_dir, version, minor)
        elif minor == DEBUG_OFFSETS_MINOR:
            blocks[minor] = debug_offsets_block(include_dir, version, minor)
        else:
            fail(f"{include_dir}: CPython {version}; this script knows 3.9 to 3.13")
        regenerated.append(version)
    for minor in FIXED_MINORS + (DEBUG_OFFSETS_MINOR,):
        if minor not in blocks:
            if minor not in CARRIED:
                fail(f"no headers of 3.{minor} given and {target} has no block for it")
            blocks[minor] = carried_block(minor)
    text = render(blocks)

    if args.check:
        with open(args.check) as f:
            committed = f.read()
        if committed != text:
            sys.stdout.writelines(difflib.unified_diff(committed.splitlines(True), text.splitlines(True),
                                                       args.check, "regenerated"))
            print(f"gen_python_layouts: {args.check} differs from what the headers of "
                  f"{', '.join(regenerated) or 'no version'} give; run python3 ci/gen_python_layouts.py "
                  f"with those include directories and review the diff", file=sys.stderr)
            sys.exit(1)
        print(f"gen_python_layouts: {args.check} matches the headers of {', '.join(regenerated) or 'no version'}")
        return
    with open(target, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
