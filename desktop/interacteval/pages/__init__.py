"""The pages of the InteractEval wizard, one class per step (see ``desktop/wizard.py``)."""
