"""The sample-size and power panel of the calibration study."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

from evalkit._display import card, frame_table, num
from evalkit.agreement import Diagnosis, gate_power, sample_size


@dataclass(frozen=True)
class PowerPanel:
    """Sample size and power of the gate for one dimension (:func:`power_panel`)."""

    n: int
    threshold: float
    marginals: tuple[float, ...]
    curve: pd.DataFrame
    sizes: pd.DataFrame
    note: str

    def __repr__(self) -> str:
        marg = ", ".join(num(m) for m in self.marginals)
        lines = [
            f"PowerPanel: {self.n} pairs, threshold {num(self.threshold, 2)}, marginals ({marg})"
        ]
        lines += [f"  {line}" for line in self.curve.round(3).to_string(index=False).splitlines()]
        lines += [f"  {line}" for line in self.sizes.round(3).to_string(index=False).splitlines()]
        return "\n".join(lines + ([f"  note: {self.note}"] if self.note else []))

    def _repr_html_(self) -> str:
        return card(
            "Sample size and power",
            frame_table(self.curve, caption="Probability of passing, by true kappa"),
            frame_table(self.sizes, caption="Pairs needed for each interval half width"),
            self.note or None,
            subtitle=f"{self.n} pairs, threshold {num(self.threshold, 2)}",
        )


def power_panel(
    diag: Diagnosis,
    *,
    threshold: float,
    seed: int = 0,
    n_sim: int = 1000,
    kappas: Iterable[float] = (0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.9),
    half_widths: Iterable[float] = (0.05, 0.10, 0.15),
    level: float = 0.95,
) -> PowerPanel:
    """How many pairs the gate needs, and how likely it is to pass at the current n.

    Uses the human marginals for both raters (a judge calibrated to the humans).
    ``curve``: for each true kappa, the simulated probability of passing with the
    current number of pairs, by the point rule and by the lower-bound rule
    (:func:`evalkit.agreement.gate_power`). ``sizes``: pairs needed for a 95% interval
    of ± each half width around the threshold (:func:`evalkit.agreement.sample_size`).
    Values these marginals cannot reach are left out and said so in ``note``.
    """
    n = diag.n
    props = [diag.human_proportions[c] or 0.0 for c in diag.categories]
    total = sum(props)
    marg = tuple(p / total for p in props) if total > 0 else tuple(1.0 / len(props) for _ in props)
    notes = []
    curve_rows = []
    if n >= 2 and sum(p > 0 for p in marg) >= 2:
        for k in kappas:
            try:
                res = gate_power(k, n, threshold, list(marg), n_sim=n_sim, seed=seed)
            except ValueError as exc:
                notes.append(f"true kappa {k:.2f}: {exc}")
                continue
            curve_rows.append(
                {
                    "true_kappa": k,
                    "p_pass_point": res.p_pass_point,
                    "p_pass_lower_bound": res.p_pass_lower_bound,
                }
            )
    else:
        notes.append("the human labels use fewer than two bins: power cannot be simulated")
    size_rows = []
    for hw in half_widths:
        try:
            needed: int | None = sample_size(
                threshold, hw, prevalence=list(marg), categories=len(marg), level=level
            )
        except ValueError as exc:
            needed = None
            notes.append(f"half width {hw:.2f}: {exc}")
        size_rows.append(
            {"kappa": threshold, "half_width": hw, "pairs_needed": needed, "pairs_now": n}
        )
    return PowerPanel(
        n=n,
        threshold=threshold,
        marginals=marg,
        curve=pd.DataFrame(
            curve_rows, columns=["true_kappa", "p_pass_point", "p_pass_lower_bound"]
        ),
        sizes=pd.DataFrame(size_rows, columns=["kappa", "half_width", "pairs_needed", "pairs_now"]),
        note="; ".join(dict.fromkeys(notes)),
    )
