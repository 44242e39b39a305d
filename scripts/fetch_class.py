"""Clone the student repositories of a class for a regrade (the regrade workflow runs it;
so can an instructor's machine or a Slurm job).

    python scripts/fetch_class.py --roster roster.txt --out class/
    python scripts/fetch_class.py --org my-course --prefix rnn-hw- --out class/

The roster lists one repository per line (`owner/name`; blank lines and `#` comments are
skipped). With --org and --prefix, every repository of the organisation whose name starts
with the prefix is taken (`gh repo list`). Each is cloned shallowly into OUT/<name> with
`gh repo clone` (GH_TOKEN: a token that may read the student repositories); one that
cannot be cloned is reported and left out, and the exit status says so, so that the
regrade never grades a class silently short of students.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

REPOSITORY = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")


def read_roster(path: Path) -> list[str]:
    repos = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if not REPOSITORY.fullmatch(line) or ".." in line:
            raise SystemExit(f"{path}:{number}: not a repository (owner/name): {line!r}")
        repos.append(line)
    names = [r.split("/")[1] for r in repos]
    doubled = sorted({n for n in names if names.count(n) > 1})
    if doubled:
        raise SystemExit(f"{path}: two repositories share a name ({', '.join(doubled)}): their folders would clash")
    return repos


def organisation(org: str, prefix: str) -> list[str]:
    out = subprocess.run(["gh", "repo", "list", org, "--limit", "5000", "--json", "name", "--no-archived"],
                         capture_output=True, text=True, check=True).stdout
    return sorted(f"{org}/{r['name']}" for r in json.loads(out) if r["name"].startswith(prefix))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--roster", type=Path)
    p.add_argument("--org")
    p.add_argument("--prefix", default="")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    if bool(args.roster) == bool(args.org):
        p.error("give either --roster FILE or --org ORG [--prefix PREFIX]")
    repos = read_roster(args.roster) if args.roster else organisation(args.org, args.prefix)
    args.out.mkdir(parents=True, exist_ok=True)
    failed = []
    for repo in repos:
        dest = args.out / repo.split("/")[1]
        if dest.exists():
            continue
        proc = subprocess.run(["gh", "repo", "clone", repo, str(dest), "--", "--depth", "1", "--quiet"],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            failed.append(repo)
            print(f"cannot clone {repo}: {proc.stderr.strip()[-300:]}", file=sys.stderr)
    print(f"{len(repos) - len(failed)} of {len(repos)} repositories in {args.out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
