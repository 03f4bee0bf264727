"""Shared pieces of the InteractEval core and CLI tests (test modules do not import each other)."""

from __future__ import annotations

#: Canned replies keyed by a phrase of each stage's prompt.
BUILD_REPLIES = {
    "What would you keep in mind": {"considerations": ["Check that ideas follow logically.",
                                                       "Check that the text is organised."]},
    "Which components of": {"components": ["Logical flow", "Structure"]},
    "Sort the notes under the components": {"clusters": [
        {"component": "Logical flow", "notes": [1, 3]},
        {"component": "Structure", "notes": [2]}]},
    "Write exactly one key question": {"key_questions": [
        {"component": "Logical flow", "question": "Do the ideas follow logically?"},
        {"component": "Structure", "question": "Is the text well organised?"}]},
    "write two to five sub-questions": {"groups": [
        {"component": "Logical flow", "sub_questions": ["Does each sentence follow from the last?",
                                                        "Are transitions clear?"]},
        {"component": "Structure", "sub_questions": ["Is there a clear beginning and end?"]}]},
    "Check every question against these rules": {"questions": [
        {"question": "Does each sentence follow from the last?", "based_on": ["1.1"]},
        {"question": "Are transitions between ideas clear?", "based_on": ["1.2"]},
        {"question": "Is there a clear beginning and end?", "based_on": ["2.1"]}]},
}
