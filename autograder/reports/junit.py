"""reports/junit.xml, written with an XML library (every attribute and text escaped).

It validates against the junit-10 XSD of Jenkins' xUnit plugin (tests/junit-10.xsd), which
allows `properties` only under a `testsuite`: each topic's suite carries the run's seed,
pass mark and tampered files, and a property `points:<test>` per test ("earned/possible").
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from autograder.grading.score import GradeResult, Outcome
from autograder.reports.markdown import pass_mark_note
from autograder.reports.text import one_line, xml_text


def _run_properties(result: GradeResult) -> list[tuple[str, str]]:
    """What describes the whole run, repeated in each suite (the schema has no other place)."""
    props = [("seed", str(result.seed))]
    if result.pass_mark is not None:
        props.append(("pass_mark", pass_mark_note(result)))
    if result.tampered:
        props.append(("tampered", ", ".join(result.tampered)))
    if result.refused:
        props.append(("refused", result.refused))
    return props


def render(result: GradeResult) -> str:
    root = ET.Element("testsuites", name=f"autograder {result.unit}",
                      tests=str(sum(len(t.tests) for t in result.topics)),
                      failures=str(sum(x.outcome == "failed" for t in result.topics for x in t.tests)),
                      errors=str(sum(x.outcome in (Outcome.ERROR, Outcome.TIMEOUT) for t in result.topics for x in t.tests)),
                      time=f"{result.duration_s:.3f}")
    for t in result.topics:
        suite = ET.SubElement(root, "testsuite", name=t.id, tests=str(len(t.tests)),
                              failures=str(sum(x.outcome == "failed" for x in t.tests)),
                              errors=str(sum(x.outcome in (Outcome.ERROR, Outcome.TIMEOUT) for x in t.tests)),
                              time=f"{sum(x.duration_s for x in t.tests):.3f}")
        properties = ET.SubElement(suite, "properties")
        props = _run_properties(result) + [("points", f"{t.earned:g}/{t.possible:g}")]
        props += [(f"points:{x.id}", f"{x.earned:g}/{x.possible:g}") for x in t.tests]
        for name, value in props:
            ET.SubElement(properties, "property", name=name, value=xml_text(value))
        for x in t.tests:
            case = ET.SubElement(suite, "testcase", classname=t.id, name=str(x.id), time=f"{x.duration_s:.3f}")
            if not x.passed:
                tag = "failure" if x.outcome == Outcome.FAILED else "error"
                el = ET.SubElement(case, tag, message=xml_text(one_line(x.message, 200)), type=x.outcome)
                el.text = xml_text(x.message + (f"\nhint: {x.hint}" if x.hint else ""))
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
