"""Plain words for the research terms a screen has to use (issue 13, point 5): a tooltip for
each place the term appears, so the same term is explained the same way everywhere."""

from __future__ import annotations

__all__ = ["PLAIN", "explain"]

PLAIN = {
    "RASA": "RASA: a method from an earlier paper that weights workers by how often they "
            "agree with the others.",
    "F1": "F1: the share of words an answer has in common with the other workers' answers "
          "(0 to 1).",
    "BLEU-1": "BLEU-1: a word-overlap score from machine translation: how many of an answer's "
              "words appear in the other workers' answers (0 to 1).",
    "AI answers as workers": "The paper (its section 7.4) also tried scoring AI answers as if "
                             "they were workers: they then count in the consensus, so they "
                             "change everyone's scores.",
    "no debate": "The paper tried this to show what the debate adds: each persona scores "
                 "alone once, and that score is the result.",
    "simple roles": "The paper tried this to show what the full persona descriptions add.",
    "cosine": "Cosine similarity: how close two answers are in meaning, from the lists of "
              "numbers the embedding model makes of them (1 = the same meaning).",
    "Pearson": "Pearson's r: how closely two sets of numbers follow a straight line together "
               "(1 = perfectly, 0 = not at all, below 0 = one goes up as the other goes down).",
    "Spearman": "Spearman's rho (ρ): whether two sets of numbers put things in the same order "
                "(1 = the same order, 0 = unrelated, below 0 = the opposite order).",
    "bootstrap": "Bootstrap: the calculation is repeated on many random redraws of your rows "
                 "to see how much the number could vary: the range is where it would fall 95 "
                 "times in 100.",
    "Krippendorff": "Krippendorff's alpha: how much raters agree with each other, corrected "
                    "for the agreement expected by chance (1 = fully, 0 = chance).",
    "ordinal": "Ordinal: the scores are treated as ordered steps (a 4 is closer to a 5 than a "
               "2 is), not as names.",
    "RMSE": "RMSE (root mean square error): the typical size of a change, here how much the "
            "workers' weights still moved from one round to the next.",
    "formula": "The score formula is the one the InteractEval paper gives (its equation 1).",
    "model": "Which model to use, written as the service, a slash and the model's name, as "
             "the service lists it: openai/gpt-4o-mini, anthropic/claude-3-5-haiku-latest, "
             "ollama/llama3.1.",
    "server": "The web address of the server that answers, when it is not the service's "
              "usual one: a model on this computer (Ollama: http://localhost:11434) or your "
              "organisation's own server. Leave empty for hosted services such as OpenAI.",
}


def explain(*terms: str) -> str:
    """The plain explanations of ``terms`` (keys of :data:`PLAIN`), one per line."""
    return "\n".join(PLAIN[t] for t in terms)
