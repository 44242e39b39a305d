"""reports/junit.xml, written with an XML library (every attribute and text escaped)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from autograder.grading.score import GradeResult
from autograder.reports.text import one_line, xml_text


def render(result: GradeResult) -> str:
    root = ET.Element("testsuites", name=f"autograder {result.assignment}",
                      tests=str(sum(len(t.tests) for t in result.topics)), time=f"{result.duration_s:.3f}")
    properties = ET.SubElement(root, "properties")
    ET.SubElement(properties, "property", name="seed", value=str(result.seed))
    if result.tampered:
        ET.SubElement(properties, "property", name="tampered", value=xml_text(", ".join(result.tampered)))
    for t in result.topics:
        suite = ET.SubElement(root, "testsuite", name=t.id, tests=str(len(t.tests)),
                              failures=str(sum(x.outcome == "failed" for x in t.tests)),
                              errors=str(sum(x.outcome in ("error", "timeout") for x in t.tests)))
        for x in t.tests:
            case = ET.SubElement(suite, "testcase", classname=t.id, name=x.id, time=f"{x.duration_s:.3f}")
            ET.SubElement(case, "properties").append(
                ET.Element("property", name="points", value=f"{x.earned:g}/{x.possible:g}"))
            if not x.passed:
                tag = "failure" if x.outcome == "failed" else "error"
                el = ET.SubElement(case, tag, message=xml_text(one_line(x.message, 200)), type=x.outcome)
                el.text = xml_text(x.message + (f"\nhint: {x.hint}" if x.hint else ""))
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
