#!/usr/bin/env python3
"""tests/readme_check.py — the README cannot name a file, option or subcommand that does
not exist, and its Python examples run (called by tests/test_analysis.c).

    readme_check.py README.md --clothbench PROGRAM --work DIR

Run from the repository root. What it checks:
  ```python blocks  run for real, in DIR, after a tiny version of the default comparison
                    (experiments/default.yaml at 6 x 6 vertices for 0.05 s) has written
                    DIR/runs/default/, the folder the README's first command fills: a file
                    name the runs do not have fails.
  ```sh blocks      parsed, not run (installing packages, the whole suite, a cluster job):
                    every `clothbench` command line is run with --help appended, which
                    parses every option and then prints the help (exit 0) instead of
                    running; an unknown subcommand or option exits 2. Every script or file
                    a line names (bash x.sh, python3 y.py, z.yaml) must exist.
                    Placeholders: $VAR and GNU parallel's {} are replaced by 0 (and its
                    ::: lists dropped), a path whose name is in capitals
                    (X.yaml, RUN.h5) is not looked for.
  the synopsis      the untagged block of `clothbench ...` lines: every option named on a
                    line appears in that subcommand's --help.
  inline code       spans that run `clothbench` / `build/clothbench`: parsed like sh lines
                    (a span with [, | or ... is a synopsis and checked like one); spans
                    `analysis/x.py ...`: the script exists and its --help names each option.
A block preceded by `<!-- skip-test: reason -->` is not checked. Exit status 0 when
every check passed, 1 otherwise (each failure printed as README:LINE: what).
"""
import argparse
import os
import re
import shlex
import subprocess
import sys

PROG = re.compile(r"^(?:[\w.-]+/)*clothbench$")
OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")
FILE_EXT = (".sh", ".py", ".yaml")


