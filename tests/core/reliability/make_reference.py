"""Writes reference.json: what R's psych and the irrCAC package compute on every case of
reference_cases.py, so the tests check our statistics against them without R or irrCAC.

Run from the repository root after changing a case:

    apt-get install r-cran-psych          # R 4.2.2, psych 2.2.9 (Debian 12) made this file
    pip install --no-deps --target /tmp/irr irrCAC==0.4.4   # GPL-3, test-only, never shipped
    PYTHONPATH=/tmp/irr .venv/bin/python tests/core/reliability/make_reference.py

irrCAC is installed with --no-deps because it pins scipy==1.12.0 (it runs with newer scipy).
Its calls, per case (ratings as a units x raters DataFrame, NaN for missing):
    CAC(df, weights=w, categories=scale, digits=15).gwet() / .fleiss()
with w "identity", "linear" or "quadratic"; Fleiss only unweighted.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))

from tests.conftest import SHARED_DATA
from tests.core.reliability import reference_cases


def frame(table: list[list]) -> pd.DataFrame:
    """Units x raters, NaN for missing."""
    arr = np.array([[np.nan if v is None else float(v) for v in row] for row in table])
    return pd.DataFrame(arr.T, columns=[f"r{i + 1}" for i in range(arr.shape[0])])


def write_inputs(folder: Path, cases: dict[str, list[list]]) -> None:
    for name, table in cases.items():
        frame(table).to_csv(folder / f"{name}.csv", index=False, na_rep="NA")
        if reference_cases.numeric(name):
            scale = reference_cases.categories(name)
            if scale is None:
                scale = sorted({v for row in table for v in row if v is not None})
            (folder / f"{name}.scale").write_text(" ".join(repr(float(v)) for v in scale))
        else:
            (folder / f"{name}.scale.nominal").write_text("0 1")


def run_psych(cases: dict[str, list[list]]) -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_inputs(folder, cases)
        out = folder / "out.csv"
        subprocess.run(["Rscript", str(HERE / "psych_reference.R"), str(folder), str(out)],
                       check=True, timeout=300)
        rows = pd.read_csv(out, dtype={"value": str, "low": str, "high": str})
    return [{"case": r.case, "statistic": r.statistic, "value": float(r.value),
             "low": float(r.low), "high": float(r.high)} for r in rows.itertuples()]


def run_irrcac(cases: dict[str, list[list]]) -> list[dict]:
    from irrCAC.raw import CAC

    out = []
    for name, table in cases.items():
        df = frame(table)
        scale = reference_cases.categories(name)
        if scale is None:
            scale = sorted({v for row in table for v in row if v is not None})
        scale = [float(v) for v in scale]
        kinds = ["identity", "linear", "quadratic"] if reference_cases.numeric(name) else [
            "identity"]
        for kind in kinds:
            cac = CAC(df, weights=kind, categories=scale, digits=15)
            results = {"gwet_ac1" if kind == "identity" else f"gwet_ac2_{kind}": cac.gwet()}
            if kind == "identity":
                results["fleiss_kappa"] = cac.fleiss()
            for key, res in results.items():
                est = res["est"]
                low, high = est["confidence_interval"]
                out.append({"case": name, "statistic": key,
                            "value": float(est["coefficient_value"]), "se": float(est["se"]),
                            "low": float(low), "high": float(high), "pa": float(est["pa"])})
    return out


def main() -> None:
    cases = reference_cases.cases(SHARED_DATA)
    reference = {
        "made_with": {"R": subprocess.run(
            ["Rscript", "-e", "cat(R.version.string, as.character(packageVersion('psych')))"],
            capture_output=True, text=True, check=True).stdout,
                      "irrCAC": __import__("irrCAC").__version__
                      if hasattr(__import__("irrCAC"), "__version__") else "0.4.4"},
        "cases": sorted(cases),
        "psych": run_psych(cases),
        "irrCAC": run_irrcac(cases),
    }
    (HERE / "reference.json").write_text(json.dumps(reference, indent=1) + "\n")
    print(f"wrote {HERE / 'reference.json'}: {len(reference['psych'])} psych values, "
          f"{len(reference['irrCAC'])} irrCAC values over {len(cases)} cases")


if __name__ == "__main__":
    main()
