"""Which module defines each ``evaldesk`` command (see ``core.cli``).

Only the module of the command being run is imported, so ``evaldesk --version`` and
``evaldesk project info`` do not pay for pandas, scipy or litellm. The help line is repeated here
so ``evaldesk --help`` can list every command without importing any of them.
"""

#: command name -> (module that appends its parser-adding function to ``core.cli.COMMANDS``,
#: one-line help shown by ``evaldesk --help``)
COMMAND_MODULES: dict[str, tuple[str, str]] = {
    "project": ("core.project_cli", "look inside an EvalDesk project file"),
    "llm": ("core.llm._cli", "check a language-model connection"),
    "aqer": ("core.aqer._cli", "score crowd workers and LLM answers without an answer key (AQER)"),
    "checklist": (
        "core.interacteval._cli",
        "InteractEval: build a Yes/No checklist from think-aloud, score texts with it",
    ),
    "majeval": (
        "core.majeval._cli",
        "MAJ-Eval: stakeholder personas from documents debate and score content",
    ),
}
