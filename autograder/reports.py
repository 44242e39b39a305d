"""Report writers: score.json, score.md, junit.xml, results.json (Gradescope), the terminal table.

Every file is written to a temporary name in the output folder and renamed into place,
so a crash mid-run leaves the previous complete report, never half of a new one.
"""

from __future__ import annotations

import json
import os
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

STATUS_WORDS = {"graded": "graded", "not_implemented": "not implemented", "error": "error",
                "timeout": "timeout", "crashed": "crashed"}


def atomic_write(path: Path, data: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode() if isinstance(data, str) else data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _pct(earned: float, possible: float) -> str:
    return f"{100 * earned / possible:.0f}%" if possible else "-"


def score_json(score: dict) -> str:
    return json.dumps(score, indent=2) + "\n"


def score_markdown(score: dict, messages: dict, figure: str | None = None, seed: int | None = None) -> str:
    lines = [f"## Autograder: {score['assignment']} — {score['earned']:g} / {score['possible']:g} "
             f"({_pct(score['earned'], score['possible'])})", "",
             "| topic | score | status |", "|---|---:|---|"]
    for t in score["topics"]:
        lines.append(f"| `{t['id']}` | {t['earned']:g} / {t['possible']:g} | {STATUS_WORDS[t['status']]} |")
    lines.append("")
    for t in score["topics"]:
        failed = [x for x in t["tests"] if x["outcome"] != "passed"]
        if not failed and not messages.get(t["id"]):
            continue
        lines.append(f"### `{t['id']}` ({t['earned']:g} / {t['possible']:g})")
        if messages.get(t["id"]):
            lines += ["", f"> {messages[t['id']]}"]
        lines.append("")
        for x in failed:
            lines.append(f"- **{x['id']}** ({x['outcome']}, 0 / {x['possible']:g}): {_one_line(x['message'])}")
            if x["hint"]:
                lines.append(f"  - hint: {_one_line(x['hint'])}")
        lines.append("")
    if score.get("signals"):
        lines += ["### Fault-injection signals", "", "| signal | holds |", "|---|---|"]
        lines += [f"| `{k}` | {'yes' if v else 'no'} |" for k, v in score["signals"].items()]
        lines.append("")
    if figure:
        lines += [f"![gradient norms and training loss]({figure})", ""]
    replay = f"; inputs drawn with seed {seed} (replay: `--seed {seed}`)" if seed is not None else ""
    lines.append(f"_graded in {score['duration_s']:.2f} s{replay}_")
    return "\n".join(lines) + "\n"


def _one_line(text: str, limit: int = 800) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def junit_xml(score: dict, durations: dict | None = None) -> str:
    durations = durations or {}
    root = ET.Element("testsuites", name=f"autograder {score['assignment']}",
                      tests=str(sum(len(t["tests"]) for t in score["topics"])), time=f"{score['duration_s']:.3f}")
    for t in score["topics"]:
        suite = ET.SubElement(root, "testsuite", name=t["id"], tests=str(len(t["tests"])),
                              failures=str(sum(x["outcome"] == "failed" for x in t["tests"])),
                              errors=str(sum(x["outcome"] in ("error", "timeout") for x in t["tests"])))
        for x in t["tests"]:
            case = ET.SubElement(suite, "testcase", classname=t["id"], name=x["id"],
                                 time=f"{durations.get((t['id'], x['id']), 0.0):.3f}")
            ET.SubElement(case, "properties").append(
                ET.Element("property", name="points", value=f"{x['earned']:g}/{x['possible']:g}"))
            if x["outcome"] != "passed":
                tag = "failure" if x["outcome"] == "failed" else "error"
                el = ET.SubElement(case, tag, message=_one_line(x["message"], 200), type=x["outcome"])
                el.text = x["message"] + (f"\nhint: {x['hint']}" if x["hint"] else "")
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def gradescope_json(score: dict) -> str:
    tests = []
    for t in score["topics"]:
        for x in t["tests"]:
            out = "" if x["outcome"] == "passed" else x["message"] + (f"\nHint: {x['hint']}" if x["hint"] else "")
            tests.append({"name": f"{t['id']} {x['id']}", "score": x["earned"], "max_score": x["possible"],
                          "status": "passed" if x["outcome"] == "passed" else "failed", "output": out,
                          "visibility": "visible" if x["id"].startswith("public::") else "after_published"})
    return json.dumps({"score": score["earned"], "max_score": score["possible"],
                       "execution_time": score["duration_s"], "tests": tests}, indent=2) + "\n"


def terminal_table(score: dict, messages: dict, out_dir: Path | None = None, seed: int | None = None) -> str:
    width = max([len(t["id"]) for t in score["topics"]] + [5])
    rows = [f"{'topic':<{width}}  {'score':>13}  status", f"{'-' * width}  {'-' * 13}  {'-' * 16}"]
    for t in score["topics"]:
        pts = f"{t['earned']:g} / {t['possible']:g}"
        rows.append(f"{t['id']:<{width}}  {pts:>13}  {STATUS_WORDS[t['status']]}")
        if messages.get(t["id"]):
            rows.append(f"{'':<{width}}  {'':>13}  -> {messages[t['id']]}")
    total = f"{score['earned']:g} / {score['possible']:g}"
    rows += [f"{'-' * width}  {'-' * 13}", f"{'total':<{width}}  {total:>13}  "
             f"({_pct(score['earned'], score['possible'])}, {score['duration_s']:.2f} s)"]
    if out_dir is not None:
        rows.append(f"details and hints: {out_dir / 'score.md'}" + (f" (seed {seed})" if seed is not None else ""))
    return "\n".join(rows)


def write_all(out_dir: Path, score: dict, messages: dict, figure: str | None = None,
              seed: int | None = None, durations: dict | None = None) -> list[Path]:
    files = {"score.json": score_json(score), "score.md": score_markdown(score, messages, figure, seed),
             "junit.xml": junit_xml(score, durations), "results.json": gradescope_json(score)}
    # score.json last: a reader that sees the new score also finds the other new files.
    for name in ["score.md", "junit.xml", "results.json", "score.json"]:
        atomic_write(out_dir / name, files[name])
    return [out_dir / n for n in files]
