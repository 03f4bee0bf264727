"""Issue 29's crash: a two-page study that quotes a participant (``"I want questions that make
her wonder ..."``), with a backslash and a tab, through ``evaldesk majeval personas`` with the
bundled model. The in-process engine died on it with a segmentation fault (exit 139) because the
evidence sentences, offered to the model as an ``enum``, broke its grammar; the engine process now
takes them as they are, and the CLI gives stakeholders with evidence quoted word for word."""

from __future__ import annotations

import pandas as pd
import pytest

from core.cli import main
from tests.core.pdf_factory import wrap, write_pdf

pytestmark = pytest.mark.slow

QUOTE = 'One mother explained: "I want questions that make her wonder ..." and welcomed suggestions.'
PAGE_1 = ["Reading stories with young children", "",
          *wrap(["Parents told us that questions about a story should be short and fun. "
                 + QUOTE + " Another parent kept the stories in a folder called"
                 " Books\\Bedtime on her tablet."]),
          "Age\tGroup\tNumber", "3-4\tParents\t12"]
PAGE_2 = [*wrap([("Preschool teachers want questions that connect the story with the real "
                 "world. A teacher said: \"Children learn new words when a question links the "
                 "story to their own lives.\"")])]
TASK = "Judge question-answer pairs written for reading stories with children aged 3 to 6."


def study(tmp_path):
    pdf = write_pdf(tmp_path / "study.pdf", [PAGE_1, PAGE_2])
    task = tmp_path / "task.txt"
    task.write_text(TASK, encoding="utf-8")
    return pdf, task


def test_the_study_pdf_keeps_its_quotes_backslash_and_tab(tmp_path):
    from core.documents import load_document

    pdf, _ = study(tmp_path)
    text = "\n".join(page.text for page in load_document(pdf).pages)
    assert '"I want questions that make her wonder ..."' in text
    assert "Books\\Bedtime" in text


@pytest.mark.timeout(1800)  # a CPU model reads, groups and writes personas
def test_cli_personas_from_a_study_that_quotes_its_participants(bundled_model, tmp_path, capsys):
    """The reading that crashed runs (no crash, no grammar error) and finds stakeholders whose
    evidence is quoted word for word, or refuses the tiny model's answer (as it sometimes repeats
    the instructions; the answers vary between runs with several slots). A step may refuse the tiny model's answer (personas of single words, or a
    grouping cut off at its longest answer), and that is said (exit 1, the step, the reason and
    what to do) rather than written as personas (issue 28); when it writes them (exit 0 or 3,
    flagged), their evidence is word for word."""
    from core.documents import load_document, sentences_of
    from core.majeval.session.documents import stored_perspectives
    from core.project import Project

    pdf, task = study(tmp_path)
    out, kept = tmp_path / "personas.xlsx", tmp_path / "study.evaldesk"
    code = main(["majeval", "personas", str(pdf), "--task-file", str(task), "-o", str(out),
                 "--project", str(kept)])
    err = capsys.readouterr().err
    assert code in (0, 1, 3), err
    assert "parse: error" not in err
    sentences = {s for page in load_document(pdf).pages for s in sentences_of(page.text)}
    with Project.open(kept) as project:
        found = stored_perspectives(project, "study.pdf")
    if found is not None and found.stakeholders:  # what was read is quoted word for word
        read = [p.evidence for s in found.stakeholders for p in s.perspectives if p.evidence]
        assert read and all(e in sentences for e in read), read
    else:  # the reading itself refused the tiny model's answer: said, with what to do
        assert code == 1 and "try a larger model" in err, err
    if code == 1:  # a step refused the tiny model's answer, saying so and what to do
        assert "larger model" in err, err
        assert not out.exists()
        return
    sheet = pd.read_excel(out, sheet_name="Personas", dtype=str, keep_default_na=False)
    assert len(sheet) >= 1, err
    evidence = [e for e in sheet["Evidence"] if e]
    assert evidence, sheet.to_dict("records")
    assert all(e in sentences for e in evidence), evidence