class Checker:
    def __init__(self, readme, clothbench, work):
        self.readme, self.clothbench, self.work = readme, os.path.abspath(clothbench), os.path.abspath(work)
        self.failures, self.checks, self.log = [], 0, []
        self.help_cache = {}

    def fail(self, line, what):
        self.failures.append("%s:%d: %s" % (self.readme, line, what))

    def help_text(self, sub):
        if sub not in self.help_cache:
            p = subprocess.run([self.clothbench, sub, "--help"], capture_output=True, text=True)
            self.help_cache[sub] = p.stdout if p.returncode == 0 else None
        return self.help_cache[sub]

    # --- command lines ----------------------------------------------------------

    def synopsis(self, line, text):
        """`clothbench SUB [options]`: SUB exists and every option is in its --help."""
        words = text.split()
        if len(words) < 2:
            return
        sub = words[1]
        self.checks += 1
        self.log.append("%d: synopsis %s" % (line, text))
        h = self.help_text(sub)
        if h is None:
            self.fail(line, "`clothbench %s`: no such subcommand (clothbench %s --help fails)" % (sub, sub))
            return
        for opt in OPTION.findall(" ".join(words[2:])):
            if not re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(opt), h):
                self.fail(line, "`clothbench %s %s`: %s is not in `clothbench %s --help`" % (sub, opt, opt, sub))

    def script(self, line, text):
        """`analysis/x.py ARGS [--opt]...`: the script exists and names every option in --help."""
        path = text.split()[0]
        self.checks += 1
        self.log.append("%d: script %s" % (line, text))
        if not os.path.isfile(path):
            self.fail(line, "%s: no such file" % path)
            return
        opts = OPTION.findall(" ".join(text.split()[1:]))
        if not opts:
            return
        p = subprocess.run([sys.executable, path, "--help"], capture_output=True, text=True)
        for opt in opts:
            if p.returncode != 0 or not re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(opt), p.stdout):
                self.fail(line, "`%s`: %s is not in `%s --help`" % (text, opt, path))

    def command(self, line, text):
        """One shell command line: clothbench commands parse; named files exist."""
        text = re.sub(r"\$\{?[A-Za-z_]\w*\}?", "0", text).replace("{}", "0")
        try:
            words = shlex.split(text, comments=True)
        except ValueError as exc:
            self.fail(line, "cannot split %r: %s" % (text, exc))
            return
        for i, w in enumerate(words):
            if PROG.match(w):
                self.checks += 1
                args = words[i + 1:]
                if ":::" in args:  # GNU parallel: its input lists follow
                    args = args[:args.index(":::")]
                self.log.append("%d: parses: clothbench %s --help" % (line, " ".join(args)))
                p = subprocess.run([self.clothbench] + args + ["--help"], capture_output=True, text=True)
                if p.returncode != 0 or not p.stdout.startswith("usage: clothbench"):
                    err = (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[0]
                    self.fail(line, "`clothbench %s` does not parse: %s" % (" ".join(args), err))
                return  # the rest of the line are its arguments
            if w.endswith(FILE_EXT) and "/" in w:
                stem = os.path.splitext(os.path.basename(w))[0]
                if stem.isupper():  # a placeholder: X.yaml, EXPERIMENT.yaml
                    continue
                self.checks += 1
                self.log.append("%d: exists: %s" % (line, w))
                if not os.path.exists(w):
                    self.fail(line, "%s: no such file" % w)

    def shell(self, line, text):
        for part in re.split(r"&&|;|\|\||(?<!\|)\|(?!\|)", text):
            if part.strip():
                self.command(line, part.strip())

    # --- blocks -----------------------------------------------------------------

    def python(self, line, code):
        self.checks += 1
        self.log.append("%d: runs the Python block in %s" % (line, self.work))
        p = subprocess.run([sys.executable, "-c", code], cwd=self.work, capture_output=True, text=True)
        if p.returncode != 0:
            last = (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
            self.fail(line, "the Python block fails in %s: %s" % (self.work, last))

    def make_runs(self):
        """A tiny default comparison into WORK/runs/default (names as the real one's)."""
        out = os.path.join(self.work, "runs", "default")
        p = subprocess.run([self.clothbench, "sweep", "experiments/default.yaml", "-o", out, "-q",
                            "--set", "duration=0.05", "--set", "cloth.grid.nx=6", "--set", "cloth.grid.ny=6"],
                           capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit("readme_check: the tiny default comparison failed: %s" % p.stderr.strip())

    def run(self):
        with open(self.readme) as fh:
            lines = fh.read().split("\n")
        blocks, i, skipped, prose = [], 0, [], []
        while i < len(lines):
            m = re.match(r"^\s*```(\w*)\s*$", lines[i])
            if not m:
                prose.append((i + 1, lines[i]))
                i += 1
                continue
            lang, start = m.group(1), i + 1
            j = i + 1
            while j < len(lines) and not re.match(r"^\s*```\s*$", lines[j]):
                j += 1
            body = "\n".join(lines[start:j])
            k = i - 1
            while k >= 0 and not lines[k].strip():
                k -= 1
            marker = re.match(r"^\s*<!--\s*skip-test:\s*(.*?)\s*-->\s*$", lines[k]) if k >= 0 else None
            if marker:
                skipped.append("%s:%d (%s): %s" % (self.readme, start, lang or "text", marker.group(1)))
            else:
                blocks.append((lang, start, body))
            i = j + 1
        # inline code spans of the text outside fenced blocks (a span may wrap a line)
        text = "\n".join(t for _, t in prose)
        starts = [0]
        for _, t in prose:
            starts.append(starts[-1] + len(t) + 1)
        for span in re.finditer(r"`([^`]+)`", text):
            t = " ".join(span.group(1).split())
            k = max(n for n in range(len(prose)) if starts[n] <= span.start())
            if re.search(r"(?:^|\s)(?:[\w.-]+/)*clothbench \w", t):
                blocks.append(("inline", prose[k][0], t))
            elif re.match(r"^analysis/[\w/]+\.py(\s|$)", t):
                blocks.append(("script", prose[k][0], t))
        if any(lang == "python" for lang, _, _ in blocks):
            self.make_runs()
        for lang, start, body in blocks:
            if lang == "python":
                self.python(start, "import textwrap\nexec(textwrap.dedent(%r))" % body)
            elif lang == "script":
                self.script(start, body)
            elif lang == "inline":
                (self.synopsis if re.search(r"\[|\||\.\.\.", body) else self.shell)(start, body)
            elif lang in ("sh", "bash"):
                for n, text in enumerate(body.replace("\\\n", " ").split("\n")):
                    if text.strip() and not text.strip().startswith("#"):
                        self.shell(start + 1 + n, text.strip())
            elif lang == "":
                for n, text in enumerate(body.split("\n")):
                    if re.match(r"^\s*clothbench \w", text):
                        self.synopsis(start + 1 + n, re.split(r"\s{3,}", text.strip())[0])
        for entry in self.log:
            print("%s:%s" % (self.readme, entry))
        for s in skipped:
            print("skipped %s" % s)
        for f in self.failures:
            print(f)
        print("readme_check: %d checks, %d failed, %d blocks skipped" % (self.checks, len(self.failures),
                                                                         len(skipped)))
        return 1 if self.failures or self.checks == 0 else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("readme")
    ap.add_argument("--clothbench", required=True, help="the clothbench program")
    ap.add_argument("--work", required=True, help="scratch folder for the Python blocks (created)")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    return Checker(a.readme, a.clothbench, a.work).run()


if __name__ == "__main__":
    sys.exit(main())
